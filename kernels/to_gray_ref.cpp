// SPDX-License-Identifier: MIT
// CPU twin of to_gray: cvtColor's 8-bit fixed-point weights (15 fractional bits in OpenCV 4.x).
#include <cstdint>
#include <cstring>

#include "kernels/to_gray.h"

namespace jetpipe {

namespace {
constexpr int kR2Y = kToGrayR, kG2Y = kToGrayG, kB2Y = kToGrayB, kShift = kToGrayShift;
}  // namespace

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
      const int c0 = s[3 * x], c1 = s[3 * x + 1], c2 = s[3 * x + 2];
      const int b = bgr ? c0 : c2, g = c1, r = bgr ? c2 : c0;
      d[x] = static_cast<std::uint8_t>((r * kR2Y + g * kG2Y + b * kB2Y + (1 << (kShift - 1))) >>
                                       kShift);
    }
  }
}

}  // namespace jetpipe
