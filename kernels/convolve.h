// SPDX-License-Identifier: MIT
// convolve: OpenCV filter2D (correlation, anchor at the centre) on GRAY8 with a rows × cols kernel
// (odd sizes up to 15 × 15), plus delta, saturated to GRAY8.
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
