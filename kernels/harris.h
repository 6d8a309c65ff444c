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

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>

#include "kernels/texture.h"

namespace jetpipe {

// CUDA twin of harris_ref: output rows [y0, y1) of dst (F32, src's size) from the whole src
// (GRAY8). block_size 1..31, ksize 1, 3, 5, 7. One fused kernel per tile: the image tile + halo,
// the structure tensor of the tile + box halo (gradients as the twin: exact integer derivative,
// · scale in double, rounded to float; products in float), the box sums in double in the twin's
// order, R in double. It repeats the twin operation for operation (no contraction), so results are
// expected to be equal; the tests allow 1e-4 of the largest |R|. Any size, pitch (F32 rows need
// not be 4-byte aligned), ROI. Asynchronous on `stream`; no allocation; returns the launch's error.
cudaError_t launch_harris(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                          int y0, int y1, cudaStream_t stream, FilterPath path = FilterPath::kAuto);

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
