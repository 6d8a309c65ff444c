// SPDX-License-Identifier: MIT
// CPU twin of histogram: calcHist's 8-bit lookup table (calcHistLookupTables_8u), then counting.
#include <cmath>
#include <cstdint>

#include "kernels/histogram.h"

namespace jetpipe {

void histogram_lut(const HistogramParams& p, int lut[256]) {
  const double lo = static_cast<float>(p.lo), hi = static_cast<float>(p.hi);  // calcHist's ranges
  const double t = p.bins / (hi - lo);
  const double offset = -t * lo;
  for (int v = 0; v < 256; ++v) {
    if (v >= lo && v < hi) {
      const double bin = std::floor(v * t + offset);  // cvFloor, clamped into the bins
      lut[v] = bin < 0 ? 0 : bin > p.bins - 1 ? p.bins - 1 : static_cast<int>(bin);
    } else {
      lut[v] = -1;
    }
  }
}

void histogram_ref(const HistogramParams& p, const ImageView& src, int y0, int y1,
                   std::uint64_t* counts) {
  int lut[256];
  histogram_lut(p, lut);
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* s = src.row<const std::uint8_t>(y);
    for (int x = 0; x < src.width; ++x) {
      if (lut[s[x]] >= 0) ++counts[lut[s[x]]];
    }
  }
}

}  // namespace jetpipe
