// SPDX-License-Identifier: MIT
// CUDA twin of convolve (filter2D in float, the twin's order, no contraction). A block makes a
// kConvTileW × kConvTileH output tile from a shared-memory tile of the input (+ halo) converted to
// float once; each thread makes 4 neighbouring pixels of a row, so every tap is read once (a
// shared-memory broadcast) per 4 products; the columns of the kernel are a template argument so
// that the row's 4 + cols − 1 pixels sit in registers.
#include <cuda_runtime.h>

#include "kernels/launch/filter_launch.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/convolve.h"

namespace jetpipe {

namespace dev {

constexpr int kConvMax = 15;
constexpr int kConvXPad = 16;  // ≥ the largest radius (7), a multiple of 16 for 16-byte chunks
constexpr int kConvStride = kConvTileW + 2 * kConvXPad;
static_assert(kConvThreads * 4 == kConvTileW * kConvTileH, "4 pixels per thread");

struct ConvArgs {
  float taps[kConvMax * kConvMax];
  int rows;
  float delta;
  int width, y0, y1;
  std::uint8_t* dst;
  std::size_t pitch;
};

// Shared memory: the input tile as bytes (16-byte chunks), the same as floats, the taps.
__host__ __device__ inline int conv_bytes_size(int tile_rows) {
  return (tile_rows * kConvStride + 15) & ~15;
}
inline std::size_t conv_smem_bytes(int rows) {
  const int tile_rows = kConvTileH + rows - 1;
  return static_cast<std::size_t>(conv_bytes_size(tile_rows)) +
         static_cast<std::size_t>(tile_rows) * kConvStride * sizeof(float) +
         kConvMax * kConvMax * sizeof(float);
}

// Grid: x = ceil(width / kConvTileW), y = ceil((y1 − y0) / kConvTileH).
template <int kCols, class Src>
__global__ void __launch_bounds__(kConvThreads) convolve_kernel(const Src src, const ConvArgs a) {
  extern __shared__ __align__(16) std::uint8_t smem[];
  constexpr int rx = kCols / 2;
  const int ry = a.rows / 2;
  const int tile_rows = kConvTileH + 2 * ry;
  std::uint8_t* bytes = smem;                                                 // 16-byte aligned
  float* fimg = reinterpret_cast<float*>(smem + conv_bytes_size(tile_rows));  // tile as floats
  float* taps = fimg + tile_rows * kConvStride;                               // rows × kCols
  const int tx0 = static_cast<int>(blockIdx.x) * kConvTileW;
  const int ty0 = a.y0 + static_cast<int>(blockIdx.y) * kConvTileH;

  load_tile(src, bytes, kConvStride, tx0 - kConvXPad, ty0 - ry, tile_rows, threadIdx.x,
            kConvThreads);
  for (int i = threadIdx.x; i < a.rows * kCols; i += kConvThreads) taps[i] = a.taps[i];
  __syncthreads();
  for (int i = threadIdx.x; i < tile_rows * kConvStride; i += kConvThreads) {
    fimg[i] = static_cast<float>(bytes[i]);
  }
  __syncthreads();

  const int c0 = 4 * (threadIdx.x % (kConvTileW / 4));  // first of the thread's 4 columns
  const int r = threadIdx.x / (kConvTileW / 4);
  const int y = ty0 + r;
  if (y >= a.y1) return;
  float acc[4] = {a.delta, a.delta, a.delta, a.delta};
  for (int i = 0; i < a.rows; ++i) {
    const float* row = fimg + (r + i) * kConvStride + kConvXPad + c0 - rx;
    float s[4 + kCols - 1];
#pragma unroll
    for (int m = 0; m < 4 + kCols - 1; ++m) s[m] = row[m];
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      const float t = taps[i * kCols + j];
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[q] = __fadd_rn(acc[q], __fmul_rn(t, s[q + j]));
    }
  }
  std::uint8_t* d = a.dst + static_cast<std::size_t>(y) * a.pitch;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int x = tx0 + c0 + q;
    if (x >= a.width) break;
    const float v = acc[q];  // saturate_cast<uchar>: round half to even, clamp, NaN → 0
    d[x] = !(v > 0.f) ? 0 : v >= 255.f ? 255 : static_cast<std::uint8_t>(__float2int_rn(v));
  }
}

template <class Src>
cudaError_t launch_convolve_kernel(int cols, const Src& src, const ConvArgs& a, dim3 grid,
                                   std::size_t smem, cudaStream_t stream) {
  switch (cols) {
    case 1:
      convolve_kernel<1><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 3:
      convolve_kernel<3><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 5:
      convolve_kernel<5><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 7:
      convolve_kernel<7><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 9:
      convolve_kernel<9><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 11:
      convolve_kernel<11><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 13:
      convolve_kernel<13><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 15:
      convolve_kernel<15><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaPeekAtLastError();
}

}  // namespace dev

cudaError_t launch_convolve(const ConvolveParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, cudaStream_t stream, FilterPath path) {
  if (cudaError_t e = dev::check_filter_views(src.view, dst, PixelFormat::kGray8, y0, y1)) return e;
  if (p.rows < 1 || p.cols < 1 || p.rows % 2 == 0 || p.cols % 2 == 0 || p.rows > dev::kConvMax ||
      p.cols > dev::kConvMax ||
      p.taps.size() != static_cast<std::size_t>(p.rows) * static_cast<std::size_t>(p.cols)) {
    return cudaErrorInvalidValue;
  }
  bool tex = false;
  const FilterPolicy& pol = dev::current_filter_policy();
  if (cudaError_t e = dev::resolve_path(src, p.border, path, pol.convolve, &tex)) return e;
  if (y0 == y1) return cudaSuccess;
  dev::ConvArgs a{};
  for (std::size_t i = 0; i < p.taps.size(); ++i) a.taps[i] = p.taps[i];
  a.rows = p.rows;
  a.delta = static_cast<float>(p.delta);
  a.width = src.view.width;
  a.y0 = y0;
  a.y1 = y1;
  a.dst = dst.data;
  a.pitch = dst.pitch;
  const dim3 grid(dev::div_up(a.width, kConvTileW), dev::div_up(y1 - y0, kConvTileH));
  const std::size_t smem = dev::conv_smem_bytes(p.rows);
  return dev::with_source(src, p.border, tex, [&](const auto& s) {
    return dev::launch_convolve_kernel(p.cols, s, a, grid, smem, stream);
  });
}

}  // namespace jetpipe
