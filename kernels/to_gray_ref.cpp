// SPDX-License-Identifier: MIT
// CPU twin of to_gray: cvtColor's 8-bit fixed-point weights (15 fractional bits in OpenCV 4.x).
#include <cstdint>
#include <cstring>

#include "kernels/to_gray.h"

namespace jetpipe {

void to_gray_ref(const ImageView& src, const ImageView& dst, int y0, int y1) {
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* s = src.row<const std::uint8_t>(y);
    std::uint8_t* d = dst.row<std::uint8_t>(y);
    if (src.format == PixelFormat::kGray8) {
      std::memcpy(d, s, static_cast<std::size_t>(src.width));
      continue;
    }
    const bool bgr = src.format == PixelFormat::kBgr8;
    for (int x = 0; x < src.width; ++x) {
      const unsigned c0 = s[3 * x], c1 = s[3 * x + 1], c2 = s[3 * x + 2];
      d[x] = static_cast<std::uint8_t>(bgr ? to_gray_y(c2, c1, c0) : to_gray_y(c0, c1, c2));
    }
  }
}

}  // namespace jetpipe
