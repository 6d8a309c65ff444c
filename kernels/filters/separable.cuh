// SPDX-License-Identifier: MIT
// The separable tile engine for 8-bit inputs and integer taps of up to 2·kSepMaxRadius + 1 per axis
// (gaussian and box above the fast kernel's 9 taps, the fast kernel's edge columns, views the fast
// kernel does not take). Exact integer sums; the epilogue turns a 32-bit sum into the output pixel
// and stores it.
//
// A block makes a kSepTileW × kSepTileH output tile: it loads the input tile + halo into shared
// memory through the source (16-byte chunks: global loads or texture fetches, the border handled by
// the source), runs the row pass into 32-bit sums in shared memory, then the column pass. The fast
// kernel (fast_kernel.cuh) runs the same tile code for the image's edge columns.
//   struct Epilogue { __device__ void operator()(int x, int y, int sum) const; };
//   separable_tile_kernel<<<grid, kSepThreads, separable_smem_bytes(ry, rx)>>>(src, args, epi);
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/launch/filter_launch.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

struct SepArgs {
  int kx[2 * kSepMaxRadius + 1];  // taps along x (nx of them, odd)
  int ky[2 * kSepMaxRadius + 1];  // taps along y (ny of them, odd)
  int nx, ny;
  int width, y0, y1;
};

__host__ __device__ inline int sep_xpad(int rx) { return (rx + 15) & ~15; }
__host__ __device__ inline int sep_stride(int rx) { return kSepTileW + 2 * sep_xpad(rx); }
__host__ __device__ inline int sep_tile_bytes(int rx, int ry) {
  return ((kSepTileH + 2 * ry) * sep_stride(rx) + 15) & ~15;
}
inline std::size_t separable_smem_bytes(int rx, int ry) {
  return static_cast<std::size_t>(sep_tile_bytes(rx, ry)) +
         static_cast<std::size_t>(kSepTileH + 2 * ry) * kSepTileW * sizeof(int);
}

// One output tile: columns [tx0, min(tx0 + kSepTileW, x_end)), rows [ty0, ty0 + th) (th ≤
// kSepTileH), taps tx(b) for b < nx along x and ty(b) for b < ny along y (callables), store(x, y,
// sum) per pixel. smem: separable_smem_bytes(nx / 2, ny / 2) bytes, 16-byte aligned. Ends with all
// threads past their last shared-memory access (a following call may reuse smem after a
// __syncthreads).
template <bool kAtOnce = false, class Src, class TX, class TY, class Store>
__device__ __forceinline__ void separable_tile(const Src& src, const TX& tx, int nx, const TY& ty,
                                               int ny, int tx0, int ty0, int th, int x_end,
                                               const Store& store, std::uint8_t* smem, int tid,
                                               int nthreads) {
  const int rx = nx / 2, ry = ny / 2;
  const int xpad = sep_xpad(rx);
  const int stride = sep_stride(rx);
  const int rows = th + 2 * ry;
  std::uint8_t* tile = smem;
  int* hsum = reinterpret_cast<int*>(smem + sep_tile_bytes(rx, ry));

  load_tile<kAtOnce>(src, tile, stride, tx0 - xpad, ty0 - ry, rows, tid, nthreads);
  __syncthreads();

  // Only the columns the tile writes (a tile cut by x_end: the fast kernel's edge columns); a full
  // tile's row of index i by a constant division.
  const int out_w = min(kSepTileW, x_end - tx0);
  const auto row_of = [&](int i) { return out_w == kSepTileW ? i / kSepTileW : i / out_w; };
  for (int i = tid; i < rows * out_w; i += nthreads) {
    const int r = row_of(i), c = i - r * out_w;
    const std::uint8_t* s = tile + r * stride + xpad - rx + c;
    int acc = 0;
    for (int b = 0; b < nx; ++b) acc += tx(b) * static_cast<int>(s[b]);
    hsum[r * kSepTileW + c] = acc;
  }
  __syncthreads();

  for (int i = tid; i < th * out_w; i += nthreads) {
    const int r = row_of(i), c = i - r * out_w;
    const int* s = hsum + r * kSepTileW + c;
    int acc = 0;
    for (int b = 0; b < ny; ++b) acc += ty(b) * s[b * kSepTileW];
    store(tx0 + c, ty0 + r, acc);
  }
}

// Grid: x = ceil(width / kSepTileW), y = ceil((y1 − y0) / kSepTileH); kSepThreads threads.
template <class Src, class Epi>
__global__ void __launch_bounds__(kSepThreads)
    separable_tile_kernel(const Src src, const SepArgs a, const Epi epi) {
  extern __shared__ __align__(16) std::uint8_t smem[];
  const int tx0 = static_cast<int>(blockIdx.x) * kSepTileW;
  const int ty0 = a.y0 + static_cast<int>(blockIdx.y) * kSepTileH;
  separable_tile(
      src, [&](int b) { return a.kx[b]; }, a.nx, [&](int b) { return a.ky[b]; }, a.ny, tx0, ty0,
      min(kSepTileH, a.y1 - ty0), a.width, epi, smem, threadIdx.x, kSepThreads);
}

// Launches the tile engine with kx[0 .. nx) along x and ky[0 .. ny) along y (odd counts, radius ≤
// kSepMaxRadius), for output rows [y0, y1) of an image `width` wide.
template <class Src, class Epi>
cudaError_t launch_separable_tile(const Src& src, const int* kx, int nx, const int* ky, int ny,
                                  int width, int y0, int y1, const Epi& epi, cudaStream_t stream) {
  if (nx < 1 || ny < 1 || nx % 2 == 0 || ny % 2 == 0 || nx > 2 * kSepMaxRadius + 1 ||
      ny > 2 * kSepMaxRadius + 1) {
    return cudaErrorInvalidValue;
  }
  SepArgs a{};
  for (int i = 0; i < nx; ++i) a.kx[i] = kx[i];
  for (int i = 0; i < ny; ++i) a.ky[i] = ky[i];
  a.nx = nx;
  a.ny = ny;
  a.width = width;
  a.y0 = y0;
  a.y1 = y1;
  const dim3 grid(div_up(width, kSepTileW), div_up(y1 - y0, kSepTileH));
  separable_tile_kernel<<<grid, kSepThreads, separable_smem_bytes(nx / 2, ny / 2), stream>>>(src, a,
                                                                                             epi);
  return cudaPeekAtLastError();
}

}  // namespace jetpipe::dev
