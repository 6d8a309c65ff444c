// SPDX-License-Identifier: MIT
// box: box filter GRAY8 → GRAY8 (OpenCV boxFilter with ddepth −1): mean over ksize × ksize when
// normalize (exact integer sum, rounded to nearest: ksize² is odd, so no ties), else the saturated
// sum. A constant border is saturate_cast<uchar>(border.value).
#pragma once

#include "core/border.h"
#include "core/image.h"

namespace jetpipe {

struct BoxParams {
  int ksize = 3;  // odd, ≥ 1
  bool normalize = true;
  Border border;
};

inline int box_halo(const BoxParams& p) { return p.ksize / 2; }

void box_ref(const BoxParams& p, const ImageView& src, const ImageView& dst, int y0, int y1);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>

#include "kernels/launch_context.h"
#include "kernels/texture.h"

namespace jetpipe {

// CUDA twin of box_ref, bit for bit: output rows [y0, y1) of dst (GRAY8, src's size) from the whole
// src (GRAY8). ksize 1..65 (odd); any size, pitch, ROI. Below the policy's box_running_min_ksize
// (3..5 on sm_90; up to 9 in launches of at most box_window_px pixels) the fast register-window
// kernel; above it the tile engine in launches of at most box_tile_px pixels (1080p on sm_90) and
// the running-sum kernel in larger ones up to 31; larger ksizes the tile engine (global loads
// whatever the path; options.box_engine overrides); 1 is a 2D copy. Asynchronous on `stream`; no
// allocation; returns the launch's error (cudaErrorInvalidValue for bad arguments).
cudaError_t launch_box(const BoxParams& p, const FilterSource& src, const ImageView& dst, int y0,
                       int y1, const LaunchContext& ctx, cudaStream_t stream,
                       FilterPath path = FilterPath::kAuto, const FilterLaunchOptions& options = {});

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
