// SPDX-License-Identifier: MIT
// CUDA twin of sobel: exact integer derivative (row pass, column pass) through the fast separable
// kernel (kernels/filters/fast_kernel.cuh: signed taps, vertical sums biased into [0, 2^16)), or the
// tile engine for views it does not take, then the twin's float scale and saturation.
#include <cuda_runtime.h>

#include <vector>

#include "kernels/filters/fast_dispatch.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/sobel.h"

namespace jetpipe {

namespace {

// value = float(derivative) · float(scale) (one product: nothing to contract), then saturate_cast
// to short (S16) or uchar of |value| (abs8): round half to even, clamp, NaN → 0. With scale 1 the
// float steps are exact (|derivative| < 2^24), so they reduce to a clamp.
struct SobelEpilogue {
  static constexpr bool kSignedTaps = true;
  float scale;
  bool unit;      // scale == 1
  bool abs8;      // GRAY8 output, else S16
  bool aligned2;  // S16 rows 2-byte aligned (store1; store16 gets 16-byte aligned rows)
  __device__ __forceinline__ int s16(int sum) const {
    if (unit) return min(max(sum, -32768), 32767);
    const float v = __fmul_rn(__int2float_rn(sum), scale);
    return isnan(v) ? 0 : v <= -32768.f ? -32768 : v >= 32767.f ? 32767 : __float2int_rn(v);
  }
  __device__ __forceinline__ std::uint32_t u8(int sum) const {
    if (unit) return static_cast<std::uint32_t>(min(abs(sum), 255));
    const float a = fabsf(__fmul_rn(__int2float_rn(sum), scale));
    return !(a > 0.f) ? 0u : a >= 255.f ? 255u : static_cast<std::uint32_t>(__float2int_rn(a));
  }
  __device__ __forceinline__ void store16(std::uint8_t* row, int x,
                                          const std::uint32_t (&acc)[16]) const {
    if (abs8) {
      std::uint32_t w[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        w[q] =
            dev::pack4(u8(static_cast<int>(acc[4 * q])), u8(static_cast<int>(acc[4 * q + 1])),
                       u8(static_cast<int>(acc[4 * q + 2])), u8(static_cast<int>(acc[4 * q + 3])));
      }
      *reinterpret_cast<uint4*>(row + x) = make_uint4(w[0], w[1], w[2], w[3]);
      return;
    }
    std::uint32_t w[8];
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      w[q] = __byte_perm(static_cast<std::uint32_t>(s16(static_cast<int>(acc[2 * q]))),
                         static_cast<std::uint32_t>(s16(static_cast<int>(acc[2 * q + 1]))), 0x5410);
    }
    uint4* d = reinterpret_cast<uint4*>(row + 2 * x);
    d[0] = make_uint4(w[0], w[1], w[2], w[3]);
    d[1] = make_uint4(w[4], w[5], w[6], w[7]);
  }
  __device__ __forceinline__ void store1(std::uint8_t* row, int x, int sum) const {
    if (abs8) {
      row[x] = static_cast<std::uint8_t>(u8(sum));
      return;
    }
    const std::uint16_t u = static_cast<std::uint16_t>(s16(sum));
    if (aligned2) {
      reinterpret_cast<std::uint16_t*>(row)[x] = u;
    } else {
      row[2 * x] = static_cast<std::uint8_t>(u);
      row[2 * x + 1] = static_cast<std::uint8_t>(u >> 8);
    }
  }
};

// sobel_taps as integers, remembered per thread for the last params asked.
struct IntTaps {
  int dx = -1, dy = -1, ksize = -1;
  std::vector<int> kx, ky;
};
const IntTaps& int_taps(const SobelParams& p) {
  thread_local IntTaps cache;
  if (cache.dx != p.dx || cache.dy != p.dy || cache.ksize != p.ksize) {
    std::vector<float> fx, fy;
    sobel_taps(p, &fx, &fy);
    cache.kx.assign(fx.begin(), fx.end());
    cache.ky.assign(fy.begin(), fy.end());
    cache.dx = p.dx;
    cache.dy = p.dy;
    cache.ksize = p.ksize;
  }
  return cache;
}

}  // namespace

cudaError_t launch_sobel(const SobelParams& p, const FilterSource& src, const ImageView& dst,
                         int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                         FilterPath path, const FilterLaunchOptions& options) {
  const PixelFormat out = p.abs8 ? PixelFormat::kGray8 : PixelFormat::kS16;
  if (cudaError_t e = dev::check_filter_views(src.view, dst, out, y0, y1)) return e;
  if ((p.ksize != 1 && p.ksize != 3 && p.ksize != 5 && p.ksize != 7) || p.dx < 0 || p.dy < 0 ||
      p.dx > 2 || p.dy > 2 || p.dx + p.dy < 1) {
    return cudaErrorInvalidValue;
  }
  bool tex = false;
  const FilterPolicy& pol = dev::current_filter_policy();
  if (cudaError_t e = dev::resolve_path(src, p.border, path, pol.sobel, &tex)) return e;
  if (y0 == y1) return cudaSuccess;
  const IntTaps& t = int_taps(p);
  SobelEpilogue epi;
  epi.scale = static_cast<float>(p.scale);
  epi.unit = epi.scale == 1.0f;
  epi.abs8 = p.abs8;
  epi.aligned2 = dev::aligned_to(dst, 2);
  // One size along both axes (ksize 1's single tap becomes 0 t 0). Vertical sums stay within
  // [0, 255 · Σ|ky|] ⊂ [0, 2^16) after the bias and the taps fit signed bytes (ksize ≤ 7).
  const int nx = static_cast<int>(t.kx.size()), ny = static_cast<int>(t.ky.size());
  const int k = nx > ny ? nx : ny;
  int kx[7] = {}, ky[7] = {};
  for (int i = 0; i < nx; ++i) kx[(k - nx) / 2 + i] = t.kx[i];
  for (int i = 0; i < ny; ++i) ky[(k - ny) / 2 + i] = t.ky[i];
  const int w = src.view.width;
  return dev::with_source(src, p.border, tex, [&](const auto& s) {
    return dev::launch_fast_separable(s, kx, ky, k, w, src.view.height, y0, y1, dst, epi, false,
                                      ctx, stream, options.rows_per_warp);
  });
}

}  // namespace jetpipe
