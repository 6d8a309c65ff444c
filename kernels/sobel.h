// SPDX-License-Identifier: MIT
// sobel: OpenCV Sobel on GRAY8 with ksize 1 / 3 / 5; output S16 (like CV_16S, saturated) or GRAY8
// as convertScaleAbs: saturate(|value|), value = scale · derivative. The derivative is exact
// (integer taps and sums); value = float(derivative) · float(scale), rounded half to even.
// A constant border is saturate_cast<uchar>(border.value).
#pragma once

#include <vector>

#include "pipeline/core/border.h"
#include "pipeline/core/image.h"

namespace jetpipe {

struct SobelParams {
  int dx = 1, dy = 0;  // derivative orders, 0..2 each (ksize 1: ≤ 2), dx + dy ≥ 1
  int ksize = 3;       // 1, 3 or 5 (1: a 3-tap derivative without smoothing in the other axis)
  double scale = 1;
  bool abs8 = false;  // false: dst is S16; true: dst is GRAY8
  Border border;
};

// getDerivKernels: kx (length along x) and ky (along y) for the params.
void sobel_taps(const SobelParams& p, std::vector<float>* kx, std::vector<float>* ky);

inline int sobel_halo(const SobelParams& p) { return p.ksize == 1 ? 1 : p.ksize / 2; }

void sobel_ref(const SobelParams& p, const ImageView& src, const ImageView& dst, int y0, int y1);

}  // namespace jetpipe
