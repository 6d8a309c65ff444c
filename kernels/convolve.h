// SPDX-License-Identifier: MIT
// convolve: OpenCV filter2D (correlation, anchor at the centre) on GRAY8 with a rows × cols kernel
// (odd sizes up to 15 × 15), plus delta, saturated to GRAY8.
// Arithmetic, which a GPU twin can repeat bit for bit: a float accumulator starts at float(delta)
// and adds tap · pixel for the taps in row-major order (product and sum each rounded to float, no
// fused multiply-add), then cvRound and saturate. A constant border is
// saturate_cast<uchar>(border.value).
#pragma once

#include <vector>

#include "pipeline/core/border.h"
#include "pipeline/core/image.h"

namespace jetpipe {

struct ConvolveParams {
  int rows = 3, cols = 3;
  std::vector<float> taps;  // rows · cols, row-major
  double delta = 0;
  Border border;
};

inline int convolve_halo(const ConvolveParams& p) { return p.rows / 2; }

void convolve_ref(const ConvolveParams& p, const ImageView& src, const ImageView& dst, int y0,
                  int y1);

}  // namespace jetpipe
