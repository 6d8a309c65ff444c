// SPDX-License-Identifier: MIT
// Helpers shared by the CPU reference twins (kernels/*_ref.cpp): OpenCV's rounding and saturation,
// rows of a GRAY8 image extended by the border, and the passes of a separable integer filter. Host
// only; not part of any kernel's contract.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/border.h"
#include "core/image.h"

namespace jetpipe::ref {

// saturate_cast<uchar>(v) for a double or float: cvRound (half to even, the default rounding mode)
// then clamp to [0, 255]. NaN gives 0.
inline std::uint8_t saturate_u8(double v) {
  if (!(v > 0)) return 0;
  if (v >= 255) return 255;
  return static_cast<std::uint8_t>(std::nearbyint(v));
}
inline std::uint8_t saturate_u8(int v) {
  return static_cast<std::uint8_t>(std::min(std::max(v, 0), 255));
}

// saturate_cast<short>(v): cvRound then clamp to [−32768, 32767]. NaN gives 0.
inline std::int16_t saturate_s16(double v) {
  if (std::isnan(v)) return 0;
  if (v <= -32768) return -32768;
  if (v >= 32767) return 32767;
  return static_cast<std::int16_t>(std::nearbyint(v));
}

// The pixel value of a constant border on a GRAY8 image, as cv::copyMakeBorder gives it
// (saturate_cast<uchar>(Scalar value)).
inline std::uint8_t border_value_u8(const Border& b) { return saturate_u8(b.value); }

// Writes row y of a GRAY8 image extended by r pixels on each side: out[i] = pixel (i − r, y), the
// border applying to both coordinates (y may lie outside the image). out holds width + 2r elements.
inline void extended_row(const ImageView& src, const Border& border, int y, int r,
                         std::uint8_t* out) {
  const int n = src.width + 2 * r;
  const std::uint8_t fill = border_value_u8(border);
  const int sy = border_remap(y, src.height, border.mode);
  if (sy < 0) {
    std::fill(out, out + n, fill);
    return;
  }
  const std::uint8_t* row = src.row<const std::uint8_t>(sy);
  std::copy(row, row + src.width, out + r);  // the row itself; the border only at its ends
  const auto edge = [&](int i) {
    const int sx = border_remap(i - r, src.width, border.mode);
    out[i] = sx < 0 ? fill : row[sx];
  };
  for (int i = 0; i < r; ++i) edge(i);
  for (int i = r + src.width; i < n; ++i) edge(i);
}

// Rows [y0 − ry, y1 + ry) of a GRAY8 image, each extended by rx pixels on both sides
// (extended_row): the input a filter of radius (rx, ry) needs to produce output rows [y0, y1).
class ExtendedRows {
 public:
  ExtendedRows(const ImageView& src, const Border& border, int rx, int ry, int y0, int y1)
      : first_(y0 - ry), stride_(static_cast<std::size_t>(src.width) + 2 * rx) {
    const int count = std::max(y1 - y0, 0) + 2 * ry;
    data_.resize(stride_ * static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) extended_row(src, border, first_ + i, rx, &data_[i * stride_]);
  }
  // Row y (y0 − ry ≤ y < y1 + ry); element 0 is x = −rx.
  const std::uint8_t* row(int y) const {
    return &data_[static_cast<std::size_t>(y - first_) * stride_];
  }

 private:
  int first_;
  std::size_t stride_;
  std::vector<std::uint8_t> data_;
};

// The row pass of a separable integer filter (gaussian's Q8 taps, sobel's): row i of the result
// (w values) is Σ_k taps[k] · in.row(first + i)[x + k] for rows first .. first + rows − 1. Tap by
// tap across the row, so the loop over x vectorizes; integer sums: any order gives the same values.
inline std::vector<std::int32_t> int_row_pass(const ExtendedRows& in, const std::vector<int>& taps,
                                              int first, int rows, int w) {
  std::vector<std::int32_t> pass(static_cast<std::size_t>(rows) * w);
  for (int i = 0; i < rows; ++i) {
    const std::uint8_t* s = in.row(first + i);
    std::int32_t* o = &pass[static_cast<std::size_t>(i) * w];
    for (int x = 0; x < w; ++x) o[x] = taps[0] * s[x];
    for (std::size_t k = 1; k < taps.size(); ++k) {
      const std::int32_t t = taps[k];
      const std::uint8_t* sk = s + k;
      for (int x = 0; x < w; ++x) o[x] += t * sk[x];
    }
  }
  return pass;
}

// Its column pass for one output row: acc[x] = Σ_k taps[k] · pass[(row + k) · w + x].
inline void int_column_pass(const std::vector<std::int32_t>& pass, const std::vector<int>& taps,
                            int row, int w, std::int32_t* acc) {
  std::fill(acc, acc + w, 0);
  for (std::size_t k = 0; k < taps.size(); ++k) {
    const std::int32_t* s = &pass[(static_cast<std::size_t>(row) + k) * w];
    const std::int32_t t = taps[k];
    for (int x = 0; x < w; ++x) acc[x] += t * s[x];
  }
}

}  // namespace jetpipe::ref
