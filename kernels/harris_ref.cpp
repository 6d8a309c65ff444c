// SPDX-License-Identifier: MIT
// CPU twin of harris, following OpenCV's cornerEigenValsVecs + calcHarris step by step:
//   Dx, Dy  = Sobel(ksize) · scale, scale = 1 / (2^(ksize−1) · block_size · 255)   (float)
//   cov     = (Dx², Dx·Dy, Dy²)                                                  (float)
//   a, b, c = unnormalized box of block_size over cov (anchor block_size / 2)      (double)
//   R       = a·c − b² − k·(a + c)²                                                (→ float)
// The border applies to the image for the gradients and to cov for the box; a constant border gives
// the image border.value and cov 0, as cornerHarris(BORDER_CONSTANT) does.
#include <cstdint>
#include <vector>

#include "kernels/harris.h"
#include "kernels/ref_util.h"
#include "kernels/sobel.h"

namespace jetpipe {

namespace {

struct Taps {
  std::vector<double> x, y;  // along x, along y (odd lengths)
};

Taps sobel_for(int dx, int dy, int ksize) {
  SobelParams sp;
  sp.dx = dx;
  sp.dy = dy;
  sp.ksize = ksize;
  std::vector<float> kx, ky;
  sobel_taps(sp, &kx, &ky);
  return {std::vector<double>(kx.begin(), kx.end()), std::vector<double>(ky.begin(), ky.end())};
}

// Σ_a t.y[a] · Σ_b t.x[b] · ext[r + a − |t.y|/2][x + r + b − |t.x|/2]: one separable filter at
// column x, from 2r + 1 rows extended by r on each side.
double apply(const std::vector<std::vector<std::uint8_t>>& ext, int r, const Taps& t, int x) {
  const int hx = static_cast<int>(t.x.size()) / 2, hy = static_cast<int>(t.y.size()) / 2;
  double sum = 0;
  for (std::size_t a = 0; a < t.y.size(); ++a) {
    const std::uint8_t* row = ext[r - hy + a].data();
    double s = 0;
    for (std::size_t b = 0; b < t.x.size(); ++b) s += t.x[b] * row[x + r - hx + b];
    sum += t.y[a] * s;
  }
  return sum;
}

}  // namespace

void harris_ref(const HarrisParams& p, const ImageView& src, const ImageView& dst, int y0, int y1) {
  if (y0 >= y1) return;
  const int w = src.width, h = src.height;
  const Taps tdx = sobel_for(1, 0, p.ksize), tdy = sobel_for(0, 1, p.ksize);
  const int r = p.ksize == 1 ? 1 : p.ksize / 2;  // gradient radius
  const double scale = 1.0 / (static_cast<double>(1 << (p.ksize - 1)) * p.block_size * 255.0);
  const int anchor = p.block_size / 2;

  // cov rows y0 − anchor … y1 − 1 + (block_size − 1 − anchor), each the remapped image row's
  // (or zeros outside a constant border).
  const int first = y0 - anchor;
  const int count = y1 - y0 + p.block_size - 1;
  std::vector<std::vector<float>> cov(count, std::vector<float>(3 * static_cast<std::size_t>(w)));
  std::vector<std::vector<std::uint8_t>> ext(
      2 * r + 1, std::vector<std::uint8_t>(w + 2 * static_cast<std::size_t>(r)));
  for (int i = 0; i < count; ++i) {
    const int sy = border_remap(first + i, h, p.border.mode);
    if (sy < 0) continue;  // constant border: cov is 0 outside
    for (int a = -r; a <= r; ++a) ref::extended_row(src, p.border, sy + a, r, ext[a + r].data());
    for (int x = 0; x < w; ++x) {
      const float gx = static_cast<float>(apply(ext, r, tdx, x) * scale);
      const float gy = static_cast<float>(apply(ext, r, tdy, x) * scale);
      cov[i][3 * x] = gx * gx;
      cov[i][3 * x + 1] = gx * gy;
      cov[i][3 * x + 2] = gy * gy;
    }
  }

  // Box sums: along each cov row (with the border on columns), then down the columns.
  std::vector<std::vector<double>> rowsum(count,
                                          std::vector<double>(3 * static_cast<std::size_t>(w)));
  for (int i = 0; i < count; ++i) {
    for (int x = 0; x < w; ++x) {
      for (int b = 0; b < p.block_size; ++b) {
        const int sx = border_remap(x - anchor + b, w, p.border.mode);
        if (sx < 0) continue;
        for (int c = 0; c < 3; ++c) rowsum[i][3 * x + c] += cov[i][3 * sx + c];
      }
    }
  }
  for (int y = y0; y < y1; ++y) {
    float* d = dst.row<float>(y);
    for (int x = 0; x < w; ++x) {
      double s[3] = {0, 0, 0};
      for (int a = 0; a < p.block_size; ++a) {
        for (int c = 0; c < 3; ++c) s[c] += rowsum[y - y0 + a][3 * x + c];
      }
      const double ca = s[0], cb = s[1], cc = s[2];
      d[x] = static_cast<float>(ca * cc - cb * cb - p.k * (ca + cc) * (ca + cc));
    }
  }
}

}  // namespace jetpipe
