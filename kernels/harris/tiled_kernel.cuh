// SPDX-License-Identifier: MIT
// harris's tiled kernel for ksize 3 and block_size 3 (launch_harris_tiled, kernels/harris.h): a
// block of 256 threads per 64 × 64 output tile, the stages one after another through shared memory.
//
// Regions of a tile at (tx0, ty0) (image coordinates), each the positions the next stage reads:
//   blur   [tx0 − 2, tx0 + 70) × [ty0 − 2, ty0 + 66)   u8   the source image (68 columns used)
//   cell   [tx0 − 1, tx0 + 67) × [ty0 − 1, ty0 + 65)   u32  Dx | Dy << 16 (integer Sobel; 66 used)
//   out    [tx0, tx0 + 64) × [ty0, ty0 + 64)            the 3 × 3 box of the cells' products and
//                                                      harris_response (tile_kernel.cuh)
// Borders cost no branch in the loops: source positions outside the image are loaded as 0, then
// the ones a cell inside reads (X ∈ {−1, W}, Y ∈ {−1, H}) are copied from their remapped position
// (the image border); after the Sobel, the cells just outside are copied the same way (the tensor
// border: 0 for a constant border), as harris.h defines them. Only edge tiles run the copies.
//
// Against the fast strip kernel (fast_kernel.cuh): each warp's work is short (a tile loaded at
// once, no serial row loads; 48 registers, 5 blocks an SM), so a 1080p launch is one wave of many
// short warps instead of a few long strips. The policy picks it by the launch's pixels
// (FilterPolicy::harris_tiled_px, figures there; docs/decisions/003-harris-tiled.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/filters/source.cuh"
#include "kernels/harris/fast_kernel.cuh"
#include "kernels/harris/tile_kernel.cuh"
#include "kernels/block/max_key.cuh"
#include "kernels/block/pdl.cuh"
#include "kernels/max_feed.h"

namespace jetpipe::dev {

constexpr int kHtTile = 64;  // output columns a tile
constexpr int kHtRows = 64;  // output rows a tile (96 was slower in the 1080p chain)
constexpr int kHtThreads = 256;
constexpr int kHtUnroll = 4;  // the response rows' loop: whole (8) spilled 8 bytes, 2 spilled 4
constexpr int kHtBlurW = kHtTile + 4;  // blur region's columns
constexpr int kHtCellW = kHtTile + 2;  // cell region's columns
constexpr int kHtBlurWords = 18;  // words loaded a blur row: the Sobel reads 8 bytes from 4·16
constexpr int kHtBlurStride = 4 * kHtBlurWords;  // bytes
constexpr int kHtCellStride = 68;                // words: the Sobel writes units of 4 to column 67

// A tile of TH output rows for NT threads: the regions' rows and each phase's split (units of 4
// columns, 17 a cell row; bands of rows where a window slides).
template <int TH, int NT>
struct HtGeom {
  static constexpr int kBlurH = TH + 4, kCellH = TH + 2;
  static constexpr int kB4 = NT / 17, kR4 = (kCellH + kB4 - 1) / kB4;  // cells: bands of kR4 rows
  static constexpr int kB5 = NT / 32, kR5 = TH / kB5;                  // out: bands of kR5 rows
  static_assert(TH % kB5 == 0, "whole output bands");
  static_assert(kHtTile == kFeedBandCols, "a tile is one column of the feed's bands");
};

struct HarrisTiledArgs {
  const std::uint8_t* src;  // GRAY8
  std::size_t src_pitch;
  bool words;  // src data and pitch 4-byte aligned: a blur word from two aligned word loads
  int width, height, y0, y1;
  BorderMode hmode;
  std::uint32_t hfill;  // the constant border's value (u8)
  std::uint8_t* resp;   // F32 rows
  std::size_t resp_pitch;
  bool resp_pairs;  // rows 8-byte aligned: two floats a store
  double s2, k;
  std::uint32_t* max_key;
  std::uint32_t* bands;  // MaxFeed::bands (kernels/max_feed.h), null: none; y0 a multiple of 8
  int band_pitch;
  bool early;
};

template <int TH>
struct HarrisTiledSmem {
  std::uint8_t blur[TH + 4][kHtBlurStride];
  std::uint32_t cell[TH + 2][kHtCellStride];
};

// The positions of a region just outside the image that a stage reads: X ∈ {−1, W} for rows
// inside the image, and Y ∈ {−1, H} for X ∈ [−1, W]; each the value at the remapped position
// (inside the image and the region), or `fill` for a constant border. (ox, oy): the image
// coordinates of the region's first position.
template <int NT, class T>
__device__ __forceinline__ void fill_outside(T* buf, int stride, int rw, int rh, int ox, int oy,
                                             int W, int H, BorderMode mode, T fill) {
  const int n = 2 * rh + 2 * rw;
  for (int i = threadIdx.x; i < n; i += NT) {
    int X, Y;
    if (i < 2 * rh) {
      Y = oy + (i >> 1);
      X = (i & 1) ? W : -1;
      if (Y < 0 || Y >= H) continue;
    } else {
      const int j = i - 2 * rh;
      X = ox + (j >> 1);
      Y = (j & 1) ? H : -1;
      if (X < -1 || X > W) continue;
    }
    const int cx = X - ox, cy = Y - oy;
    if (cx < 0 || cx >= rw || cy < 0 || cy >= rh) continue;
    const int rx = near_remap(X, W, mode), ry = near_remap(Y, H, mode);
    buf[cy * stride + cx] = (rx < 0 || ry < 0) ? fill : buf[(ry - oy) * stride + (rx - ox)];
  }
}

// Blur pixels 4u .. 4u + 5 of blur row br as 16-bit lanes: e = (p0, p2), o = (p1, p3),
// f = (p4, p5), each pair (lane 0, lane 1) in one word.
struct HtPx6 {
  std::uint32_t e, o, f;
};
template <class Smem>
__device__ __forceinline__ HtPx6 blur_px6(const Smem& sm, int br, int u) {
  const std::uint32_t* s = reinterpret_cast<const std::uint32_t*>(&sm.blur[br][4 * u]);
  const std::uint32_t w0 = s[0], w1 = s[1];
  return {__byte_perm(w0, 0, 0x4240), __byte_perm(w0, 0, 0x4341), __byte_perm(w1, 0, 0x4140)};
}

// The Sobel of a tile: Sobel → cells from sm.blur (TH + 4 rows), a unit of 4 cells and a band of
// rows a thread. Cell (r, c) reads blur rows r .. r + 2 and columns c .. c + 2.
// Two pixels a 32-bit operation, in 16-bit lanes that never carry into each other: column sums
// vs = top + 2·mid + bottom ≤ 1020, differences vd + 256 = bottom + 256 − top ∈ [1, 511], and the
// outputs in offset binary (v + 2^15: dx from vs' + 2^15 − vs, dy from the vd's weighted sum
// + 2^15 − 1024), turned into two's complement by flipping each lane's top bit. A cell is
// dx | dy << 16 with dx and dy 16-bit two's complement, as the response reads it. 42 SASS
// instructions a row of 4 cells (sm_90) instead of 55 a pixel at a time.
template <int TH, int NT, class Smem>
__device__ __forceinline__ void ht_cells(Smem& sm) {
  using G = HtGeom<TH, NT>;
  constexpr int kBlurH = G::kBlurH, kCellH = G::kCellH;
  constexpr std::uint32_t kHalf = 0x80008000u;  // 2^15 in each lane
  const int tid = threadIdx.x;
  if (tid < 17 * G::kB4) {
    const int u = tid % 17, b = tid / 17;
    const int r0 = G::kR4 * b;
    HtPx6 win[3];  // three blur rows, columns 4u .. 4u + 5
    win[0] = blur_px6(sm, min(r0, kBlurH - 1), u);
    win[1] = blur_px6(sm, min(r0 + 1, kBlurH - 1), u);
#pragma unroll
    for (int j = 0; j < G::kR4; ++j) {
      const int r = r0 + j;
      win[(j + 2) % 3] = blur_px6(sm, min(r + 2, kBlurH - 1), u);
      if (r < kCellH) {
        const HtPx6& t = win[j % 3];
        const HtPx6& m = win[(j + 1) % 3];
        const HtPx6& d = win[(j + 2) % 3];
        // Column sums and differences of columns (0, 2), (1, 3), (4, 5).
        const std::uint32_t se = t.e + 2 * m.e + d.e, so = t.o + 2 * m.o + d.o,
                            sf = t.f + 2 * m.f + d.f;
        const std::uint32_t de = d.e + 0x01000100u - t.e, d_o = d.o + 0x01000100u - t.o,
                            df = d.f + 0x01000100u - t.f;
        // dx of cells (0, 2) and (1, 3): vs of columns (2, 4) and (3, 5) less (0, 2) and (1, 3).
        const std::uint32_t dxe = __byte_perm(se, sf, 0x5432) + kHalf - se;
        const std::uint32_t dxo = __byte_perm(so, sf, 0x7632) + kHalf - so;
        // dy of cells (0, 2) = vd(0, 2) + 2·vd(1, 3) + vd(2, 4); of (1, 3) = vd(1, 3) + 2·vd(2, 4)
        // + vd(3, 5); the 4 · 256 of the biased vd's taken back in the 2^15.
        const std::uint32_t d24 = __byte_perm(de, df, 0x5432), d35 = __byte_perm(d_o, df, 0x7632);
        const std::uint32_t dye = de + 2 * d_o + d24 + (kHalf - 0x04000400u);
        const std::uint32_t dyo = d_o + 2 * d24 + d35 + (kHalf - 0x04000400u);
        const std::uint32_t xe = dxe ^ kHalf, xo = dxo ^ kHalf, ye = dye ^ kHalf, yo = dyo ^ kHalf;
        *reinterpret_cast<uint4*>(&sm.cell[r][4 * u]) =
            make_uint4(__byte_perm(xe, ye, 0x5410), __byte_perm(xo, yo, 0x5410),
                       __byte_perm(xe, ye, 0x7632), __byte_perm(xo, yo, 0x7632));
      }
    }
  }
}

// The 3-cell sums of tensor row tr of a tile's cells for the thread's two output columns (cells
// c .. c + 3: c .. c + 2 for the first, c + 1 .. c + 3 for the second).
struct HtRowSums {
  std::uint32_t xx[2], xy[2], yy[2];
};
template <class Smem>
__device__ __forceinline__ HtRowSums ht_row_sums(const Smem& sm, int tr, int c) {
  const uint2 w01 = *reinterpret_cast<const uint2*>(&sm.cell[tr][c]);
  const uint2 w23 = *reinterpret_cast<const uint2*>(&sm.cell[tr][c + 2]);
  const std::uint32_t w[4] = {w01.x, w01.y, w23.x, w23.y};
  std::uint32_t pxx[4], pxy[4], pyy[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int dx = static_cast<int>(static_cast<std::int16_t>(w[q] & 0xffffu));
    const int dy = static_cast<int>(w[q]) >> 16;
    pxx[q] = static_cast<std::uint32_t>(dx * dx);
    pxy[q] = static_cast<std::uint32_t>(dx * dy);
    pyy[q] = static_cast<std::uint32_t>(dy * dy);
  }
  const std::uint32_t mxx = pxx[1] + pxx[2], mxy = pxy[1] + pxy[2], myy = pyy[1] + pyy[2];
  return {{mxx + pxx[0], mxx + pxx[3]}, {mxy + pxy[0], mxy + pxy[3]}, {myy + pyy[0], myy + pyy[3]}};
}

// The box sums and the response of a tile: the 3 × 3 box sums of the cells' products and the
// response, 2 columns and kR5 rows a thread; writes rows < y1 and columns < W, and gathers their
// maximum. The first two rows' sums come before the loop, the conversions are folded into the
// scaling (harris_response_u32), and the response row's address steps by the pitch.
template <int TH, int NT, class Smem, class Args>
__device__ __forceinline__ void ht_response(const Smem& sm, const Args& a, int tx0, int ty0) {
  using G = HtGeom<TH, NT>;
  const int tid = threadIdx.x;
  const int c = 2 * (tid & 31), band = tid >> 5;  // bands of kR5 rows
  const int X = tx0 + c, Y0 = ty0 + G::kR5 * band;
  const bool in0 = X < a.width, in1 = X + 1 < a.width;
  const int rows = min(G::kR5, a.y1 - Y0);  // rows to write (≤ 0: none)
  std::uint8_t* d =
      a.resp + static_cast<std::size_t>(Y0) * a.resp_pitch + 4 * static_cast<std::size_t>(X);
  float m = -INFINITY;
  HtRowSums s0 = ht_row_sums(sm, G::kR5 * band, c);
  HtRowSums s1 = ht_row_sums(sm, G::kR5 * band + 1, c);
#pragma unroll(kHtUnroll)
  for (int j = 0; j < G::kR5; ++j) {
    const HtRowSums s2 = ht_row_sums(sm, G::kR5 * band + j + 2, c);
    float r[2];
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      r[q] = harris_response_u32(s0.xx[q] + s1.xx[q] + s2.xx[q], s0.xy[q] + s1.xy[q] + s2.xy[q],
                                 s0.yy[q] + s1.yy[q] + s2.yy[q], a.s2, a.k);
    }
    if (j < rows && in0) {
      float* p = reinterpret_cast<float*>(d);
      m = fmaxf(m, r[0]);
      if (in1) {
        m = fmaxf(m, r[1]);
        if (a.resp_pairs) {
          *reinterpret_cast<float2*>(p) = make_float2(r[0], r[1]);
        } else {
          p[0] = r[0];
          p[1] = r[1];
        }
      } else {
        p[0] = r[0];
      }
    }
    d += a.resp_pitch;
    s0 = s1;
    s1 = s2;
  }
  if (a.max_key == nullptr && a.bands == nullptr) return;
  const std::uint32_t key = warp_max_key(m);
  if (a.max_key != nullptr) publish_key(a.max_key, key);
  if constexpr (G::kR5 == kFeedBandRows) {
    // The warp's rows are one band of the image's 8-row grid (y0 is on it): its maximum, where the
    // launch writes the whole band (it ends before y1, or at the image's end); 1 (a NaN's key,
    // above no threshold) where no pixel has a value, since 0 means "not written".
    const int yb = ty0 + G::kR5 * band;
    if (a.bands != nullptr && (tid & 31) == 0 && yb < a.y1 &&
        (yb + G::kR5 <= a.y1 || a.y1 == a.height)) {
      a.bands[(tx0 / kHtTile) * a.band_pitch + yb / G::kR5] = key != 0 ? key : 1u;
    }
  }
}

// TH = kHtRows, NT = kHtThreads (a template, as the other kernels in headers, so that a file
// including this one does not define the kernel again).
template <int TH, int NT>
__global__ void __launch_bounds__(NT, 5) harris_tiled_kernel(const HarrisTiledArgs a) {
  using G = HtGeom<TH, NT>;
  constexpr int kBlurH = G::kBlurH, kCellH = G::kCellH;
  constexpr int kUnits = kHtBlurWords * kBlurH;  // words of the blur region
  constexpr int kPer = (kUnits + NT - 1) / NT;
  BlockTrace trace(2);
  if (a.early) pdl_trigger();
  __shared__ __align__(16) HarrisTiledSmem<TH> sm;
  const int tid = threadIdx.x;
  const int tx0 = blockIdx.x * kHtTile, ty0 = a.y0 + blockIdx.y * TH;
  const int W = a.width, H = a.height;
  pdl_wait();
  trace.waited();
  // ---- The blur region: word u of row r holds columns tx0 − 2 + 4u .. + 3, from the aligned
  // words at tx0 − 4 + 4u and tx0 + 4u (or byte by byte at the image's edges and for unaligned
  // sources). Positions outside the image are 0 (those read are filled below). Every load first.
  std::uint32_t lo[kPer], hi[kPer];
  bool fast[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = tid + k * NT;
    const int r = i / kHtBlurWords, u = i - kHtBlurWords * r;
    const int y = ty0 - 2 + r, x = tx0 - 2 + 4 * u;
    fast[k] = i < kUnits && static_cast<unsigned>(y) < static_cast<unsigned>(H) && a.words &&
              x >= 2 && x + 6 <= W;
    lo[k] = hi[k] = 0;
    if (fast[k]) {
      const std::uint32_t* p = reinterpret_cast<const std::uint32_t*>(
          a.src + static_cast<std::size_t>(y) * a.src_pitch + (x - 2));
      lo[k] = __ldg(p);
      hi[k] = __ldg(p + 1);
    }
  }
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = tid + k * NT;
    if (i >= kUnits) break;
    const int r = i / kHtBlurWords, u = i - kHtBlurWords * r;
    const int y = ty0 - 2 + r, x = tx0 - 2 + 4 * u;
    std::uint32_t v = __byte_perm(lo[k], hi[k], 0x5432);
    if (!fast[k] && static_cast<unsigned>(y) < static_cast<unsigned>(H)) {
      const std::uint8_t* row = a.src + static_cast<std::size_t>(y) * a.src_pitch;
      v = 0;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        if (x + q >= 0 && x + q < W) v |= static_cast<std::uint32_t>(row[x + q]) << (8 * q);
      }
    }
    *reinterpret_cast<std::uint32_t*>(&sm.blur[r][4 * u]) = v;
  }
  __syncthreads();
  const bool edge = tx0 == 0 || tx0 + kHtTile + 2 > W || ty0 < 2 || ty0 + TH + 2 > H;
  if (edge) {
    fill_outside<NT, std::uint8_t>(&sm.blur[0][0], kHtBlurStride, kHtBlurW, kBlurH, tx0 - 2,
                                   ty0 - 2, W, H, a.hmode, static_cast<std::uint8_t>(a.hfill));
    __syncthreads();
  }
  ht_cells<TH, NT>(sm);
  __syncthreads();
  if (edge) {
    fill_outside<NT, std::uint32_t>(&sm.cell[0][0], kHtCellStride, kHtCellW, kCellH, tx0 - 1,
                                    ty0 - 1, W, H, a.hmode, 0u);
    __syncthreads();
  }
  ht_response<TH, NT>(sm, a, tx0, ty0);
}

}  // namespace jetpipe::dev
