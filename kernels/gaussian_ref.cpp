// SPDX-License-Identifier: MIT
// CPU twin of gaussian: OpenCV 4.x's bit-exact 8-bit GaussianBlur (smooth.dispatch.cpp,
// GaussianBlurFixedPoint): Q8 taps, integer row and column passes, one rounding at the end.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/gaussian.h"
#include "kernels/ref_util.h"

namespace jetpipe {

namespace {

// getGaussianKernelBitExact in double arithmetic (OpenCV uses softdouble; the only difference is
// std::exp against softfloat's exp, a last-bit matter).
std::vector<double> gaussian_kernel(int n, double sigma) {
  if (sigma <= 0) {
    switch (n) {
      case 1:
        return {1.0};
      case 3:
        return {0.25, 0.5, 0.25};
      case 5:
        return {0.0625, 0.25, 0.375, 0.25, 0.0625};
      case 7:
        return {0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125};
      case 9:
        return {4 / 256.0,  13 / 256.0, 30 / 256.0, 51 / 256.0, 60 / 256.0,
                51 / 256.0, 30 / 256.0, 13 / 256.0, 4 / 256.0};
      default:
        break;
    }
  }
  // sigma = 0.3·((n − 1)·0.5 − 1) + 0.8, which OpenCV computes as one fused n·0.15 + 0.35.
  const double s = sigma > 0 ? sigma : std::fma(static_cast<double>(n), 0.15, 0.35);
  const double scale2 = -0.125 / (s * s);  // −0.5 / s², with x counted in half steps below
  const int half = (n - 1) / 2;
  std::vector<double> values(half);
  double sum = 0;
  for (int i = 0, x = 1 - n; i < half; ++i, x += 2) {  // x = 2·(i − (n − 1)/2)
    values[i] = std::exp(static_cast<double>(x * x) * scale2);
    sum += values[i];
  }
  sum = sum * 2 + 1;  // both wings and the centre (exp(0) = 1)
  if (n % 2 == 0) sum += 1;
  const double mul = 1 / sum;
  std::vector<double> k(n);
  for (int i = 0; i < half; ++i) k[i] = k[n - 1 - i] = values[i] * mul;
  k[half] = mul;
  if (n % 2 == 0) k[half + 1] = mul;
  return k;
}

}  // namespace

GaussianParams resolve_gaussian(int ksize, double sigma, Border border) {
  GaussianParams p;
  p.border = border;
  if (ksize <= 0) {
    if (sigma <= 0) throw config_error("gaussian: give ksize (odd, ≥ 1) or sigma (> 0)");
    ksize = static_cast<int>(std::lrint(sigma * 3 * 2 + 1)) | 1;  // 8-bit images: 3 sigmas a side
  }
  if (ksize % 2 == 0) {
    throw config_error("gaussian: ksize must be odd, got " + std::to_string(ksize));
  }
  p.ksize = ksize;
  p.sigma_from_ksize = sigma <= 0;
  p.sigma = sigma > 0 ? sigma : std::fma(static_cast<double>(ksize), 0.15, 0.35);
  return p;
}

std::vector<float> gaussian_taps(int ksize, double sigma_given) {
  const std::vector<double> k = gaussian_kernel(ksize, sigma_given);
  return std::vector<float>(k.begin(), k.end());
}

// getGaussianKernelFixedPoint_ED with 8 fractional bits: round each wing tap with the error of the
// previous ones carried along, then give the centre whatever makes the sum exactly 256.
std::vector<int> gaussian_taps_q8(int ksize, double sigma_given) {
  const std::vector<double> k = gaussian_kernel(ksize, sigma_given);
  const int n = ksize, half = n / 2;
  std::vector<int> q(n);
  double err = 0;
  int sum = 0;
  for (int i = 0; i < half; ++i) {
    const double v = k[i] * 256 + err;
    const int r = static_cast<int>(std::nearbyint(v));  // cvRound: half to even
    err = v - r;
    q[i] = q[n - 1 - i] = r;
    sum += r;
  }
  q[half] = 256 - 2 * sum;
  return q;
}

void gaussian_ref(const GaussianParams& p, const ImageView& src, const ImageView& dst, int y0,
                  int y1) {
  if (y0 >= y1) return;
  const std::vector<int> taps = gaussian_taps_q8(p.ksize, p.sigma_from_ksize ? 0.0 : p.sigma);
  const int r = p.ksize / 2;
  const int w = src.width;
  const ref::ExtendedRows in(src, p.border, r, r, y0, y1);

  // Row pass over every input row the output rows need: Q8 sums (at most 255·256); column pass:
  // Q16 sums, rounded half up to 8 bits.
  const std::vector<std::int32_t> rowpass = ref::int_row_pass(in, taps, y0 - r, y1 - y0 + 2 * r, w);
  std::vector<std::int32_t> acc(w);
  for (int y = y0; y < y1; ++y) {
    ref::int_column_pass(rowpass, taps, y - y0, w, acc.data());
    std::uint8_t* d = dst.row<std::uint8_t>(y);
    for (int x = 0; x < w; ++x) d[x] = ref::saturate_u8((acc[x] + (1 << 15)) >> 16);
  }
}

}  // namespace jetpipe
