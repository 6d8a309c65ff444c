// SPDX-License-Identifier: MIT
// CPU twin of threshold: OpenCV's 8-bit THRESH_BINARY and getThreshVal_Otsu_8u, step for step.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kernels/threshold.h"

namespace jetpipe {

int otsu_threshold(const std::uint64_t hist[256]) {
  std::uint64_t n = 0;
  for (int i = 0; i < 256; ++i) n += hist[i];
  if (n == 0) return 0;
  const double scale = 1.0 / static_cast<double>(n);
  double mu = 0;
  for (int i = 0; i < 256; ++i) mu += i * static_cast<double>(hist[i]);
  mu *= scale;

  double mu1 = 0, q1 = 0, max_sigma = 0;
  int max_val = 0;
  for (int i = 0; i < 256; ++i) {
    const double p_i = static_cast<double>(hist[i]) * scale;
    mu1 *= q1;  // OpenCV's order: this runs even when the level is skipped below
    q1 += p_i;
    const double q2 = 1. - q1;
    if (std::min(q1, q2) < FLT_EPSILON || std::max(q1, q2) > 1. - FLT_EPSILON) continue;
    mu1 = (mu1 + i * p_i) / q1;
    const double mu2 = (mu - q1 * mu1) / q2;
    const double sigma = q1 * q2 * (mu1 - mu2) * (mu1 - mu2);
    if (sigma > max_sigma) {
      max_sigma = sigma;
      max_val = i;
    }
  }
  return max_val;
}

void threshold_ref(double thresh, double max_value, const ImageView& src, const ImageView& dst,
                   int y0, int y1) {
  // 8-bit rules: the threshold is floored, max_value rounded (half to even) and saturated.
  const double t = std::floor(thresh);
  const std::uint8_t high = !(max_value > 0) ? 0
                            : max_value >= 255
                                ? 255
                                : static_cast<std::uint8_t>(std::nearbyint(max_value));
  // The comparison for each of the 256 values once (exact for any t, NaN too), then a lookup a
  // pixel: 1080p 1.33 → 0.73 ms on one core (docs/PERFORMANCE.md, the CPU backend).
  std::uint8_t lut[256];
  for (int v = 0; v < 256; ++v) lut[v] = v > t ? high : 0;
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* s = src.row<const std::uint8_t>(y);
    std::uint8_t* d = dst.row<std::uint8_t>(y);
    for (int x = 0; x < src.width; ++x) d[x] = lut[s[x]];
  }
}

}  // namespace jetpipe
