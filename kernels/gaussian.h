// SPDX-License-Identifier: MIT
// gaussian: separable Gaussian blur, GRAY8 → GRAY8, OpenCV GaussianBlur's kernel rules.
#pragma once

#include <vector>

#include "core/border.h"
#include "core/image.h"

namespace jetpipe {

struct GaussianParams {
  int ksize = 5;     // odd, ≥ 1 (resolved)
  double sigma = 0;  // > 0 (resolved)
  Border border;
  // sigma was not given (≤ 0) but derived from ksize: OpenCV then uses its fixed tables for
  // ksize ≤ 9, which differ from the kernel sampled with the derived sigma (ksize 3: ¼ ½ ¼ against
  // 0.239 0.522 0.239). Set by resolve_gaussian; the taps are gaussian_taps(ksize, 0) when true.
  bool sigma_from_ksize = false;
};

// OpenCV's rules: ksize 0 → from sigma (round(sigma·6 + 1) | 1 for 8-bit images);
// sigma ≤ 0 → 0.3·((ksize − 1)·0.5 − 1) + 0.8. Returns params with both resolved.
GaussianParams resolve_gaussian(int ksize, double sigma, Border border);

// getGaussianKernel(ksize, sigma, CV_32F): the fixed tables for ksize ≤ 9 (OpenCV 4.6 has 1, 3, 5,
// 7 and 9) with sigma ≤ 0 as OpenCV has them, else sampled and normalized to sum 1.
std::vector<float> gaussian_taps(int ksize, double sigma_given);

// The taps GaussianBlur applies to 8-bit images: the kernel above in fixed point with 8 fractional
// bits, rounded with OpenCV's error diffusion so that they sum to exactly 256. gaussian_ref (and
// the GPU twin) filter rows with them into Q8 sums, columns into Q16 sums, then round half up:
// dst = (Σ_v t_v · Σ_h t_h · src + 2^15) >> 16, which is OpenCV 4.x's bit-exact 8-bit GaussianBlur.
std::vector<int> gaussian_taps_q8(int ksize, double sigma_given);

// Halo rows/columns each side.
inline int gaussian_halo(const GaussianParams& p) { return p.ksize / 2; }

// Writes output rows [y0, y1) of dst, reading the whole src (the border applies at src's edges).
// A constant border uses saturate_cast<uchar>(border.value), as cv::copyMakeBorder would.
void gaussian_ref(const GaussianParams& p, const ImageView& src, const ImageView& dst, int y0,
                  int y1);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>

#include "kernels/launch_context.h"
#include "kernels/texture.h"

namespace jetpipe {

// CUDA twin of gaussian_ref, bit for bit: output rows [y0, y1) of dst (GRAY8, src's size) from the
// whole src (GRAY8; the border applies at its edges only, so row strips of one image compose).
// A BGR8 / RGB8 src is read as its to_gray image (to_gray fused into the filter: equals
// to_gray_ref then gaussian_ref; global loads, no texture).
// ksize 1..65 (odd); any size ≥ 1, any pitch, ROI views. One fused pass: ksize ≤ 9 through the
// register-window kernel (kernels/filters/fast_kernel.cuh), larger through the separable tile engine;
// a kernel whose Q8 taps are a single 256 is the identity (a 2D copy). Reads through `path` (a
// texture only where src carries one made for src.view and p.border). Asynchronous on `stream`; no
// allocation; returns the launch's error (cudaErrorInvalidValue for bad arguments).
cudaError_t launch_gaussian(const GaussianParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                            FilterPath path = FilterPath::kAuto,
                            const FilterLaunchOptions& options = {});

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
