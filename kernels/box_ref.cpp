// SPDX-License-Identifier: MIT
// CPU twin of box: integer window sums (rows, then columns, each a running sum: exact in integers,
// so the same sums as adding every window); normalize divides by ksize² rounding to nearest
// (ksize² is odd, so there are no ties), else the sum saturates.
#include <cstdint>
#include <vector>

#include "kernels/box.h"
#include "kernels/ref_util.h"

namespace jetpipe {

void box_ref(const BoxParams& p, const ImageView& src, const ImageView& dst, int y0, int y1) {
  if (y0 >= y1) return;
  const int r = p.ksize / 2;
  const int w = src.width;
  const ref::ExtendedRows in(src, p.border, r, r, y0, y1);

  // Row sums over every input row the output rows need, sliding along the row (the window's new
  // column in, its oldest out: two adds an output whatever the ksize).
  const int nrows = y1 - y0 + 2 * r;
  std::vector<std::int32_t> rowsum(static_cast<std::size_t>(nrows) * w);
  for (int i = 0; i < nrows; ++i) {
    const std::uint8_t* s = in.row(y0 - r + i);
    std::int32_t* o = &rowsum[static_cast<std::size_t>(i) * w];
    std::int32_t acc = 0;
    for (int k = 0; k < p.ksize; ++k) acc += s[k];
    o[0] = acc;
    for (int x = 1; x < w; ++x) {
      acc += s[x + p.ksize - 1] - s[x - 1];
      o[x] = acc;
    }
  }

  // Column sums of the row sums, sliding down: the first output row adds ksize rows, each next
  // one adds the row entering the window and subtracts the one leaving it.
  const std::int64_t area = static_cast<std::int64_t>(p.ksize) * p.ksize;
  std::vector<std::int64_t> sum(w, 0);
  for (int k = 0; k < p.ksize; ++k) {
    const std::int32_t* s = &rowsum[static_cast<std::size_t>(k) * w];
    for (int x = 0; x < w; ++x) sum[x] += s[x];
  }
  for (int y = y0; y < y1; ++y) {
    if (y > y0) {
      const std::int32_t* enter = &rowsum[static_cast<std::size_t>(y - y0 + p.ksize - 1) * w];
      const std::int32_t* leave = &rowsum[static_cast<std::size_t>(y - y0 - 1) * w];
      for (int x = 0; x < w; ++x) sum[x] += enter[x] - leave[x];
    }
    std::uint8_t* d = dst.row<std::uint8_t>(y);
    for (int x = 0; x < w; ++x) {
      if (p.normalize) {
        d[x] = static_cast<std::uint8_t>((2 * sum[x] + area) / (2 * area));  // round(sum / area)
      } else {
        d[x] = sum[x] > 255 ? 255 : static_cast<std::uint8_t>(sum[x]);
      }
    }
  }
}

}  // namespace jetpipe
