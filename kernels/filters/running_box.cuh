// SPDX-License-Identifier: MIT
// The box filter by running sums (ksize 3 .. 2·kRunBoxMaxRadius + 1): the cost of a pixel does not
// grow with ksize. A warp owns a column strip of 32 lanes × 16 columns (lanes 0 and 31 only supply
// the halo, so R ≤ 16 − 1 fits) and slides down rows_per_warp output rows:
//   - rows in flight: each lane's input chunks come through a ring of run_box_slots(R) = ksize + A
//     16-byte slots in shared memory, cp.async'd A rows ahead of use; the slot a row leaves the
//     window from is the one the row A ahead goes into, so one ring is both the loads in flight and
//     the rows to subtract (lanes whose chunk is not 16 aligned bytes inside the image, or views
//     that are not 16-byte aligned, load through the source with its border, kRunBoxEdgeAhead rows
//     ahead in registers, and store into the same ring);
//   - vertical: each lane keeps its 16 column sums over the last ksize rows as eight words of two
//     16-bit halves (≤ 31 · 255 < 2^16): + the new row − the leaving one, one IADD3 a word;
//   - horizontal: the neighbours' words by shuffles; q(x) = m · (window sum) + bias by dp2a on the
//     packed halves: the first output from packed sums of whole words (≤ 8 words a group: halves
//     ≤ 8 · 7905 < 2^16), then one PRMT (the entering and the leaving column in one word) and one
//     dp2a (bytes m, −m) an output, whatever ksize;
//   - normalize: q = 2s + area and out = __umulhi(q, magic), BoxEpilogue's rounded mean (exact for
//     ksize ≤ 31); else q = s and out = min(s, 255).
// The source reads the input and its border (kernels/filters/source.cuh): results equal box_ref.
//   running_box_kernel<R, kEdge><<<blocks, kRunBoxThreads, run_box_smem_bytes(R)>>>(...), the
//   interior strips and the edge strips (kernels/box.cu: launch_running_box)
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/block/pdl.cuh"
#include "kernels/filters/fast_kernel.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/launch/strips.h"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

struct RunBoxArgs {
  std::uint8_t* dst;
  std::size_t dst_pitch;
  int width, y0, y1;
  RunBoxStrips strips;  // the column strips of a band this launch takes (kRunBoxWarpOut columns)
  // The interior kernel's strip k's first output column: min(x_first + kRunBoxWarpOut · k, x_last)
  // (0 and INT_MAX: strip k at 480k, as the edge kernel's always are; 16 and place_strips' x0_last:
  // the tile-edged layout, kernels/box.cu).
  int x_first, x_last;
  int rows_per_warp;    // output rows a warp
  bool vec_out;         // dst is 16-byte aligned: 16-byte stores
  bool early;           // trigger the dependents at the start (LaunchContext)
};

// Ring slots a lane: ksize rows in the window and the rows in flight (kRunBoxAhead, fewer where
// kRunBoxMaxSlots would be passed: 31 × 31 keeps 5).
constexpr int run_box_slots(int radius) {
  const int k = 2 * radius + 1;
  return k + kRunBoxAhead <= kRunBoxMaxSlots ? k + kRunBoxAhead : kRunBoxMaxSlots;
}
static_assert(kRunBoxMaxSlots - (2 * kRunBoxMaxRadius + 1) >= 2, "two rows in flight at least");

inline std::size_t run_box_smem_bytes(int radius) {
  return static_cast<std::size_t>(kRunBoxThreads) * run_box_slots(radius) * 16;
}

// The ring's shared-memory accesses (its cp.async: kernels/block/cp_async.cuh), in asm so
// that the compiler keeps them in order with the cp.async writes it does not see.
__device__ __forceinline__ uint4 run_box_lds(std::uint32_t a) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(a)
               : "memory");
  return v;
}
__device__ __forceinline__ void run_box_sts(std::uint32_t a, const uint4& v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

// Word w (0..23) of the extended row: the left neighbour's eight words, the lane's, the right's.
template <int W>
__device__ __forceinline__ std::uint32_t run_box_word(const std::uint32_t (&lw)[8],
                                                      const std::uint32_t (&cs)[8],
                                                      const std::uint32_t (&rw)[8]) {
  static_assert(W >= 0 && W < 24, "three lanes' words");
  if constexpr (W < 8) {
    return lw[W];
  } else if constexpr (W < 16) {
    return cs[W - 8];
  } else {
    return rw[W - 16];
  }
}

// The 16 window values q(j) = bias + m · Σ col[j − R .. j + R] of the lane's columns (col[c] half
// c & 1 of word (c + 16) / 2 of the extended row). sel_mm / sel_0m / sel_m0: dp2a bytes (m, m),
// (0, m), (m, 0); sel_pm: (m, −m).
template <int R>
__device__ __forceinline__ void run_box_windows(const std::uint32_t (&lw)[8],
                                                const std::uint32_t (&cs)[8],
                                                const std::uint32_t (&rw)[8], std::uint32_t bias,
                                                std::uint32_t sel_mm, std::uint32_t sel_0m,
                                                std::uint32_t sel_m0, std::uint32_t sel_pm,
                                                std::uint32_t (&q)[16]) {
  std::uint32_t e[24];
#pragma unroll
  for (int w = 0; w < 8; ++w) {
    e[w] = lw[w];
    e[8 + w] = cs[w];
    e[16 + w] = rw[w];
  }
  // q(0): the partial words at both ends, then the whole words between in packed groups of ≤ 8.
  constexpr int w_lo = (16 - R) >> 1, w_hi = (16 + R) >> 1;
  constexpr bool lo_half = ((16 - R) & 1) != 0;  // column −R is the high half of word w_lo
  constexpr bool hi_half = ((16 + R) & 1) == 0;  // column R is the low half of word w_hi
  constexpr int wf = lo_half ? w_lo + 1 : w_lo, wl = hi_half ? w_hi - 1 : w_hi;
  std::uint32_t acc = bias;
  if (lo_half) acc = dp2a_lo<false>(e[w_lo], sel_0m, acc);
  if (hi_half) acc = dp2a_lo<false>(e[w_hi], sel_m0, acc);
#pragma unroll
  for (int g = wf; g <= wl; g += 8) {
    std::uint32_t s = 0;
#pragma unroll
    for (int w = g; w <= wl && w < g + 8; ++w) s += e[w];
    acc = dp2a_lo<false>(s, sel_mm, acc);
  }
  q[0] = acc;
  // q(j) = q(j − 1) + m · col[j + R] − m · col[j − R − 1].
#pragma unroll
  for (int j = 1; j < 16; ++j) {
    const int ca = j + R + 16, cb = j - R - 1 + 16;  // as columns of the extended row, ≥ 0
    const int ha = 2 * (ca & 1), hb = 4 + 2 * (cb & 1);
    const std::uint32_t p =
        __byte_perm(e[ca >> 1], e[cb >> 1], ha | (ha + 1) << 4 | hb << 8 | (hb + 1) << 12);
    acc = dp2a_lo<true>(p, sel_pm, acc);
    q[j] = acc;
  }
}

// Blocks an SM for the register bound: what the ring's shared memory allows (228 KB an SM, 1 KB of
// it a block), at most 8 for the interior strips (cp.async only: 51-56 registers at 8, sm_90) and
// 3 for the edge strips (168 registers: at 4 their loads spilled 4 bytes, R ≤ 9).
template <int R, bool kEdge>
constexpr int run_box_min_blocks() {
  const int b = (228 * 1024) / (kRunBoxThreads * run_box_slots(R) * 16 + 1024);
  const int cap = kEdge ? 3 : 8;
  return b < 1 ? 1 : b > cap ? cap : b;
}

// One lane's strip of a warp: input rows yin .. yin + total − 1 of columns x .. x + 15 through the
// ring (`ring`: this lane's slot 0, shared address), output rows from `row` on. kAsync: every
// lane of the warp is direct (cp.async) or not needed (zeros); else every lane loads through the
// source (its border, unaligned views), kRunBoxEdgeAhead rows ahead in registers, and stores into
// the ring: the image's first and last column strips, unaligned views.
template <int R, bool kAsync, class Src>
__device__ __forceinline__ void run_box_strip(const Src& src, const RunBoxArgs& a,
                                              const BoxEpilogue& epi, int x, int yin, int total,
                                              bool direct, bool need, bool out_lane,
                                              std::uint32_t ring, std::uint8_t* row) {
  constexpr int K = 2 * R + 1;
  constexpr int N = run_box_slots(R);
  constexpr int A = N - K;  // rows in flight
  constexpr int D = kAsync ? 1 : kRunBoxEdgeAhead;
  constexpr std::uint32_t S = kRunBoxThreads * 16;  // bytes from one slot to the next
  const uint4 zero = make_uint4(0, 0, 0, 0);

  // The rows before the first leave zero slots behind: slots A .. N − 1 are the leaving rows of
  // steps 0 .. K − 1, and get their own rows after that.
#pragma unroll 1
  for (int s = A; s < N; ++s) run_box_sts(ring + s * S, zero);

  const auto fetch = [&](int n) {  // through the source, with its border
    return need && n < total ? src.template chunk<true, true>(src.row(yin + n), x) : zero;
  };
  // !kAsync: rows n .. n + D − 1 when row n is issued. fetch is written out twice only (the start
  // below is a loop, not unrolled): inlined at each of the start's 12 rows, its 16 border remaps
  // made the edge kernel 98% of the running box's ptxas time (10 s an instantiation, sm_87; 0.8
  // now) and 7-29% slower (H200, 2026-11-28 23:14 UTC, 1080p every strip: decision 046).
  uint4 pend[D];
  // kAsync: the byte offset of row yin + n's chunk (rows are issued in order, n = 0, 1, ...).
  long long off = static_cast<long long>(yin) * static_cast<long long>(src.pitch) + x;
  const auto issue = [&](int n, std::uint32_t slot) {
    if constexpr (kAsync) {
      if (n < total) {
        const int y = yin + n;
        if (!direct) {
          run_box_sts(slot, zero);
        } else if (static_cast<unsigned>(y) < static_cast<unsigned>(src.height)) {
          cp_async16(slot, src.data + off);
        } else if (const std::uint8_t* r = src.row(y)) {  // a border row: remapped
          cp_async16(slot, r + x);
        } else {
          run_box_sts(slot, splat16(src.fill4));
        }
      }
      off += static_cast<long long>(src.pitch);
    } else {
      if (n >= 0) run_box_sts(slot, pend[0]);  // n < 0: filling pend
#pragma unroll
      for (int k = 0; k + 1 < D; ++k) pend[k] = pend[k + 1];
      pend[D - 1] = fetch(n + D);
    }
    if (kAsync || n >= 0) cp_async_commit();  // a group a row, empty past the last; n < 0: none
  };
  if constexpr (kAsync) {
#pragma unroll
    for (int n = 0; n < A; ++n) issue(n, ring + n * S);
  } else {
#pragma unroll 1
    for (int n = -D; n < A; ++n) issue(n, ring + n * S);
  }

  std::uint32_t sel_mm, sel_0m, sel_m0, sel_pm, bias;
  if (epi.normalize) {  // q = 2s + area
    sel_mm = 0x0202u, sel_0m = 0x0200u, sel_m0 = 0x0002u, sel_pm = 0xfe02u, bias = epi.area;
  } else {  // q = s
    sel_mm = 0x0101u, sel_0m = 0x0100u, sel_m0 = 0x0001u, sel_pm = 0xff01u, bias = 0;
  }
  std::uint32_t cs[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::uint32_t cur = ring, leave = ring + A * S;  // the slots of rows t and t − K (t + A)
  const std::uint32_t ring_end = ring + N * S;

#pragma unroll 1
  for (int t = 0; t < total; ++t) {
    cp_async_wait<A - 1>();  // row t has landed: at most A − 1 newer rows pending
    const uint4 v = run_box_lds(cur);
    const uint4 o = run_box_lds(leave);
    issue(t + A, leave);  // row t + A into the leaving row's slot
    {
      std::uint32_t ev[8], ov[8];
      unpack_pairs(v, ev);
      unpack_pairs(o, ov);
#pragma unroll
      for (int i = 0; i < 8; ++i) cs[i] = cs[i] + ev[i] - ov[i];  // each half stays in [0, 2^16)
    }
    cur += S;
    leave += S;
    if (cur == ring_end) cur = ring;
    if (leave == ring_end) leave = ring;
    if (t < 2 * R) continue;

    // Output row ys + t − 2R.
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
      std::uint32_t q[16];
      run_box_windows<R>(lw, cs, rw, bias, sel_mm, sel_0m, sel_m0, sel_pm, q);
      if (epi.normalize) {
#pragma unroll
        for (int j = 0; j < 16; ++j) q[j] = __umulhi(q[j], epi.magic);
      } else {
#pragma unroll
        for (int j = 0; j < 16; ++j) q[j] = min(q[j], 255u);
      }
      if (a.vec_out && x + 16 <= a.width) {
        std::uint32_t w[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          w[k] = pack4(q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3]);
        }
        *reinterpret_cast<uint4*>(row + x) = make_uint4(w[0], w[1], w[2], w[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 16; ++j) {
          if (x + j < a.width) row[x + j] = static_cast<std::uint8_t>(q[j]);
        }
      }
    }
    row += a.dst_pitch;
  }
}

// Two kernels a launch: the interior strips (every lane's 16 bytes aligned inside the image: the
// cp.async path alone, few registers, more blocks an SM) and the edge strips (the first, the last
// ones, every strip of an unaligned view: either path).
template <int R, bool kEdge, class Src>
__global__ void __launch_bounds__(kRunBoxThreads, run_box_min_blocks<R, kEdge>())
    running_box_kernel(const Src src, const RunBoxArgs a, const BoxEpilogue epi) {
  static_assert(R >= 1 && R <= kRunBoxMaxRadius, "R columns of a neighbour lane");
  static_assert(std::is_same_v<Src, GlobalSrc>, "cp.async reads global memory");
  extern __shared__ uint4 run_box_ring[];
  if (a.early) pdl_trigger();
  pdl_wait();  // the kernel before it has finished (launch_pdl)

  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp =
      static_cast<int>(blockIdx.x) * (kRunBoxThreads / 32) + (static_cast<int>(threadIdx.x) >> 5);
  const int band = warp / a.strips.segs;
  const int seg = a.strips.strip_of(warp - band * a.strips.segs);
  const int ys = a.y0 + band * a.rows_per_warp;
  if (ys >= a.y1) return;  // warp-uniform: the grid's last block may hold idle warps
  const int ye = min(ys + a.rows_per_warp, a.y1);
  // This lane's 16 columns (the edge kernel's strips always at 480k: an extra register there
  // spilled 4 bytes at R 10..14, sm_90).
  const int x0 = kEdge ? seg * kRunBoxWarpOut : min(a.x_first + seg * kRunBoxWarpOut, a.x_last);
  const int x = x0 - 16 + 16 * lane;
  const int yin = ys - R;
  const int total = ye - ys + 2 * R;  // input rows the warp reads
  const bool out_lane = lane >= 1 && lane <= 30 && x < a.width;
  // direct: 16 aligned bytes inside the image's columns (cp.async); need: some column within R of
  // an output column (the others hold zeros and load nothing).
  const bool direct = src.vec && x >= 0 && x + 16 <= src.width;
  const bool need = x < src.width + R;
  const std::uint32_t ring =
      static_cast<std::uint32_t>(__cvta_generic_to_shared(run_box_ring + threadIdx.x));
  std::uint8_t* row = a.dst + static_cast<std::size_t>(ys) * a.dst_pitch;
  if (!kEdge || __all_sync(0xffffffffu, direct || !need)) {  // interior: every lane direct
    run_box_strip<R, true>(src, a, epi, x, yin, total, direct, need, out_lane, ring, row);
  } else {
    run_box_strip<R, false>(src, a, epi, x, yin, total, direct, need, out_lane, ring, row);
  }
  cp_async_wait<0>();  // no cp.async left writing into the ring of the next block
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

// The running kernel for radius R (kernels/box.cu builds the arguments): the interior strips'
// kernel where inner.strips.segs > 0, then the edge strips' where edge.strips.segs > 0. Defined in
// running_box_launch.cuh, instantiated in kernels/box_running_lo.cu (R 1..8) and box_running_hi.cu
// (9..15).
template <int R>
cudaError_t launch_running_box_r(const GlobalSrc& s, const RunBoxArgs& inner,
                                 const RunBoxArgs& edge, const BoxEpilogue& epi,
                                 cudaStream_t stream);

}  // namespace jetpipe::dev
