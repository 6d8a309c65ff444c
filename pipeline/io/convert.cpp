// SPDX-License-Identifier: MIT
// Frame layouts to BGR8 / GRAY8 for the outputs (convert.h).
#include "pipeline/io/convert.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace jetpipe {

namespace {

// OpenCV's YUV420 → RGB coefficients (imgproc color_yuv: ITUR_BT_601_*), 20 fractional bits.
constexpr int kCy = 1220542, kCub = 2116026, kCug = -409993, kCvg = -852492, kCvr = 1673527;
constexpr int kShift = 20;

std::uint8_t saturate(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

}  // namespace

bool is_8bit_frame(PixelFormat f) {
  return f == PixelFormat::kGray8 || f == PixelFormat::kNv12 || is_colour(f);
}

void nv12_to_bgr(const ImageView& nv, const ImageView& bgr) {
  for (int y = 0; y < nv.height; ++y) {
    const std::uint8_t* luma = nv.row<const std::uint8_t>(y);
    const std::uint8_t* c = nv.chroma_row(y / 2);
    std::uint8_t* o = bgr.row<std::uint8_t>(y);
    for (int x = 0; x < nv.width; ++x) {
      const int u = c[x & ~1] - 128, v = c[(x & ~1) + 1] - 128;
      const int ruv = (1 << (kShift - 1)) + kCvr * v;
      const int guv = (1 << (kShift - 1)) + kCvg * v + kCug * u;
      const int buv = (1 << (kShift - 1)) + kCub * u;
      const int yy = std::max(0, luma[x] - 16) * kCy;
      o[3 * x] = saturate((yy + buv) >> kShift);
      o[3 * x + 1] = saturate((yy + guv) >> kShift);
      o[3 * x + 2] = saturate((yy + ruv) >> kShift);
    }
  }
}

HostImage convert_8bit(const ImageView& src, PixelFormat to) {
  if ((to != PixelFormat::kGray8 && to != PixelFormat::kBgr8) || !is_8bit_frame(src.format)) {
    throw Error(std::string("convert_8bit: cannot make ") + to_string(to) + " of " +
                to_string(src.format) + " (8-bit frame layouts to gray8 or bgr8)");
  }
  HostImage out(src.width, src.height, to);
  const ImageView d = out.view();
  if (src.format == to) {
    copy_image(src, d);
    return out;
  }
  if (src.format == PixelFormat::kNv12) {
    if (to == PixelFormat::kGray8) {
      copy_image(luma_plane(src), d);
    } else {
      nv12_to_bgr(src, d);
    }
    return out;
  }
  const int bpp = bytes_per_pixel(src.format);
  const int ri = red_first(src.format) ? 0 : 2, bi = 2 - ri;
  for (int y = 0; y < src.height; ++y) {
    const std::uint8_t* s = src.row<const std::uint8_t>(y);
    std::uint8_t* o = d.row<std::uint8_t>(y);
    for (int x = 0; x < src.width; ++x) {
      if (src.format == PixelFormat::kGray8) {
        o[3 * x] = o[3 * x + 1] = o[3 * x + 2] = s[x];
        continue;
      }
      const std::uint8_t* p = s + bpp * x;
      if (to == PixelFormat::kGray8) {
        o[x] = static_cast<std::uint8_t>((p[bi] * 29 + p[1] * 150 + p[ri] * 77 + 128) >> 8);
      } else {
        o[3 * x] = p[bi];
        o[3 * x + 1] = p[1];
        o[3 * x + 2] = p[ri];
      }
    }
  }
  return out;
}

}  // namespace jetpipe
