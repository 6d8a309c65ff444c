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
  }
  return "?";
}

HostImage::HostImage(int width, int height, PixelFormat format, std::size_t pitch) {
  if (width <= 0 || height <= 0) throw Error("image size must be positive, got " +
                                             std::to_string(width) + "x" + std::to_string(height));
  const std::size_t row = static_cast<std::size_t>(width) * bytes_per_pixel(format);
  if (pitch < row) pitch = row;
  storage_.reset(new std::uint8_t[pitch * static_cast<std::size_t>(height)]);
  view_ = ImageView{storage_.get(), width, height, pitch, format};
}

void copy_image(const ImageView& src, const ImageView& dst) {
  if (src.width != dst.width || src.height != dst.height || src.format != dst.format) {
    throw Error("copy_image: shapes differ");
  }
  for (int y = 0; y < src.height; ++y) {
    std::memcpy(dst.row<std::uint8_t>(y), src.row<std::uint8_t>(y), src.row_bytes());
  }
}

}  // namespace jetpipe
