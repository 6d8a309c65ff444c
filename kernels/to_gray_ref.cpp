// SPDX-License-Identifier: MIT
// CPU twin of to_gray: cvtColor's 8-bit fixed-point weights (15 fractional bits in OpenCV 4.x);
// 4-byte pixels ignore byte 3 (cvtColor's BGRA2GRAY); NV12's gray image is its luma plane.
#include <cstdint>
#include <cstring>

#include "kernels/to_gray.h"

namespace jetpipe {

void to_gray_ref(const ImageView& src, const ImageView& dst, int y0, int y1) {
  const int bpp = bytes_per_pixel(src.format);
  const bool rgb = red_first(src.format);
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* s = src.row<const std::uint8_t>(y);
    std::uint8_t* d = dst.row<std::uint8_t>(y);
    if (!is_colour(src.format)) {  // GRAY8, or NV12's luma plane
      std::memcpy(d, s, static_cast<std::size_t>(src.width));
      continue;
    }
    for (int x = 0; x < src.width; ++x) {
      const std::uint8_t* p = s + bpp * x;
      d[x] = static_cast<std::uint8_t>(rgb ? to_gray_y(p[0], p[1], p[2])
                                           : to_gray_y(p[2], p[1], p[0]));
    }
  }
}

}  // namespace jetpipe
