// SPDX-License-Identifier: MIT
// The staged kernel: the fast separable filter over a colour source (to_gray fused into the
// gaussian), each block's gray rows converted once into shared memory. Launched by
// launch_fast_separable (fast_dispatch.cuh).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/filters/fast_kernel.cuh"

namespace jetpipe::dev {

// The strip kernel (fast_kernel.cuh) converts every input row of a warp to gray, and a warp of rpw
// output rows (4 at 1080p) reads rpw + 2R input rows: each colour pixel is converted (rpw + 2R) /
// rpw times, twice at 1080p, and the conversion is most of the work. Here a block of 8 warps owns
// one strip of 512 input columns (X0 = 480·s, lanes as above) and 8·rw output rows: it converts its
// 8·rw + 2R input rows once into shared memory (a thread's loads of kStagedBatch chunks issued
// before the first conversion), then each warp runs fast_strip over its rw rows from there (1.25
// conversions a pixel at rw = 2, R = 2). The strips start at column 0, so there are no edge blocks:
// the columns left of the image, and right of it for the last strip, are read through the border a
// pixel a thread (ColourSrc::pixel), and the image's last columns are stored in part
// (Epi::store_part). Used for every gaussian over a colour source that the fast kernel takes
// (launch_fast_separable; docs/decisions/002-gaussian-staged-colour.md). Rows a warp: the policy's
// staged_rows (kernels/tuning_filters.h).
constexpr int kStagedWarps = 8;
constexpr int kStagedThreads = 32 * kStagedWarps;
constexpr int kStagedRowBytes = 512;  // one strip: 32 chunks of 16 gray pixels
constexpr int kStagedBatch = 3;       // chunks a thread loads before converting (36 registers;
                                      // 2 for 4-byte pixels: 32)
constexpr int kStagedMaxRows = 4;     // rows a warp at most

struct StagedArgs {
  FastArgs f;  // taps, dst (the strip grid's fields unused)
  int y0, y1;
  int rows_per_warp;  // 1 .. kStagedMaxRows
  int strips;         // ceil(width / 480)
  bool early;         // the kernel triggers its dependents at its start (LaunchContext)
};

// A staged block's gray rows in shared memory, read by fast_strip as its source.
struct StagedRowsSrc {
  const std::uint8_t* tile;  // tile row r: tile + kStagedRowBytes · r
  int y_first;               // the image row of tile row 0
  int x_first;               // the image column of a tile row's byte 0
  using Row = const std::uint8_t*;
  __device__ __forceinline__ Row row_near(int y) const {
    return tile + (y - y_first) * kStagedRowBytes;
  }
  __device__ __forceinline__ uint4 chunk_in(Row r, int x) const {
    return *reinterpret_cast<const uint4*>(r + (x - x_first));
  }
};

// Register caps as the strip kernel's, for twice its threads a block: no spills.
template <int R>
constexpr int staged_min_blocks() {
  return R == 1 ? 4 : R == 2 ? 3 : 2;
}

// Grid: strips · ceil((y1 − y0) / (8 · rows_per_warp)) blocks of kStagedThreads; dynamic shared
// memory staged_smem_bytes().
template <int R, class Src, class Epi>
__global__ void __launch_bounds__(kStagedThreads, staged_min_blocks<R>())
    fast_staged_kernel(const Src src, const StagedArgs a, const Epi epi) {
  BlockTrace trace(1);
  if (a.early) pdl_trigger();
  extern __shared__ __align__(16) std::uint8_t smem[];
  const int band = static_cast<int>(blockIdx.x) / a.strips;
  const int strip = static_cast<int>(blockIdx.x) - band * a.strips;
  const int ys = a.y0 + band * kStagedWarps * a.rows_per_warp;
  const int ye = min(ys + kStagedWarps * a.rows_per_warp, a.y1);
  const int x_first = strip * kFastWarpOut - 16;
  const int width = a.f.width;
  const int units = (ye - ys + 2 * R) * 32;  // chunks of the block's input rows
  const int tid = static_cast<int>(threadIdx.x);
  pdl_wait();  // the kernel before it has finished (launch_pdl)
  trace.waited();
  // The chunks inside the image, kBatch a thread at a time: their loads, then their use.
  constexpr int kBatch = Src::kPixelBytes == 4 ? 2 : kStagedBatch;
  for (int base = 0; base < units; base += kBatch * kStagedThreads) {
    typename Src::Raw raw[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int u = base + tid + k * kStagedThreads;
      const int x = x_first + 16 * (u & 31);
      if (u < units && x >= 0 && x + 16 <= width) {
        raw[k] = src.load_in(src.row_near(ys - R + (u >> 5)), x);
      }
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int u = base + tid + k * kStagedThreads;
      const int x = x_first + 16 * (u & 31);
      if (u < units && x >= 0 && x + 16 <= width) {
        *reinterpret_cast<uint4*>(smem + (u >> 5) * kStagedRowBytes + 16 * (u & 31)) =
            src.convert_in(raw[k]);
      }
    }
  }
  // The chunks at the image's left and right edges (strip 0's first, the last strip's from c_right
  // on), a pixel a thread through the border (past every output's window: zeros, never read). One
  // chunk a thread, its 16 pixels one after another, made the edge blocks the last to finish.
  const int c_right = min(32, (width - x_first) >> 4);  // the first chunk not inside the image
  const int n_left = x_first < 0 ? 1 : 0;
  const int per_row = 16 * (n_left + 32 - c_right);
  const int tasks = per_row * (ye - ys + 2 * R);
  for (int i = tid; i < tasks; i += kStagedThreads) {
    const int r = i / per_row, j = i - r * per_row;
    const int k = j >> 4;
    const int c = k < n_left ? 0 : c_right + k - n_left;
    const int x = x_first + 16 * c + (j & 15);
    const std::uint8_t g =
        x < width + 16 ? src.pixel(src.row_near(ys - R + r), x) : std::uint8_t{0};
    smem[r * kStagedRowBytes + 16 * c + (j & 15)] = g;
  }
  __syncthreads();
  const int warp = tid >> 5, lane = tid & 31;
  const int wy0 = ys + warp * a.rows_per_warp;
  const int wy1 = min(wy0 + a.rows_per_warp, ye);
  if (wy0 >= wy1) return;
  const int x = x_first + 16 * lane;
  const int out_px = lane >= 1 && lane <= 30 && x < width ? min(16, width - x) : 0;
  const StagedRowsSrc rows_src{smem, ys - R, x_first};
  LoadedRows<StagedRowsSrc> rows{rows_src, x, wy0 - R, wy1 - wy0 + 2 * R, {}};
  fast_strip<R, true>(rows_src, a.f, epi, x, out_px, wy0, wy1, rows);
}

inline std::size_t staged_smem_bytes(int radius, int rows_per_warp) {
  return static_cast<std::size_t>(kStagedWarps * rows_per_warp + 2 * radius) * kStagedRowBytes;
}


}  // namespace jetpipe::dev
