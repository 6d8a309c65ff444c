// SPDX-License-Identifier: MIT
// Frame folders: frames://DIR, frames://DIR/*.png, or a plain DIR / glob. The frame files are
// listed once, when the source is opened, and read one per next(); a file that cannot be read
// yields a frame with .error set and the run goes on.
#include <algorithm>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "pipeline/io/image_io.h"
#include "pipeline/io/io_internal.h"

namespace jetpipe::io_detail {

namespace {

namespace fs = std::filesystem;

bool has_wildcard(const std::string& s) { return s.find_first_of("*?") != std::string::npos; }

// '*' matches any run of characters, '?' any one character.
bool glob_match(const std::string& pattern, const std::string& name) {
  std::size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

class FramesSource : public Source {
 public:
  FramesSource(std::string shown, std::vector<std::string> paths)
      : shown_(std::move(shown)), paths_(std::move(paths)) {}

  bool next(Frame* frame) override {
    if (next_ >= paths_.size()) return false;
    const std::string& path = paths_[next_];
    frame->index = static_cast<std::int64_t>(next_);
    frame->source = file_name(path);
    frame->image = HostImage();
    frame->error.clear();
    try {
      frame->image = decode_image_file(
          path, [this](int w, int h, PixelFormat f) { return new_image(w, h, f); });
    } catch (const Error& e) {
      frame->error = "frame " + std::to_string(next_) + " (" + frame->source + "): " + e.what();
    } catch (const std::bad_alloc&) {
      frame->error = "frame " + std::to_string(next_) + " (" + frame->source + "): out of memory";
    }
    ++next_;
    return true;
  }

  std::optional<std::int64_t> total() const override {
    return static_cast<std::int64_t>(paths_.size());
  }

  std::string describe() const override {
    return "frames: " + shown_ + " (" + std::to_string(paths_.size()) +
           (paths_.size() == 1 ? " file)" : " files)");
  }

 private:
  std::string shown_;
  std::vector<std::string> paths_;
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Source> open_frames_source(const std::string& uri, const std::string& spec) {
  if (spec.empty()) throw input_error("frames source '" + uri + "': no directory given");
  std::string dir = spec;
  std::string pattern;
  const std::size_t slash = spec.find_last_of('/');
  const std::string last = slash == std::string::npos ? spec : spec.substr(slash + 1);
  if (has_wildcard(last)) {
    pattern = last;
    dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : spec.substr(0, slash));
  }
  if (has_wildcard(dir)) {
    throw input_error("frames source '" + uri +
                      "': wildcards ('*', '?') are allowed in the file name only, not in '" + dir +
                      "'");
  }
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (st.type() == fs::file_type::not_found) {
    throw input_error("frames source '" + uri + "': no such directory: " + dir);
  }
  if (st.type() != fs::file_type::directory) {
    throw input_error("frames source '" + uri + "': " + dir +
                      " is not a directory (a video or .y4m file opens as file://PATH)");
  }

  std::vector<std::pair<std::string, std::string>> files;  // name, path
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // hidden
    if (!is_frame_extension(lower_extension(name))) continue;
    if (!pattern.empty() && !glob_match(pattern, name)) continue;
    std::error_code ec2;
    if (!it->is_regular_file(ec2)) continue;  // follows links; skips folders named like frames
    files.emplace_back(name, it->path().string());
  }
  if (ec) {
    throw input_error("frames source '" + uri + "': cannot list " + dir + ": " + ec.message());
  }
  if (files.empty()) {
    throw input_error("frames source '" + uri + "': " +
                      (pattern.empty() ? "no frame files in " + dir
                                       : "'" + pattern + "' matches no frame files in " + dir) +
                      " (frame files: .pgm .ppm .pnm .png .jpg .jpeg .bmp .tif .tiff)");
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return natural_less(a.first, b.first); });
  std::vector<std::string> paths;
  paths.reserve(files.size());
  for (auto& f : files) paths.push_back(std::move(f.second));
  return std::make_unique<FramesSource>(pattern.empty() ? dir : dir + "/" + pattern,
                                        std::move(paths));
}

}  // namespace jetpipe::io_detail
