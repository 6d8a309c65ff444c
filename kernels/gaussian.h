// SPDX-License-Identifier: MIT
// gaussian: separable Gaussian blur, GRAY8 → GRAY8, OpenCV GaussianBlur's kernel rules.
#pragma once

#include <vector>

#include "pipeline/core/border.h"
#include "pipeline/core/image.h"

namespace jetpipe {

struct GaussianParams {
  int ksize = 5;     // odd, ≥ 1 (resolved)
  double sigma = 0;  // > 0 (resolved)
  Border border;
};

// OpenCV's rules: ksize 0 → from sigma (round(sigma·6 + 1) | 1 for 8-bit images);
// sigma ≤ 0 → 0.3·((ksize − 1)·0.5 − 1) + 0.8. Returns params with both resolved.
GaussianParams resolve_gaussian(int ksize, double sigma, Border border);

// getGaussianKernel(ksize, sigma, CV_32F): the fixed tables for ksize ≤ 7 with sigma ≤ 0 as OpenCV
// has them, else sampled and normalized to sum 1.
std::vector<float> gaussian_taps(int ksize, double sigma_given);

// Halo rows/columns each side.
inline int gaussian_halo(const GaussianParams& p) { return p.ksize / 2; }

// Writes output rows [y0, y1) of dst, reading the whole src (the border applies at src's edges).
void gaussian_ref(const GaussianParams& p, const ImageView& src, const ImageView& dst, int y0,
                  int y1);

}  // namespace jetpipe
