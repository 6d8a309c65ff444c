// SPDX-License-Identifier: MIT
#include "core/image.h"

#include <cstring>

#include "core/error.h"

namespace jetpipe {

const char* to_string(PixelFormat f) {
  switch (f) {
    case PixelFormat::kGray8: return "gray8";
    case PixelFormat::kBgr8: return "bgr8";
    case PixelFormat::kRgb8: return "rgb8";
    case PixelFormat::kS16: return "s16";
    case PixelFormat::kF32: return "f32";
    case PixelFormat::kBgrx8:
      return "bgrx8";
    case PixelFormat::kRgbx8:
      return "rgbx8";
    case PixelFormat::kRgba8:
      return "rgba8";
    case PixelFormat::kNv12:
      return "nv12";
  }
  return "?";
}

bool parse_pixel_format(const std::string& name, PixelFormat* f) {
  for (PixelFormat c : {PixelFormat::kGray8, PixelFormat::kBgr8, PixelFormat::kRgb8,
                        PixelFormat::kS16, PixelFormat::kF32, PixelFormat::kBgrx8,
                        PixelFormat::kRgbx8, PixelFormat::kRgba8, PixelFormat::kNv12}) {
    if (name == to_string(c)) {
      *f = c;
      return true;
    }
  }
  return false;
}

std::size_t min_pitch(int width, PixelFormat format) {
  const std::size_t w = static_cast<std::size_t>(width);
  if (format == PixelFormat::kNv12) return (w + 1) / 2 * 2;
  return w * static_cast<std::size_t>(bytes_per_pixel(format));
}

std::size_t image_bytes(int width, int height, PixelFormat format, std::size_t pitch) {
  (void)width;
  const std::size_t rows =
      static_cast<std::size_t>(height) + (format == PixelFormat::kNv12 ? chroma_rows(height) : 0);
  return pitch * rows;
}

ImageView make_view(std::uint8_t* base, int width, int height, PixelFormat format,
                    std::size_t pitch) {
  ImageView v{base, width, height, pitch, format};
  if (format == PixelFormat::kNv12) {
    v.uv = base + pitch * static_cast<std::size_t>(height);
    v.uv_pitch = pitch;
  }
  return v;
}

HostImage::HostImage(int width, int height, PixelFormat format, std::size_t pitch) {
  if (width <= 0 || height <= 0) throw Error("image size must be positive, got " +
                                             std::to_string(width) + "x" + std::to_string(height));
  const std::size_t row = min_pitch(width, format);
  if (pitch < row) pitch = row;
  storage_.reset(new std::uint8_t[image_bytes(width, height, format, pitch)]);
  view_ = make_view(storage_.get(), width, height, format, pitch);
}

void copy_image(const ImageView& src, const ImageView& dst) {
  if (src.width != dst.width || src.height != dst.height || src.format != dst.format) {
    throw Error("copy_image: shapes differ");
  }
  for (int y = 0; y < src.height; ++y) {
    std::memcpy(dst.row<std::uint8_t>(y), src.row<std::uint8_t>(y), src.row_bytes());
  }
  if (src.format == PixelFormat::kNv12) {
    for (int y = 0; y < chroma_rows(src.height); ++y) {
      std::memcpy(dst.chroma_row(y), src.chroma_row(y), src.chroma_row_bytes());
    }
  }
}

}  // namespace jetpipe
