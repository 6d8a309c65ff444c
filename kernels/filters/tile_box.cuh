// SPDX-License-Identifier: MIT
// The box filter's tile engine (kernels/box.cu): one block a tile of kTileBoxH output rows ×
// kTileBoxW columns, any radius up to kSepMaxRadius at run time. The block reads its input rows and
// columns (the halo remapped by the border) into shared memory once, sums each column over the
// window down the tile (a running sum: two adds a row), then each row's column sums across (a
// running sum: two adds an output). Small launches (1080p, 4K) are bound by the running kernel's
// serial rows and the ring it fills first, not by memory: here every tile is independent and short,
// thousands of them. Exact: the sum in 32 bits, the column sums in 16 (65 · 255 < 2^16), the
// rounded mean through a 64-bit multiply-high (box_magic64), the sum saturated to 255.
// tile_box_parts_kernel: the same over column parts of other shapes (the running kernel's edges).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/block/pdl.cuh"
#include "kernels/filters/box_mean.h"
#include "kernels/filters/fast_kernel.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/filters/tile_box_shape.h"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

// The box's output for any ksize to 65 (the tile and the separable engine): the rounded mean of a
// window sum through box_magic64 (kernels/filters/box_mean.h), or the sum saturated to 255.
struct BoxMean64 {
  bool normalize;
  std::uint32_t area;
  std::uint64_t magic;  // box_magic64(2 · area)
  static BoxMean64 make(bool normalize, int ksize) {
    const auto area = static_cast<std::uint32_t>(ksize * ksize);
    return {normalize, area, box_magic64(2ull * area)};
  }
  __device__ __forceinline__ std::uint32_t operator()(std::uint32_t s) const {
    return normalize ? static_cast<std::uint32_t>(__umul64hi(2ull * s + area, magic))
                     : min(s, 255u);
  }
};

struct TileBoxArgs {
  std::uint8_t* dst;
  std::size_t dst_pitch;
  int width;     // output columns (the source's)
  int y0, y1;    // output rows of the launch
  int r;         // radius, 1 .. kSepMaxRadius
  bool vec_out;  // dst 16-byte aligned (data and pitch): 16-byte stores where a run lies inside
  bool early;    // trigger the dependents at the start (LaunchContext)
};

// The full tiles' shared memory (kTileBoxW × kTileBoxH; tile_box_shape.h has any shape's).
__host__ __device__ constexpr int tile_box_cols(int r) { return tile_box_cols(kTileBoxW, r); }
__host__ __device__ constexpr int tile_box_sum_pitch(int r) {
  return tile_box_sum_pitch(kTileBoxW, r);
}
__host__ __device__ constexpr int tile_box_in_bytes(int r) {
  return tile_box_in_bytes(kTileBoxW, kTileBoxH, r);
}
__host__ __device__ constexpr std::size_t tile_box_smem_bytes(int r) {
  return tile_box_smem_bytes(kTileBoxW, kTileBoxH, r);
}

__global__ void __launch_bounds__(kTileBoxThreads)
    tile_box_kernel(const GlobalSrc src, const TileBoxArgs a, const BoxMean64 mean) {
  static_assert(kTileBoxThreads == kTileBoxW, "one thread a column of the tile's outputs");
  static_assert(kTileBoxThreads == kTileBoxH * (kTileBoxW / 16), "16 outputs a thread across");
  extern __shared__ uint4 tile_box_smem[];
  if (a.early) pdl_trigger();
  pdl_wait();  // the kernel before it has finished (launch_pdl)

  const int r = a.r, k = 2 * r + 1;
  const int cols = tile_box_cols(r), sp = tile_box_sum_pitch(r);
  std::uint8_t* in = reinterpret_cast<std::uint8_t*>(tile_box_smem);
  std::uint16_t* sums = reinterpret_cast<std::uint16_t*>(in + tile_box_in_bytes(r));
  const int t = static_cast<int>(threadIdx.x);
  const int c = static_cast<int>(blockIdx.x);
  const int x0 = c * kTileBoxW, x_end = a.width;  // tile column c's outputs: x0 .. x0 + 255
  const int ty = a.y0 + static_cast<int>(blockIdx.y) * kTileBoxH;
  const int th = min(kTileBoxH, a.y1 - ty);  // output rows of this tile
  const int in_rows = th + 2 * r;

  // 1. Input rows ty − r .. ty + th + r − 1, columns x0 − r .. x0 + kTileBoxW + r − 1: a thread
  // takes columns t and t + kTileBoxThreads (< cols), eight rows' loads in flight at a time.
  const int xa = x0 - r + t, xb = xa + kTileBoxThreads;
  const bool second = t + kTileBoxThreads < cols;
  for (int yb = 0; yb < in_rows; yb += 8) {
    std::uint8_t va[8], vb[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      va[j] = vb[j] = 0;
      if (yb + j < in_rows) {
        const GlobalSrc::Row row = src.row(ty - r + yb + j);
        va[j] = src.pixel(row, xa);
        if (second) vb[j] = src.pixel(row, xb);
      }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if (yb + j < in_rows) {
        in[(yb + j) * cols + t] = va[j];
        if (second) in[(yb + j) * cols + t + kTileBoxThreads] = vb[j];
      }
    }
  }
  __syncthreads();

  // 2. Column sums over the window, down the tile's th output rows.
  for (int c = t; c < cols; c += kTileBoxThreads) {
    std::uint32_t s = 0;
    for (int i = 0; i < k; ++i) s += in[i * cols + c];
    sums[c] = static_cast<std::uint16_t>(s);
    for (int j = 1; j < th; ++j) {
      s += in[(j + k - 1) * cols + c];
      s -= in[(j - 1) * cols + c];
      sums[j * sp + c] = static_cast<std::uint16_t>(s);
    }
  }
  __syncthreads();

  // 3. Row j = t mod 16 (a warp's lanes: 16 rows, two runs), outputs x0 + 16q .. x0 + 16q + 15.
  const int j = t % kTileBoxH, q = t / kTileBoxH;
  const int xo = x0 + 16 * q;
  if (j >= th || xo >= x_end) return;
  const std::uint16_t* srow = sums + j * sp + 16 * q;
  std::uint32_t s = 0;
  for (int i = 0; i < k; ++i) s += srow[i];
  std::uint32_t o[16];
  o[0] = s;
#pragma unroll
  for (int m = 1; m < 16; ++m) {
    s += srow[m + k - 1];
    s -= srow[m - 1];
    o[m] = s;
  }
#pragma unroll
  for (int m = 0; m < 16; ++m) o[m] = mean(o[m]);
  std::uint8_t* drow = a.dst + static_cast<std::size_t>(ty + j) * a.dst_pitch;
  if (a.vec_out && xo + 16 <= x_end) {
    *reinterpret_cast<uint4*>(drow + xo) =
        make_uint4(pack4(o[0], o[1], o[2], o[3]), pack4(o[4], o[5], o[6], o[7]),
                   pack4(o[8], o[9], o[10], o[11]), pack4(o[12], o[13], o[14], o[15]));
  } else {
#pragma unroll
    for (int m = 0; m < 16; ++m) {
      if (xo + m < x_end) drow[xo + m] = static_cast<std::uint8_t>(o[m]);
    }
  }
}

struct TileBoxPartsArgs {
  std::uint8_t* dst;
  std::size_t dst_pitch;
  TileBoxPart part[2];  // blocks [0, part[0].tiles) the first, the rest the second
  int y0, y1;           // output rows of the launch
  int r;                // radius, 1 .. kSepMaxRadius
  bool vec_out;  // dst 16-byte aligned (data and pitch): 16-byte stores where a run lies inside
  bool early;    // trigger the dependents at the start (LaunchContext)
};

constexpr std::size_t kTileBoxMaxSmem = 48 * 1024;  // without the opt-in attribute

// A column part's tiles for tile_box_parts_kernel: 16 × 256 for 16 columns, 48 × 85 for 48, ...
constexpr TileBoxPart tile_box_part(int x0, int x1, long long rows, int r) {
  return tile_box_part(x0, x1, rows, r, kTileBoxW, kTileBoxThreads, kTileBoxMaxSmem);
}

// The tile engine over one or two parts of TileBoxPart shapes (the running kernel's edge columns):
// tile_box_kernel's three steps, with the input and the column sums spread over the threads as a
// tile's shape lets them. A kernel of its own: the general shape in tile_box_kernel cost it 10-19%
// (H200, 2026-11-28 19:47 and 20:00 UTC, 1080p to 16384²).
__global__ void __launch_bounds__(kTileBoxThreads)
    tile_box_parts_kernel(const GlobalSrc src, const TileBoxPartsArgs a, const BoxMean64 mean) {
  extern __shared__ uint4 tile_box_smem[];
  if (a.early) pdl_trigger();
  pdl_wait();  // the kernel before it has finished (launch_pdl)

  const int b = static_cast<int>(blockIdx.x);
  const bool second = b >= a.part[0].tiles;
  const TileBoxPart part = second ? a.part[1] : a.part[0];  // by value: no local copy of a
  const int i = second ? b - a.part[0].tiles : b;
  const int r = a.r, k = 2 * r + 1;
  const int tw = part.tw, part_th = part.th;
  const int cols = tile_box_cols(tw, r), sp = tile_box_sum_pitch(tw, r);
  const int x0 = part.x0 + (i % part.across) * tw;
  const int x_end = min(x0 + tw, part.x1);  // this tile's outputs end
  const int ty = a.y0 + (i / part.across) * part_th;
  const int th = min(part_th, a.y1 - ty);  // output rows of this tile
  const int in_rows = th + 2 * r;
  std::uint8_t* in = reinterpret_cast<std::uint8_t*>(tile_box_smem);
  std::uint16_t* sums = reinterpret_cast<std::uint16_t*>(in + tile_box_in_bytes(tw, part_th, r));
  const int t = static_cast<int>(threadIdx.x);

  // 1. Input rows ty − r .. ty + th + r − 1, columns x0 − r .. x0 + tw + r − 1, eight loads in
  // flight a thread. Wide tiles: a thread takes columns t and t + kTileBoxThreads (< cols) of each
  // row; narrow ones (cols ≤ kTileBoxThreads): column t mod cols of every per-th row from t / cols.
  const bool wide = cols > kTileBoxThreads;
  const int per = wide ? 1 : kTileBoxThreads / cols;  // rows at once
  const int c0 = wide ? t : t % cols;
  const int y_first = wide ? 0 : t / cols;
  const int xa = x0 - r + c0, xb = xa + kTileBoxThreads;
  const bool two = c0 + kTileBoxThreads < cols;
  if (y_first < per) {
    for (int yb = y_first; yb < in_rows; yb += 8 * per) {
      std::uint8_t va[8], vb[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        va[j] = vb[j] = 0;
        if (yb + j * per < in_rows) {
          const GlobalSrc::Row row = src.row(ty - r + yb + j * per);
          va[j] = src.pixel(row, xa);
          if (two) vb[j] = src.pixel(row, xb);
        }
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int y = yb + j * per;
        if (y < in_rows) {
          in[y * cols + c0] = va[j];
          if (two) in[y * cols + c0 + kTileBoxThreads] = vb[j];
        }
      }
    }
  }
  __syncthreads();

  // 2. Column sums over the window, down the tile's th output rows: narrow tiles in segs runs of
  // seg_rows rows a column (each starting with its own window), so every thread has one.
  const int segs = max(1, kTileBoxThreads / cols);
  const int seg_rows = (th + segs - 1) / segs;
  for (int task = t; task < cols * segs; task += kTileBoxThreads) {
    const int c = task % cols, j0 = task / cols * seg_rows;
    const int j1 = min(th, j0 + seg_rows);
    if (j0 >= j1) continue;
    std::uint32_t s = 0;
    for (int m = 0; m < k; ++m) s += in[(j0 + m) * cols + c];
    sums[j0 * sp + c] = static_cast<std::uint16_t>(s);
    for (int j = j0 + 1; j < j1; ++j) {
      s += in[(j + k - 1) * cols + c];
      s -= in[(j - 1) * cols + c];
      sums[j * sp + c] = static_cast<std::uint16_t>(s);
    }
  }
  __syncthreads();

  // 3. Row j = t mod th (a warp's lanes: 16 or more rows), outputs x0 + 16q .. x0 + 16q + 15: as
  // in tile_box_kernel, written out twice on purpose: a forceinline helper for both gave that
  // kernel 42 registers instead of 40 (5 blocks an SM instead of 6 on sm_90, nvcc 13.0).
  const int j = t % part_th, q = t / part_th;
  const int xo = x0 + 16 * q;
  if (j >= th || xo >= x_end) return;  // x_end ≤ x0 + tw
  const std::uint16_t* srow = sums + j * sp + 16 * q;
  std::uint32_t s = 0;
  for (int i = 0; i < k; ++i) s += srow[i];
  std::uint32_t o[16];
  o[0] = s;
#pragma unroll
  for (int m = 1; m < 16; ++m) {
    s += srow[m + k - 1];
    s -= srow[m - 1];
    o[m] = s;
  }
#pragma unroll
  for (int m = 0; m < 16; ++m) o[m] = mean(o[m]);
  std::uint8_t* drow = a.dst + static_cast<std::size_t>(ty + j) * a.dst_pitch;
  if (a.vec_out && xo + 16 <= x_end) {
    *reinterpret_cast<uint4*>(drow + xo) =
        make_uint4(pack4(o[0], o[1], o[2], o[3]), pack4(o[4], o[5], o[6], o[7]),
                   pack4(o[8], o[9], o[10], o[11]), pack4(o[12], o[13], o[14], o[15]));
  } else {
#pragma unroll
    for (int m = 0; m < 16; ++m) {
      if (xo + m < x_end) drow[xo + m] = static_cast<std::uint8_t>(o[m]);
    }
  }
}

}  // namespace jetpipe::dev
