// SPDX-License-Identifier: MIT
// Built-in codecs: PGM/PPM (P2, P3, P5, P6; maxval 1..255) and grey PFM. Strict readers: every
// header field is checked, and the raster size is checked against the file size before anything is
// allocated.
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pipeline/io/io_internal.h"

namespace jetpipe::io_detail {

namespace {

constexpr std::uint64_t kMaxSide = 1u
                                   << 20;  // a lying header cannot ask for more than this per side

bool is_space(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool is_digit(int c) { return c >= '0' && c <= '9'; }

std::string show_char(int c) {
  if (c == EOF) return "end of file";
  if (c >= 0x21 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", c & 0xff);
  return buf;
}

bool little_endian_host() {
  const std::uint16_t one = 1;
  std::uint8_t b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

// Reads the text header of a PNM/PFM file, one token at a time.
class HeaderReader {
 public:
  HeaderReader(std::FILE* f, const char* kind) : f_(f), kind_(kind) {}

  // The two magic characters, which must be followed by whitespace or a comment.
  std::string magic() {
    const int a = std::getc(f_);
    const int b = std::getc(f_);
    std::string m;
    if (a != EOF) m += static_cast<char>(a);
    if (b != EOF) m += static_cast<char>(b);
    const int c = std::getc(f_);
    if (c != EOF && !is_space(c) && c != '#') m += static_cast<char>(c);
    if (c == '#') std::ungetc(c, f_);
    return m;
  }

  // A decimal field; `last` says it is the last header field, after which exactly one whitespace
  // character (or a comment ending in a newline) ends the header.
  std::uint64_t number(const char* name, bool last) {
    int c = skip_space_and_comments();
    if (c == EOF) throw input_error(std::string("truncated ") + kind_ + " header: missing " + name);
    if (!is_digit(c)) {
      throw input_error(std::string("bad ") + kind_ + " header: expected " + name + ", found " +
                        show_char(c));
    }
    std::uint64_t v = 0;
    int digits = 0;
    while (is_digit(c)) {
      if (++digits > 12)
        throw input_error(std::string("bad ") + kind_ + " header: " + name + " too large");
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
      c = std::getc(f_);
    }
    end_of_field(c, name, last);
    return v;
  }

  // A text field (PFM scale), up to 32 characters.
  std::string token(const char* name, bool last) {
    int c = skip_space_and_comments();
    if (c == EOF) throw input_error(std::string("truncated ") + kind_ + " header: missing " + name);
    std::string t;
    while (c != EOF && !is_space(c) && c != '#') {
      if (t.size() >= 32)
        throw input_error(std::string("bad ") + kind_ + " header: " + name + " too long");
      t += static_cast<char>(c);
      c = std::getc(f_);
    }
    end_of_field(c, name, last);
    return t;
  }

 private:
  int skip_space_and_comments() {
    int c = std::getc(f_);
    for (;;) {
      if (is_space(c)) {
        c = std::getc(f_);
      } else if (c == '#') {
        skip_comment();
        c = std::getc(f_);
      } else {
        return c;
      }
    }
  }
  void skip_comment() {
    int c;
    do {
      c = std::getc(f_);
    } while (c != EOF && c != '\n' && c != '\r');
  }
  void end_of_field(int c, const char* name, bool last) {
    if (c == EOF) {
      throw input_error(std::string("truncated ") + kind_ + " header: no data after " + name);
    }
    if (c == '#') {
      if (last) {
        skip_comment();  // the comment's newline is the single whitespace that ends the header
      } else {
        std::ungetc(c, f_);
      }
      return;
    }
    if (!is_space(c)) {
      throw input_error(std::string("bad ") + kind_ + " header: unexpected " + show_char(c) +
                        " after " + name);
    }
  }

  std::FILE* f_;
  const char* kind_;
};

void check_size(const char* kind, std::uint64_t w, std::uint64_t h) {
  if (w == 0 || h == 0) {
    throw input_error(std::string("bad ") + kind + " header: " + (w == 0 ? "width" : "height") +
                      " is 0");
  }
  if (w > kMaxSide || h > kMaxSide) {
    throw input_error(std::string("bad ") + kind + " header: image size " + std::to_string(w) +
                      "x" + std::to_string(h) + " is too large (at most " +
                      std::to_string(kMaxSide) + " per side)");
  }
}

std::uint64_t bytes_left(std::FILE* f, std::uint64_t file_size) {
  const long pos = std::ftell(f);
  if (pos < 0 || static_cast<std::uint64_t>(pos) > file_size) return 0;
  return file_size - static_cast<std::uint64_t>(pos);
}

void read_binary_raster(std::FILE* f, const ImageView& v, int maxval) {
  const std::size_t n = v.row_bytes();
  for (int y = 0; y < v.height; ++y) {
    std::uint8_t* r = v.row<std::uint8_t>(y);
    const std::size_t got = std::fread(r, 1, n, f);
    if (got != n) {
      throw input_error("truncated PNM data: short read in row " + std::to_string(y) + " of " +
                        std::to_string(v.height));
    }
    if (maxval != 255) {
      for (std::size_t i = 0; i < n; ++i) {
        if (r[i] > maxval) {
          throw input_error("bad PNM data: sample " + std::to_string(r[i]) + " in row " +
                            std::to_string(y) + " exceeds maxval " + std::to_string(maxval));
        }
        r[i] = static_cast<std::uint8_t>((r[i] * 255 + maxval / 2) / maxval);
      }
    }
  }
}

void read_ascii_raster(std::FILE* f, const ImageView& v, int maxval, std::uint64_t samples) {
  const std::size_t n = v.row_bytes();
  std::uint64_t k = 0;
  for (int y = 0; y < v.height; ++y) {
    std::uint8_t* r = v.row<std::uint8_t>(y);
    for (std::size_t i = 0; i < n; ++i, ++k) {
      int c = std::getc(f);
      while (is_space(c)) c = std::getc(f);
      if (c == EOF) {
        throw input_error("truncated PNM data: got " + std::to_string(k) + " of " +
                          std::to_string(samples) + " samples");
      }
      if (!is_digit(c)) {
        throw input_error("bad ASCII PNM data: unexpected " + show_char(c) + " in sample " +
                          std::to_string(k));
      }
      int value = 0;
      while (is_digit(c)) {
        if (value <= 255) value = value * 10 + (c - '0');
        c = std::getc(f);
      }
      if (c != EOF && !is_space(c)) {
        throw input_error("bad ASCII PNM data: unexpected " + show_char(c) + " after sample " +
                          std::to_string(k));
      }
      if (value > maxval) {
        throw input_error("bad PNM data: sample " + std::to_string(k) + " (" +
                          (value > 255 ? std::string(">255") : std::to_string(value)) +
                          ") exceeds maxval " + std::to_string(maxval));
      }
      r[i] = static_cast<std::uint8_t>(maxval == 255 ? value : (value * 255 + maxval / 2) / maxval);
    }
  }
}

void swap_rb(const ImageView& v) {
  for (int y = 0; y < v.height; ++y) {
    std::uint8_t* p = v.row<std::uint8_t>(y);
    for (int x = 0; x < v.width; ++x, p += 3) std::swap(p[0], p[2]);
  }
}

[[noreturn]] void throw_write_error(const std::string& what) {
  throw Error("cannot write: " + what);
}

// Writes the buffer; throws with errno's text on failure.
void write_all(std::FILE* f, const void* data, std::size_t n) {
  if (n != 0 && std::fwrite(data, 1, n, f) != n) throw_write_error(std::strerror(errno));
}

void finish_write(FilePtr file, const std::string& path) {
  std::FILE* f = file.release();
  const bool ok = std::fflush(f) == 0 && !std::ferror(f);
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(path.c_str());
    throw_write_error(std::strerror(err ? err : errno));
  }
}

}  // namespace

HostImage read_pnm(const std::string& path, const ImageAllocator& alloc) {
  const std::uint64_t size = regular_file_size(path);
  FilePtr file = open_file(path, "rb");
  std::FILE* f = file.get();
  HeaderReader hdr(f, "PNM");
  const std::string magic = hdr.magic();
  if (magic == "P1" || magic == "P4") {
    throw input_error("unsupported PNM type " + magic + " (bitmap); only P2, P3, P5, P6 are read");
  }
  if (magic == "P7")
    throw input_error("unsupported PNM type P7 (PAM); only P2, P3, P5, P6 are read");
  if (magic != "P2" && magic != "P3" && magic != "P5" && magic != "P6") {
    std::string shown;
    for (char c : magic) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    throw input_error("bad magic: not a PGM/PPM file (expected P2, P3, P5 or P6, found \"" + shown +
                      "\")");
  }
  const std::uint64_t w = hdr.number("width", false);
  const std::uint64_t h = hdr.number("height", false);
  const std::uint64_t maxval = hdr.number("maxval", true);
  check_size("PNM", w, h);
  if (maxval == 0 || maxval > 255) {
    throw input_error("bad PNM header: maxval " + std::to_string(maxval) +
                      (maxval == 0 ? " is invalid" : " is not supported") +
                      " (only 8-bit PNM: maxval 1..255)");
  }
  const bool colour = magic == "P3" || magic == "P6";
  const bool ascii = magic == "P2" || magic == "P3";
  const std::uint64_t samples = w * h * (colour ? 3 : 1);
  const std::uint64_t left = bytes_left(f, size);
  if (!ascii && left < samples) {
    throw input_error("truncated PNM data: expected " + std::to_string(samples) + " bytes, got " +
                      std::to_string(left));
  }
  if (ascii && left < 2 * samples - 1) {  // each sample: a digit, and whitespace between samples
    throw input_error("truncated PNM data: expected at least " + std::to_string(2 * samples - 1) +
                      " bytes for " + std::to_string(samples) + " ASCII samples, got " +
                      std::to_string(left));
  }
  HostImage img = allocate_image(alloc, static_cast<int>(w), static_cast<int>(h),
                                 colour ? PixelFormat::kBgr8 : PixelFormat::kGray8);
  if (ascii) {
    read_ascii_raster(f, img.view(), static_cast<int>(maxval), samples);
  } else {
    read_binary_raster(f, img.view(), static_cast<int>(maxval));
  }
  if (colour) swap_rb(img.view());  // the file holds RGB
  return img;
}

HostImage read_pfm(const std::string& path, const ImageAllocator& alloc) {
  const std::uint64_t size = regular_file_size(path);
  FilePtr file = open_file(path, "rb");
  std::FILE* f = file.get();
  HeaderReader hdr(f, "PFM");
  const std::string magic = hdr.magic();
  if (magic == "PF") throw input_error("unsupported PFM type PF (colour); only grey Pf is read");
  if (magic != "Pf") throw input_error("bad magic: not a grey PFM file (expected Pf)");
  const std::uint64_t w = hdr.number("width", false);
  const std::uint64_t h = hdr.number("height", false);
  const std::string scale_text = hdr.token("scale", true);
  check_size("PFM", w, h);
  char* end = nullptr;
  const double scale = std::strtod(scale_text.c_str(), &end);
  if (end == scale_text.c_str() || *end != '\0' || scale == 0 || !std::isfinite(scale)) {
    throw input_error("bad PFM header: scale \"" + scale_text + "\" is not a nonzero number");
  }
  const std::uint64_t bytes = w * h * 4;
  const std::uint64_t left = bytes_left(f, size);
  if (left < bytes) {
    throw input_error("truncated PFM data: expected " + std::to_string(bytes) + " bytes, got " +
                      std::to_string(left));
  }
  HostImage img =
      allocate_image(alloc, static_cast<int>(w), static_cast<int>(h), PixelFormat::kF32);
  const ImageView v = img.view();
  const bool swap = (scale < 0) != little_endian_host();
  for (int y = v.height - 1; y >= 0; --y) {  // PFM rows run bottom to top
    std::uint8_t* r = v.row<std::uint8_t>(y);
    if (std::fread(r, 1, v.row_bytes(), f) != v.row_bytes()) {
      throw input_error("truncated PFM data: short read");
    }
    if (swap) {
      for (std::size_t i = 0; i < v.row_bytes(); i += 4) {
        std::swap(r[i], r[i + 3]);
        std::swap(r[i + 1], r[i + 2]);
      }
    }
  }
  return img;
}

void write_pnm(const std::string& path, const ImageView& v) {
  const bool gray = v.format == PixelFormat::kGray8;
  const bool colour = v.format == PixelFormat::kBgr8 || v.format == PixelFormat::kRgb8;
  if (!gray && !colour) {
    throw config_error(std::string("cannot write ") + to_string(v.format) +
                       " as PNM (gray8 → .pgm, bgr8/rgb8 → .ppm; s16/f32 → .pfm or .tiff)");
  }
  if (v.empty()) throw config_error("cannot write an empty image");
  FilePtr file = open_file(path, "wb");
  const std::string header = std::string(gray ? "P5" : "P6") + "\n" + std::to_string(v.width) +
                             " " + std::to_string(v.height) + "\n255\n";
  write_all(file.get(), header.data(), header.size());
  std::vector<std::uint8_t> rgb(v.format == PixelFormat::kBgr8 ? v.row_bytes() : 0);
  for (int y = 0; y < v.height; ++y) {
    const std::uint8_t* r = v.row<std::uint8_t>(y);
    if (!rgb.empty()) {
      for (std::size_t i = 0; i < rgb.size(); i += 3) {
        rgb[i] = r[i + 2];
        rgb[i + 1] = r[i + 1];
        rgb[i + 2] = r[i];
      }
      r = rgb.data();
    }
    write_all(file.get(), r, v.row_bytes());
  }
  finish_write(std::move(file), path);
}

void write_pfm(const std::string& path, const ImageView& v) {
  if (v.format != PixelFormat::kF32 && v.format != PixelFormat::kS16) {
    throw config_error(std::string("cannot write ") + to_string(v.format) +
                       " as PFM (only f32 and s16)");
  }
  if (v.empty()) throw config_error("cannot write an empty image");
  FilePtr file = open_file(path, "wb");
  const std::string header = "Pf\n" + std::to_string(v.width) + " " + std::to_string(v.height) +
                             (little_endian_host() ? "\n-1.0\n" : "\n1.0\n");
  write_all(file.get(), header.data(), header.size());
  std::vector<float> row(v.format == PixelFormat::kS16 ? static_cast<std::size_t>(v.width) : 0);
  for (int y = v.height - 1; y >= 0; --y) {
    if (v.format == PixelFormat::kF32) {
      write_all(file.get(), v.row<float>(y), v.row_bytes());
    } else {
      const std::int16_t* s = v.row<std::int16_t>(y);
      for (int x = 0; x < v.width; ++x) row[static_cast<std::size_t>(x)] = s[x];
      write_all(file.get(), row.data(), row.size() * sizeof(float));
    }
  }
  finish_write(std::move(file), path);
}

}  // namespace jetpipe::io_detail
