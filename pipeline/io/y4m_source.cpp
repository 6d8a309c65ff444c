// SPDX-License-Identifier: MIT
// YUV4MPEG2 (.y4m) files, 8-bit. Each frame's luma plane is read straight into a GRAY8 image; the
// chroma planes are skipped (the pipeline's stages work on gray).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/io/io_internal.h"

namespace jetpipe::io_detail {

namespace {

constexpr std::size_t kMaxLine = 4096;   // header and FRAME lines
constexpr long long kMaxSide = 1 << 16;  // per side

struct Chroma {
  const char* name;
  int planes;        // chroma (+ alpha) planes after the luma plane
  int sub_x, sub_y;  // subsampling of those planes
};
constexpr Chroma kChroma[] = {
    {"420jpeg", 2, 2, 2},  {"420paldv", 2, 2, 2}, {"420mpeg2", 2, 2, 2},
    {"420", 2, 2, 2},      {"422", 2, 2, 1},      {"444", 2, 1, 1},
    {"444alpha", 3, 1, 1}, {"411", 2, 4, 1},      {"mono", 0, 1, 1},
};

std::string chroma_names() {
  std::string s;
  for (const auto& c : kChroma) s += std::string(s.empty() ? "" : " ") + "C" + c.name;
  return s;
}

// Reads one '\n'-terminated line (without the '\n'). Returns false at EOF before any byte; sets
// *complete to false when EOF came before the '\n' or the line is too long.
bool read_line(std::FILE* f, std::string* line, bool* complete) {
  line->clear();
  *complete = false;
  int c = std::getc(f);
  if (c == EOF) return false;
  while (c != EOF && c != '\n') {
    if (line->size() >= kMaxLine) return true;
    line->push_back(static_cast<char>(c));
    c = std::getc(f);
  }
  *complete = c == '\n';
  return true;
}

bool parse_int(const std::string& s, long long* v) {
  if (s.empty() || s.size() > 12) return false;
  long long r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    r = r * 10 + (c - '0');
  }
  *v = r;
  return true;
}

class Y4mSource : public Source {
 public:
  Y4mSource(const std::string& uri, const std::string& path) : path_(path), name_(file_name(path)) {
    try {
      open();
    } catch (const Error& e) {
      throw Error("y4m source '" + uri + "': " + path + ": " + e.what(), e.kind());
    }
  }

  bool next(Frame* frame) override {
    if (done_) return false;
    const std::int64_t i = index_++;
    frame->index = i;
    frame->source = name_ + "#" + std::to_string(i);
    // The frame's position in the file: its index over the header's frame rate.
    frame->pts_s =
        frame_s_ > 0 ? std::optional<double>(static_cast<double>(i) * frame_s_) : std::nullopt;
    frame->image = HostImage();
    frame->error.clear();
    std::string line;
    bool complete = false;
    if (!read_line(file_.get(), &line, &complete)) {
      done_ = true;
      return false;
    }
    auto fail = [&](const std::string& what) {
      frame->error = "frame " + std::to_string(i) + " (" + frame->source + "): " + what;
      done_ = true;  // cannot find the next frame after this: the stream ends here
      return true;
    };
    if (!complete) {
      return fail(line.size() >= kMaxLine ? "bad Y4M frame header: line too long"
                                          : "truncated Y4M frame header");
    }
    if (line.compare(0, 5, "FRAME") != 0 || (line.size() > 5 && line[5] != ' ')) {
      return fail("bad Y4M frame header: expected FRAME, found \"" + line.substr(0, 16) + "\"");
    }
    const long pos = std::ftell(file_.get());
    const std::uint64_t left = pos < 0 || static_cast<std::uint64_t>(pos) > size_
                                   ? 0
                                   : size_ - static_cast<std::uint64_t>(pos);
    if (left < frame_bytes_) {
      return fail("truncated Y4M frame: expected " + std::to_string(frame_bytes_) + " bytes, got " +
                  std::to_string(left));
    }
    HostImage img = new_image(width_, height_, PixelFormat::kGray8);
    const ImageView v = img.view();
    for (int y = 0; y < v.height; ++y) {
      if (std::fread(v.row<std::uint8_t>(y), 1, v.row_bytes(), file_.get()) != v.row_bytes()) {
        return fail("read error in the luma plane");
      }
    }
    if (std::fseek(file_.get(), static_cast<long>(frame_bytes_ - luma_bytes_), SEEK_CUR) != 0) {
      return fail("cannot skip the chroma planes");
    }
    frame->image = std::move(img);
    return true;
  }

  std::optional<std::int64_t> total() const override { return total_; }

  std::string describe() const override {
    return "y4m: " + path_ + " (" + std::to_string(width_) + "x" + std::to_string(height_) + " C" +
           chroma_ + (fps_.empty() ? "" : ", " + fps_ + " fps") +
           (total_ ? ", " + std::to_string(*total_) + " frames" : "") +
           ") → gray8 from the luma plane (chroma skipped)";
  }

 private:
  void open() {
    size_ = regular_file_size(path_);
    file_ = open_file(path_, "rb");
    std::string line;
    bool complete = false;
    if (!read_line(file_.get(), &line, &complete) || !complete) {
      if (line.compare(0, 9, "YUV4MPEG2") != 0) throw input_error("not a Y4M file (bad magic)");
      throw input_error(line.size() >= kMaxLine ? "bad Y4M header: line too long (over " +
                                                      std::to_string(kMaxLine) + " bytes)"
                                                : "truncated Y4M header");
    }
    if (line.compare(0, 9, "YUV4MPEG2") != 0 || (line.size() > 9 && line[9] != ' ')) {
      throw input_error("not a Y4M file (bad magic: expected YUV4MPEG2)");
    }
    long long w = -1, h = -1;
    chroma_ = "420jpeg";
    std::size_t p = 9;
    while (p < line.size()) {
      const std::size_t e = std::min(line.find(' ', p + 1), line.size());
      const std::string tag = line.substr(p + 1, e - p - 1);
      p = e;
      if (tag.empty()) continue;
      const std::string value = tag.substr(1);
      switch (tag[0]) {
        case 'W':
          if (!parse_int(value, &w)) throw input_error("bad Y4M header: width W" + value);
          break;
        case 'H':
          if (!parse_int(value, &h)) throw input_error("bad Y4M header: height H" + value);
          break;
        case 'C':
          chroma_ = value;
          break;
        case 'F': {
          fps_ = value;
          const std::size_t colon = value.find(':');
          long long num = 0, den = 0;
          if (colon != std::string::npos && parse_int(value.substr(0, colon), &num) &&
              parse_int(value.substr(colon + 1), &den) && num > 0 && den > 0) {
            frame_s_ = static_cast<double>(den) / static_cast<double>(num);
          }
          break;
        }
        default:
          break;  // I (interlacing), A (aspect), X (extensions) and unknown tags: ignored
      }
    }
    if (w < 0 || h < 0) throw input_error("bad Y4M header: W and H tags are required");
    if (w == 0 || h == 0 || w > kMaxSide || h > kMaxSide) {
      throw input_error("bad Y4M header: frame size " + std::to_string(w) + "x" +
                        std::to_string(h) + " (each side 1.." + std::to_string(kMaxSide) + ")");
    }
    const Chroma* cs = nullptr;
    for (const auto& c : kChroma) {
      if (chroma_ == c.name) cs = &c;
    }
    if (cs == nullptr) {
      throw input_error("unsupported Y4M colour space C" + chroma_ +
                        " (only 8-bit: " + chroma_names() + ")");
    }
    width_ = static_cast<int>(w);
    height_ = static_cast<int>(h);
    luma_bytes_ = static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(h);
    const std::uint64_t cw = static_cast<std::uint64_t>((w + cs->sub_x - 1) / cs->sub_x);
    const std::uint64_t ch = static_cast<std::uint64_t>((h + cs->sub_y - 1) / cs->sub_y);
    frame_bytes_ = luma_bytes_ + static_cast<std::uint64_t>(cs->planes) * cw * ch;

    // The frame count, when the first frame line is a plain "FRAME" (the usual case).
    const long data = std::ftell(file_.get());
    if (data < 0) throw input_error("cannot tell the file position");
    char head[6] = {};
    if (std::fread(head, 1, 6, file_.get()) == 6 && std::string(head, 6) == "FRAME\n") {
      const std::uint64_t left = size_ - static_cast<std::uint64_t>(data);
      const std::uint64_t per = 6 + frame_bytes_;
      total_ = static_cast<std::int64_t>(left / per + (left % per != 0 ? 1 : 0));
    } else if (static_cast<std::uint64_t>(data) == size_) {
      total_ = 0;
    }
    std::fseek(file_.get(), data, SEEK_SET);
  }

  std::string path_, name_;
  FilePtr file_;
  std::uint64_t size_ = 0;
  int width_ = 0, height_ = 0;
  std::string chroma_, fps_;
  double frame_s_ = 0;  // seconds a frame (the F tag), 0: no valid rate
  std::uint64_t luma_bytes_ = 0, frame_bytes_ = 0;
  std::optional<std::int64_t> total_;
  std::int64_t index_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<Source> open_y4m_source(const std::string& uri, const std::string& path) {
  return std::make_unique<Y4mSource>(uri, path);
}

}  // namespace jetpipe::io_detail
