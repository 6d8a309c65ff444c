// SPDX-License-Identifier: MIT
// CPU twin of harris: an exact integer core, then one evaluation in double (harris.h spells out the
// operations; the CUDA twin repeats them bit for bit):
//   Dx, Dy     = integer Sobel(ksize) of the image extended by its border            (int32)
//   Sxx, Sxy, Syy = Σ over the block_size² box (anchor block_size / 2) of Dx², Dx·Dy, Dy²,
//                 the border applying to the structure tensor (constant: 0)        (int64)
//   R          = evaluated in double from the three sums, rounded once to float.
// Integer sums are exact in any order, so the code below is written for clarity.
#include <cstdint>
#include <vector>

#include "kernels/harris.h"
#include "kernels/ref_util.h"
#include "kernels/sobel.h"

namespace jetpipe {

namespace {

struct Taps {
  std::vector<int> x, y;  // along x, along y (odd lengths)
};

Taps sobel_for(int dx, int dy, int ksize) {
  SobelParams sp;
  sp.dx = dx;
  sp.dy = dy;
  sp.ksize = ksize;
  std::vector<float> kx, ky;
  sobel_taps(sp, &kx, &ky);  // small integers, exact in float
  Taps t;
  for (float v : kx) t.x.push_back(static_cast<int>(v));
  for (float v : ky) t.y.push_back(static_cast<int>(v));
  return t;
}

// Σ_a t.y[a] · Σ_b t.x[b] · ext[r + a − |t.y|/2][x + r + b − |t.x|/2]: one separable filter at
// column x, from 2r + 1 rows extended by r on each side. Exact: |result| ≤ 255 · 20 · 64 (ksize 7).
std::int32_t apply(const std::vector<std::vector<std::uint8_t>>& ext, int r, const Taps& t, int x) {
  const int hx = static_cast<int>(t.x.size()) / 2, hy = static_cast<int>(t.y.size()) / 2;
  std::int32_t sum = 0;
  for (std::size_t a = 0; a < t.y.size(); ++a) {
    const std::uint8_t* row = ext[r - hy + a].data();
    std::int32_t s = 0;
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
  const int bs = p.block_size, anchor = bs / 2;
  const double s2 = harris_s2(p);

  // Gradients of the tensor rows y0 − anchor … y1 − 1 + (bs − 1 − anchor): each the remapped image
  // row's (0 outside a constant border, where the tensor is 0).
  const int first = y0 - anchor;
  const int count = y1 - y0 + bs - 1;
  const std::size_t wz = static_cast<std::size_t>(w);
  std::vector<std::int32_t> gx(count * wz, 0), gy(count * wz, 0);
  std::vector<std::vector<std::uint8_t>> ext(2 * r + 1, std::vector<std::uint8_t>(wz + 2 * r));
  for (int i = 0; i < count; ++i) {
    const int sy = border_remap(first + i, h, p.border.mode);
    if (sy < 0) continue;
    for (int a = -r; a <= r; ++a) ref::extended_row(src, p.border, sy + a, r, ext[a + r].data());
    for (int x = 0; x < w; ++x) {
      gx[i * wz + x] = apply(ext, r, tdx, x);
      gy[i * wz + x] = apply(ext, r, tdy, x);
    }
  }

  // Box sums along each tensor row (the border on columns; constant: 0 outside), then down.
  std::vector<std::int64_t> rowsum(count * wz * 3, 0);
  for (int i = 0; i < count; ++i) {
    for (int x = 0; x < w; ++x) {
      std::int64_t* o = &rowsum[(i * wz + x) * 3];
      for (int b = 0; b < bs; ++b) {
        const int sx = border_remap(x - anchor + b, w, p.border.mode);
        if (sx < 0) continue;
        const std::int64_t dx = gx[i * wz + sx], dy = gy[i * wz + sx];
        o[0] += dx * dx;
        o[1] += dx * dy;
        o[2] += dy * dy;
      }
    }
  }
  for (int y = y0; y < y1; ++y) {
    float* d = dst.row<float>(y);
    for (int x = 0; x < w; ++x) {
      std::int64_t sum[3] = {0, 0, 0};
      for (int a = 0; a < bs; ++a) {
        const std::int64_t* o = &rowsum[((y - y0 + a) * wz + x) * 3];
        for (int c = 0; c < 3; ++c) sum[c] += o[c];
      }
      // harris.h: |sums| < 2^47, exact in double; then the operations in this order, each
      // rounded to nearest (no contraction: the kernels library builds with -ffp-contract=off).
      const double a = static_cast<double>(sum[0]) * s2;
      const double b = static_cast<double>(sum[1]) * s2;
      const double c = static_cast<double>(sum[2]) * s2;
      const double det = a * c - b * b;
      const double tr = a + c;
      d[x] = static_cast<float>(det - p.k * tr * tr);
    }
  }
}

}  // namespace jetpipe
