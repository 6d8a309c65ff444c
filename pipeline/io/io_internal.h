// SPDX-License-Identifier: MIT
// Private to pipeline/io: codecs and source factories shared by the .cpp files of this folder.
// Decoders here throw jetpipe::Error whose message is the problem only ("truncated PNM data: ...");
// the public entry points prefix the file ("x.pgm: ...") or the frame ("frame 3 (x.pgm): ...").
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/image.h"
#include "pipeline/io/source.h"

namespace jetpipe::io_detail {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// Opens a file for reading or writing ("rb"/"wb"); throws a problem-only Error saying why it
// failed.
FilePtr open_file(const std::string& path, const char* mode);
// Size in bytes of a regular file; throws "no such file" / "is a directory" / "not a regular file".
std::uint64_t regular_file_size(const std::string& path);

// "png" for "dir/A.PNG"; empty when there is no extension.
std::string lower_extension(const std::string& path);
// "A.PNG" for "dir/A.PNG".
std::string file_name(const std::string& path);
// Extensions listed by frame folders: pgm ppm pnm png jpg jpeg bmp tif tiff (lower case).
bool is_frame_extension(const std::string& lower_ext);
bool is_opencv_extension(const std::string& lower_ext);

// Built-in codecs (problem-only errors). PNM: P2/P3/P5/P6, maxval 1..255 (scaled to 0..255), colour
// returned as BGR8. PFM: grey "Pf" only, returned as F32. The readers allocate the image through
// `alloc` (empty: ordinary host memory) once the header is checked, and honour its pitch.
HostImage read_pnm(const std::string& path, const ImageAllocator& alloc = {});
HostImage read_pfm(const std::string& path, const ImageAllocator& alloc = {});
void write_pnm(const std::string& path, const ImageView& image);  // GRAY8 → P5, BGR8/RGB8 → P6
void write_pfm(const std::string& path, const ImageView& image);  // F32 or S16 (as float)

// Any supported image file, chosen by extension (content sniffed for unknown ones); the image is
// allocated through `alloc` (empty: ordinary host memory).
HostImage decode_image_file(const std::string& path, const ImageAllocator& alloc = {});

// Parses a plain decimal integer in [lo, hi] (no sign, at most 12 digits): URI query values.
inline bool parse_decimal(const std::string& s, std::int64_t lo, std::int64_t hi,
                          std::int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

// Source factories; `uri` is what the user wrote (for messages).
std::unique_ptr<Source> open_frames_source(const std::string& uri, const std::string& spec);
std::unique_ptr<Source> open_y4m_source(const std::string& uri, const std::string& path);
std::unique_ptr<Source> open_video_source(const std::string& uri, const std::string& path);
// `colour` (SourceOptions::colour): a pattern without ?format= is bgr8, or gray8 when false.
std::unique_ptr<Source> open_test_source(const std::string& uri, const std::string& spec,
                                         bool colour = true);

}  // namespace jetpipe::io_detail
