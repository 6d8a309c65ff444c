// SPDX-License-Identifier: MIT
// The tile path: the NMS of one 64 × 32 tile in shared memory, the detect_max kernel and the
// detect_candidates kernel (one tile a block, skipped where the feed's bands clear it;
// docs/decisions/004-detect-band-feed.md, 010-detect-rows-path.md).
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/block/block_trace.cuh"
#include "kernels/block/pdl.cuh"
#include "kernels/detect/keys.cuh"
#include "kernels/max_feed.h"

namespace jetpipe {
namespace {  // kernels/detect/dispatch.cu is the one includer

// ---- NMS of one tile
// -------------------------------------------------------------------------------
struct NmsArgs {
  ResponseView v;
  int y0, y1;  // output rows
  int r;
  int tiles_x, ntiles;
  bool vec;  // F32 rows 16-byte aligned (data and pitch): the tile loads 16 bytes at a time
};

// out[k] = max(v[k], …, v[k + 2R]) for k < 8. For R = 4 (windows of 9 over 16 values) as suffix
// maxima of v[0..7] and prefix maxima of v[8..15] (van Herk / Gil-Werman): 22 max operations
// instead of 64. fmaxf drops NaN either way.
template <int R>
__device__ __forceinline__ void window_max8(const float (&v)[8 + 2 * R], float (&out)[8]) {
  if constexpr (R == 4) {
    float suf[8];
    suf[7] = v[7];
#pragma unroll
    for (int k = 6; k >= 0; --k) suf[k] = fmaxf(v[k], suf[k + 1]);
    float pre = v[8];
    out[0] = fmaxf(suf[0], pre);
#pragma unroll
    for (int k = 1; k < 8; ++k) {
      pre = fmaxf(pre, v[8 + k]);
      out[k] = fmaxf(suf[k], pre);
    }
  } else {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      float m = v[k];
#pragma unroll
      for (int u = 1; u <= 2 * R; ++u) m = fmaxf(m, v[k + u]);
      out[k] = m;
    }
  }
}

__host__ __device__ constexpr int nms_smem_floats(int r, bool smem_tile) {
  return (smem_tile ? (Policy::kTileH + 2 * r) * ((Policy::kTileW + 2 * r) | 1) : 0) +
         (Policy::kTileH + 2 * r) * Policy::kRowMaxStride;
}

// The end of the response rows a strip's NMS reads (r rows past its last output row, within the
// image): rows past it hold −inf, since no output row (< y1) reaches them and another strip may be
// writing them still.
__device__ __forceinline__ int nms_rows_end(const NmsArgs& a, int r) {
  return min(a.v.height, a.y1 + r);
}

// load_tile for a compiled radius over 16-byte aligned F32 rows, where the tile's loads lie inside
// the image and the rows (every tile but the image's edge ones; false, nothing done, otherwise):
// a thread's 16-byte loads (kPer: 3 for R = 4) all issued before its first store to shared
// memory, without a test a value. The general loop below does one load and its stores after the
// other with tests (about 70 instructions a 16-byte load, each load waited for).
template <int R>
__device__ __forceinline__ bool load_tile_f32(const NmsArgs& a, int tx0, int ty0, int rows_end,
                                              float* tile) {
  constexpr int kW = Policy::kTileW, kRW = kW + 2 * R, kRWp = kRW | 1, kRH = Policy::kTileH + 2 * R;
  constexpr int kLead = 4 * ((R + 3) / 4);       // columns loaded left of the tile (≥ R)
  constexpr int kN4 = (kW + R + kLead + 3) / 4;  // 16-byte loads a row
  constexpr int kTotal = kRH * kN4;
  constexpr int kPer = (kTotal + Policy::kThreads - 1) / Policy::kThreads;
  constexpr bool kAllCols = kLead == R && 4 * kN4 == kRW;  // every loaded column is a tile column
  const int xa = tx0 - kLead;                              // a multiple of 4: tx0 is one of 64
  const int y_first = ty0 - R;
  const bool inner = xa >= 0 && xa + 4 * kN4 <= a.v.width && y_first >= 0 &&
                     y_first + kRH <= rows_end;  // uniform over the block
  if (!inner) return false;
  float4 q[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * Policy::kThreads;
    if (k + 1 < kPer || i < kTotal) {
      const int ry = i / kN4, c = i - ry * kN4;
      const float* row = reinterpret_cast<const float*>(
          a.v.data + static_cast<std::size_t>(y_first + ry) * a.v.pitch);
      q[k] = __ldg(reinterpret_cast<const float4*>(row + xa) + c);
    }
  }
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * Policy::kThreads;
    if (k + 1 < kPer || i < kTotal) {
      const int ry = i / kN4, c = i - ry * kN4;
      const float e[4] = {q[k].x, q[k].y, q[k].z, q[k].w};
      float* dst = tile + ry * kRWp;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int col = 4 * c + j - (kLead - R);
        if (kAllCols || (col >= 0 && col < kRW)) dst[col] = e[j];
      }
    }
  }
  return true;
}

// Loads the tile and its halo (−inf outside the image and past nms_rows_end) into tile[RH][RWp].
template <class T, int R>
__device__ __forceinline__ void load_tile(const NmsArgs& a, int r_rt, int tx0, int ty0,
                                          float* tile) {
  const int r = R >= 0 ? R : r_rt;
  const int rw = Policy::kTileW + 2 * r, rwp = rw | 1, rh = Policy::kTileH + 2 * r;
  const int rows_end = nms_rows_end(a, r);
  if constexpr (std::is_same_v<T, float> && R >= 0) {
    if (a.vec && load_tile_f32<R>(a, tx0, ty0, rows_end, tile)) return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (a.vec) {
      // 16-byte loads from the 4-aligned column at or left of the halo's first one: every thread
      // has several independent loads in flight (the scalar loop below keeps fewer bytes moving).
      const int x_lo = tx0 - r, xa = x_lo & ~3;  // floor to a multiple of 4 (also below 0)
      const int n4 = (tx0 + Policy::kTileW + r - xa + 3) >> 2;
      const int total = rh * n4;
#pragma unroll 4
      for (int i = threadIdx.x; i < total; i += Policy::kThreads) {
        const int ry = i / n4, c = i - ry * n4;
        const int gy = ty0 - r + ry, gx = xa + 4 * c;
        float4 q = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        if (gy >= 0 && gy < rows_end) {
          const float* row =
              reinterpret_cast<const float*>(a.v.data + static_cast<std::size_t>(gy) * a.v.pitch);
          if (gx >= 0 && gx + 3 < a.v.width) {
            q = __ldg(reinterpret_cast<const float4*>(row + gx));
          } else {
            if (gx >= 0 && gx < a.v.width) q.x = __ldg(row + gx);
            if (gx + 1 >= 0 && gx + 1 < a.v.width) q.y = __ldg(row + gx + 1);
            if (gx + 2 >= 0 && gx + 2 < a.v.width) q.z = __ldg(row + gx + 2);
            if (gx + 3 >= 0 && gx + 3 < a.v.width) q.w = __ldg(row + gx + 3);
          }
        }
        const float e[4] = {q.x, q.y, q.z, q.w};
        float* dst = tile + ry * rwp;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int col = gx + k - x_lo;
          if (col >= 0 && col < rw) dst[col] = e[k];
        }
      }
      return;
    }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int ry = warp; ry < rh; ry += Policy::kThreads / 32) {
    const int gy = ty0 - r + ry;
    const bool row_ok = gy >= 0 && gy < rows_end;
#pragma unroll
    for (int rx = lane; rx < rw; rx += 32) {
      const int gx = tx0 - r + rx;
      tile[ry * rwp + rx] =
          (row_ok && gx >= 0 && gx < a.v.width) ? load_score<T>(a.v, gx, gy) : -INFINITY;
    }
  }
}

// A compiled radius R (the tile in shared memory): loads the tile of tile_index and sets `mask` to
// this thread's survivors, bit j for column tx0 + tid % 64, row ty0 + (tid / 64)·kItems + j.
// Returns false, leaving smem free, when no pixel of the tile is above the threshold (uniform over
// the block: most tiles of a real response), the window maxima skipped. Returns true with the tile
// still in smem (tile_score reads it): the caller's barrier frees smem.
template <class T, int R>
__device__ __forceinline__ bool nms_tile_mask(const NmsArgs& a, int tx0, int ty0, float thresh,
                                              float* smem, u32& mask) {
  static_assert(R >= 0 && Policy::kItems <= 32, "compiled radius, one bit an item");
  constexpr int kW = Policy::kTileW, kS = Policy::kRowMaxStride, kN = Policy::kItems;
  constexpr int rwp = (kW + 2 * R) | 1, rh = Policy::kTileH + 2 * R;
  float* tile = smem;
  float* rowmax = smem + rh * rwp;
  const int tid = static_cast<int>(threadIdx.x);
  const int x = tid % kW, y_first = (tid / kW) * kN;
  load_tile<T, R>(a, R, tx0, ty0, tile);
  __syncthreads();
  // Outside the image or the rows the tile holds −inf (or rows past y1): never above.
  u32 above = 0;
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const bool in = ty0 + y_first + j < a.y1 && tile[(y_first + j + R) * rwp + x + R] > thresh;
    above |= static_cast<u32>(in) << j;
  }
  mask = 0;
  if (!__syncthreads_or(above != 0)) return false;  // the barrier leaves smem free
  // Row maxima: a thread takes 8 columns of one row, lanes on consecutive rows (odd stride: no
  // conflicts), the 8 + 2R values in registers.
  constexpr int kWork = rh * 8;
#pragma unroll
  for (int w0 = 0; w0 < kWork; w0 += Policy::kThreads) {
    const int w = w0 + tid;
    if (w0 + Policy::kThreads <= kWork || w < kWork) {
      const int g = w / rh, ry = w - g * rh;
      const float* src = tile + ry * rwp + 8 * g;
      float v[8 + 2 * R], m[8];
#pragma unroll
      for (int k = 0; k < 8 + 2 * R; ++k) v[k] = src[k];
      window_max8<R>(v, m);
#pragma unroll
      for (int k = 0; k < 8; ++k) rowmax[ry * kS + 8 * g + k] = m[k];
    }
  }
  __syncthreads();
  // The column maxima of the row maxima, for a thread with a pixel above the threshold only (most
  // threads have none).
  if (above) {
#pragma unroll
    for (int g = 0; g < kN; g += 8) {  // window_max8 computes 8 outputs
      if (((above >> g) & 0xffu) == 0) continue;
      float v[8 + 2 * R], wmax[8];
#pragma unroll
      for (int k = 0; k < 8 + 2 * R; ++k) v[k] = rowmax[(y_first + g + k) * kS + x];
      window_max8<R>(v, wmax);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        // fmaxf drops NaN, so NaN neighbours never suppress, as in the twin (NaN > s is false).
        const float sc = tile[(y_first + g + k + R) * rwp + x + R];
        if (((above >> (g + k)) & 1u) && !(wmax[k] > sc)) mask |= 1u << (g + k);
      }
    }
  }
  return true;
}

// Item j's score and key of this thread in a tile that nms_tile_mask left in smem.
template <int R>
__device__ __forceinline__ float tile_score(const float* smem, int j) {
  constexpr int rwp = (Policy::kTileW + 2 * R) | 1;
  const int tid = static_cast<int>(threadIdx.x);
  return smem[((tid / Policy::kTileW) * Policy::kItems + j + R) * rwp + tid % Policy::kTileW + R];
}
__device__ __forceinline__ u32 tile_index_at(u32 width, int tx0, int ty0, int j) {
  const int tid = static_cast<int>(threadIdx.x);
  const u32 gx = static_cast<u32>(tx0 + tid % Policy::kTileW);
  const u32 gy = static_cast<u32>(ty0 + (tid / Policy::kTileW) * Policy::kItems + j);
  return gy * width + gx;
}
__device__ __forceinline__ u32 tile_index_of(const NmsArgs& a, int tx0, int ty0, int j) {
  return tile_index_at(static_cast<u32>(a.v.width), tx0, ty0, j);
}

// A runtime radius (the finish's passes, radii above kMaxFixedRadius): the outputs of this thread,
// column x = tid % 64, rows kItems·(tid / 64) + j; comp[j] is valid where flag[j]. Uses
// nms_smem_floats(r, kSmemTile) floats of `smem`; ends with a barrier (smem free again).
template <class T, bool kSmemTile>
__device__ __forceinline__ void nms_tile(const NmsArgs& a, int tile_index, float thresh,
                                         float* smem, u64 (&comp)[Policy::kItems],
                                         bool (&flag)[Policy::kItems]) {
  constexpr int kW = Policy::kTileW, kS = Policy::kRowMaxStride, kN = Policy::kItems;
  const int tx0 = (tile_index % a.tiles_x) * kW;
  const int ty0 = a.y0 + (tile_index / a.tiles_x) * Policy::kTileH;
  // Every pixel's window, as few registers.
  const int r = a.r;
  const int rwp = (kW + 2 * r) | 1, rh = Policy::kTileH + 2 * r;
  float* tile = smem;
  float* rowmax = smem + (kSmemTile ? rh * rwp : 0);
  const int tid = threadIdx.x;
  // 1. Row maxima: rowmax[ry][c] = max of the 2r+1 values around column c of halo row ry.
  if constexpr (kSmemTile) {
    load_tile<T, -1>(a, r, tx0, ty0, tile);
    __syncthreads();
    for (int w = tid; w < rh * kW; w += Policy::kThreads) {
      const int ry = w / kW, c = w % kW;
      const float* src = tile + ry * rwp + c;
      float m = src[0];
      for (int u = 1; u <= 2 * r; ++u) m = fmaxf(m, src[u]);
      rowmax[ry * kS + c] = m;
    }
  } else {
    // Large radii: straight from global memory (L1), clipped to the image.
    for (int w = tid; w < rh * kW; w += Policy::kThreads) {
      const int ry = w / kW, c = w % kW;
      const int gy = ty0 - r + ry, gx = tx0 + c;
      float m = -INFINITY;
      if (gy >= 0 && gy < nms_rows_end(a, r) && gx < a.v.width) {
        const int lo = max(gx - r, 0), hi = min(gx + r, a.v.width - 1);
        for (int u = lo; u <= hi; ++u) m = fmaxf(m, load_score<T>(a.v, u, gy));
      }
      rowmax[ry * kS + c] = m;
    }
  }
  __syncthreads();
  // 2. Every pixel's window and the test.
  const int x = tid % kW, y_first = (tid / kW) * kN;
  const int gx = tx0 + x;
  float wmax[kN];
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    float m = rowmax[(y_first + j) * kS + x];
    for (int u = 1; u <= 2 * r; ++u) m = fmaxf(m, rowmax[(y_first + j + u) * kS + x]);
    wmax[j] = m;
  }
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    const int gy = ty0 + y_first + j;
    const bool inside = gx < a.v.width && gy < a.y1;
    float s;
    if constexpr (kSmemTile) {
      s = tile[(y_first + j + r) * rwp + x + r];
    } else {
      s = inside ? load_score<T>(a.v, gx, gy) : -INFINITY;
    }
    // fmaxf drops NaN, so NaN neighbours never suppress, as in the twin (NaN > s is false).
    flag[j] = inside && s > thresh && !(wmax[j] > s);
    comp[j] =
        candidate_key(s, static_cast<u32>(gy) * static_cast<u32>(a.v.width) + static_cast<u32>(gx));
  }
  __syncthreads();
}

__device__ __forceinline__ unsigned char* dyn_smem() {
  extern __shared__ __align__(16) unsigned char jp_detect_smem[];
  return jp_detect_smem;
}

// ---- detect_max
// --------------------------------------------------------------------------------------
struct MaxArgs {
  ResponseView v;
  int y0, y1, chunks_x;
};

template <class T>
__global__ void __launch_bounds__(Policy::kThreads) detect_max_kernel(MaxArgs a, Header* h) {
  dev::pdl_wait();  // the kernel before it has finished (launch_pdl)
  using Reduce = cub::BlockReduce<float, Policy::kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const int cx = static_cast<int>(blockIdx.x % static_cast<unsigned>(a.chunks_x));
  const int cy = static_cast<int>(blockIdx.x / static_cast<unsigned>(a.chunks_x));
  const int x0 = cx * Policy::kMaxCols + static_cast<int>(threadIdx.x);
  const int y0 = a.y0 + cy * Policy::kMaxRows;
  constexpr int kCols = Policy::kMaxCols / Policy::kThreads;
  float v[Policy::kMaxRows][kCols];
#pragma unroll
  for (int i = 0; i < Policy::kMaxRows; ++i) {
#pragma unroll
    for (int k = 0; k < kCols; ++k) {
      const int x = x0 + k * Policy::kThreads, y = y0 + i;
      v[i][k] = (y < a.y1 && x < a.v.width) ? load_score<T>(a.v, x, y) : -INFINITY;
    }
  }
  float m = -INFINITY;
#pragma unroll
  for (int i = 0; i < Policy::kMaxRows; ++i) {
#pragma unroll
    for (int k = 0; k < kCols; ++k) m = fmaxf(m, v[i][k]);  // drops NaN, like std::max in the twin
  }
  m = Reduce(temp).Reduce(m, [](float p, float q) { return fmaxf(p, q); });
  if (threadIdx.x == 0 && m > -INFINITY) atomicMax(&h->max_key, order_key(m));
}

// ---- detect_candidates
// ---------------------------------------------------------------------------------
struct CandArgs {
  NmsArgs nms;
  bool use_quality;
  double quality;
  float thresh;
  bool early;  // the candidates kernel triggers its dependents at its start (LaunchContext)
  const u32* bands;  // the feed's band maxima (kernels/max_feed.h), 0 where not written
  int band_pitch;
  u32 tile_stride;  // block b takes tile b · tile_stride mod ntiles (coprime: each tile once)
  u32 k;          // max_detections, for the dense bounds (Header); 0: no bounds, nothing dropped
  int dense_min;  // candidates of a tile that take dense_tile_tail: max(kDenseBlock, k); or never
};

// A tile with at least max(kDenseBlock, max_detections) candidates (CandArgs::dense_min) takes
// dense_tile_tail: a quarter of the tile, far above noise (~1/9 at r = 1), so noise and normal
// frames keep the plain path (decision 041).
constexpr int kDenseBlock = Policy::kTileW * Policy::kTileH / 4;

// The bound so far as a key (~0: none).
__device__ __forceinline__ u64 read_bound(const Header* h) { return ~__ldcg(&h->bound_c); }
// Proposes `last` (the largest of at least max_detections kept candidates) as the frame's bound,
// where it is smaller than the bound so far. One thread.
__device__ __forceinline__ void propose_bound(Header* h, u64 last) {
  if (~last > *static_cast<volatile const u64*>(&h->bound_c)) atomicMax(&h->bound_c, ~last);
}

// Whether the feed says that no pixel of the output rows [ty0, ty1) of the 64 columns at tx0 is
// above thresh: every band (8 rows × 64 columns of the image's grid) they touch was written whole
// by the response's writer this frame, and none of their maxima is above it. At most 5 bands, read
// at once.
__device__ __forceinline__ bool bands_below(const CandArgs& a, int tx0, int ty0, int ty1,
                                            float thresh) {
  const u32* col = a.bands + (tx0 / kFeedBandCols) * a.band_pitch;
  const int b0 = ty0 / kFeedBandRows, b1 = (ty1 - 1) / kFeedBandRows;
  constexpr int kMax = Policy::kTileH / kFeedBandRows + 1;
  u32 key[kMax];
#pragma unroll
  for (int i = 0; i < kMax; ++i) key[i] = b0 + i <= b1 ? __ldcg(col + b0 + i) : 1u;
  bool below = true;
#pragma unroll
  for (int i = 0; i < kMax; ++i) below &= key[i] != 0 && !(from_order_key(key[i]) > thresh);
  return below;
}

// A launch's threshold: float(threshold), or quality · the maximum gathered so far, max_key (the
// frame's, or a lower bound of it where strips' candidates run ahead of the whole response).
template <class Args>
__device__ __forceinline__ float candidates_threshold(const Args& a, u32 max_key) {
  return a.use_quality ? quality_threshold(a.quality, max_key) : a.thresh;
}

using TileScan = cub::BlockScan<int, Policy::kThreads>;
// The tiles kernel's scan storage and block base (R ≥ 0), shared with dense_tile_tail: at file
// scope so the call passes no pointers to them (a 32-register kernel; ptxas allocates them in the
// kernels that use them only).
__shared__ TileScan::TempStorage tile_scan;
__shared__ u64 tile_word;
// What dense_tile_tail needs of the kernel's state, put here by thread 0 before the call: the call
// then passes one register (a 32-register kernel spilled around a call of nine arguments).
struct DenseTile {
  Header* h;
  u64* cand;
  u64 cap;
  u32 k, width;
  int tx0, ty0;
};
__shared__ DenseTile tile_dense;

// The end of a dense tile's block (at least CandArgs::dense_min candidates, the bits of `mask` in
// each thread; a flat frame): its keys above the frame's bound so far are dropped (counted in
// h->dropped), the rest reserved and written; with at least k of them kept, their largest is
// proposed as the bound (Header). Not inlined, and it reuses the kernel's scan storage and block
// base, so the plain path keeps main's registers and shared memory.
template <int R>
__device__ __noinline__ void dense_tile_tail(u32 mask) {
  const float* tile = reinterpret_cast<const float*>(dyn_smem());
  TileScan::TempStorage& scan = tile_scan;
  u64& word = tile_word;
  __syncthreads();  // tile_dense is in; every thread is done with the kernel's scan of the storage
  Header* const h = tile_dense.h;
  u64* const cand = tile_dense.cand;
  const u64 cap = tile_dense.cap;
  const u32 k = tile_dense.k, width = tile_dense.width;
  const int tx0 = tile_dense.tx0, ty0 = tile_dense.ty0;
  const u64 bound = read_bound(h);
  u32 keep = 0;
#pragma unroll
  for (int j = 0; j < Policy::kItems; ++j) {
    if (((mask >> j) & 1u) &&
        candidate_key(tile_score<R>(tile, j), tile_index_at(width, tx0, ty0, j)) <= bound) {
      keep |= 1u << j;
    }
  }
  // Kept keys in the low 16 bits, all in the high (at most 2048 each): one scan.
  int offset = 0, sums = 0;
  TileScan(scan).ExclusiveSum(__popc(keep) | (__popc(mask) << 16), offset, sums);
  const int total = sums & 0xFFFF;
  if (threadIdx.x == 0) {
    word = total ? atomicAdd(&h->count, static_cast<u64>(total)) : 0;
    const int dropped = (sums >> 16) - total;
    if (dropped) atomicAdd(&h->dropped, static_cast<u64>(dropped));
  }
  __syncthreads();
  if (total == 0) return;  // uniform
  u64 at = word + static_cast<u64>(offset & 0xFFFF);
  u64 mine = 0;
#pragma unroll
  for (int j = 0; j < Policy::kItems; ++j) {
    if ((keep >> j) & 1u) {
      const u64 key = candidate_key(tile_score<R>(tile, j), tile_index_at(width, tx0, ty0, j));
      if (at < cap) cand[at] = key;
      mine = max(mine, key);
      ++at;
    }
  }
  if (static_cast<u32>(total) < k) return;  // uniform: no proposal
  __syncthreads();  // every thread has read `word` as its base
  if (threadIdx.x == 0) word = 0;
  __syncthreads();
  if (keep) atomicMax(&word, mine);
  __syncthreads();  // every warp's largest key is in
  if (threadIdx.x == 0) propose_bound(h, word);
}

// Blocks an SM for the compiled radii: 8 (32 registers, a 1080p frame's 1020 tiles in one wave)
// where ptxas fits them without spills (sm_90: radii 0, 1, 4), else 6 (40 registers); 6 where an
// SM holds at most 1536 threads (sm_86, sm_87 (Orin), sm_89, Thor: sm_110, sm_101 before CUDA 13).
#if defined(__CUDA_ARCH__) &&                                                \
    (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890 || \
     __CUDA_ARCH__ == 1010 || __CUDA_ARCH__ == 1100)
constexpr int kCandMaxBlocks = 6;
#else
constexpr int kCandMaxBlocks = 8;
#endif
constexpr int cand_min_blocks(int r) { return r < 0 ? 1 : (r <= 1 || r == 4) ? kCandMaxBlocks : 6; }

template <class T, int R, bool kSmemTile>
__global__ void __launch_bounds__(Policy::kThreads, cand_min_blocks(R))
    detect_candidates_kernel(CandArgs a, Header* h, u64* cand, u64 cap) {
  dev::BlockTrace trace(4);
  if (a.early) dev::pdl_trigger();
  dev::pdl_wait();  // the kernel before it has finished (launch_pdl)
  trace.waited();
  unsigned char* smem = dyn_smem();
  const float thresh = candidates_threshold(a, h->max_key);
  if constexpr (R >= 0) {
    // The survivors as a bit mask a thread, their keys written straight to the buffer at the
    // block's range (one scan, one atomicAdd): no keys held in registers, no gather in smem, so
    // 32 registers (8 blocks an SM: a 1080p frame's 1020 tiles in one wave; H100, 1080p chain
    // 33.2-33.3 µs against 33.6-33.7 with the keys gathered in smem at 40 registers).
    using Scan = TileScan;
    TileScan::TempStorage& scan = tile_scan;
    u64& block_base = tile_word;
    const int tile_index = static_cast<int>(static_cast<unsigned long long>(blockIdx.x) *
                                            a.tile_stride % static_cast<u32>(a.nms.ntiles));
    const int tx0 = (tile_index % a.nms.tiles_x) * Policy::kTileW;
    const int ty0 = a.nms.y0 + (tile_index / a.nms.tiles_x) * Policy::kTileH;
    float* tile = reinterpret_cast<float*>(smem);
    // A tile the feed's bands clear has no candidate: no read of the response (most tiles of a
    // real frame; the uniform decision of every thread).
    if (bands_below(a, tx0, ty0, min(ty0 + Policy::kTileH, a.nms.y1), thresh)) return;
    u32 mask;
    if (!nms_tile_mask<T, R>(a.nms, tx0, ty0, thresh, tile, mask)) return;
    int offset = 0, total = 0;
    Scan(scan).ExclusiveSum(__popc(mask), offset, total);
    if (total == 0) return;  // uniform over the block
    // Uniform: a flat frame (decision 041). Not for R = 0: there ptxas spilled around the call.
    if (R > 0 && total >= a.dense_min) {
      if (threadIdx.x == 0) {
        tile_dense = {h, cand, cap, a.k, static_cast<u32>(a.nms.v.width), tx0, ty0};
      }
      dense_tile_tail<R>(mask);
      return;
    }
    if (threadIdx.x == 0) block_base = atomicAdd(&h->count, static_cast<u64>(total));
    __syncthreads();
    u64 at = block_base + static_cast<u64>(offset);
#pragma unroll
    for (int j = 0; j < Policy::kItems; ++j) {
      if ((mask >> j) & 1u) {
        if (at < cap) {
          cand[at] = candidate_key(tile_score<R>(tile, j), tile_index_of(a.nms, tx0, ty0, j));
        }
        ++at;
      }
    }
  } else {
    u64 comp[Policy::kItems];
    bool flag[Policy::kItems];
    nms_tile<T, kSmemTile>(a.nms, static_cast<int>(blockIdx.x), thresh,
                           reinterpret_cast<float*>(smem), comp, flag);
    Compact compact(*reinterpret_cast<Compact::TempStorage*>(smem));
    const int n = compact.gather(comp, flag);
    if (n > 0) compact.store(cand, compact.reserve(&h->count), cap);
  }
}

}  // namespace
}  // namespace jetpipe
