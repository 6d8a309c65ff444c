// SPDX-License-Identifier: MIT
// harris's fast kernel: one fused pass for ksize 3 and block_size BS = 3..7, exact integers up to
// the three box sums, then harris_response_u32() (tile_kernel.cuh) in double: bit for bit the twin.
//
// Work split (as kernels/filters/fast_kernel.cuh): a warp owns a strip of 32·LC input columns (lane l: columns
// X0 − LC + LC·l, LC = 8 or 4 pixels, one 8- or 4-byte load per row) and writes the middle 30·LC
// (lanes 1..30; lanes 0 and 31 only supply halo), sliding down rows_per_warp output rows. LC 8
// has fewer instructions a pixel and was the faster on an H100 at 1080p and 16384²; LC 4 (twice
// the warps, fewer registers) takes images 152..271 columns wide and the policy's small launches.
// Strips lie inside the image (X0 = 16 + 30·LC·w; the whole 16-byte texel of lane 31 inside; where
// more than kHarrisTileW columns would be left at the right, one more strip moved left, rewriting
// some of its neighbour's pixels with the same values), so the loop never tests for border columns.
// The columns left at the edges ([0, 16) and ≤ 32 at the right, from a 16-column boundary) are done
// by two extra blocks per edge_rows rows in the same launch (a 1-D grid, StripGrid) running the
// tile engine (tile_kernel.cuh), where the full border handling applies.
//
// The tensor border applies to rows: a tensor row t outside the image is the tensor row of
// border_remap(t) (rows of 0 for a constant border), whose gradients come from image rows
// r − 1, r, r + 1 (the image border: row_near). Those rows are loaded afresh; inside the image the
// three-row window slides (one load per row, prefetched a row ahead).
//
// Per tensor row and lane (LC = 8 columns, two per 16-bit lane pair; counts from the source, not
// from SASS), all integer and exact:
//   unpack the incoming row's bytes into pairs                   4 PRMT
//   vs = r0 + 2·r1 + r2, vd = r2 − r0 + 256 (pairs, ≤ 1020)        8 IMAD / IADD3
//   halo pairs of vs, vd from the neighbour lanes                  4 SHFL
//   Dx: (vs(i+1) − vs(i−1)) + 1024 per pair, word − word            5 IADD3, 8 IDP.2A to unpack
//   Dy = vd(i−1) + 2·vd(i) + vd(i+1) − 1024                       16 IDP.2A
//   (Dx, Dy) as 16-bit halves into a ring of the last BS rows       8 PRMT  (LC 4: two words)
//   V += Dx², Dx·Dy, Dy² − the same of the row leaving the ring    48 IMAD, 16 SGXT / SHF
//   (mod 2^32: |true sums| ≤ 49 · 1020² < 2^31, so they are exact)
// and per output row: the horizontal box of V (halo columns by shuffles; a sliding IADD3 per
// sum), each sum to double without rounding (bits 0x43300000'v − 2^52: one DADD), the 9 double
// operations of the response, one rounding to float, LC / 4 16-byte stores per lane.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/launch/filter_launch.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/harris/tile_kernel.cuh"
#include "kernels/block/max_key.cuh"
#include "kernels/block/pdl.cuh"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

// The strip geometry for LC columns a lane (8 or 4): a warp reads 32·LC columns from X0 − LC and
// writes the 30·LC from X0. need: the columns from X0 on that must lie inside the image, so that
// lane 31's columns, and the whole 16-byte texel they are read from, do (X0 a multiple of 16 for
// LC 8; of 8 for LC 4, where X0 + 120 may start a texel).
template <int LC>
struct HarrisLanes {
  static_assert(LC == 4 || LC == 8, "4 or 8 columns a lane");
  static constexpr int kOut = 30 * LC;               // output columns a warp
  static constexpr int kNeed = LC == 8 ? 256 : 136;  // input columns from X0 on
  static constexpr int kAlign = LC == 8 ? 16 : 8;    // X0's alignment
};

struct HarrisFastArgs {
  HarrisArgs t;  // the tile engine's arguments (and the view, border, s2, k, rows of the launch)
  // Geometry: warps_fast strips (X0 = min(16 + kOut·w, x0_last)) in the fast_blocks blocks of a
  // band of the grid; the edge blocks run tiles over the edge columns [0, 16) and [edge_x0, width)
  // (≤ kHarrisTileW columns, edge_x0 = (x0_last + kOut) rounded down to 16).
  StripGrid grid;
  int warps_fast, x0_last, edge_x0;
};

// LC pixels from x of a row (x a multiple of LC, inside the image; fast_ok() sources), the raw
// bytes in LC / 4 words.
template <int LC>
struct Raw;
template <>
struct Raw<8> {
  std::uint32_t w[2];
};
template <>
struct Raw<4> {
  std::uint32_t w[1];
};

template <int LC>
__device__ __forceinline__ Raw<LC> read_lane(const GlobalSrc& s, GlobalSrc::Row r, int x) {
  Raw<LC> v;
  if (r == nullptr) {
#pragma unroll
    for (int q = 0; q < LC / 4; ++q) v.w[q] = s.fill4;
  } else if constexpr (LC == 8) {
    const uint2 d = __ldg(reinterpret_cast<const uint2*>(r + x));
    v.w[0] = d.x;
    v.w[1] = d.y;
  } else {
    v.w[0] = __ldg(reinterpret_cast<const unsigned int*>(r + x));
  }
  return v;
}
template <int LC>
__device__ __forceinline__ Raw<LC> read_lane(const TexSrc& s, const TexSrc::Row& r, int x) {
  const uint4 c = s.chunk_in(r, x & ~15);
  Raw<LC> v;
  if constexpr (LC == 8) {
    const bool hi = (x & 8) != 0;
    v.w[0] = hi ? c.z : c.x;
    v.w[1] = hi ? c.w : c.y;
  } else {
    const int q = (x >> 2) & 3;
    v.w[0] = q == 0 ? c.x : q == 1 ? c.y : q == 2 ? c.z : c.w;
  }
  return v;
}

// LC bytes into LC / 2 words of two 16-bit lanes: e[c] = (byte 2c, byte 2c + 1).
template <int LC>
__device__ __forceinline__ void unpack_lane(const Raw<LC>& v, std::uint32_t (&e)[LC / 2]) {
#pragma unroll
  for (int q = 0; q < LC / 4; ++q) {
    e[2 * q] = __byte_perm(v.w[q], 0, 0x4140);
    e[2 * q + 1] = __byte_perm(v.w[q], 0, 0x4342);
  }
}

// a·b − c (mod 2^32) as one multiply-add of a negated addend, opaque to the compiler's
// reassociation.
__device__ __forceinline__ std::uint32_t mad_neg(std::uint32_t a, std::uint32_t b,
                                                 std::uint32_t c) {
  std::uint32_t r;
  asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(0u - c));
  return r;
}

// Returns the maximum of the values this lane wrote (−inf where none).
template <int BS, int LC, class Src>
__device__ __forceinline__ float harris_strip(const Src& src, const HarrisFastArgs& fa, int x,
                                              bool out_lane, int ys, int ye) {
  constexpr int A = BS / 2;  // box anchor: columns / rows x − A .. x + BS − 1 − A
  constexpr int B = BS - 1 - A;
  constexpr int NP = LC / 2;  // pairs a lane
  // LC 8: (Dx, Dy) kept as 16-bit halves of one word (registers); LC 4: as two words.
  constexpr bool kPacked = LC == 8;
  static_assert(A <= LC && B <= LC && A + 1 <= LC, "halo within one lane");
  constexpr std::uint32_t kFull = 0xffffffffu;
  const HarrisArgs& a = fa.t;
  const int h = a.height;
  const int t0 = ys - A;            // first tensor row
  const int nt = ye - ys + BS - 1;  // tensor rows
  auto fetch = [&](int y) { return read_lane<LC>(src, src.row_near(y), x); };

  std::uint32_t m2[NP], m1[NP];  // image rows t − 1, t (unpacked)
  Raw<LC> raw;                   // image row t + 1
#pragma unroll
  for (int c = 0; c < NP; ++c) m2[c] = m1[c] = 0;
#pragma unroll
  for (int q = 0; q < LC / 4; ++q) raw.w[q] = 0;
  bool slide = false;  // m2, m1, raw hold rows t − 1 .. t + 1 of the next tensor row t
  // (Dx, Dy) of the last BS tensor rows; slot (row − t0) % BS. Zeros before the first rows: they
  // leave V unchanged.
  std::uint32_t ring[BS][LC], ring_y[kPacked ? 1 : BS][LC];
  std::uint32_t vxx[LC], vxy[LC], vyy[LC];
  float written_max = -INFINITY;
#pragma unroll
  for (int k = 0; k < LC; ++k) {
    vxx[k] = vxy[k] = vyy[k] = 0;
#pragma unroll
    for (int j = 0; j < BS; ++j) ring[j][k] = 0;
#pragma unroll
    for (int j = 0; j < (kPacked ? 1 : BS); ++j) ring_y[j][k] = 0;
  }

  for (int i = 0; i < nt; i += BS) {
#pragma unroll
    for (int j = 0; j < BS; ++j) {
      if (i + j < nt) {
        const int t = t0 + i + j;
        const bool inside = static_cast<unsigned>(t) < static_cast<unsigned>(h);
        if (!(inside && slide)) {  // warp-uniform: the first row, and rows outside the image
          const int r = inside ? t : border_remap(t, h, a.mode);
          if (r < 0) {  // constant border: a tensor row of 0 (flat rows give Dx = Dy = 0)
#pragma unroll
            for (int c = 0; c < NP; ++c) m2[c] = m1[c] = 0;
#pragma unroll
            for (int q = 0; q < LC / 4; ++q) raw.w[q] = 0;
          } else {
            unpack_lane<LC>(fetch(r - 1), m2);
            unpack_lane<LC>(fetch(r), m1);
            raw = fetch(r + 1);
          }
        }
        std::uint32_t u[NP];
        unpack_lane<LC>(raw, u);
        slide = inside;
        if (inside && t + 1 < h && i + j + 1 < nt) raw = fetch(t + 2);  // the next row's

        // Vertical Sobel parts on pairs: es/ed[c + 1] = own pair c; [0], [NP + 1] the neighbours'.
        std::uint32_t es[NP + 2], ed[NP + 2];
#pragma unroll
        for (int c = 0; c < NP; ++c) {
          es[c + 1] = m2[c] + 2u * m1[c] + u[c];
          ed[c + 1] = u[c] + 0x01000100u - m2[c];
          m2[c] = m1[c];
          m1[c] = u[c];
        }
        es[0] = __shfl_up_sync(kFull, es[NP], 1);
        ed[0] = __shfl_up_sync(kFull, ed[NP], 1);
        es[NP + 1] = __shfl_down_sync(kFull, es[1], 1);
        ed[NP + 1] = __shfl_down_sync(kFull, ed[1], 1);

        // Dx(i) = vs(i + 1) − vs(i − 1): wx[c] = (Dx(2c − 1) + 1024, Dx(2c) + 1024) (no borrows).
        std::uint32_t wx[NP + 1];
#pragma unroll
        for (int c = 0; c <= NP; ++c) wx[c] = es[c + 1] + 0x04000400u - es[c];
        constexpr std::uint32_t kM1024 = 0u - 1024u;
#pragma unroll
        for (int c = 0; c < NP; ++c) {
          const std::uint32_t dx0 = __dp2a_lo(wx[c], 0x0100u, kM1024);
          const std::uint32_t dx1 = __dp2a_lo(wx[c + 1], 0x0001u, kM1024);
          // Dy(i) = vd(i − 1) + 2·vd(i) + vd(i + 1) − 4·256.
          const std::uint32_t dy0 =
              __dp2a_lo(ed[c + 1], 0x0102u, __dp2a_lo(ed[c], 0x0100u, kM1024));
          const std::uint32_t dy1 =
              __dp2a_lo(ed[c + 1], 0x0201u, __dp2a_lo(ed[c + 2], 0x0001u, kM1024));
          const std::uint32_t dxs[2] = {dx0, dx1}, dys[2] = {dy0, dy1};
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            const int k = 2 * c + q;
            std::uint32_t odx, ody;
            if constexpr (kPacked) {
              const std::uint32_t old = ring[j][k];
              odx = static_cast<std::uint32_t>(
                  static_cast<int>(static_cast<std::int16_t>(old & 0xffffu)));
              ody = static_cast<std::uint32_t>(static_cast<int>(old) >> 16);
              ring[j][k] = __byte_perm(dxs[q], dys[q], 0x5410);
            } else {
              odx = ring[j][k];
              ody = ring_y[j][k];
              ring[j][k] = dxs[q];
              ring_y[j][k] = dys[q];
            }
            // V + new − old as two multiply-adds with a negated addend (mod 2^32, the same
            // bits): t = old − V, V' = new − t (mad_neg keeps the compiler from reassociating
            // it into a negation and two multiply-adds).
            const std::uint32_t txx = mad_neg(odx, odx, vxx[k]);
            const std::uint32_t txy = mad_neg(odx, ody, vxy[k]);
            const std::uint32_t tyy = mad_neg(ody, ody, vyy[k]);
            vxx[k] = mad_neg(dxs[q], dxs[q], txx);
            vxy[k] = mad_neg(dxs[q], dys[q], txy);
            vyy[k] = mad_neg(dys[q], dys[q], tyy);
          }
        }

        if (i + j >= BS - 1) {  // V now sums the box rows of output row y
          const int y = ys + i + j - (BS - 1);
          // Horizontal box: e[A + k] = V of column k, k ∈ [−A, LC + B).
          std::uint32_t exx[LC + BS - 1], exy[LC + BS - 1], eyy[LC + BS - 1];
#pragma unroll
          for (int k = 0; k < LC; ++k) {
            exx[A + k] = vxx[k];
            exy[A + k] = vxy[k];
            eyy[A + k] = vyy[k];
          }
#pragma unroll
          for (int q = 1; q <= A; ++q) {
            exx[A - q] = __shfl_up_sync(kFull, vxx[LC - q], 1);
            exy[A - q] = __shfl_up_sync(kFull, vxy[LC - q], 1);
            eyy[A - q] = __shfl_up_sync(kFull, vyy[LC - q], 1);
          }
#pragma unroll
          for (int q = 0; q < B; ++q) {
            exx[A + LC + q] = __shfl_down_sync(kFull, vxx[q], 1);
            exy[A + LC + q] = __shfl_down_sync(kFull, vxy[q], 1);
            eyy[A + LC + q] = __shfl_down_sync(kFull, vyy[q], 1);
          }
          std::uint32_t sxx = 0, sxy = 0, syy = 0;
#pragma unroll
          for (int m = 0; m < BS; ++m) {
            sxx += exx[m];
            sxy += exy[m];
            syy += eyy[m];
          }
          float out[LC];
#pragma unroll
          for (int k = 0; k < LC; ++k) {
            if (k > 0) {
              sxx += exx[k + BS - 1] - exx[k - 1];
              sxy += exy[k + BS - 1] - exy[k - 1];
              syy += eyy[k + BS - 1] - eyy[k - 1];
            }
            out[k] = harris_response_u32(sxx, sxy, syy, a.s2, a.k);
          }
          if (out_lane) {
#pragma unroll
            for (int k = 0; k < LC; ++k) written_max = fmaxf(written_max, out[k]);
            float4* d = reinterpret_cast<float4*>(a.dst + static_cast<std::size_t>(y) * a.pitch +
                                                  4 * static_cast<std::size_t>(x));
#pragma unroll
            for (int q = 0; q < LC / 4; ++q) {
              d[q] = make_float4(out[4 * q], out[4 * q + 1], out[4 * q + 2], out[4 * q + 3]);
            }
          }
        }
      }
    }
  }
  return written_max;
}

// Blocks per SM the registers must allow (a cap the compiler meets without spilling). BS 3 with
// 4-column lanes: 6 (80 registers) on sm_87 / sm_90; sm_110's ptxas (CUDA 13.0) spills there
// (4-24 bytes), so 5 (96 registers) on sm_110.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 1100
constexpr int kHarrisFast3MinBlocks = 5;
#else
constexpr int kHarrisFast3MinBlocks = 6;
#endif
template <int BS, int LC>
constexpr int harris_fast_min_blocks() {
  if (LC == 4) return BS == 3 ? kHarrisFast3MinBlocks : 4;  // 80 (96) and ≤ 128 registers
  return BS <= 4 ? 4 : 3;                                   // ≤ 128 and ≤ 168
}

// Grid: fa.grid.blocks() blocks (StripGrid); dynamic shared memory HarrisGeom(BS, BS / 2,
// 1).smem_bytes() for the edge tiles.
template <int BS, int LC, class Src>
__global__ void __launch_bounds__(kHarrisFastThreads, harris_fast_min_blocks<BS, LC>())
    harris_fast_kernel(const Src src, const HarrisFastArgs fa) {
  if (fa.grid.early) pdl_trigger();
  pdl_wait();  // the kernel before it has finished (launch_pdl)
  const StripBlock blk = strip_block(fa.grid);
  if (!blk.edge) {
    const int lane = threadIdx.x & 31;
    const int w = static_cast<int>((blk.fast_block * kHarrisFastThreads + threadIdx.x) >> 5);
    if (w >= fa.warps_fast) return;  // whole warps
    const int X0 = min(16 + w * HarrisLanes<LC>::kOut, fa.x0_last);
    const float m =
        harris_strip<BS, LC>(src, fa, X0 - LC + LC * lane, lane >= 1 && lane <= 30, blk.ys, blk.ye);
    if (fa.t.max_key != nullptr) publish_max(fa.t.max_key, m);
    return;
  }
  // Edge tiles (the tile engine), edge_rows rows a block.
  extern __shared__ __align__(16) std::uint8_t smem[];
  const int tx0 = blk.left ? 0 : fa.edge_x0;
  const int x_end = blk.left ? 16 : fa.t.width;
  float m = -INFINITY;
  for (int ty0 = blk.ys; ty0 < blk.ye; ty0 += kHarrisTileH) {
    if (ty0 != blk.ys) __syncthreads();  // the previous tile's reads of smem are done
    m = fmaxf(m, harris_tile<BS, true>(src, fa.t, tx0, ty0, min(kHarrisTileH, blk.ye - ty0), x_end,
                                       smem, threadIdx.x, kHarrisFastThreads));
  }
  if (fa.t.max_key != nullptr) publish_max(fa.t.max_key, m);
}

// Whether the fast kernel with LC-column lanes takes a launch: ksize 3, block_size 3..7, an input
// read with aligned loads or 16-byte texels, a 16-byte aligned output, at least one strip wide
// and 2 rows high (row_near's reach).
template <int LC, class Src>
bool harris_fast_fits(const Src& src, int ksize, int block_size, int width, int height,
                      const ImageView& dst) {
  return ksize == 3 && block_size >= kHarrisFastMinBlock && block_size <= kHarrisFastMaxBlock &&
         src.fast_ok() && aligned16(dst) && width >= 16 + HarrisLanes<LC>::kNeed && height >= 2;
}

}  // namespace jetpipe::dev
