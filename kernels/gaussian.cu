// SPDX-License-Identifier: MIT
// CUDA twin of gaussian (OpenCV's bit-exact 8-bit GaussianBlur): Q8 taps, exact integer passes, one
// rounding. Kernel bodies in kernels/filters/ (fast_kernel.cuh and
// staged_kernel.cuh for ksize ≤ 9, separable.cuh).
#include <cuda_runtime.h>

#include <vector>

#include "kernels/filters/fast_dispatch.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/filters/separable.cuh"
#include "kernels/gaussian.h"
#include "kernels/to_gray.h"

namespace jetpipe {

namespace {

// The separable engine's store: (Σ + 2^15) >> 16 (the sum is non-negative and < 2^24).
struct GaussStore {
  std::uint8_t* dst;
  std::size_t pitch;
  __device__ void operator()(int x, int y, int sum) const {
    dst[static_cast<std::size_t>(y) * pitch + x] =
        static_cast<std::uint8_t>((sum + (1 << 15)) >> 16);
  }
};

// gaussian_taps_q8 for the params, remembered per thread for the last params asked (the taps cost
// exp() calls and a vector; launchers run per frame with the same params).
const std::vector<int>& q8_taps(const GaussianParams& p) {
  struct Cache {
    int ksize = -1;
    double sigma = 0;
    std::vector<int> taps;
  };
  thread_local Cache cache;
  const double sigma = p.sigma_from_ksize ? 0.0 : p.sigma;
  if (cache.ksize != p.ksize || cache.sigma != sigma) {
    cache.taps = gaussian_taps_q8(p.ksize, sigma);
    cache.ksize = p.ksize;
    cache.sigma = sigma;
  }
  return cache.taps;
}

}  // namespace

cudaError_t launch_gaussian(const GaussianParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                            FilterPath path, const FilterLaunchOptions& options) {
  // A colour source is read as its to_gray image (the fusion of to_gray → gaussian).
  const bool colour = dev::is_colour(src.view);
  ImageView as_gray = src.view;
  if (colour) as_gray.format = PixelFormat::kGray8, as_gray.pitch = dst.pitch;  // shape check only
  if (cudaError_t e = dev::check_filter_views(as_gray, dst, PixelFormat::kGray8, y0, y1)) return e;
  if (colour && src.view.pitch < src.view.row_bytes()) return cudaErrorInvalidValue;
  if (p.ksize < 1 || p.ksize % 2 == 0 || p.ksize > 2 * kSepMaxRadius + 1) {
    return cudaErrorInvalidValue;
  }
  bool tex = false;
  const FilterPolicy& pol = dev::current_filter_policy();
  if (!colour) {
    if (cudaError_t e = dev::resolve_path(src, p.border, path, pol.gaussian, &tex)) return e;
  }
  if (y0 == y1) return cudaSuccess;
  const std::vector<int>& taps = q8_taps(p);
  const int r = p.ksize / 2;
  if (taps[r] == 256) {  // all other taps 0 (they are ≥ 0 and sum to 256): the identity
    if (colour) return launch_to_gray(src.view, dst, y0, y1, stream);
    return cudaMemcpy2DAsync(dst.row<std::uint8_t>(y0), dst.pitch, src.view.row<std::uint8_t>(y0),
                             src.view.pitch, src.view.row_bytes(),
                             static_cast<std::size_t>(y1 - y0), cudaMemcpyDefault, stream);
  }
  const int w = src.view.width;
  auto run = [&](const auto& s) {
    if (r <= kFastMaxRadius) {
      return dev::launch_fast_separable(s, taps.data(), taps.data(), p.ksize, w, src.view.height,
                                        y0, y1, dst, dev::GaussQ16Epilogue{}, true, ctx, stream,
                                        options.rows_per_warp);
    }
    return dev::launch_separable_tile(s, taps.data(), p.ksize, taps.data(), p.ksize, w, y0, y1,
                                      GaussStore{dst.data, dst.pitch}, stream);
  };
  if (colour && bytes_per_pixel(src.view.format) == 4) {
    return run(dev::make_colour_src<4>(src.view, p.border));
  }
  if (colour) return run(dev::make_colour_src<3>(src.view, p.border));
  return dev::with_source(src, p.border, tex, run);
}

}  // namespace jetpipe
JP_BLOCK_TRACE_EXPORT(gaussian)
