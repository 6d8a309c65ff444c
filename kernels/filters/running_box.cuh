// SPDX-License-Identifier: MIT
// The box filter by running sums (ksize 3 .. 2·kRunBoxMaxRadius + 1): the cost of a pixel does not
// grow with ksize. A warp owns a column strip of 32 lanes × 16 columns (lanes 0 and 31 only supply
// the halo, so R ≤ 16 − 1 fits) and slides down rows_per_warp output rows:
//   - vertical: each lane keeps the sums of its 16 columns over the last ksize input rows as eight
//     words of two 16-bit halves (≤ 31 · 255 < 2^16); a new row is added and the row leaving the
//     window, kept in a per-lane ring of ksize 16-byte slots in shared memory, subtracted;
//   - horizontal: the lane takes its neighbours' column sums by shuffles (R columns each side) and
//     slides a window of 2R + 1 along its 16 columns (two operations an output);
//   - the exact integer sum goes through BoxEpilogue (round(sum / area) by a multiply-high, exact
//     for ksize ≤ 31, or the saturated sum), as the fast kernel's.
// The source reads the input and its border (kernels/filters/source.cuh): results equal box_ref.
//   running_box_kernel<R, Src><<<run_box_blocks(a), kRunBoxThreads, run_box_smem_bytes(R)>>>(...)
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/block/pdl.cuh"
#include "kernels/filters/fast_kernel.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

struct RunBoxArgs {
  std::uint8_t* dst;
  std::size_t dst_pitch;
  int width, y0, y1;
  int segs;           // column strips of a band (kRunBoxWarpOut columns each)
  int rows_per_warp;  // output rows a warp
  bool vec_out;       // dst is 16-byte aligned: 16-byte stores
  bool early;         // trigger the dependents at the start (LaunchContext)
};

inline std::size_t run_box_smem_bytes(int radius) {
  return static_cast<std::size_t>(kRunBoxThreads) * (2 * radius + 1) * 16;
}

// Half h (0: low) of word w of the column sums `cs`, for column c of the extended row (−R ≤ c <
// 16 + R): c < 0 from the left neighbour's words `lw`, c ≥ 16 from the right one's `rw`.
template <int R>
__device__ __forceinline__ std::uint32_t run_box_col(const std::uint32_t (&lw)[8],
                                                     const std::uint32_t (&cs)[8],
                                                     const std::uint32_t (&rw)[8], int c) {
  const std::uint32_t w = c < 0 ? lw[(c + 16) >> 1] : c < 16 ? cs[c >> 1] : rw[(c - 16) >> 1];
  return ((c + 16) & 1) ? (w >> 16) : (w & 0xffffu);
}

template <int R, class Src>
__global__ void __launch_bounds__(kRunBoxThreads)
    running_box_kernel(const Src src, const RunBoxArgs a, const BoxEpilogue epi) {
  static_assert(R >= 1 && R <= kRunBoxMaxRadius, "R columns of a neighbour lane");
  constexpr int K = 2 * R + 1;
  constexpr int D = kRunBoxPrefetch;
  extern __shared__ uint4 run_box_ring[];
  if (a.early) pdl_trigger();
  pdl_wait();  // the kernel before it has finished (launch_pdl)

  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp =
      static_cast<int>(blockIdx.x) * (kRunBoxThreads / 32) + (static_cast<int>(threadIdx.x) >> 5);
  const int band = warp / a.segs, seg = warp - band * a.segs;
  const int ys = a.y0 + band * a.rows_per_warp;
  if (ys >= a.y1) return;  // warp-uniform: the grid's last block may hold idle warps
  const int ye = min(ys + a.rows_per_warp, a.y1);
  const int x = seg * kRunBoxWarpOut - 16 + 16 * lane;         // this lane's 16 columns
  const int total = ye - ys + 2 * R;                           // input rows the warp reads
  uint4* ring = run_box_ring + static_cast<int>(threadIdx.x);  // slot s: ring[s · kRunBoxThreads]
  const bool out_lane = lane >= 1 && lane <= 30 && x < a.width;

  const auto load = [&](int t) { return src.template chunk<true>(src.row(ys - R + t), x); };
  uint4 buf[D];
#pragma unroll
  for (int k = 0; k < D; ++k) {
    if (k < total) buf[k] = load(k);
  }
  std::uint32_t cs[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int slot = 0;

  // One copy of the loop body (the loads' edge paths and the window code): the rows in flight
  // shift down the buffer instead of the loop unrolling D times (unrolled, the texture source's
  // kernels spilled).
#pragma unroll 1
  for (int t = 0; t < total; ++t) {
    const uint4 v = buf[0];
#pragma unroll
    for (int k = 0; k + 1 < D; ++k) buf[k] = buf[k + 1];
    if (t + D < total) buf[D - 1] = load(t + D);
    {
      std::uint32_t e[8];
      unpack_pairs(v, e);
      if (t >= K) {  // the row leaving the window (warp-uniform)
        std::uint32_t o[8];
        unpack_pairs(ring[slot * kRunBoxThreads], o);
#pragma unroll
        for (int i = 0; i < 8; ++i) cs[i] = cs[i] + e[i] - o[i];  // each half stays ≥ 0
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) cs[i] += e[i];
      }
      ring[slot * kRunBoxThreads] = v;
      slot = slot + 1 == K ? 0 : slot + 1;
      if (t < 2 * R) continue;

      // Output row ys + t − 2R: the window sums along the row.
      std::uint32_t lw[8], rw[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        lw[i] = 0;
        rw[i] = 0;
      }
#pragma unroll
      for (int i = (16 - R) / 2; i < 8; ++i) lw[i] = __shfl_up_sync(0xffffffffu, cs[i], 1);
#pragma unroll
      for (int i = 0; i <= (R - 1) / 2; ++i) rw[i] = __shfl_down_sync(0xffffffffu, cs[i], 1);
      if (out_lane) {
        std::uint32_t acc = 0;
#pragma unroll
        for (int c = -R; c <= R; ++c) acc += run_box_col<R>(lw, cs, rw, c);
        std::uint32_t sums[16];
        sums[0] = acc;
#pragma unroll
        for (int j = 1; j < 16; ++j) {
          acc += run_box_col<R>(lw, cs, rw, j + R) - run_box_col<R>(lw, cs, rw, j - R - 1);
          sums[j] = acc;
        }
        std::uint8_t* row = a.dst + static_cast<std::size_t>(ys + t - 2 * R) * a.dst_pitch;
        if (a.vec_out && x + 16 <= a.width) {
          epi.store16(row, x, sums);
        } else {
#pragma unroll
          for (int j = 0; j < 16; ++j) {
            if (x + j < a.width) epi.store1(row, x + j, static_cast<int>(sums[j]));
          }
        }
      }
    }
  }
}

// Calls f(std::integral_constant<int, R>) for 1 ≤ R ≤ kRunBoxMaxRadius.
template <class F, int... Rs>
cudaError_t with_run_box_radius(int radius, F&& f, std::integer_sequence<int, Rs...>) {
  cudaError_t e = cudaErrorInvalidValue;
  ((radius == Rs + 1 ? (e = f(std::integral_constant<int, Rs + 1>{}), true) : false) || ...);
  return e;
}
template <class F>
cudaError_t with_run_box_radius(int radius, F&& f) {
  return with_run_box_radius(radius, std::forward<F>(f),
                             std::make_integer_sequence<int, kRunBoxMaxRadius>{});
}

}  // namespace jetpipe::dev
