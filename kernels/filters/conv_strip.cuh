// SPDX-License-Identifier: MIT
// convolve's strip kernel, square kernels of K = 3, 5 or 7 taps a side, equal to the CPU twin bit
// for bit. The twin sums in float, in row-major tap order, a product and a sum each rounded: 2K²
// FP32 instructions a pixel (50 at 5 × 5, ~400 µs of issue at 16384² on an H100 or H200, more than
// the copy takes). Where the taps allow, the same result comes cheaper (convolve.cu classifies):
//   kInteger  every partial sum of the twin is exact (taps and delta multiples of 2^e with
//             |delta| + 255·Σ|tap| < 2^22 units, taps ≤ 127 units: integer and dyadic kernels):
//             the exact integer sum in units of 2^e, dp4a on the row's words with byte taps
//             pre-shifted to the window's alignment (2 dp4a a tap row at 5 × 5), one rounding;
//   kFused    every product tap · pixel is exact (≤ 16 significant bits a tap): one FFMA a tap
//             equals the twin's FMUL + FADD;
//   kGeneral  any finite taps: FMUL + FADD in the twin's order.
// Geometry (the fast kernel's, fast_kernel.cuh, with every lane writing): a warp owns 512 output
// columns (lane l: X0 + 16·l .. +15, reading the 16-byte chunks left of, at and right of its own)
// and slides down the StripGrid's rows; strips lie inside the image (X0 ≥ 16, X0 + 528 ≤ width; a
// last strip moved left onto a 16-byte boundary where more than 64 columns would be left), and the
// edge blocks run conv_tile (conv_tile.cuh) over columns [0, 16) and right of the last strip.
// Sliding: before input row n, acc[k] (k < K − 1) holds output row n − R + k, summed over tap rows
// 0 .. K − 2 − k; row n adds tap row K − 1 to acc[0] (done: stored), and acc[k + 1] + tap row
// K − 2 − k becomes the new acc[k] (the first instruction of each chain writes the shifted
// register, so the loop needs no moves and no unrolling by K), the new acc[K − 2] = delta + tap
// row 0. Each output's sum runs over its tap rows in order, as the twin's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/block/cp_async.cuh"
#include "kernels/block/pdl.cuh"
#include "kernels/convolve.h"
#include "kernels/filters/conv_tile.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

constexpr int kConvStripMax = 7;                     // K ≤ 7
constexpr int kConvWarpOut = 32 * 16;                // output columns a warp
constexpr float kConvMagic = 12582912.f;             // 1.5 · 2^23: x + this rounds x to an integer
constexpr std::int32_t kConvMagicBits = 0x4B400000;  // its bits

struct ConvStripArgs {
  float tap[kConvStripMax * kConvStripMax];  // kFused, kGeneral: row-major
  // kInteger: tap row i for a window starting at byte a of a word, word k of the window: signed
  // bytes (taps in units of 2^e), zero outside the row's K taps.
  std::uint32_t itap[kConvStripMax][4][3];
  float delta;            // kFused, kGeneral: the accumulator's start
  std::int32_t idelta;    // kInteger: delta in units, + kConvMagicBits (the sum's bits as a float)
  float iscale, ioffset;  // kInteger: FFMA(sum as float, 2^e, 1.5·2^23 − 1.5·2^23 · 2^e)
  StripGrid grid;
  int warps_fast, x0_last;
  std::uint8_t* dst;  // 16-byte aligned rows
  std::size_t dst_pitch;
  ConvArgs tile;  // the edge tiles
};

// acc + Σ a.byte[b] · b.sbyte[b]: pixels unsigned, taps signed (PTX dp4a.u32.s32).
__device__ __forceinline__ std::int32_t dp4a_us(std::uint32_t a, std::uint32_t b, std::int32_t c) {
  std::int32_t d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// Registers a block of 128 threads may have (no spills at these, sm_90).
template <int K>
constexpr int conv_min_blocks() {
  return K <= 3 ? 5 : K == 5 ? 4 : 3;  // 96, 128, 168 registers
}

// Dynamic shared memory of the strip kernel: the edge tiles' (conv_tile), and for global sources
// the strips' row rings (kConvRingWarpBytes a warp).
inline std::size_t conv_strip_smem_bytes(int k, bool ring) {
  const std::size_t tiles = conv_smem_bytes(k);
  const std::size_t rings = ring ? (kFastThreads / 32) * kConvRingWarpBytes : 0;
  return tiles > rings ? tiles : rings;
}

// The 12 words of a lane's three chunks (columns x − 16 .. x + 31).
__device__ __forceinline__ void conv_words(const uint4 (&c)[3], std::uint32_t (&w)[12]) {
#pragma unroll
  for (int i = 0; i < 3; ++i) {
    w[4 * i] = c[i].x, w[4 * i + 1] = c[i].y, w[4 * i + 2] = c[i].z, w[4 * i + 3] = c[i].w;
  }
}

// A lane's three chunks of each input row (columns x − 16, x and x + 16), taken in order: take(n,
// c) gives row yin + n, n = 0, 1, ... < n_in. Two ways to have rows in flight:
//   ConvLoadedRows: the source's own loads, the next row in registers (texture sources);
//   ConvAsyncRows: global memory, cp.async into a ring of kConvRing rows a warp in shared memory,
//     kConvAhead rows ahead. A ring row holds the warp's 34 chunks (columns X0 − 16 .. X0 + 527,
//     kConvRingRowBytes): lane l copies chunk l, lanes 0 and 1 chunks 32 and 33 as well, and lane
//     l reads chunks l, l + 1, l + 2. The neighbours' copies are read, so take() waits for its own
//     copies and then __syncwarp()s before reading; the slot it refills was read a row before, by
//     every lane, before that same barrier.
template <class Src>
struct ConvLoadedRows {
  const Src& src;
  int x, yin, n_in;
  uint4 next[3];

  __device__ __forceinline__ void fetch(int n, uint4 (&c)[3]) const {
    const auto row = src.row_near(yin + n);
    c[0] = src.chunk_in(row, x - 16);
    c[1] = src.chunk_in(row, x);
    c[2] = src.chunk_in(row, x + 16);
  }
  __device__ __forceinline__ void start() { fetch(0, next); }
  __device__ __forceinline__ void take(int n, uint4 (&c)[3]) {
#pragma unroll
    for (int i = 0; i < 3; ++i) c[i] = next[i];
    if (n + 1 < n_in) fetch(n + 1, next);
  }
};

template <int kAhead>
struct ConvAsyncRows {
  static_assert(kAhead >= 1 && kAhead < kConvRing, "the refilled slot was read a row before");
  const GlobalSrc& src;
  int xc, yin, n_in;         // xc: this lane's chunk, column x − 16
  int n_lo, n_hi;            // rows n ∈ [n_lo, n_hi) lie inside the image
  bool fill, two;            // fill: rows outside are the constant border's; two: lanes 0 and 1
  std::uint32_t ring;        // this lane's chunk in slot 0 (shared address); slot k at + k · row
  const std::uint8_t* next;  // chunk xc of row yin + n for the next n ≥ n_lo to be issued

  __device__ __forceinline__ ConvAsyncRows(const GlobalSrc& s, int x, int yin_, int n_in_,
                                           std::uint32_t ring_, int lane)
      : src(s), xc(x - 16), yin(yin_), n_in(n_in_), ring(ring_) {
    n_lo = max(0, -yin);
    n_hi = min(n_in, src.height - yin);
    fill = src.mode == BorderMode::kConstant;
    two = lane < 2;
    next = src.data + static_cast<std::size_t>(yin + n_lo) * src.pitch + xc;
  }
  __device__ __forceinline__ std::uint32_t slot(int n) const {
    return ring + static_cast<std::uint32_t>(kConvRingRowBytes * (n & (kConvRing - 1)));
  }
  __device__ __forceinline__ void issue(int n) {
    if (n < n_in) {
      const std::uint8_t* p = ring_row_chunk(src, next, n, n_lo, n_hi, yin, xc);
      cp_async16(slot(n), p);
      if (two) cp_async16(slot(n) + 32 * 16, p + 32 * 16);
    }
    cp_async_commit();  // one group a row, empty past the last: wait_group counts rows
  }
  __device__ __forceinline__ void start() {
#pragma unroll
    for (int n = 0; n < kAhead; ++n) issue(n);
  }
  __device__ __forceinline__ void take(int n, uint4 (&c)[3]) {
    cp_async_wait<kAhead - 1>();  // row n's group done: at most kAhead − 1 newer ones pending
    __syncwarp();                 // ... and every lane's, and row n − 1 read by every lane
    issue(n + kAhead);            // into row n + kAhead − kConvRing's slot (≤ n − 1)
#pragma unroll
    for (int i = 0; i < 3; ++i) {
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(c[i].x), "=r"(c[i].y), "=r"(c[i].z), "=r"(c[i].w)
                   : "r"(slot(n) + 16 * i)
                   : "memory");
    }
    if (fill && (n < n_lo || n >= n_hi)) c[0] = c[1] = c[2] = splat16(src.fill4);
  }
};

// Output rows [ys, ye) of columns x .. x + 15, input rows from `rows` (ys − R ..).
template <int K, ConvolveArith kA, class Rows>
__device__ __forceinline__ void conv_strip(const ConvStripArgs& a, int x, int ys, int ye,
                                           Rows& rows) {
  constexpr int R = K / 2;
  constexpr bool kInt = kA == ConvolveArith::kInteger;
  using Acc = std::conditional_t<kInt, std::int32_t, float>;
  const int n_in = ye - ys + 2 * R;
  Acc acc[K - 1][16];
  rows.start();
  for (int s = 0; s < n_in; ++s) {
    std::uint32_t w[12];
    {
      uint4 raw[3];
      rows.take(s, raw);
      conv_words(raw, w);
    }

    // The row's pixels x − R .. x + 15 + R as floats (the float paths): 2^23 + p, minus 2^23.
    float p[kInt ? 1 : 16 + 2 * R];
    if constexpr (!kInt) {
#pragma unroll
      for (int m = 0; m < 16 + 2 * R; ++m) {
        const int b = 16 - R + m;
        p[m] = __fsub_rn(__uint_as_float(__byte_perm(w[b / 4], 0x4B000000u, 0x7440 + b % 4)),
                         8388608.f);
      }
    }
    // v + tap row i · this row, column q.
    auto add_row = [&](int i, int q, Acc v) -> Acc {
      if constexpr (kInt) {
        const int off = 16 + q - R;  // the window's first byte, from x − 16
        const int al = off % 4;
#pragma unroll
        for (int k = 0; k < (al + K + 3) / 4; ++k) v = dp4a_us(w[off / 4 + k], a.itap[i][al][k], v);
      } else {
#pragma unroll
        for (int j = 0; j < K; ++j) {
          const float t = a.tap[i * K + j];
          if constexpr (kA == ConvolveArith::kFused) {
            v = __fmaf_rn(t, p[q + j], v);
          } else {
            v = __fadd_rn(v, __fmul_rn(t, p[q + j]));
          }
        }
      }
      return v;
    };

    const int o = ys + s - 2 * R;  // the output row this input row completes
    if (o >= ys) {
      std::uint32_t b[16];
#pragma unroll
      for (int q = 0; q < 16; ++q) {
        const Acc v = add_row(K - 1, q, acc[0][q]);
        float f;
        if constexpr (kInt) {  // round(sum · 2^e) + 1.5·2^23, then clamped to [0, 255]
          f = __fmaf_rn(__int_as_float(v), a.iscale, a.ioffset);
          f = fminf(fmaxf(f, kConvMagic), kConvMagic + 255.f);
        } else {  // saturate_cast: NaN and v ≤ 0 → 0, ≥ 255 → 255, else round half to even
          f = __fadd_rn(fminf(fmaxf(v, 0.f), 255.f), kConvMagic);
        }
        b[q] = __float_as_uint(f);
      }
      *reinterpret_cast<uint4*>(a.dst + static_cast<std::size_t>(o) * a.dst_pitch + x) =
          make_uint4(pack4(b[0], b[1], b[2], b[3]), pack4(b[4], b[5], b[6], b[7]),
                     pack4(b[8], b[9], b[10], b[11]), pack4(b[12], b[13], b[14], b[15]));
    }
    // The shift: new acc[k] (output o + 1 + k) = acc[k + 1] + tap row K − 2 − k; only the outputs
    // in [ys, ye) (the others are never stored).
#pragma unroll
    for (int k = 0; k < K - 2; ++k) {
      const int ok = o + 1 + k;
      if (ok >= ys && ok < ye) {
#pragma unroll
        for (int q = 0; q < 16; ++q) acc[k][q] = add_row(K - 2 - k, q, acc[k + 1][q]);
      }
    }
    if (o + K - 1 < ye) {
      Acc init;
      if constexpr (kInt) {
        init = a.idelta;
      } else {
        init = a.delta;
      }
#pragma unroll
      for (int q = 0; q < 16; ++q) acc[K - 2][q] = add_row(0, q, init);
    }
  }
}

// Grid: a.grid.blocks() blocks (StripGrid) of kFastThreads; dynamic shared memory
// conv_strip_smem_bytes(K, global source).
template <int K, ConvolveArith kA, class Src>
__global__ void __launch_bounds__(kFastThreads, conv_min_blocks<K>())
    convolve_strip_kernel(const Src src, const ConvStripArgs a) {
  if (a.grid.early) pdl_trigger();
  pdl_wait();  // the kernel before it has finished (launch_pdl)
  // The strips' row rings (global sources), or the edge tiles' rows and sums.
  extern __shared__ __align__(16) std::uint8_t smem[];
  const StripBlock blk = strip_block(a.grid);
  if (!blk.edge) {
    const int w = static_cast<int>((blk.fast_block * kFastThreads + threadIdx.x) >> 5);
    if (w >= a.warps_fast) return;  // whole warps
    const int X0 = min(16 + w * kConvWarpOut, a.x0_last);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int x = X0 + 16 * lane;
    const int yin = blk.ys - K / 2, n_in = blk.ye - blk.ys + 2 * (K / 2);
    if constexpr (std::is_same_v<Src, GlobalSrc>) {
      const std::uint32_t ring = static_cast<std::uint32_t>(
          __cvta_generic_to_shared(smem + (threadIdx.x >> 5) * kConvRingWarpBytes + 16 * lane));
      ConvAsyncRows<kConvAhead> rows(src, x, yin, n_in, ring, lane);
      conv_strip<K, kA>(a, x, blk.ys, blk.ye, rows);
    } else {
      ConvLoadedRows<Src> rows{src, x, yin, n_in, {}};
      conv_strip<K, kA>(a, x, blk.ys, blk.ye, rows);
    }
    return;
  }
  const int tx0 = blk.left ? 0 : a.x0_last + kConvWarpOut;
  const int x_end = blk.left ? 16 : a.tile.width;
  for (int ty0 = blk.ys; ty0 < blk.ye; ty0 += kConvTileH) {
    if (ty0 != blk.ys) __syncthreads();  // the previous tile's reads of smem are done
    conv_tile<K>(src, a.tile, tx0, x_end, ty0, min(kConvTileH, blk.ye - ty0), smem,
                 static_cast<int>(threadIdx.x), kFastThreads);
  }
}

}  // namespace jetpipe::dev
