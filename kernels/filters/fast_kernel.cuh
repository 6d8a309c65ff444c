// SPDX-License-Identifier: MIT
// The fast separable 8-bit filter: one fused pass for kernels of 2R + 1 ≤ 9 taps along both axes
// with integer taps: gaussian's Q8 taps (≤ 255), box's ones, sobel's signed ones (vertical sums
// biased into [0, 2^16), horizontal taps signed bytes). Used by gaussian.cu, box.cu and sobel.cu.
//
// Work split: a warp owns a strip of 512 input columns (lane l: columns X0 − 16 + 16·l, one 16-byte
// load per row) and writes the middle 480 (lanes 1..30; lanes 0 and 31 only supply halo), sliding
// down rows_per_warp output rows. Each input pixel is loaded once per strip, each output pixel
// written once, with one 16-byte store per lane and row. Strips lie inside the image (X0 − 16 ≥ 0,
// X0 + 496 ≤ width; where more than 64 columns would be left at the right, one more strip moved
// left onto a 16-byte boundary, rewriting some of its neighbour's pixels with the same values), so
// the unrolled loop never tests for border columns; rows outside the image (at most R) are remapped
// without division (row_near). The columns left at the edges ([0, 16) and ≤ 64 at the right) are
// done by two extra blocks per edge_rows rows (≥ one 16-row tile) of the same launch running the
// separable tile engine (separable.cuh), where the source's full border handling applies:
// one launch (a 1-D grid, StripGrid: every block has work), and the register count stays the
// interior loop's. Launches the kernel does not fit (unaligned views,
// images under 512 × 16) go to the tile engine alone (launch_fast_separable, fast_dispatch.cuh). A
// gaussian over a colour source (to_gray fused) runs the staged kernel (staged_kernel.cuh) instead:
// the same strips and sums, each block's gray rows converted once into shared memory.
//
// Per output row and lane (16 pixels), R = 2 (5 × 5), all integer and exact:
//   unpack the incoming row's bytes into 16-bit lane pairs          8 PRMT   (0.5 / pixel)
//   vertical pass on packed pairs (two pixels per IMAD; sums of    40 IMAD   (2.5)
//     Q8 taps · bytes ≤ 255·256, + 128 per lane for the rounding,
//     fit 16 bits); symmetric taps (gaussian, box): 16 IADD + 24 IMAD
//     (rows with the same tap added first)
//   halo pairs from the neighbour lanes                             2 SHFL   (0.125)
//   odd pairs (v[j], v[j+1]) for odd j: one PRMT each              10 PRMT   (0.6)
//   horizontal pass: __dp2a_lo does 2 taps (16-bit v × 8-bit tap)  48 IDP.2A (3)
//     into 32 bits (Σ taps = 256, so the +128 lanes add 2^15)
//   (acc + 2^15) >> 16 is byte 2 of the accumulator: PRMT packing  12 PRMT   (0.75)
//   ring (cp.async, commit, wait, LDS), row pointers, store, loop ~16        (1)
// ≈ 132 instructions per 16 pixels ≈ 8.3 per pixel, × 32/30 for the halo lanes ≈ 8.8, + the
// prologue of each strip (2R rows loaded and unpacked): under half of the ~20 per pixel a
// memory-bound 16384² pass allows at ~28 T thread-instructions/s.
//
// Input rows come in through a ring (AsyncRows: cp.async into shared memory, several rows ahead;
// LoadedRows: one row ahead in a register); the last 2R + 1 rows sit unpacked in a register window
// (8 words each), the row loop unrolled by 2R + 1 so that every window index is a constant.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/block/cp_async.cuh"
#include "kernels/block/pdl.cuh"
#include "kernels/filters/box_mean.h"
#include "kernels/filters/separable.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

constexpr int kFastWarpOut = 30 * 16;  // output columns per warp

struct FastArgs {
  // Vertical taps as multipliers of packed pairs (negative ones two's complement: the packed sums
  // are exact mod 2^32, and each lane's final value is in [0, 2^16) thanks to vinit).
  std::uint32_t vtap[2 * kFastMaxRadius + 1];
  // Horizontal taps t[2g], t[2g+1] in bytes 0, 1: unsigned ≤ 255 (Epi::kSignedTaps false) or
  // signed.
  std::uint32_t htap[kFastMaxRadius + 1];
  std::uint32_t vinit;  // added to both lanes of every vertical sum (bias, rounding)
  std::uint32_t hinit;  // the horizontal accumulators' start (removes the bias: −vinit_lane·Σ kx)
  int xtap[2 * kFastMaxRadius + 1], ytap[2 * kFastMaxRadius + 1];  // as ints, for the edge tiles
  int ksize;
  int width;
  // Geometry: warps_fast interior strips (X0 = min(16 + 480·w, x0_last)) in the fast_blocks
  // blocks of a band of the grid; the edge blocks run tiles of the separable engine over the edge
  // columns [0, 16) and [x0_last + 480, width) (≤ 64 columns: one tile).
  StripGrid grid;
  int warps_fast, x0_last;
  std::uint8_t* dst;  // 16-byte aligned rows
  std::size_t dst_pitch;
};

// Epilogues turn the 16 accumulators of a lane (one row, 16 columns from x) into output pixels and
// store them (16-byte aligned rows), and one exact sum into one pixel (the edge tiles):
//   static constexpr bool kSignedTaps;   // horizontal taps signed (dp2a.lo.u32.s32)
//   void store16(uint8_t* row, int x, const uint32_t (&acc)[16]) const;
//   void store1(uint8_t* row, int x, int sum) const;   // sum as the CPU twin has it

// gaussian: dst = (Σ t_v Σ t_h src + 2^15) >> 16. The fast kernel adds the rounding 2^15 =
// 128 · Σ taps (256) as 128 to each lane of the vertical sums (vinit; ≤ 65280 + 128 < 2^16), so
// the result is byte 2 of the accumulator (below 255.5 · 2^16 < 2^24): PRMT packing.
struct GaussQ16Epilogue {
  static constexpr bool kSignedTaps = false;
  __device__ __forceinline__ void pack16(const std::uint32_t (&a)[16],
                                         std::uint32_t (&w)[4]) const {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      w[q] = __byte_perm(__byte_perm(a[4 * q], a[4 * q + 1], 0x0062),
                         __byte_perm(a[4 * q + 2], a[4 * q + 3], 0x0062), 0x5410);
    }
  }
  __device__ __forceinline__ void store16(std::uint8_t* row, int x,
                                          const std::uint32_t (&a)[16]) const {
    std::uint32_t w[4];
    pack16(a, w);
    *reinterpret_cast<uint4*>(row + x) = make_uint4(w[0], w[1], w[2], w[3]);
  }
  // The first n (< 16) of the 16 pixels (the image's last columns).
  __device__ __forceinline__ void store_part(std::uint8_t* row, int x, const std::uint32_t (&a)[16],
                                             int n) const {
    std::uint32_t w[4];
    pack16(a, w);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      if (i < n) row[x + i] = static_cast<std::uint8_t>(w[i / 4] >> (8 * (i % 4)));
    }
  }
  __device__ __forceinline__ void store1(std::uint8_t* row, int x, int sum) const {
    row[x] = static_cast<std::uint8_t>((sum + (1 << 15)) >> 16);
  }
};

// box (ksize ≤ 9): the rounded mean (normalize) or the sum saturated to 255.
struct BoxEpilogue {
  static constexpr bool kSignedTaps = false;
  bool normalize;
  std::uint32_t area;
  std::uint32_t magic;  // box_magic(2 · area)
  __device__ __forceinline__ std::uint32_t one(std::uint32_t s) const {
    return normalize ? __umulhi(2 * s + area, magic) : min(s, 255u);
  }
  __device__ __forceinline__ void store16(std::uint8_t* row, int x,
                                          const std::uint32_t (&a)[16]) const {
    std::uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      w[q] = pack4(one(a[4 * q]), one(a[4 * q + 1]), one(a[4 * q + 2]), one(a[4 * q + 3]));
    }
    *reinterpret_cast<uint4*>(row + x) = make_uint4(w[0], w[1], w[2], w[3]);
  }
  __device__ __forceinline__ void store1(std::uint8_t* row, int x, int sum) const {
    row[x] = static_cast<std::uint8_t>(one(static_cast<std::uint32_t>(sum)));
  }
};

// 16 bytes into 8 words of two 16-bit lanes: e[c] = (byte 2c, byte 2c + 1).
__device__ __forceinline__ void unpack_pairs(const uint4& v, std::uint32_t (&e)[8]) {
  e[0] = __byte_perm(v.x, 0, 0x4140);
  e[1] = __byte_perm(v.x, 0, 0x4342);
  e[2] = __byte_perm(v.y, 0, 0x4140);
  e[3] = __byte_perm(v.y, 0, 0x4342);
  e[4] = __byte_perm(v.z, 0, 0x4140);
  e[5] = __byte_perm(v.z, 0, 0x4342);
  e[6] = __byte_perm(v.w, 0, 0x4140);
  e[7] = __byte_perm(v.w, 0, 0x4342);
}

// acc + a.lo · b.byte0 + a.hi · b.byte1: 16-bit lanes of a unsigned; the taps in b unsigned, or
// signed (PTX dp2a.lo.u32.s32: the CUDA intrinsics have both operands of one signedness).
template <bool kSigned>
__device__ __forceinline__ std::uint32_t dp2a_lo(std::uint32_t a, std::uint32_t b,
                                                 std::uint32_t c) {
  if (!kSigned) return __dp2a_lo(a, b, c);
  std::uint32_t d;
  asm("dp2a.lo.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// The pair (v[j], v[j + 1]) of the lane's columns, j ∈ [−R, 15 + R] (compile-time after unrolling):
// e[NP + m] holds (v[2m], v[2m + 1]).
template <int NP, int N>
__device__ __forceinline__ std::uint32_t column_pair(const std::uint32_t (&e)[N], int j) {
  if ((j & 1) == 0) return e[NP + j / 2];
  const int lo = (j - 1) / 2;
  return __byte_perm(e[NP + lo], e[NP + lo + 1], 0x5432);
}

// Vertical taps the same from both ends (gaussian, box): the pass adds each pair of rows first
// (packed bytes: ≤ 510 a lane) and multiplies once, R + 1 IMAD a word instead of 2R + 1.
template <class Epi>
inline constexpr bool kSymmetricY =
    std::is_same_v<Epi, GaussQ16Epilogue> || std::is_same_v<Epi, BoxEpilogue>;

// Global sources of these epilogues take their rows through AsyncRows; the others (sobel's S16
// out) through LoadedRows: sobel 3×3 dx with the ring took 306.5-307.9 against 292.9-293.0 µs
// (H100, 16384², 2026-11-28, docs/decisions/045-gaussian-rows-in-flight.md).
template <class Epi>
inline constexpr bool kFastRingRows = kSymmetricY<Epi>;
template <class Src, class Epi>
inline constexpr bool kFastUsesRing = std::is_same_v<Src, GlobalSrc>&& kFastRingRows<Epi>;

// The input rows of a strip, one 16-byte chunk a lane and row, taken in order (take(n), n = 0, 1,
// ...; rows yin + n, n < n_in). Two ways to have them in flight:
//   LoadedRows: the source's own loads, the next row in a register while this one is used
//     (textures, the staged kernel's shared-memory rows);
//   AsyncRows: global memory, cp.async into a ring of kFastRing 16-byte slots a lane in shared
//     memory, kFastAhead rows ahead of use, so that a warp has kFastAhead · 512 bytes in flight
//     without unrolling the loop any further (registers would need compile-time ring indices).
template <class Src>
struct LoadedRows {
  const Src& src;
  int x, yin, n_in;
  uint4 next;
  __device__ __forceinline__ uint4 fetch(int n) const {
    return src.chunk_in(src.row_near(yin + n), x);
  }
  __device__ __forceinline__ void start() { next = fetch(0); }
  __device__ __forceinline__ uint4 take(int n) {
    const uint4 v = next;
    if (n + 1 < n_in) next = fetch(n + 1);
    return v;
  }
};

template <int kAhead>
struct AsyncRows {
  static_assert(kAhead >= 1 && kAhead < kFastRing, "a free slot for the row taken");
  const GlobalSrc& src;
  int x, yin, n_in;
  int n_lo, n_hi;            // rows n ∈ [n_lo, n_hi) lie inside the image
  bool fill;                 // rows outside are the constant border's
  std::uint32_t ring;        // this lane's slot 0 (shared address); slot k at + 512 · k
  const std::uint8_t* next;  // row yin + n's chunk for the next n ≥ n_lo to be issued

  __device__ __forceinline__ AsyncRows(const GlobalSrc& s, int x_, int yin_, int n_in_,
                                       std::uint32_t ring_)
      : src(s), x(x_), yin(yin_), n_in(n_in_), ring(ring_) {
    n_lo = max(0, -yin);
    n_hi = min(n_in, src.height - yin);
    fill = src.mode == BorderMode::kConstant;
    next = src.data + static_cast<std::size_t>(yin + n_lo) * src.pitch + x;
  }
  __device__ __forceinline__ std::uint32_t slot(int n) const {
    return ring + 512u * static_cast<std::uint32_t>(n & (kFastRing - 1));
  }
  __device__ __forceinline__ void issue(int n) {
    if (n < n_in) {
      const std::uint8_t* p = ring_row_chunk(src, next, n, n_lo, n_hi, yin, x);
      cp_async16(slot(n), p);
    }
    cp_async_commit();  // one group a row, empty past the last: wait_group counts rows
  }
  __device__ __forceinline__ void start() {
#pragma unroll
    for (int n = 0; n < kAhead; ++n) issue(n);
  }
  __device__ __forceinline__ uint4 take(int n) {
    issue(n + kAhead);
    cp_async_wait<kAhead>();  // row n's group done: at most kAhead newer ones pending
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(slot(n))
                 : "memory");
    if (fill && (n < n_lo || n >= n_hi)) v = splat16(src.fill4);
    return v;
  }
};

// Output rows [ys, ye) of the lane's 16 columns from x, stored where out_px is 16 (kPartial: the
// first out_px columns where it is 1..15, Epi::store_part), not where it is 0. The row loop is
// unrolled by the window's 2R + 1 rows (every register index a compile-time constant) and leaves
// at the first row past ye, so nothing after it needs the window in fixed registers.
template <int R, bool kPartial = false, class Src, class Epi, class Rows>
__device__ __forceinline__ void fast_strip(const Src& src, const FastArgs& a, const Epi& epi, int x,
                                           int out_px, int ys, int ye, Rows& rows) {
  constexpr int K = 2 * R + 1;
  constexpr int NP = (R + 1) / 2;  // pairs each side from the neighbour lanes
  const int n_out = ye - ys;

  rows.start();
  std::uint32_t win[K][8];
#pragma unroll
  for (int n = 0; n < 2 * R; ++n) unpack_pairs(rows.take(n), win[n]);
  std::uint8_t* row = a.dst + static_cast<std::size_t>(ys) * a.dst_pitch;

  for (int i = 0;; i += K) {
#pragma unroll
    for (int j = 0; j < K; ++j) {
      if (i + j >= n_out) return;
      unpack_pairs(rows.take(i + j + 2 * R), win[(j + 2 * R) % K]);

      // Vertical pass, two columns per 32-bit word.
      std::uint32_t v[8];
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        std::uint32_t s = a.vinit;
        if constexpr (kSymmetricY<Epi>) {
          s += a.vtap[R] * win[(j + R) % K][c];
#pragma unroll
          for (int k = 0; k < R; ++k) {
            s += a.vtap[k] * (win[(j + k) % K][c] + win[(j + K - 1 - k) % K][c]);
          }
        } else {
#pragma unroll
          for (int k = 0; k < K; ++k) s += a.vtap[k] * win[(j + k) % K][c];
        }
        v[c] = s;
      }

      // Halo pairs from the neighbours; e[8 + 2·NP] = 0 stands for the pair after the last one
      // (only its low half is ever multiplied, by a tap of 0).
      std::uint32_t e[8 + 2 * NP + 1];
#pragma unroll
      for (int c = 0; c < 8; ++c) e[NP + c] = v[c];
#pragma unroll
      for (int q = 1; q <= NP; ++q) {
        e[NP - q] = __shfl_up_sync(0xffffffffu, v[8 - q], 1);
        e[NP + 7 + q] = __shfl_down_sync(0xffffffffu, v[q - 1], 1);
      }
      e[8 + 2 * NP] = 0;

      // Horizontal pass: acc(p) = Σ_g dp2a((v[p−R+2g], v[p−R+2g+1]), (t[2g], t[2g+1])).
      std::uint32_t acc[16];
#pragma unroll
      for (int p = 0; p < 16; ++p) {
        std::uint32_t s = a.hinit;
#pragma unroll
        for (int g = 0; g <= R; ++g) {
          s = dp2a_lo<Epi::kSignedTaps>(column_pair<NP>(e, p - R + 2 * g), a.htap[g], s);
        }
        acc[p] = s;
      }

      if (out_px == 16) {
        epi.store16(row, x, acc);
      } else if constexpr (kPartial) {
        if (out_px > 0) epi.store_part(row, x, acc, out_px);
      }
      row += a.dst_pitch;
    }
  }
}

// Grid: a.grid.blocks() blocks (StripGrid); dynamic shared memory separable_smem_bytes(R, R) for
// the edge tiles.
// Blocks per SM the registers must allow (a cap the compiler meets without spilling).
template <int R>
constexpr int fast_min_blocks() {
  return R == 1 ? 8 : R == 2 ? 6 : R == 3 ? 5 : 4;  // 64, 80, 96, 128 registers: no spills
}

template <int R, class Src, class Epi>
__global__ void __launch_bounds__(kFastThreads, fast_min_blocks<R>())
    fast_separable_kernel(const Src src, const FastArgs a, const Epi epi) {
  BlockTrace trace(1);
  if (a.grid.early) pdl_trigger();
  pdl_wait();  // the kernel before it has finished (launch_pdl)
  trace.waited();
  // The strips' row rings (global sources), or the edge tiles' rows and sums.
  extern __shared__ __align__(16) std::uint8_t smem[];
  const StripBlock blk = strip_block(a.grid);
  if (!blk.edge) {
    const int lane = threadIdx.x & 31;
    const int w = static_cast<int>((blk.fast_block * kFastThreads + threadIdx.x) >> 5);
    if (w >= a.warps_fast) return;  // whole warps
    const int X0 = min(16 + w * kFastWarpOut, a.x0_last);
    const int x = X0 - 16 + 16 * lane;
    const int out_px = lane >= 1 && lane <= 30 ? 16 : 0;
    const int yin = blk.ys - R, n_in = blk.ye - blk.ys + 2 * R;
    if constexpr (kFastUsesRing<Src, Epi>) {
      const std::uint32_t ring = static_cast<std::uint32_t>(
          __cvta_generic_to_shared(smem + (threadIdx.x >> 5) * kFastRingWarpBytes + 16 * lane));
      AsyncRows<kFastAhead> rows(src, x, yin, n_in, ring);
      fast_strip<R>(src, a, epi, x, out_px, blk.ys, blk.ye, rows);
    } else {
      LoadedRows<Src> rows{src, x, yin, n_in, {}};
      fast_strip<R>(src, a, epi, x, out_px, blk.ys, blk.ye, rows);
    }
    return;
  }
  // Edge tiles (the separable engine), edge_rows rows a block.
  const int tx0 = blk.left ? 0 : a.x0_last + kFastWarpOut;
  const int x_end = blk.left ? 16 : a.width;
  const auto xtaps = [&](int b) { return a.xtap[b]; };
  const auto ytaps = [&](int b) { return a.ytap[b]; };
  const auto store = [&](int px, int py, int sum) {
    epi.store1(a.dst + static_cast<std::size_t>(py) * a.dst_pitch, px, sum);
  };
  for (int ty0 = blk.ys; ty0 < blk.ye; ty0 += kSepTileH) {
    if (ty0 != blk.ys) __syncthreads();  // the previous tile's reads of smem are done
    separable_tile<true>(src, xtaps, 2 * R + 1, ytaps, 2 * R + 1, tx0, ty0,
                         min(kSepTileH, blk.ye - ty0), x_end, store, smem, threadIdx.x,
                         kFastThreads);
  }
}

// f(std::integral_constant<int, R>{}) for R = radius ∈ [1, kFastMaxRadius] (the kernels' template
// radius); cudaErrorInvalidValue for any other radius.
template <class F>
cudaError_t with_radius(int radius, F&& f) {
  static_assert(kFastMaxRadius == 4, "one case a radius");
  switch (radius) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    default:
      return cudaErrorInvalidValue;
  }
}


}  // namespace jetpipe::dev
