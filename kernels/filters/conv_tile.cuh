// SPDX-License-Identifier: MIT
// convolve's tile engine, in the CPU twin's float order (FMUL then FADD, no contraction): a block
// makes an output tile of up to kConvTileW × kConvTileH from a shared-memory tile of the input
// (+ halo) converted to float once; an item is 4 neighbouring pixels of a row, so every tap is read
// once (a shared-memory broadcast) per 4 products, and the kernel's columns are a template argument
// so that the row's 4 + cols − 1 pixels sit in registers. It runs the launches the strip kernel
// (conv_strip.cuh) does not take (other kernel shapes, unaligned views, small images) and that
// kernel's edge columns.
//   conv_tile<kCols>(src, args, tx0, x_end, ty0, th, smem, threadIdx.x, blockDim.x);
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/filters/source.cuh"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

constexpr int kConvMax = 15;
constexpr int kConvXPad = 16;  // ≥ the largest radius (7), a multiple of 16 for 16-byte chunks
constexpr int kConvStride = kConvTileW + 2 * kConvXPad;

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

// saturate_cast<uchar> of a float: round half to even, clamp, NaN → 0 (the twin's saturate_u8).
__device__ __forceinline__ std::uint8_t conv_saturate(float v) {
  return !(v > 0.f) ? 0 : v >= 255.f ? 255 : static_cast<std::uint8_t>(__float2int_rn(v));
}

// One output tile: columns [tx0, min(tx0 + kConvTileW, x_end)) (tx0 a multiple of 16), rows
// [ty0, ty0 + th) (th ≤ kConvTileH). smem: conv_smem_bytes(a.rows) bytes, 16-byte aligned. Ends
// with every thread past its last shared-memory access (a following call may reuse smem after a
// __syncthreads).
template <int kCols, class Src>
__device__ __forceinline__ void conv_tile(const Src& src, const ConvArgs& a, int tx0, int x_end,
                                          int ty0, int th, std::uint8_t* smem, int tid,
                                          int nthreads) {
  constexpr int rx = kCols / 2;
  const int ry = a.rows / 2;
  const int tile_rows = th + 2 * ry;
  std::uint8_t* bytes = smem;  // 16-byte aligned
  float* fimg = reinterpret_cast<float*>(smem + conv_bytes_size(kConvTileH + 2 * ry));
  float* taps = fimg + (kConvTileH + 2 * ry) * kConvStride;  // rows × kCols

  load_tile(src, bytes, kConvStride, tx0 - kConvXPad, ty0 - ry, tile_rows, tid, nthreads);
  for (int i = tid; i < a.rows * kCols; i += nthreads) taps[i] = a.taps[i];
  __syncthreads();
  for (int i = tid; i < tile_rows * kConvStride; i += nthreads) {
    fimg[i] = static_cast<float>(bytes[i]);
  }
  __syncthreads();

  const int out_w = min(kConvTileW, x_end - tx0);
  const int groups = (out_w + 3) / 4;  // items of 4 columns a row
  for (int item = tid; item < th * groups; item += nthreads) {
    const int r = item / groups;
    const int c0 = 4 * (item - r * groups);
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
    std::uint8_t* d = a.dst + static_cast<std::size_t>(ty0 + r) * a.pitch;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      if (c0 + q < out_w) d[tx0 + c0 + q] = conv_saturate(acc[q]);
    }
  }
}

// Grid: x = ceil(width / kConvTileW), y = ceil((y1 − y0) / kConvTileH); kConvThreads threads;
// dynamic shared memory conv_smem_bytes(a.rows).
template <int kCols, class Src>
__global__ void __launch_bounds__(kConvThreads, 4)
    convolve_tile_kernel(const Src src, const ConvArgs a) {
  extern __shared__ __align__(16) std::uint8_t smem[];
  const int tx0 = static_cast<int>(blockIdx.x) * kConvTileW;
  const int ty0 = a.y0 + static_cast<int>(blockIdx.y) * kConvTileH;
  conv_tile<kCols>(src, a, tx0, a.width, ty0, min(kConvTileH, a.y1 - ty0), smem,
                   static_cast<int>(threadIdx.x), kConvThreads);
}

}  // namespace jetpipe::dev
