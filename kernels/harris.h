// SPDX-License-Identifier: MIT
// harris: OpenCV cornerHarris on GRAY8 → F32 response, with an exact integer core and one
// evaluation in double, so that every implementation gives the same bits:
//   Dx, Dy        integer Sobel(ksize) derivatives of the image extended by the border (OpenCV's
//                 taps; ksize 1: [−1 0 1] along the derivative's axis only); |D| ≤ 255·20·64
//   Sxx, Sxy, Syy Σ of Dx², Dx·Dy, Dy² over block_size × block_size tensor cells (columns and rows
//                 x − b/2 … x + b − 1 − b/2), the border applying to the tensor: a cell outside is
//                 the remapped cell's, or 0 for a constant border (cornerHarris); exact integers,
//                 |S| < 2^47
//   then in IEEE double, each operation rounded to nearest, in this order and nothing fused:
//     s  = 1 / ((double)(1 << (ksize − 1)) · block_size · 255)      (left to right)
//     s2 = s · s
//     a  = (double)Sxx · s2,  b = (double)Sxy · s2,  c = (double)Syy · s2   (conversions exact)
//     det = (a · c) − (b · b)
//     tr  = a + c
//     R   = (float)(det − ((k · tr) · tr))                          (one rounding to float)
// That is cornerHarris's value with exact sums (OpenCV's float gradients and sums differ from it by
// ≈ 1e-6 of the largest |R|; the tests allow 1e-4). A constant border: border.value around the
// image.
#pragma once

#include "core/border.h"
#include "core/image.h"

namespace jetpipe {

struct HarrisParams {
  int block_size = 3;  // ≥ 1
  int ksize = 3;       // Sobel aperture: 1, 3, 5 or 7
  double k = 0.04;
  Border border;
};

// s² of the evaluation above, s = 1 / (2^(ksize − 1) · block_size · 255), each rounded once as a
// host double: the twin and the GPU launchers take it from here, so they share its bits.
inline double harris_s2(const HarrisParams& p) {
  const double s = 1.0 / (static_cast<double>(1 << (p.ksize - 1)) * p.block_size * 255.0);
  return s * s;
}

inline int harris_halo(const HarrisParams& p) {
  return p.block_size / 2 + (p.ksize == 1 ? 1 : p.ksize / 2);
}

void harris_ref(const HarrisParams& p, const ImageView& src, const ImageView& dst, int y0, int y1);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>

#include <cstdint>

#include "kernels/launch_context.h"
#include "kernels/max_feed.h"
#include "kernels/texture.h"

namespace jetpipe {

// Launch shape overrides for benchmarks and tests; the defaults follow the target's policy
// (kernels/tuning_filters.h). Results never depend on them.
struct HarrisLaunchOptions {
  // The fast kernel (ksize 3, block 3..7): output rows a warp (0: the policy's) and columns a lane,
  // 4 or 8 (0: the policy's; 4 where 8 does not fit the width). Either one set runs the fast
  // kernel where it fits, never the tiled one.
  int rows_per_warp = 0;
  int lane_cols = 0;
  // ksize 3, block 3: the tiled kernel for launches of at most this many output pixels (−1: the
  // policy's harris_tiled_px; 0: never).
  long long tiled_px = -1;
};

// CUDA twin of harris_ref, bit for bit: output rows [y0, y1) of dst (F32, src's size) from the
// whole src (GRAY8). block_size 1..31, ksize 1, 3, 5, 7. The same integer core (exact: 32-bit
// sums for ksize 3 and block ≤ 7, 64-bit otherwise) and the same double operations (__dmul_rn /
// __dadd_rn / __dsub_rn in the order above). ksize 3 with block 3 runs the tiled kernel
// (launch_harris_tiled below) up to the policy's size; ksize 3 with block 3..7 otherwise one fused
// register-tiled pass (kernels/harris/fast_kernel.cuh); the rest, and views neither takes, a
// shared-memory tile engine (kernels/harris/tile_kernel.cuh). Any size, pitch (F32 rows need not be
// 4-byte aligned), ROI. Asynchronous on `stream`; no allocation; returns the launch's error.
cudaError_t launch_harris(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                          int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                          FilterPath path = FilterPath::kAuto,
                          const HarrisLaunchOptions& options = {});

// launch_harris that also gathers the maximum of the rows it writes into *max_key: the order key
// of kernels/block/max_key.cuh, raised with atomicMax (one per warp at most), so launches over the
// strips of a frame leave the frame's maximum there. For a detection with quality reading this
// response: pass detect_max_slot(its workspace) and skip launch_detect_max (kernels/detect.h).
// max_key must not be null (cudaErrorInvalidValue).
cudaError_t launch_harris_max(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                              int y0, int y1, std::uint32_t* max_key, const LaunchContext& ctx,
                              cudaStream_t stream, FilterPath path = FilterPath::kAuto,
                              const HarrisLaunchOptions& options = {});
// The same, feeding the detection's MaxFeed (kernels/max_feed.h; detect_feed of its workspace):
// the maximum into feed.max_key (not null), and where the tiled kernel runs and y0 is a multiple of
// 8, the maximum of each band of 8 rows × 64 columns it writes whole into feed.bands (if not null).
cudaError_t launch_harris_max(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                              int y0, int y1, const MaxFeed& feed, const LaunchContext& ctx,
                              cudaStream_t stream, FilterPath path = FilterPath::kAuto,
                              const HarrisLaunchOptions& options = {});

// ksize 3 and block_size 3 (the default pipeline's harris) through the tiled kernel
// (kernels/harris/tiled_kernel.cuh), which launch_harris picks by the target's policy
// (kernels/tuning_filters.h): whether it takes these views (any border but wrap, src GRAY8 of at
// least 16 × 16, any pitch or alignment; dst F32 of src's size with 4-byte aligned rows), and the
// launch itself, as launch_harris_max (max_key may be null). cudaErrorInvalidValue where it does
// not fit. For tests and benchmarks; launch_harris is the entry point.
bool harris_tiled_fits(const HarrisParams& p, const ImageView& src, const ImageView& dst);
cudaError_t launch_harris_tiled(const HarrisParams& p, const ImageView& src, const ImageView& dst,
                                int y0, int y1, std::uint32_t* max_key, const LaunchContext& ctx,
                                cudaStream_t stream);

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
