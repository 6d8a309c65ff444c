// SPDX-License-Identifier: MIT
// CPU twin of convolve: filter2D's correlation in float, in a fixed order so that a GPU twin can
// reproduce it bit for bit: acc = float(delta), then acc += tap · pixel for the taps in row-major
// order (a product and a sum, each rounded to float: no fused multiply-add), then saturate_cast.
#include <cstdint>
#include <vector>

#include "kernels/convolve.h"
#include "kernels/ref_util.h"

namespace jetpipe {

void convolve_ref(const ConvolveParams& p, const ImageView& src, const ImageView& dst, int y0,
                  int y1) {
  if (y0 >= y1) return;
  const int rx = p.cols / 2, ry = p.rows / 2;
  const int w = src.width;
  const ref::ExtendedRows in(src, p.border, rx, ry, y0, y1);

  std::vector<float> acc(w);
  std::vector<float> row(static_cast<std::size_t>(w) + 2 * rx);
  for (int y = y0; y < y1; ++y) {
    std::fill(acc.begin(), acc.end(), static_cast<float>(p.delta));
    for (int i = 0; i < p.rows; ++i) {
      const std::uint8_t* s = in.row(y - ry + i);
      for (std::size_t x = 0; x < row.size(); ++x) row[x] = s[x];
      for (int j = 0; j < p.cols; ++j) {
        const float tap = p.taps[static_cast<std::size_t>(i) * p.cols + j];
        for (int x = 0; x < w; ++x) {
          const float product = tap * row[x + j];
          acc[x] += product;
        }
      }
    }
    std::uint8_t* d = dst.row<std::uint8_t>(y);
    for (int x = 0; x < w; ++x) d[x] = ref::saturate_u8(static_cast<double>(acc[x]));
  }
}

}  // namespace jetpipe
