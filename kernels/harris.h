// SPDX-License-Identifier: MIT
// harris: OpenCV cornerHarris on GRAY8 → F32 response: Sobel gradients scaled by
// 1 / (2^(ksize−1) · block_size · 255), structure tensor summed (unnormalized box) over
// block_size × block_size, R = det − k · trace². The border applies to both the gradients and the box.
// A constant border: border.value around the image, 0 around the structure tensor (cornerHarris).
#pragma once

#include "pipeline/core/border.h"
#include "pipeline/core/image.h"

namespace jetpipe {

struct HarrisParams {
  int block_size = 3;  // ≥ 1
  int ksize = 3;       // Sobel aperture: 1, 3, 5 or 7
  double k = 0.04;
  Border border;
};

inline int harris_halo(const HarrisParams& p) {
  return p.block_size / 2 + (p.ksize == 1 ? 1 : p.ksize / 2);
}

void harris_ref(const HarrisParams& p, const ImageView& src, const ImageView& dst, int y0, int y1);

}  // namespace jetpipe
