// SPDX-License-Identifier: MIT
// sobel: OpenCV Sobel on GRAY8 with ksize 1 / 3 / 5; output S16 (like CV_16S, saturated) or GRAY8
// as convertScaleAbs: saturate(|value|), value = scale · derivative. The derivative is exact
// (integer taps and sums); value = float(derivative) · float(scale), rounded half to even.
// A constant border is saturate_cast<uchar>(border.value).
#pragma once

#include <vector>

#include "core/border.h"
#include "core/image.h"

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

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>

#include "kernels/launch_context.h"
#include "kernels/texture.h"

namespace jetpipe {

// CUDA twin of sobel_ref, bit for bit: output rows [y0, y1) of dst (S16, or GRAY8 when p.abs8;
// src's size) from the whole src (GRAY8). ksize 1, 3, 5 (7 too), dx, dy ∈ 0..2, dx + dy ≥ 1. The
// exact integer derivative in one fused pass (the fast separable kernel with signed taps; the tile
// engine for views it does not take), then float(derivative) · float(scale) rounded half to even
// and saturated, as the twin. Any size, pitch (S16 rows need not be 2-byte aligned), ROI.
// Asynchronous on `stream`; no allocation; returns the launch's error.
cudaError_t launch_sobel(const SobelParams& p, const FilterSource& src, const ImageView& dst,
                         int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                         FilterPath path = FilterPath::kAuto,
                         const FilterLaunchOptions& options = {});

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
