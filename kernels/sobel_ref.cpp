// SPDX-License-Identifier: MIT
// CPU twin of sobel: the integer derivative (getDerivKernels' taps, row pass then column pass,
// exact), then value = float(derivative) · float(scale), rounded half to even and saturated.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/ref_util.h"
#include "kernels/sobel.h"

namespace jetpipe {

namespace {

// getSobelKernels for one axis (unnormalized): the derivative of the given order of a binomial
// smoothing kernel of ksize taps; ksize 1 means a single tap 1 (order 0 only).
std::vector<int> sobel_axis(int order, int ksize) {
  std::vector<int> k(ksize + 1, 0);
  if (ksize == 1) {
    k[0] = 1;
  } else if (ksize == 3) {
    const int taps[3][3] = {{1, 2, 1}, {-1, 0, 1}, {1, -2, 1}};
    for (int i = 0; i < 3; ++i) k[i] = taps[order][i];
  } else {
    k[0] = 1;
    for (int i = 0; i < ksize - order - 1; ++i) {  // smoothing: convolve with [1 1]
      int old = k[0];
      for (int j = 1; j <= ksize; ++j) {
        const int next = k[j] + k[j - 1];
        k[j - 1] = old;
        old = next;
      }
    }
    for (int i = 0; i < order; ++i) {  // differentiation: convolve with [−1 1]
      int old = -k[0];
      for (int j = 1; j <= ksize; ++j) {
        const int next = k[j - 1] - k[j];
        k[j - 1] = old;
        old = next;
      }
    }
  }
  k.resize(ksize);
  return k;
}

void sobel_int_taps(const SobelParams& p, std::vector<int>* kx, std::vector<int>* ky) {
  // ksize 1: a 3-tap derivative along an axis with order > 0, a single tap 1 along the other.
  const int nx = (p.ksize == 1 && p.dx > 0) ? 3 : p.ksize;
  const int ny = (p.ksize == 1 && p.dy > 0) ? 3 : p.ksize;
  *kx = sobel_axis(p.dx, nx);
  *ky = sobel_axis(p.dy, ny);
}

}  // namespace

void sobel_taps(const SobelParams& p, std::vector<float>* kx, std::vector<float>* ky) {
  std::vector<int> ix, iy;
  sobel_int_taps(p, &ix, &iy);
  kx->assign(ix.begin(), ix.end());
  ky->assign(iy.begin(), iy.end());
}

void sobel_ref(const SobelParams& p, const ImageView& src, const ImageView& dst, int y0, int y1) {
  if (y0 >= y1) return;
  std::vector<int> kx, ky;
  sobel_int_taps(p, &kx, &ky);
  const int rx = static_cast<int>(kx.size()) / 2, ry = static_cast<int>(ky.size()) / 2;
  const int w = src.width;
  const ref::ExtendedRows in(src, p.border, rx, ry, y0, y1);

  const std::vector<std::int32_t> rowpass = ref::int_row_pass(in, kx, y0 - ry, y1 - y0 + 2 * ry, w);
  const float scale = static_cast<float>(p.scale);
  std::vector<std::int32_t> deriv(w);
  for (int y = y0; y < y1; ++y) {
    ref::int_column_pass(rowpass, ky, y - y0, w, deriv.data());
    if (p.abs8) {
      std::uint8_t* d = dst.row<std::uint8_t>(y);
      for (int x = 0; x < w; ++x) {
        d[x] =
            ref::saturate_u8(static_cast<double>(std::fabs(static_cast<float>(deriv[x]) * scale)));
      }
    } else {
      std::int16_t* d = dst.row<std::int16_t>(y);
      for (int x = 0; x < w; ++x) {
        d[x] = ref::saturate_s16(static_cast<double>(static_cast<float>(deriv[x]) * scale));
      }
    }
  }
}

}  // namespace jetpipe
