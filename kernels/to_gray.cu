// SPDX-License-Identifier: MIT
// GPU to_gray (BGR8 / RGB8, BGRx / RGBx / RGBA → GRAY8), twin of to_gray_ref.cpp: Y = (R·9798 +
// G·19235 + B·3735 + 2^14) >> 15, exact in 32-bit integers.
//
// Each thread writes 16 pixels (kernels/block/map_rows.cuh): where the source row lines up with the
// destination (3·x of the first aligned output pixel is 16-byte aligned in the source: pitched
// images, ROIs at equal x), three 16-byte loads, dev::gray16 (kernels/block/gray16.cuh: 68
// instructions, dp4a), one 16-byte store; elsewhere byte by byte.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/block/gray16.cuh"
#include "kernels/launch/launch_config.cuh"
#include "kernels/block/map_rows.cuh"
#include "kernels/to_gray.h"
#include "kernels/tuning.h"

namespace jetpipe {

namespace {

struct GrayArgs {
  const std::uint8_t* src;
  std::size_t src_pitch;
  std::uint8_t* dst;
  std::size_t dst_pitch;
  int width, y0, rows;
};

template <bool kRgb>
__device__ __forceinline__ unsigned gray(unsigned c0, unsigned c1, unsigned c2) {
  return kRgb ? to_gray_y(c0, c1, c2) : to_gray_y(c2, c1, c0);
}

// kBpp 3 (BGR8 / RGB8) or 4 (BGRx / RGBx / RGBA, byte 3 ignored); kRgb: red in byte 0.
template <int kBpp, bool kRgb>
__global__ void __launch_bounds__(256) to_gray_kernel(const GrayArgs a) {
  for (int r = blockIdx.y; r < a.rows; r += gridDim.y) {
    const int y = a.y0 + r;
    const std::uint8_t* s = a.src + static_cast<std::size_t>(y) * a.src_pitch;
    std::uint8_t* d = a.dst + static_cast<std::size_t>(y) * a.dst_pitch;
    const dev::OutRow o = dev::out_row(d, a.width);
    const bool vec_ok = ((reinterpret_cast<std::uintptr_t>(s) + kBpp * o.head) & 15u) == 0;
    for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < o.groups; g += gridDim.x * blockDim.x) {
      int x, n;
      o.group(g, &x, &n);
      if (vec_ok && g > 0 && n == 16) {
        const uint4* sv = reinterpret_cast<const uint4*>(s + kBpp * x);
        if constexpr (kBpp == 3) {
          const uint4 v0 = sv[0], v1 = sv[1], v2 = sv[2];
          const unsigned w[12] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y,
                                  v1.z, v1.w, v2.x, v2.y, v2.z, v2.w};
          *reinterpret_cast<uint4*>(d + x) = dev::gray16(w, gray_weights(kRgb));
        } else {
          const uint4 v0 = sv[0], v1 = sv[1], v2 = sv[2], v3 = sv[3];
          const unsigned w[16] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w,
                                  v2.x, v2.y, v2.z, v2.w, v3.x, v3.y, v3.z, v3.w};
          *reinterpret_cast<uint4*>(d + x) = dev::gray16_4(w, gray_weights(kRgb));
        }
      } else {
        for (int k = 0; k < n; ++k) {
          const std::uint8_t* p = s + kBpp * (x + k);
          d[x + k] = static_cast<std::uint8_t>(gray<kRgb>(p[0], p[1], p[2]));
        }
      }
    }
  }
}

}  // namespace

cudaError_t launch_to_gray(const ImageView& src, const ImageView& dst, int y0, int y1,
                           cudaStream_t stream) {
  const PixelFormat f = src.format;
  if ((!is_colour(f) && f != PixelFormat::kGray8 && f != PixelFormat::kNv12) ||
      dst.format != PixelFormat::kGray8 || src.data == nullptr || dst.data == nullptr ||
      src.width != dst.width || src.height != dst.height || src.width < 1 || y0 < 0 || y1 < y0 ||
      y1 > src.height) {
    return cudaErrorInvalidValue;
  }
  if (y0 == y1) return cudaSuccess;
  if (!is_colour(f)) {  // GRAY8, or NV12's luma plane
    return cudaMemcpy2DAsync(dst.row<std::uint8_t>(y0), dst.pitch, src.row<std::uint8_t>(y0),
                             src.pitch, static_cast<std::size_t>(src.width),
                             static_cast<std::size_t>(y1 - y0), cudaMemcpyDefault, stream);
  }
  dev::DeviceInfo d;
  if (cudaError_t e = dev::current_device(&d)) return e;
  const ReductionPolicy& pol = reduction_policy(d.cc_major, d.cc_minor);
  GrayArgs a{src.data, src.pitch, dst.data, dst.pitch, src.width, y0, y1 - y0};
  const int threads = std::min(std::max(pol.map_threads / 32 * 32, 32), 256);
  const dim3 grid(dev::div_up(dev::max_groups(src.width), threads),
                  static_cast<unsigned>(std::min(a.rows, 65535)));
  const bool rgb = red_first(f);
  if (bytes_per_pixel(f) == 3) {
    (rgb ? to_gray_kernel<3, true> : to_gray_kernel<3, false>)<<<grid, threads, 0, stream>>>(a);
  } else {
    (rgb ? to_gray_kernel<4, true> : to_gray_kernel<4, false>)<<<grid, threads, 0, stream>>>(a);
  }
  return cudaPeekAtLastError();
}

}  // namespace jetpipe
