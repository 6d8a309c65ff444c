// SPDX-License-Identifier: MIT
// harris's exact pieces shared by its two kernels (kernels/harris/dispatch.cu):
//   harris_response()  the one double evaluation of harris.h, operation for operation (__d*_rn: no
//                      contraction), from the three exact sums;
//   harris_response_u32()  the same bits from 32-bit sums, each conversion folded into its scaling
//                      (the fast and the tiled kernels);
//   harris_tile()      the general tile engine: any ksize (1, 3, 5, 7) and block_size (1..31); the
//                      standalone kernel's body and the fast kernel's edge columns.
//
// A tile makes up to kHarrisTileW × kHarrisTileH outputs: the image tile + halo in shared memory
// (through the source: global loads or texture fetches, the image border), the integer gradients
// of the tile + box halo (positions outside the image: 0 for a constant border, computed from the
// periodic extension for wrap, else copied from the remapped position, which lies in the same
// tile), then per output the exact int64 box sums and the response.
//
//   extern __shared__ __align__(16) std::uint8_t smem[];   // HarrisGeom(...).smem_bytes()
//   dev::harris_tile(src, args, tx0, ty0, rows, x_end, smem, threadIdx.x, blockDim.x);
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/border.h"
#include "kernels/block/max_key.cuh"
#include "kernels/filters/source.cuh"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

constexpr int kHarrisMaxTaps = 7;

struct HarrisArgs {
  int gx_x[kHarrisMaxTaps], gx_y[kHarrisMaxTaps];  // d/dx: taps along x, along y
  int gy_x[kHarrisMaxTaps], gy_y[kHarrisMaxTaps];  // d/dy
  int gx_nx, gx_ny, gy_nx, gy_ny;
  int r;           // gradient radius
  int bs, anchor;  // box size and anchor (bs / 2)
  double s2, k;    // s², s = 1 / (2^(ksize−1) · bs · 255), computed as the twin does
  BorderMode mode;
  int width, height, y0, y1;
  std::uint8_t* dst;
  std::size_t pitch;
  bool aligned4;  // F32 rows 4-byte aligned
  // Where the kernels gather the maximum of what they write (an order key, max_key.cuh; one
  // atomicMax per warp at most), or null.
  std::uint32_t* max_key;
};

// R from the exact sums (as doubles: exact, |sum| < 2^47), harris.h's operations in its order.
// From a = sxx·s2, b = sxy·s2, c = syy·s2 (each rounded once): the rest of the evaluation.
__device__ __forceinline__ float harris_response_scaled(double a, double b, double c, double k) {
  const double det = __dsub_rn(__dmul_rn(a, c), __dmul_rn(b, b));
  const double tr = __dadd_rn(a, c);
  return __double2float_rn(__dsub_rn(det, __dmul_rn(__dmul_rn(k, tr), tr)));
}
__device__ __forceinline__ float harris_response(double sxx, double sxy, double syy, double s2,
                                                 double k) {
  return harris_response_scaled(__dmul_rn(sxx, s2), __dmul_rn(sxy, s2), __dmul_rn(syy, s2), k);
}

// harris_response of three exact 32-bit sums (sxx, syy unsigned; sxy an int32's bits), without a
// conversion unit and with each conversion folded into its scaling: the double with bits
// 0x43300000'v is X = 2^52 + v (v < 2^32), and with C = −2^52·s2 (exact: s2 scaled by a power of
// two) fma(X, s2, C) is v·s2 rounded once, i.e. __dmul_rn((double)v, s2). b enters the response
// only as b·b, where |sxy| gives the same bits (rounding is symmetric). So the same bits as
// harris_response((double)sxx, (double)sxy, (double)syy, s2, k) with one double operation a sum
// (before: an exact subtraction of 2^52, then the multiplication).
__device__ __forceinline__ float harris_response_u32(std::uint32_t sxx, std::uint32_t sxy,
                                                     std::uint32_t syy, double s2, double k) {
  const double c = __dmul_rn(-4503599627370496.0, s2);  // exact; hoisted out of the loops
  const std::uint32_t axy = static_cast<std::uint32_t>(abs(static_cast<int>(sxy)));
  const double a = __fma_rn(__hiloint2double(0x43300000, static_cast<int>(sxx)), s2, c);
  const double b = __fma_rn(__hiloint2double(0x43300000, static_cast<int>(axy)), s2, c);
  const double d = __fma_rn(__hiloint2double(0x43300000, static_cast<int>(syy)), s2, c);
  return harris_response_scaled(a, b, d, k);
}

__host__ __device__ inline int ceil16(int v) { return (v + 15) & ~15; }

struct HarrisGeom {
  int img_left, img_stride, img_rows, cov_w, cov_h;
  __host__ __device__ HarrisGeom(int bs, int anchor, int r) {
    img_left = ceil16(anchor + r);  // tile origin x = tx0 − img_left (tx0 a multiple of 16)
    img_stride = img_left + kHarrisTileW + ceil16(bs - 1 - anchor + r);
    img_rows = kHarrisTileH + bs - 1 + 2 * r;
    cov_w = kHarrisTileW + bs - 1;
    cov_h = kHarrisTileH + bs - 1;
  }
  __host__ __device__ int img_bytes() const { return ceil16(img_stride * img_rows); }
  // The image tile, then Dx and Dy (int32) of the tensor tile.
  __host__ __device__ std::size_t smem_bytes() const {
    return static_cast<std::size_t>(img_bytes()) + 2 * sizeof(int) * cov_w * cov_h;
  }
};

// Σ_u ty[u] · Σ_v tx[v] · img(row − ny/2 + u, col − nx/2 + v): exact integers.
__device__ __forceinline__ int derivative(const std::uint8_t* img, int stride, int row, int col,
                                          const int* tx, int nx, const int* ty, int ny) {
  int sum = 0;
  for (int u = 0; u < ny; ++u) {
    const std::uint8_t* p = img + (row - ny / 2 + u) * stride + col - nx / 2;
    int s = 0;
    for (int v = 0; v < nx; ++v) s += tx[v] * static_cast<int>(p[v]);
    sum += ty[u] * s;
  }
  return sum;
}

// Σ Dx², Σ Dx·Dy, Σ Dy² over the bs × bs tensor cells from `base` (rows `stride` apart; bs = kBS
// when compiled, else the argument), accumulated in Acc (exact: int for ksize 3 and bs ≤ 7, else
// long long) and returned as exact doubles.
template <class Acc, int kBS>
__device__ __forceinline__ void box_sums(const int* gx, const int* gy, int stride, int base, int bs,
                                         double (&sum)[3]) {
  const int n = kBS > 0 ? kBS : bs;
  Acc xx = 0, xy = 0, yy = 0;
#pragma unroll
  for (int u = 0; u < n; ++u) {
#pragma unroll
    for (int v = 0; v < n; ++v) {
      const Acc dx = gx[base + u * stride + v], dy = gy[base + u * stride + v];
      xx += dx * dx;
      xy += dx * dy;
      yy += dy * dy;
    }
  }
  sum[0] = static_cast<double>(xx);
  sum[1] = static_cast<double>(xy);
  sum[2] = static_cast<double>(yy);
}

// Outputs of columns [tx0, min(tx0 + kHarrisTileW, x_end)) and rows [ty0, ty0 + th) (th ≤
// kHarrisTileH), tx0 a multiple of 16. smem: HarrisGeom(bs, anchor, r).smem_bytes(), 16-byte
// aligned. Ends with every thread past its last shared-memory access (a following call may reuse
// smem after a __syncthreads). Returns the maximum of the values this thread wrote (−inf: none).
// kBS > 0: compiled for ksize 3 and block_size kBS ≤ 7 (the fast kernel's edge tiles, whose
// launches have those): Sobel's 3×3 written out and the box sums in 32 bits, exact as the 64-bit
// ones (|D| ≤ 4·255, 49·1020² < 2^31) and unrolled; kBS = 0: any ksize and block_size from `a`.
template <int kBS = 0, bool kAtOnce = false, class Src>
__device__ __forceinline__ float harris_tile(const Src& src, const HarrisArgs& a, int tx0, int ty0,
                                             int th, int x_end, std::uint8_t* smem, int tid,
                                             int nthreads) {
  static_assert(kBS >= 0 && kBS <= 7, "the 32-bit sums are exact up to block 7");
  constexpr bool kSobel3 = kBS > 0;
  const HarrisGeom g(a.bs, a.anchor, a.r);
  std::uint8_t* img = smem;
  int* gx = reinterpret_cast<int*>(smem + g.img_bytes());
  int* gy = gx + g.cov_w * g.cov_h;
  const int cx0 = tx0 - a.anchor, cy0 = ty0 - a.anchor;  // tensor tile origin
  const int ix0 = tx0 - g.img_left, iy0 = cy0 - a.r;     // image tile origin
  // Only the tensor rows and columns the outputs read, and the rows that positions remapped from
  // outside the image land on: a window reaches anchor rows above its output row and bs − 1 −
  // anchor below, and border_remap mirrors a row above the image at most anchor rows into it, so
  // th + 2·anchor rows (at most the tile's cov_h; a tile cut by x_end: the fast kernel's left edge
  // has 16 columns, the columns' reach is within them).
  const int cov_rows = min(g.cov_h, th + 2 * a.anchor);
  const int out_w = min(kHarrisTileW, x_end - tx0);
  const int cov_cols = out_w + a.bs - 1;  // ≤ g.cov_w, the rows' stride

  load_tile<kAtOnce>(src, img, g.img_stride, ix0, iy0, cov_rows + 2 * a.r, tid, nthreads);
  __syncthreads();

  const int ncov = cov_cols * cov_rows;
  const bool periodic = a.mode == BorderMode::kWrap;
  const bool zero_outside = a.mode == BorderMode::kConstant;
  for (int i = tid; i < ncov; i += nthreads) {
    const int ci = i / cov_cols, cj = i - ci * cov_cols;
    const int cx = cx0 + cj, cy = cy0 + ci;
    const int at = ci * g.cov_w + cj;
    const bool inside = static_cast<unsigned>(cx) < static_cast<unsigned>(a.width) &&
                        static_cast<unsigned>(cy) < static_cast<unsigned>(a.height);
    if (inside || periodic) {
      const int row = cy - iy0, col = cx - ix0;
      if constexpr (kSobel3) {  // taps [−1 0 1] × [1 2 1], as derivative() with sobel_taps'
        const int st = g.img_stride;
        const std::uint8_t* q = img + (row - 1) * st + col - 1;
        const int p00 = q[0], p01 = q[1], p02 = q[2], p10 = q[st], p12 = q[st + 2];
        const int p20 = q[2 * st], p21 = q[2 * st + 1], p22 = q[2 * st + 2];
        gx[at] = (p02 - p00) + 2 * (p12 - p10) + (p22 - p20);
        gy[at] = (p20 + 2 * p21 + p22) - (p00 + 2 * p01 + p02);
      } else {
        gx[at] = derivative(img, g.img_stride, row, col, a.gx_x, a.gx_nx, a.gx_y, a.gx_ny);
        gy[at] = derivative(img, g.img_stride, row, col, a.gy_x, a.gy_nx, a.gy_y, a.gy_ny);
      }
    } else if (zero_outside) {
      gx[at] = gy[at] = 0;
    }
  }
  __syncthreads();

  if (!periodic && !zero_outside) {  // replicate, reflect, reflect101: the remapped position's
    for (int i = tid; i < ncov; i += nthreads) {
      const int ci = i / cov_cols, cj = i - ci * cov_cols;
      const int cx = cx0 + cj, cy = cy0 + ci;
      if (static_cast<unsigned>(cx) < static_cast<unsigned>(a.width) &&
          static_cast<unsigned>(cy) < static_cast<unsigned>(a.height)) {
        continue;
      }
      const int sj = border_remap(cx, a.width, a.mode) - cx0;
      const int si = border_remap(cy, a.height, a.mode) - cy0;
      // Positions some output needs always remap into the tile; others are never read.
      if (sj >= 0 && sj < cov_cols && si >= 0 && si < cov_rows) {
        const int s = si * g.cov_w + sj;
        gx[ci * g.cov_w + cj] = gx[s];
        gy[ci * g.cov_w + cj] = gy[s];
      }
    }
    __syncthreads();
  }

  float written_max = -INFINITY;
  for (int i = tid; i < out_w * th; i += nthreads) {
    const int oy = i / out_w, ox = i - oy * out_w;
    const int x = tx0 + ox, y = ty0 + oy;
    using Acc = std::conditional_t<kSobel3, int, long long>;
    double sum[3];
    box_sums<Acc, kBS>(gx, gy, g.cov_w, oy * g.cov_w + ox, a.bs, sum);
    const float v = harris_response(sum[0], sum[1], sum[2], a.s2, a.k);
    written_max = fmaxf(written_max, v);
    std::uint8_t* row = a.dst + static_cast<std::size_t>(y) * a.pitch;
    if (a.aligned4) {
      reinterpret_cast<float*>(row)[x] = v;
    } else {
      const std::uint32_t u = __float_as_uint(v);
      for (int b = 0; b < 4; ++b) row[4 * x + b] = static_cast<std::uint8_t>(u >> (8 * b));
    }
  }
  return written_max;
}

// Grid: x = ceil(width / kHarrisTileW), y = ceil((y1 − y0) / kHarrisTileH); kHarrisThreads.
template <class Src>
__global__ void __launch_bounds__(kHarrisThreads)
    harris_tile_kernel(const Src src, const HarrisArgs a) {
  extern __shared__ __align__(16) std::uint8_t smem[];
  const int tx0 = static_cast<int>(blockIdx.x) * kHarrisTileW;
  const int ty0 = a.y0 + static_cast<int>(blockIdx.y) * kHarrisTileH;
  const float m = harris_tile(src, a, tx0, ty0, min(kHarrisTileH, a.y1 - ty0), a.width, smem,
                              threadIdx.x, kHarrisThreads);
  if (a.max_key != nullptr) publish_max(a.max_key, m);
}

}  // namespace jetpipe::dev
