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
// separable tile engine (filter_separable.cuh), where the source's full border handling applies:
// one launch (a 1-D grid, StripGrid: every block has work), and the register count stays the
// interior loop's. Launches the kernel does not fit (unaligned views,
// images under 512 × 16) go to the tile engine alone (launch_fast_separable). A gaussian over a
// colour source (to_gray fused) runs the staged kernel below instead: the same strips and sums,
// each block's gray rows converted once into shared memory.
//
// Per output row and lane (16 pixels), R = 2 (5 × 5), all integer and exact:
//   unpack the incoming row's bytes into 16-bit lane pairs          8 PRMT   (0.5 / pixel)
//   vertical pass on packed pairs (two pixels per IMAD; sums of    40 IMAD   (2.5)
//     Q8 taps · bytes ≤ 255·256, + 128 per lane for the rounding,
//     fit 16 bits)
//   halo pairs from the neighbour lanes                             2 SHFL   (0.125)
//   odd pairs (v[j], v[j+1]) for odd j: one PRMT each              10 PRMT   (0.6)
//   horizontal pass: __dp2a_lo does 2 taps (16-bit v × 8-bit tap)  48 IDP.2A (3)
//     into 32 bits (Σ taps = 256, so the +128 lanes add 2^15)
//   (acc + 2^15) >> 16 is byte 2 of the accumulator: PRMT packing  12 PRMT   (0.75)
//   row address, 16-byte load, 16-byte store, loop                ~12        (0.75)
// ≈ 132 instructions per 16 pixels ≈ 8.3 per pixel, × 32/30 for the halo lanes ≈ 8.8, + the
// prologue of each strip (2R rows loaded and unpacked): under half of the ~20 per pixel a
// memory-bound 16384² pass allows at ~28 T thread-instructions/s.
//
// Input rows wait in a ring of kFastPrefetch 16-byte registers (loads in flight ahead of use); the
// last 2R + 1 rows sit unpacked in a register window (8 words each); the unrolled period
// (2R + 1) · kFastPrefetch keeps every register index a compile-time constant.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kernels/block/filter_launch.cuh"
#include "kernels/block/filter_separable.cuh"
#include "kernels/block/filter_source.cuh"
#include "kernels/block/pdl.cuh"
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

// The box mean round(s / area) = floor((2s + area) / (2·area)) as a multiply-high: with
// M = floor(2^32 / d) + 1 and e = M·d − 2^32 ∈ (0, d], floor(n·M / 2^32) = floor(n / d) whenever
// n·e < 2^32 (the error n·e / (d·2^32) stays under 1/d). For ksize ≤ 9: n ≤ 41391, e ≤ 162.
inline std::uint32_t box_magic(std::uint32_t d) {
  return static_cast<std::uint32_t>((std::uint64_t(1) << 32) / d + 1);
}

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

// Output rows [ys, ye) of the lane's 16 columns from x, stored where out_px is 16 (kPartial: the
// first out_px columns where it is 1..15, Epi::store_part), not where it is 0.
template <int R, bool kPartial = false, class Src, class Epi>
__device__ __forceinline__ void fast_strip(const Src& src, const FastArgs& a, const Epi& epi, int x,
                                           int out_px, int ys, int ye) {
  constexpr int K = 2 * R + 1;
  constexpr int PD = kFastPrefetch;
  constexpr int P = K * PD;        // unrolled period: window and prefetch ring indices repeat
  constexpr int NP = (R + 1) / 2;  // pairs each side from the neighbour lanes
  const int n_out = ye - ys;
  const int n_in = n_out + 2 * R;  // input rows ys − R .. ye − 1 + R
  const int yin = ys - R;
  auto fetch = [&](int y) { return src.chunk_in(src.row_near(y), x); };

  std::uint32_t win[K][8];
#pragma unroll
  for (int n = 0; n < 2 * R; ++n) unpack_pairs(fetch(yin + n), win[n]);
  uint4 raw[PD];
#pragma unroll
  for (int d = 0; d < PD; ++d) {
    raw[d] = make_uint4(0, 0, 0, 0);
    if (2 * R + d < n_in) raw[d] = fetch(yin + 2 * R + d);
  }

  for (int i = 0; i < n_out; i += P) {
#pragma unroll
    for (int j = 0; j < P; ++j) {
      if (i + j < n_out) {
        const int n = i + j + 2 * R;  // the input row this output row adds to the window
        unpack_pairs(raw[j % PD], win[(j + 2 * R) % K]);
        if (n + PD < n_in) raw[j % PD] = fetch(yin + n + PD);

        // Vertical pass, two columns per 32-bit word.
        std::uint32_t v[8];
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          std::uint32_t s = a.vinit;
#pragma unroll
          for (int k = 0; k < K; ++k) s += a.vtap[k] * win[(j + k) % K][c];
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

        std::uint8_t* const row = a.dst + static_cast<std::size_t>(ys + i + j) * a.dst_pitch;
        if (out_px == 16) {
          epi.store16(row, x, acc);
        } else if constexpr (kPartial) {
          if (out_px > 0) epi.store_part(row, x, acc, out_px);
        }
      }
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
  const StripBlock blk = strip_block(a.grid);
  if (!blk.edge) {
    const int lane = threadIdx.x & 31;
    const int w = static_cast<int>((blk.fast_block * kFastThreads + threadIdx.x) >> 5);
    if (w >= a.warps_fast) return;  // whole warps
    const int X0 = min(16 + w * kFastWarpOut, a.x0_last);
    const int x = X0 - 16 + 16 * lane;
    fast_strip<R>(src, a, epi, x, lane >= 1 && lane <= 30 ? 16 : 0, blk.ys, blk.ye);
    return;
  }
  // Edge tiles (the separable engine), edge_rows rows a block.
  extern __shared__ __align__(16) std::uint8_t smem[];
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

// ---- The staged kernel: a colour source (to_gray fused into the filter) ----------------------
// The strip kernel above converts every input row of a warp to gray, and a warp of rpw output rows
// (4 at 1080p) reads rpw + 2R input rows: each colour pixel is converted (rpw + 2R) / rpw times,
// twice at 1080p, and the conversion is most of the work. Here a block of 8 warps owns one strip of
// 512 input columns (X0 = 480·s, lanes as above) and 8·rw output rows: it converts its 8·rw + 2R
// input rows once into shared memory (a thread's loads of kStagedBatch chunks issued before the
// first conversion), then each warp runs fast_strip over its rw rows from there (1.25 conversions
// a pixel at rw = 2, R = 2). The strips start at column 0, so there are no edge blocks: the
// columns left of the image, and right of it for the last strip, are read through the border a
// pixel a thread (BgrSrc::pixel), and the image's last columns are stored in part
// (Epi::store_part). Used for every gaussian over a colour source that the fast kernel takes
// (launch_fast_separable; JETPIPE_GAUSS_STAGED=0: the strip kernel).
// H200, the 1080p chain (jetpipe-bench --area pipeline): gray + gaussian as the graph's first node
// 8.8 µs against 10.4 (strip kernel), the chain 29.8 against 31.9 (docs/PERFORMANCE.md).
constexpr int kStagedWarps = 8;
constexpr int kStagedThreads = 32 * kStagedWarps;
constexpr int kStagedRowBytes = 512;  // one strip: 32 chunks of 16 gray pixels
constexpr int kStagedBatch = 3;       // chunks a thread loads before converting (36 registers)
constexpr int kStagedMaxRows = 4;     // rows a warp at most
constexpr int kStagedRows = 2;        // rows a warp; H200 1080p chain: 1 → 30.0 µs, 2 → 29.8

struct StagedArgs {
  FastArgs f;  // taps, dst (the strip grid's fields unused)
  int y0, y1;
  int rows_per_warp;  // 1 .. kStagedMaxRows
  int strips;         // ceil(width / 480)
  bool early;         // the kernel triggers its dependents at its start (pdl_early())
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
template <int R, class Epi>
__global__ void __launch_bounds__(kStagedThreads, staged_min_blocks<R>())
    fast_staged_kernel(const BgrSrc src, const StagedArgs a, const Epi epi) {
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
  // The chunks inside the image, kStagedBatch a thread at a time: their loads, then their use.
  for (int base = 0; base < units; base += kStagedBatch * kStagedThreads) {
    typename BgrSrc::Raw raw[kStagedBatch];
#pragma unroll
    for (int k = 0; k < kStagedBatch; ++k) {
      const int u = base + tid + k * kStagedThreads;
      const int x = x_first + 16 * (u & 31);
      if (u < units && x >= 0 && x + 16 <= width) {
        raw[k] = src.load_in(src.row_near(ys - R + (u >> 5)), x);
      }
    }
#pragma unroll
    for (int k = 0; k < kStagedBatch; ++k) {
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
  fast_strip<R, true>(StagedRowsSrc{smem, ys - R, x_first}, a.f, epi, x, out_px, wy0, wy1);
}

inline std::size_t staged_smem_bytes(int radius, int rows_per_warp) {
  return static_cast<std::size_t>(kStagedWarps * rows_per_warp + 2 * radius) * kStagedRowBytes;
}

// JETPIPE_GAUSS_STAGED=0 keeps colour sources on the strip kernel (side-by-side timings).
inline bool staged_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("JETPIPE_GAUSS_STAGED");
    return e == nullptr || e[0] != '0';
  }();
  return on;
}

template <class Epi>
cudaError_t launch_fast_staged(const BgrSrc& src, const FastArgs& f, int radius, int y0, int y1,
                               const Epi& epi, cudaStream_t stream, int rows_per_warp) {
  StagedArgs a{};
  a.f = f;
  a.y0 = y0;
  a.y1 = y1;
  a.rows_per_warp = std::min(std::max(rows_per_warp, 1), kStagedMaxRows);
  a.strips = static_cast<int>(div_up(f.width, kFastWarpOut));
  a.early = pdl_early();
  const unsigned grid =
      static_cast<unsigned>(a.strips) * div_up(y1 - y0, kStagedWarps * a.rows_per_warp);
  const std::size_t smem = staged_smem_bytes(radius, a.rows_per_warp);
  return with_radius(radius, [&](auto r) {
    return launch_pdl(fast_staged_kernel<decltype(r)::value, Epi>, grid, kStagedThreads, smem,
                      stream, src, a, epi);
  });
}

// Rows per warp for a launch of `rows` output rows and `width` columns: the policy's rows for the
// radius, fewer (down to rows_min) where the launch would otherwise not fill the device.
inline int fast_rows_per_warp(int radius, int width, int rows, int sm_count,
                              const FilterPolicy& p) {
  const long long warps_per_row = (width + kFastWarpOut - 1) / kFastWarpOut;
  const long long want = static_cast<long long>(sm_count) * p.fast_warps_per_sm;
  long long r = static_cast<long long>(rows) * warps_per_row / (want > 0 ? want : 1);
  const int best = p.fast_rows[radius - 1];
  if (r > best) r = best;
  if (r < p.fast_rows_min) r = p.fast_rows_min;
  return static_cast<int>(r);
}

// JETPIPE_FAST_ROWS=N: N output rows a warp for every fast and staged launch (side-by-side
// timings); unset or 0: the policy's (the staged kernel: kStagedRows).
inline int fast_rows_forced() {
  static const int n = [] {
    const char* e = std::getenv("JETPIPE_FAST_ROWS");
    return e == nullptr ? 0 : std::max(0, std::atoi(e));
  }();
  return n;
}

// The rows a warp of a launch: the caller's (> 0), else JETPIPE_FAST_ROWS's, else `policy`.
inline int launch_rows(int asked, int policy) {
  return asked > 0 ? asked : fast_rows_forced() > 0 ? fast_rows_forced() : policy;
}

// The separable engine's store for the fast kernel's epilogues (views the fast kernel does not
// take).
template <class Epi>
struct EpilogueStore {
  std::uint8_t* dst;
  std::size_t pitch;
  Epi epi;
  __device__ void operator()(int x, int y, int sum) const {
    epi.store1(dst + static_cast<std::size_t>(y) * pitch, x, sum);
  }
};

// Whether the fast kernel takes a launch: a 16-byte aligned output, an input read with 16-byte
// loads or texels, at least one strip wide (512) and 16 rows high (rows outside are then near
// ones).
template <class Src>
bool fast_kernel_fits(const Src& src, int width, int height, const ImageView& dst) {
  return src.fast_ok() && aligned16(dst) && width >= 512 && height >= 16;
}

// Filters rows [y0, y1) of dst with kx[0 .. ksize) along x and ky[0 .. ksize) along y (3 ≤ ksize ≤
// 2·kFastMaxRadius + 1, odd; integers) through epi, gaussian's rounding 2^15 folded in when
// `round_q16`: the fast kernel where it fits, else the separable tile engine (same sums, same
// epilogue). Needs every vertical sum in [0, 2^16) after the bias 255·Σ(negative ky), and
// horizontal taps that fit bytes (unsigned ≤ 255, or signed with Epi::kSignedTaps).
template <class Src, class Epi>
cudaError_t launch_fast_separable(const Src& src, const int* kx, const int* ky, int ksize,
                                  int width, int height, int y0, int y1, const ImageView& dst,
                                  const Epi& epi, bool round_q16, cudaStream_t stream,
                                  int rows_per_warp = 0) {
  if (ksize < 3 || ksize % 2 == 0 || ksize / 2 > kFastMaxRadius) return cudaErrorInvalidValue;
  if (!fast_kernel_fits(src, width, height, dst)) {
    return launch_separable_tile(src, kx, ksize, ky, ksize, width, y0, y1,
                                 EpilogueStore<Epi>{dst.data, dst.pitch, epi}, stream);
  }
  FastArgs a{};
  int bias = 0, sum_kx = 0;
  for (int k = 0; k < ksize; ++k) {
    a.vtap[k] = static_cast<std::uint32_t>(ky[k]);
    a.xtap[k] = kx[k];
    a.ytap[k] = ky[k];
    if (ky[k] < 0) bias -= 255 * ky[k];
    sum_kx += kx[k];
  }
  for (int g = 0; 2 * g < ksize; ++g) {
    const int hi = 2 * g + 1 < ksize ? kx[2 * g + 1] : 0;
    a.htap[g] = (static_cast<std::uint32_t>(kx[2 * g]) & 0xffu) |
                ((static_cast<std::uint32_t>(hi) & 0xffu) << 8);
  }
  const int lane_init = bias + (round_q16 ? 128 : 0);
  a.vinit = static_cast<std::uint32_t>(lane_init) * 0x00010001u;
  a.hinit = static_cast<std::uint32_t>(-bias * sum_kx);
  a.ksize = ksize;
  a.width = width;
  a.dst = dst.data;
  a.dst_pitch = dst.pitch;
  if constexpr (std::is_same_v<Src, BgrSrc> && std::is_same_v<Epi, GaussQ16Epilogue>) {
    if (staged_enabled()) {
      return launch_fast_staged(src, a, ksize / 2, y0, y1, epi, stream,
                                launch_rows(rows_per_warp, kStagedRows));
    }
  }
  // Strips at 16 + 480·w while they fit; the rest of the row either goes to the right edge tile (≤
  // 64 columns) or gets one more strip moved left onto a 16-byte boundary (x0_last), which leaves ≤
  // 31 columns for the tile.
  a.warps_fast = (width - 512) / kFastWarpOut + 1;
  a.x0_last = 16 + (a.warps_fast - 1) * kFastWarpOut;
  if (width - (a.x0_last + kFastWarpOut) > kSepTileW) {
    a.x0_last = ((width - 496) / 16) * 16;
    ++a.warps_fast;
  }
  const FilterPolicy& pol = current_filter_policy();
  a.grid = StripGrid(y0, y1, static_cast<int>(div_up(a.warps_fast, kFastThreads / 32)),
                     launch_rows(rows_per_warp, fast_rows_per_warp(ksize / 2, width, y1 - y0,
                                                                   device_info().sm_count, pol)),
                     kSepTileH);
  const unsigned grid = a.grid.blocks();
  a.grid.early = pdl_early();
  const int r = ksize / 2;
  const std::size_t smem = separable_smem_bytes(r, r);
  return with_radius(r, [&](auto rc) {
    return launch_pdl(fast_separable_kernel<decltype(rc)::value, Src, Epi>, grid, kFastThreads,
                      smem, stream, src, a, epi);
  });
}

}  // namespace jetpipe::dev
