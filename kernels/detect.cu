// SPDX-License-Identifier: MIT
// GPU twin of detect (kernels/detect.h). Kernels, in launch order:
// - detect_max (quality only): the maximum over the rows, as an ordered float key, one atomicMax
//   per block (kernels/block/max_key.cuh). Not launched where the response's writer gathers it
//   into detect_max_slot() (launch_harris_max; H100, the 1080p default chain as a graph: 46.1 µs
//   against 49.4 with this kernel, jetpipe-bench --area pipeline).
// - detect_candidates: one 64×32 tile per block: the tile and its halo in shared memory, the window
//   maximum separably (rows, then columns), the test; the block's survivors (a bit mask a thread
//   for the compiled radii, compacted in shared memory by BlockCompact for the others) take their
//   places by one block scan and ONE atomicAdd per block reserving their range of the bounded
//   candidate buffer (capacity C). The counter counts every candidate, also those beyond C: N is
//   exact. Where the response's writer fed band maxima (detect_feed), a tile whose bands are all
//   below the threshold returns before reading the response.
//   Or detect_stream (DetectPath; F32, aligned rows, r ≤ 4): warps stream rows through shared
//   memory, survivors gathered per block in shared memory, one atomicAdd per block (below).
// - detect_finish (a cooperative launch): the best K = max_detections in the contract's order;
//   with DetectParams::candidates_ahead (strips' candidates ran with a lower bound of the
//   threshold), only those above the frame's own threshold count: where the buffer holds few
//   enough keys for the finish by ranks, all of them are ranked at once (those below the frame's
//   threshold rank last and are never written); otherwise they are first counted and gathered.
// - K > 4096 only: CUB DeviceRadixSort of the K kept keys, then detect_write.
//
// Why it is exact. A candidate is the 64-bit key (~order(score) << 32) | (y·W + x), order() being
// the order-preserving map of a float to 32 bits (−0 taken as +0, NaN is never a candidate):
// ascending keys are exactly detection_before's order (score descending, then y, then x), and keys
// are distinct. The result is the K smallest keys, sorted. detect_finish keeps one invariant: the
// buffer holds every key ≤ some bound and at least min(N, K) keys, so the K smallest of the buffer
// are the K smallest of all. When N ≤ C the buffer holds every candidate. When N > C (e.g. a
// constant image: every pixel is a candidate), the whole grid re-runs the NMS over the rows in
// passes (grid-wide barriers): one pass for the min and max key, then radix-select passes, each a
// histogram of 1024 bins over the remaining key range (the range narrows by 2^10 per pass, so ≤ 7
// passes; keys are distinct, so a bin of width 1 holds one key), until the keys at or below the
// bound fit in C; then one compaction pass refills the buffer. With at most 8192 keys left (and 32
// a block of the grid) the grid writes each key at its rank, counted against all keys in shared
// memory (no sort). Otherwise block 0 alone: ≤ 1024 keys are block-merge-sorted; with K ≤ 1024,
// up to 8192 keys go to shared memory and a block radix select (the same 1024-bin step) keeps
// ≤ 1024 of them first; with 1024 < K ≤ 4096, ≤ 4096 keys are sorted. Beyond those, a grid-wide
// select over the buffer narrows to 1024 / 4096 keys first; with K > 4096 it narrows to exactly K
// keys, which CUB sorts. Scores are read back from the response at (x, y), so even a −0 keeps its
// bits. The threshold is computed as the twin does: float(quality · double(max)), or
// float(threshold).
//
// What bounds it: C = min(W·H, max(65536, 4K, W·H/8)) keys of 8 bytes; per frame 2 kernels (3 with
// quality, +2 when K > 4096); the finish's grid is co-resident (cooperative launch) and on the
// usual path all its blocks but block 0 exit at once. Beyond C, ≤ 9 extra NMS passes inside the
// finish (min/max, ≤ 7 histograms, compaction): a pathological frame costs about 10 normal ones.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <numeric>
#include <type_traits>

#include "kernels/block/compact.cuh"
#include "kernels/block/launch_config.cuh"
#include "kernels/block/max_key.cuh"
#include "kernels/block/pdl.cuh"
#include "kernels/detect.h"

namespace jetpipe {
namespace {

namespace cg = cooperative_groups;
using u32 = std::uint32_t;
using u64 = unsigned long long;

// ---- Policy (launch shapes)
// ----------------------------------------------------------------------
// TODO(lead): timings per target (H100, Orin) once measured; shapes chosen for sm_87 / sm_90.
struct Policy {
  static constexpr int kThreads = 256;
  static constexpr int kTileW = 64;  // output tile of one block (and one finish chunk)
  static constexpr int kTileH = 32;
  static constexpr int kItems =
      kTileW * kTileH / kThreads;                   // outputs per thread: column x, kItems rows
  static constexpr int kRowMaxStride = kTileW + 1;  // odd: conflict-free columns and rows
  static constexpr int kMaxFixedRadius = 5;         // radii compiled with register windows
  static constexpr int kMaxSmemTileRadius = 16;     // above: row maxima read global memory directly
  static constexpr int kMaxRadius = 64;
  static constexpr int kSortCap = 4096;  // keys block 0 sorts (kThreads × 16) when K > kSmallSort
  static constexpr int kSmallSort = 1024;  // kThreads × 4: the cheaper sort, used when K ≤ 1024 ...
  static constexpr int kBlockKeys = 8192;  // ... after a block radix select over ≤ 8192 keys
  static constexpr int kRankKeys = 32;     // the finish by ranks: at most these keys a block ...
  static constexpr int kRankMax = 8192;    // ... for up to this many keys (all in shared memory)
  static constexpr int kLogBins = 10;      // radix-select digit
  static constexpr int kBins = 1 << kLogBins;
  static constexpr int kMaxRows = 8;  // detect_max: a block reads 8 rows × 1024 columns
  static constexpr int kMaxCols = kThreads * 4;
  static constexpr u64 kMinCapacity = 65536;
};
static_assert(Policy::kTileH == 4 * Policy::kItems && Policy::kItems % 8 == 0,
              "thread = column x, rows kItems·h .. kItems·h + kItems − 1");
static_assert(Policy::kThreads == 4 * Policy::kTileW, "four row groups of a 64-wide tile");

using Compact = BlockCompact<u64, Policy::kThreads, Policy::kItems>;

// ---- Keys
// ------------------------------------------------------------------------------------------
using dev::from_order_key;
using dev::order_key;
// Ascending = the contract's order.
__device__ __forceinline__ u64 candidate_key(float s, u32 index) {
  return (static_cast<u64>(~order_key(s)) << 32) | index;
}
// The twin's threshold for quality: float(q · double(max)); no maximum (no rows, all NaN) = −inf.
__device__ __forceinline__ float quality_threshold(double quality, u32 max_key) {
  const float m = max_key ? from_order_key(max_key) : -INFINITY;
  return static_cast<float>(quality * static_cast<double>(m));
}
// Candidate keys of scores above `thresh` are exactly the keys below this bound (keys ascend as
// scores descend; the low 32 bits, the index, never reach the next score).
__device__ __forceinline__ u64 threshold_limit(float thresh) {
  return thresh != thresh ? 0ull : static_cast<u64>(~order_key(thresh)) << 32;
}

// ---- Workspace
// -------------------------------------------------------------------------------------
struct Header {
  u64 count;         // candidates found by the candidate launches (exact; reset by the finish)
  u32 max_key;       // order_key of the maximum, 0 = none yet (reset by the finish)
  u32 done;          // finish blocks that have read the two above; the last one resets them
  u64 out_count;     // points of this frame, for detect_write
  u64 valid;         // finish scratch from here on (initialized by the finish when it needs it)
  u64 compacted[2];
  u64 lo[2], hi[2];
  u32 hist[3][Policy::kBins];
};

constexpr std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

struct Layout {
  u64 pixels = 0, cap = 0, k = 0, kept_cap = 0;
  bool big = false;  // K > kSortCap: CUB sorts the kept keys
  std::size_t bands = 0, cand = 0, kept = 0, sorted = 0, cub = 0, cub_bytes = 0, total = 0;
  int band_pitch = 0, band_cols = 0;  // MaxFeed's bands (kernels/max_feed.h)
};

// The feed's bands: right after the header (their place depends on the size only, not on p).
struct BandLayout {
  int pitch, cols;
  std::size_t offset, bytes;
};
BandLayout band_layout(int width, int height) {
  BandLayout b;
  b.pitch = ((std::max(height, 1) + kFeedBandRows - 1) / kFeedBandRows + 3) / 4 * 4;
  b.cols = (std::max(width, 1) + kFeedBandCols - 1) / kFeedBandCols;
  b.offset = align_up(sizeof(Header), 256);
  b.bytes = static_cast<std::size_t>(b.pitch) * b.cols * sizeof(std::uint32_t);
  return b;
}

Layout make_layout(const DetectParams& p, int width, int height) {
  Layout l;
  l.pixels = static_cast<u64>(std::max(width, 0)) * static_cast<u64>(std::max(height, 0));
  l.k = static_cast<u64>(std::max(p.max_detections, 0));
  l.big = l.k > static_cast<u64>(Policy::kSortCap);
  l.cap = std::min(l.pixels, std::max({Policy::kMinCapacity, 4 * l.k, l.pixels / 8}));
  l.cap = std::max<u64>(l.cap, 1);
  l.kept_cap = l.big ? l.k : static_cast<u64>(Policy::kSortCap);
  const BandLayout b = band_layout(width, height);
  l.bands = b.offset;
  l.band_pitch = b.pitch;
  l.band_cols = b.cols;
  l.cand = align_up(l.bands + b.bytes, 256);
  l.kept = align_up(l.cand + l.cap * sizeof(u64), 256);
  std::size_t end = l.kept + l.kept_cap * sizeof(u64);
  if (l.big) {
    l.sorted = align_up(end, 256);
    l.cub = align_up(l.sorted + l.k * sizeof(u64), 256);
    cub::DeviceRadixSort::SortKeys(nullptr, l.cub_bytes, static_cast<const u64*>(nullptr),
                                   static_cast<u64*>(nullptr), static_cast<int>(l.k), 0, 64,
                                   static_cast<cudaStream_t>(nullptr));
    end = l.cub + l.cub_bytes;
  }
  l.total = align_up(end, 256);
  return l;
}

// ---- Loads
// -----------------------------------------------------------------------------------------
struct ResponseView {
  const unsigned char* data;
  std::size_t pitch;
  int width, height;
};

template <class T>
__device__ __forceinline__ float load_score(const ResponseView& v, int x, int y) {
  return static_cast<float>(
      __ldg(reinterpret_cast<const T*>(v.data + static_cast<std::size_t>(y) * v.pitch) + x));
}

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
__device__ __forceinline__ u32 tile_index_of(const NmsArgs& a, int tx0, int ty0, int j) {
  const int tid = static_cast<int>(threadIdx.x);
  const u32 gx = static_cast<u32>(tx0 + tid % Policy::kTileW);
  const u32 gy = static_cast<u32>(ty0 + (tid / Policy::kTileW) * Policy::kItems + j);
  return gy * static_cast<u32>(a.v.width) + gx;
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
  bool early;  // the candidates kernel triggers its dependents at its start (dev::pdl_early())
  const u32* bands;  // the feed's band maxima (kernels/max_feed.h), 0 where not written
  int band_pitch;
  u32 tile_stride;  // block b takes tile b · tile_stride mod ntiles (coprime: each tile once)
};

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

// Blocks an SM for the compiled radii: 8 (32 registers, a 1080p frame's 1020 tiles in one wave)
// where ptxas fits them without spills (sm_90: radii 0, 1, 4), else 6 (40 registers); 6 where an
// SM holds at most 1536 threads (sm_86, sm_87 (Orin), sm_89).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
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
    using Scan = cub::BlockScan<int, Policy::kThreads>;
    __shared__ typename Scan::TempStorage scan;
    __shared__ u64 block_base;
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

// ---- detect_candidates, row-streaming (F32, 16-byte aligned rows, radius ≤ 4)
// ------------------------------------------------------------
// A warp owns a strip of 128 columns (lane l: columns X0 + 4l) and slides down rows_per_warp output
// rows: no tile, no barrier per tile. Input rows stream into the warp's ring of kSlots rows in
// shared memory by cp.async, kAhead rows ahead of use: per row 16 bytes a lane, and the 4 columns
// on either side of the strip (lanes 0 and 31). Columns outside the image are never copied: their
// places hold −inf from the start. Per input row a lane reads its 4 columns and its neighbours'
// from the ring, stores the row maxima of the window in the warp's ring of the last 2R + 1 rows'
// maxima (shared memory, the lane's own column only), and keeps a 4-bit mask of its pixels above
// the threshold that are also the maximum of their row's window (a necessary condition) in a
// shift register. R rows later, a lane with a masked pixel takes the column maxima over that ring:
// few lanes of a real response have one. A masked pixel's score is its row maximum, so the input
// ring need not keep the row. Survivors go to the warp's part of the block's shared buffer; when
// the block is done, ONE global atomic reserves the range of all its warps (a warp whose part would
// overflow first flushes it with one atomic of its own: dense responses only).
//
// The loop is not unrolled and the rare copies (edge strips, rows outside the image) are a call:
// the code a warp runs per row stays small. The first version kept the row maxima in registers,
// which needs the loop unrolled over the ring's 2R + 1 rows (56 KB of code for R = 4): ncu showed
// a third of its stalls on instruction fetch (9.9 cycles per issued instruction, 281 M
// instructions at 16384², 596 µs).
struct StreamPolicy {
  static constexpr int kThreads = 128;  // 4 warps: 4 strips side by side on the same rows
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kOut = 128;   // output columns per warp
  static constexpr int kRowF4 = 34;  // a ring row: left halo, 32 lanes, right halo (16 bytes each)
  static constexpr int kWarpCap = 128;  // keys per warp's part of the shared buffer (1 KiB)
  // Rows in flight ahead of the one read; the ring also keeps the row read one step earlier, which
  // a lane's neighbours may still be reading while it issues the next copy.
  static constexpr int kAhead = 3, kSlots = kAhead + 2;
  // Resident blocks per SM: shared memory allows 6 for R = 4 (33 KiB a block).
  static constexpr int min_blocks(int r) { return r >= 3 ? 6 : 8; }
};

struct StreamArgs {
  ResponseView v;
  int y0, y1, rows_per_warp, strips;  // strips of kOut columns per row band
  bool use_quality;
  double quality;
  float thresh;
};

template <int R>
struct StreamShared {
  float4 rows[StreamPolicy::kWarps][StreamPolicy::kSlots][StreamPolicy::kRowF4];
  float4 hmax[StreamPolicy::kWarps][2 * R + 1][32];  // row maxima of the last 2R + 1 input rows
  u64 keys[StreamPolicy::kWarps][StreamPolicy::kWarpCap];
  int count[StreamPolicy::kWarps];
  u64 base;
};

// Row maxima over the window of radius R of a lane's 4 columns (e[4..7] of 12: the left
// neighbour's 4, its own, the right neighbour's 4). For R ≥ 2 the four windows share
// e[7 − R .. 4 + R]: one maximum of it, suffix maxima on the left and prefix maxima on the right
// (2R + 7 operations instead of 8R). fmaxf drops NaN.
template <int R>
__device__ __forceinline__ float4 stream_row_max(const float4 l, const float4 q, const float4 r) {
  const float e[12] = {l.x, l.y, l.z, l.w, q.x, q.y, q.z, q.w, r.x, r.y, r.z, r.w};
  float o[4];
  if constexpr (R < 2) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float m = e[4 + j - R];
#pragma unroll
      for (int u = 1; u <= 2 * R; ++u) m = fmaxf(m, e[4 + j - R + u]);
      o[j] = m;
    }
  } else {
    float m = e[7 - R];
#pragma unroll
    for (int u = 8 - R; u <= 4 + R; ++u) m = fmaxf(m, e[u]);
    const float s2 = e[6 - R], s1 = fmaxf(e[5 - R], s2), s0 = fmaxf(e[4 - R], s1);
    const float p1 = e[5 + R], p2 = fmaxf(p1, e[6 + R]), p3 = fmaxf(p2, e[7 + R]);
    o[0] = fmaxf(s0, m);
    o[1] = fmaxf(fmaxf(s1, p1), m);
    o[2] = fmaxf(fmaxf(s2, p2), m);
    o[3] = fmaxf(p3, m);
  }
  return make_float4(o[0], o[1], o[2], o[3]);
}

__device__ __forceinline__ float max4(const float4 v) {
  return fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
}

// cp.async of 16 bytes (a group of 4 columns inside the image) or of 4 (one column).
__device__ __forceinline__ void stream_copy16(float4* dst, const void* src) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
}
__device__ __forceinline__ void stream_copy4(float* dst, const void* src) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(src) : "memory");
}
__device__ __forceinline__ void stream_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void stream_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Copies the columns [x, x + 4) ∩ [0, width) of a row to dst (16 bytes when all are inside).
__device__ __forceinline__ void stream_copy_group(float4* dst, const float* row, int x, int width) {
  if (x >= 0 && x + 4 <= width) {
    stream_copy16(dst, row + x);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (x + j >= 0 && x + j < width) stream_copy4(reinterpret_cast<float*>(dst) + j, row + x + j);
    }
  }
}

// Image row y into the ring row dst where the plain 16-byte copies do not apply: a strip at the
// image's left or right edge (columns outside are skipped), or a row outside the image (−inf
// stored). Not inlined: rare, and the loop's code stays small. gx, hx: the lane's and the halo's
// first column; hslot: the halo's place in the ring row.
__device__ __noinline__ void stream_issue_edge(float4* dst, const unsigned char* data,
                                               std::size_t pitch, int width, int height, int y,
                                               int gx, int hx, int hslot) {
  const int lane = threadIdx.x & 31;
  const bool halo = lane == 0 || lane == 31;
  if (y >= 0 && y < height) {
    const float* row = reinterpret_cast<const float*>(data + static_cast<std::size_t>(y) * pitch);
    stream_copy_group(dst + lane + 1, row, gx, width);
    if (halo) stream_copy_group(dst + hslot, row, hx, width);
  } else {
    const float4 ninf = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    dst[lane + 1] = ninf;
    if (halo) dst[hslot] = ninf;
  }
}

// Bit j: q_j above the threshold and the maximum of its row's window (h_j ≥ q_j always).
__device__ __forceinline__ unsigned peak_mask(const float4 q, const float4 h, float t) {
  return (q.x > t && !(h.x > q.x) ? 1u : 0u) | (q.y > t && !(h.y > q.y) ? 2u : 0u) |
         (q.z > t && !(h.z > q.z) ? 4u : 0u) | (q.w > t && !(h.w > q.w) ? 8u : 0u);
}

// keys[0, count) to cand[base, …), those below the capacity, by the lanes of one warp.
__device__ __forceinline__ void warp_store_keys(const u64* keys, int count, u64* cand, u64 base,
                                                u64 cap, int lane) {
  for (int i = lane; i < count; i += 32) {
    if (base + i < cap) cand[base + i] = keys[i];
  }
}

// The warp's survivors of one row (bits of `surv` in each lane, scores c, columns gx + j) into its
// part of the shared buffer, which holds `count` keys; the part is flushed first (one global
// atomic) if they would not fit. Returns the new count. Not inlined: rare next to the rows without
// one.
__device__ __noinline__ int stream_append(unsigned surv, float4 c, u32 index, int count, u64* buf,
                                          Header* h, u64* cand, u64 cap) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const int n = __popc(surv);
  int incl = n;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int t = __shfl_up_sync(kAll, incl, o);
    if (lane >= o) incl += t;
  }
  const int total = __shfl_sync(kAll, incl, 31);
  if (count + total > StreamPolicy::kWarpCap) {
    __syncwarp();
    u64 base = 0;
    if (lane == 0) base = atomicAdd(&h->count, static_cast<u64>(count));
    warp_store_keys(buf, count, cand, __shfl_sync(kAll, base, 0), cap, lane);
    __syncwarp();
    count = 0;
  }
  int pos = count + incl - n;
  const float sc[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (surv & (1u << j)) buf[pos++] = candidate_key(sc[j], index + j);
  }
  return count + total;
}

template <int R>
__global__ void __launch_bounds__(StreamPolicy::kThreads, StreamPolicy::min_blocks(R))
    detect_stream_kernel(StreamArgs a, Header* h, u64* cand, u64 cap) {
  dev::pdl_wait();  // the kernel before it has finished (launch_pdl)
  using P = StreamPolicy;
  constexpr int kRing = 2 * R + 1;
  constexpr unsigned kAll = 0xffffffffu;
  static_assert(P::kWarpCap >= 32 * 4, "a row's survivors (4 a lane) fit an empty part");
  static_assert(R >= 0 && R <= kDetectRowsMaxRadius,
                "the window: a lane's and its neighbours' columns");
  __shared__ StreamShared<R> sh;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int strip = static_cast<int>(blockIdx.x) * P::kWarps + warp;
  const bool active = strip < a.strips;  // inactive warps still meet the block's barriers
  const int X0 = strip * P::kOut;
  const int gx = X0 + 4 * lane;
  const float thresh = candidates_threshold(a, h->max_key);
  const int ys = a.y0 + static_cast<int>(blockIdx.y) * a.rows_per_warp;
  const int ye = min(ys + a.rows_per_warp, a.y1);
  int count = 0;  // keys in this warp's part (uniform over the warp)
  u64* buf = sh.keys[warp];
  float4(&rows)[P::kSlots][P::kRowF4] = sh.rows[warp];
  float4(&hmax)[kRing][32] = sh.hmax[warp];

  if (active && ys < ye) {
    // −inf where no copy ever lands: columns outside the image (never above any threshold, so
    // they are never tested either).
    const float4 ninf = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    for (int k = lane; k < P::kSlots * P::kRowF4; k += 32)
      rows[k / P::kRowF4][k % P::kRowF4] = ninf;
    __syncwarp();
    // Input row i is image row y_in + i; output rows are input rows [R, n_in − R).
    const int y_in = ys - R;
    const int n_in = ye - ys + 2 * R;
    const bool edge = X0 - 4 < 0 || X0 + P::kOut + 4 > a.v.width;  // uniform over the warp
    const int hx = lane == 0 ? X0 - 4 : X0 + P::kOut;              // halo group (lanes 0, 31)
    const int hslot = lane == 0 ? 0 : P::kRowF4 - 1;
    const bool halo = lane == 0 || lane == 31;
    // Input rows [plain_lo, plain_hi) take the plain 16-byte copies (inside the image, a strip
    // not at an edge).
    const int plain_lo = edge ? n_in : max(0, -y_in);
    const int plain_hi = edge ? 0 : min(n_in, a.v.height - y_in);
    auto issue = [&](int i, int slot) {
      float4* dst = rows[slot];
      if (i >= plain_lo && i < plain_hi) {
        const float* row = reinterpret_cast<const float*>(
            a.v.data + static_cast<std::size_t>(y_in + i) * a.v.pitch);
        stream_copy16(dst + lane + 1, row + gx);
        if (halo) stream_copy16(dst + hslot, row + hx);
      } else if (i < n_in) {
        stream_issue_edge(dst, a.v.data, a.v.pitch, a.v.width, a.v.height, y_in + i, gx, hx, hslot);
      }
      stream_commit();  // one group per row, empty ones too: wait_group counts rows
    };

#pragma unroll
    for (int i = 0; i < P::kAhead; ++i) issue(i, i);
    unsigned mask = 0;                           // 4 bits per input row, the newest lowest
    int slot = 0, ahead = P::kAhead, mslot = 0;  // slots of rows i and i + kAhead; of row i in hmax
#pragma unroll 1
    for (int i = 0; i < n_in; ++i) {
      issue(i + P::kAhead, ahead);
      stream_wait<P::kAhead>();  // this lane's copies of row i have landed ...
      __syncwarp();              // ... and its neighbours' (their columns are read here)
      const float4* src = rows[slot];
      const float4 q = src[lane + 1];
      const float4 hm = stream_row_max<R>(src[lane], q, src[lane + 2]);
      hmax[mslot][lane] = hm;  // read back by this lane only
      unsigned bits = 0;
      if (i >= R && i < n_in - R && max4(q) > thresh) bits = peak_mask(q, hm, thresh);
      mask = (mask << 4) | bits;
      const unsigned test = (mask >> (4 * R)) & 0xFu;  // output row i − R, image row ys + i − 2R
      if (__any_sync(kAll, test)) {
        unsigned surv = 0;
        float4 c = make_float4(0.f, 0.f, 0.f, 0.f);
        if (test) {
          // Where a bit is set the score equals its row maximum (peak_mask), so c is the score.
          c = hmax[mslot >= R ? mslot - R : mslot + kRing - R][lane];
          float4 w = hmax[0][lane];
#pragma unroll
          for (int k = 1; k < kRing; ++k) {
            const float4 v = hmax[k][lane];
            w = make_float4(fmaxf(w.x, v.x), fmaxf(w.y, v.y), fmaxf(w.z, v.z), fmaxf(w.w, v.w));
          }
          // fmaxf drops NaN, so NaN neighbours never suppress, as in the twin.
          surv = test & ((w.x > c.x ? 0u : 1u) | (w.y > c.y ? 0u : 2u) | (w.z > c.z ? 0u : 4u) |
                         (w.w > c.w ? 0u : 8u));
        }
        if (__any_sync(kAll, surv)) {
          const u32 index =
              static_cast<u32>(ys + i - 2 * R) * static_cast<u32>(a.v.width) + static_cast<u32>(gx);
          count = stream_append(surv, c, index, count, buf, h, cand, cap);
        }
      }
      slot = slot + 1 == P::kSlots ? 0 : slot + 1;
      ahead = ahead + 1 == P::kSlots ? 0 : ahead + 1;
      mslot = mslot + 1 == kRing ? 0 : mslot + 1;
    }
    stream_wait<0>();
  }

  // The block's survivors: one global atomic for all its warps.
  if (lane == 0) sh.count[warp] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
#pragma unroll
    for (int w = 0; w < P::kWarps; ++w) total += sh.count[w];
    sh.base = total ? atomicAdd(&h->count, static_cast<u64>(total)) : 0;
  }
  __syncthreads();
  u64 base = sh.base;
  for (int w = 0; w < warp; ++w) base += sh.count[w];
  warp_store_keys(buf, count, cand, base, cap, lane);
}

// ---- detect_finish
// -------------------------------------------------------------------------------------
struct FinishArgs {
  CandArgs c;
  bool ahead;  // DetectParams::candidates_ahead
  Header* h;
  u64* cand;
  u64 cap;
  u64* kept;
  u64 k;
  bool big;
  DetectDeviceResult* out;
  Detection* points;
  u32* bands;  // the feed's bands, zeroed for the next frame
  u32 band_words;
};

using ReduceU64 = cub::BlockReduce<u64, Policy::kThreads>;
using ScanU64 = cub::BlockScan<u64, Policy::kThreads>;
using ScanInt = cub::BlockScan<int, Policy::kThreads>;
constexpr int kSmallPer = Policy::kSmallSort / Policy::kThreads;
constexpr int kLargePer = Policy::kSortCap / Policy::kThreads;
using SortSmall = cub::BlockMergeSort<u64, Policy::kThreads, kSmallPer>;
using SortLarge = cub::BlockMergeSort<u64, Policy::kThreads, kLargePer>;

struct FinishShared {
  u32 hist[Policy::kBins];
  union {
    ReduceU64::TempStorage reduce;
    ScanU64::TempStorage scan;
    ScanInt::TempStorage scan_int;
  } t;
  u64 sel_below, sel_in, sel_lo, sel_hi;
  int sel_bin;
};
constexpr std::size_t kFinishFixed = align_up(sizeof(FinishShared), 16);

constexpr std::size_t finish_work_bytes(int r, bool smem_tile) {
  return std::max({static_cast<std::size_t>(nms_smem_floats(r, smem_tile)) * sizeof(float),
                   sizeof(Compact::TempStorage), sizeof(SortSmall::TempStorage),
                   sizeof(SortLarge::TempStorage),
                   (Policy::kBlockKeys + Policy::kSmallSort) * sizeof(u64)});
}

static_assert(Policy::kRankMax * sizeof(u64) <=
                  (Policy::kBlockKeys + Policy::kSmallSort) * sizeof(u64),
              "the finish by ranks fits the work area");

// The candidates of rows [y0, y1), recomputed, in chunks of one tile.
template <class T, bool kSmemTile>
struct ImageSource {
  NmsArgs a;
  float thresh;
  float* smem;
  template <class F>
  __device__ __forceinline__ void for_each_chunk(F&& f) const {
    for (int t = static_cast<int>(blockIdx.x); t < a.ntiles; t += static_cast<int>(gridDim.x)) {
      u64 comp[Policy::kItems];
      bool flag[Policy::kItems];
      nms_tile<T, kSmemTile>(a, t, thresh, smem, comp, flag);
      f(comp, flag);
    }
  }
};

// keys[0, n) of a buffer below `limit`, in chunks of kThreads × kItems.
struct BufferSource {
  const u64* keys;
  u64 n;
  u64 limit = ~0ull;  // every real key is below ~0 (its score part is never all ones)
  template <class F>
  __device__ __forceinline__ void for_each_chunk(F&& f) const {
    constexpr u64 kChunk = Policy::kThreads * Policy::kItems;
    for (u64 base = blockIdx.x * kChunk; base < n; base += gridDim.x * kChunk) {
      u64 comp[Policy::kItems];
      bool flag[Policy::kItems];
#pragma unroll
      for (int j = 0; j < Policy::kItems; ++j) {
        const u64 i = base + threadIdx.x + static_cast<u64>(j) * Policy::kThreads;
        comp[j] = i < n ? __ldcg(keys + i) : 0;  // written in this kernel: L2
        flag[j] = i < n && comp[j] < limit;
      }
      f(comp, flag);
    }
  }
};

struct Grid {
  cg::grid_group g;
  __device__ void sync() { g.sync(); }
};

// One radix-select step, shared by the grid and the block versions. The keys in [lo, hi] were
// counted in kBins bins of 2^shift keys; this thread holds bins 4·tid .. 4·tid + 3 in v. Narrows
// [lo, hi] to the bin holding the need-th key (`below` keys precede lo); done when the keys up to
// the new hi number at most cap, or the bins were single keys. Uniform over the block.
struct Narrowed {
  bool done;
  u64 lo, hi, below;
};
constexpr int kBinsPerThread = Policy::kBins / Policy::kThreads;

__device__ Narrowed narrow(const u64 (&v)[kBinsPerThread], u64 lo, u64 hi, u64 below, int shift,
                           u64 need, u64 cap, FinishShared& fs) {
  const int tid = static_cast<int>(threadIdx.x);
  u64 mine = 0;
#pragma unroll
  for (int k = 0; k < kBinsPerThread; ++k) mine += v[k];
  u64 before = 0, total = 0;
  ScanU64(fs.t.scan).ExclusiveSum(mine, before, total);
  if (tid == 0) fs.sel_bin = -1;  // stays -1 only if the invariant were broken
  __syncthreads();
  u64 acc = below + before;
  if (acc < need && need <= acc + mine) {  // exactly one thread
#pragma unroll
    for (int k = 0; k < kBinsPerThread; ++k) {
      if (acc < need && need <= acc + v[k]) {
        fs.sel_bin = tid * kBinsPerThread + k;
        fs.sel_below = acc;
        fs.sel_in = v[k];
      }
      acc += v[k];
    }
  }
  __syncthreads();
  Narrowed r{true, lo, hi, below};
  const int bin = fs.sel_bin;
  if (bin >= 0) {  // always, with distinct keys
    const u64 lo2 = lo + (static_cast<u64>(bin) << shift);
    const u64 mask = shift ? (1ull << shift) - 1 : 0;
    r.lo = lo2;
    r.hi = (hi - lo2 <= mask) ? hi : lo2 + mask;
    r.below = fs.sel_below;
    r.done = r.below + fs.sel_in <= cap || shift == 0;
  }
  __syncthreads();  // fs is reused next
  return r;
}

// The digit of a pass over [lo, hi]: at most kBins bins.
__device__ __forceinline__ int bin_shift(u64 lo, u64 hi) {
  const u64 width = hi - lo;
  const int bits = width ? 64 - __clzll(static_cast<long long>(width)) : 0;
  return bits > Policy::kLogBins ? bits - Policy::kLogBins : 0;
}

// Radix select over the keys of `src` (distinct, more than `cap` of them, cap ≥ need ≥ 1): returns
// a bound b with need ≤ |{key ≤ b}| ≤ cap. The whole grid calls it (grid-wide barriers inside).
template <class Src>
__device__ u64 select_bound(const Src& src, u64 need, u64 cap, Header* h, int slot, int& pass,
                            FinishShared& fs, Grid& grid) {
  const int tid = static_cast<int>(threadIdx.x);
  // Pass 0: the key range.
  u64 mn = ~0ull, mx = 0;
  src.for_each_chunk([&](const u64(&c)[Policy::kItems], const bool(&f)[Policy::kItems]) {
#pragma unroll
    for (int j = 0; j < Policy::kItems; ++j) {
      if (f[j]) {
        mn = min(mn, c[j]);
        mx = max(mx, c[j]);
      }
    }
  });
  mn = ReduceU64(fs.t.reduce).Reduce(mn, [](u64 p, u64 q) { return min(p, q); });
  __syncthreads();
  mx = ReduceU64(fs.t.reduce).Reduce(mx, [](u64 p, u64 q) { return max(p, q); });
  if (tid == 0 && mn <= mx) {
    atomicMin(&h->lo[slot], mn);
    atomicMax(&h->hi[slot], mx);
  }
  grid.sync();
  Narrowed r{false, __ldcg(&h->lo[slot]), __ldcg(&h->hi[slot]), 0};
  while (!r.done) {
    u32* hist = h->hist[pass % 3];
    u32* next = h->hist[(pass + 1) % 3];  // last read two grid barriers ago
    ++pass;
    const u64 lo = r.lo, hi = r.hi;
    const int shift = bin_shift(lo, hi);
    for (int b = tid; b < Policy::kBins; b += Policy::kThreads) fs.hist[b] = 0;
    __syncthreads();
    src.for_each_chunk([&](const u64(&c)[Policy::kItems], const bool(&f)[Policy::kItems]) {
#pragma unroll
      for (int j = 0; j < Policy::kItems; ++j) {
        if (f[j] && c[j] >= lo && c[j] <= hi) {
          atomicAdd(&fs.hist[static_cast<int>((c[j] - lo) >> shift)], 1u);
        }
      }
    });
    __syncthreads();
    for (int b = tid; b < Policy::kBins; b += Policy::kThreads) {
      if (fs.hist[b]) atomicAdd(&hist[b], fs.hist[b]);
      if (blockIdx.x == 0) next[b] = 0;
    }
    grid.sync();
    u64 v[kBinsPerThread];
#pragma unroll
    for (int k = 0; k < kBinsPerThread; ++k) v[k] = __ldcg(&hist[tid * kBinsPerThread + k]);
    r = narrow(v, lo, hi, r.below, shift, need, cap, fs);
  }
  return r.hi;
}

// How many keys `src` holds; the whole grid calls it (one grid-wide barrier), *counter zeroed.
template <class Src>
__device__ u64 grid_count(const Src& src, u64* counter, FinishShared& fs, Grid& grid) {
  u64 mine = 0;
  src.for_each_chunk([&](const u64(&)[Policy::kItems], const bool(&f)[Policy::kItems]) {
#pragma unroll
    for (int j = 0; j < Policy::kItems; ++j) mine += f[j] ? 1 : 0;
  });
  mine = ReduceU64(fs.t.reduce).Sum(mine);
  if (threadIdx.x == 0 && mine) atomicAdd(counter, mine);
  __syncthreads();  // fs is reused next
  grid.sync();
  return __ldcg(counter);
}

// The same within one block, over keys in shared memory.
__device__ u64 block_select_bound(const u64* keys, int n, u64 need, u64 cap, FinishShared& fs) {
  const int tid = static_cast<int>(threadIdx.x);
  u64 mn = ~0ull, mx = 0;
  for (int i = tid; i < n; i += Policy::kThreads) {
    mn = min(mn, keys[i]);
    mx = max(mx, keys[i]);
  }
  mn = ReduceU64(fs.t.reduce).Reduce(mn, [](u64 p, u64 q) { return min(p, q); });
  __syncthreads();
  mx = ReduceU64(fs.t.reduce).Reduce(mx, [](u64 p, u64 q) { return max(p, q); });
  if (tid == 0) {
    fs.sel_lo = mn;
    fs.sel_hi = mx;
  }
  __syncthreads();
  Narrowed r{false, fs.sel_lo, fs.sel_hi, 0};
  while (!r.done) {
    const u64 lo = r.lo, hi = r.hi;
    const int shift = bin_shift(lo, hi);
    for (int b = tid; b < Policy::kBins; b += Policy::kThreads) fs.hist[b] = 0;
    __syncthreads();
    for (int i = tid; i < n; i += Policy::kThreads) {
      const u64 c = keys[i];
      if (c >= lo && c <= hi) atomicAdd(&fs.hist[static_cast<int>((c - lo) >> shift)], 1u);
    }
    __syncthreads();
    u64 v[kBinsPerThread];
#pragma unroll
    for (int k = 0; k < kBinsPerThread; ++k) v[k] = fs.hist[tid * kBinsPerThread + k];
    r = narrow(v, lo, hi, r.below, shift, need, cap, fs);
  }
  return r.hi;
}

// Appends the keys ≤ bound of `src` to out[0, cap) through *counter (one atomic per block and
// chunk).
template <class Src>
__device__ void compact_to(const Src& src, u64 bound, u64* out, u64 cap, u64* counter,
                           unsigned char* work) {
  src.for_each_chunk([&](const u64(&c)[Policy::kItems], const bool(&f)[Policy::kItems]) {
    bool keep[Policy::kItems];
#pragma unroll
    for (int j = 0; j < Policy::kItems; ++j) keep[j] = f[j] && c[j] <= bound;
    Compact compact(*reinterpret_cast<Compact::TempStorage*>(work));
    const int n = compact.gather(c, keep);
    if (n > 0) compact.store(out, compact.reserve(counter), cap);
    __syncthreads();
  });
}

template <class T>
__device__ __forceinline__ Detection decode(u64 key, const ResponseView& v) {
  const u32 index = static_cast<u32>(key);
  const u32 y = index / static_cast<u32>(v.width);
  Detection d;
  d.y = static_cast<int>(y);
  d.x = static_cast<int>(index - y * static_cast<u32>(v.width));
  // The score from the key (exact: the key holds its float's bits, −0 taken as +0); a zero is
  // read back from the response, whose own bits it keeps (a −0 stays −0). One L2 round trip fewer.
  d.score = from_order_key(~static_cast<u32>(key >> 32));
  if (d.score == 0.0f) d.score = load_score<T>(v, d.x, d.y);
  return d;
}

// Sorts n ≤ kThreads·kPer keys, loaded by load(i), and writes the first `count` points. The sort's
// storage aliases `work`, free once the keys are in registers.
template <class T, int kPer, class Load>
__device__ __forceinline__ void sort_and_write(Load load, int n, u64 count, const ResponseView& v,
                                               Detection* points, unsigned char* work) {
  using Sort = cub::BlockMergeSort<u64, Policy::kThreads, kPer>;
  u64 keys[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = static_cast<int>(threadIdx.x) + j * Policy::kThreads;
    keys[j] = i < n ? load(i) : ~0ull;  // above every real key
  }
  __syncthreads();
  Sort(*reinterpret_cast<typename Sort::TempStorage*>(work)).Sort(keys, [](u64 p, u64 q) {
    return p < q;
  });
#pragma unroll
  for (int j = 0; j < kPer; ++j) {  // blocked: thread t holds ranks t·kPer + j
    const u64 rank = static_cast<u64>(threadIdx.x) * kPer + j;
    if (rank < count) points[rank] = decode<T>(keys[j], v);
  }
}

// Block 0's finish: the best `count` of keys src[0, n) in order. n ≤ kBlockKeys when
// K ≤ kSmallSort (the keys go to shared memory, a block radix select keeps ≤ kSmallSort of them),
// else n ≤ kSortCap.
template <class T>
__device__ void block_finish(const u64* src, int n, u64 k, u64 count, const ResponseView& v,
                             Detection* points, FinishShared& fs, unsigned char* work) {
  auto global = [src](int i) { return __ldcg(src + i); };
  if (n <= Policy::kSmallSort) {
    sort_and_write<T, kSmallPer>(global, n, count, v, points, work);
    return;
  }
  if (k > static_cast<u64>(Policy::kSmallSort)) {
    sort_and_write<T, kLargePer>(global, n, count, v, points, work);
    return;
  }
  u64* keys = reinterpret_cast<u64*>(work);  // kBlockKeys
  u64* kept = keys + Policy::kBlockKeys;     // kSmallSort
  constexpr int kUnroll = 8;
  for (int i0 = 0; i0 < n; i0 += Policy::kThreads * kUnroll) {
    u64 c[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = i0 + u * Policy::kThreads + static_cast<int>(threadIdx.x);
      c[u] = i < n ? __ldcg(src + i) : 0;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = i0 + u * Policy::kThreads + static_cast<int>(threadIdx.x);
      if (i < n) keys[i] = c[u];
    }
  }
  __syncthreads();
  const u64 bound = block_select_bound(keys, n, k, Policy::kSmallSort, fs);
  int mine = 0;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += Policy::kThreads) {
    mine += keys[i] <= bound ? 1 : 0;
  }
  int offset = 0, total = 0;
  ScanInt(fs.t.scan_int).ExclusiveSum(mine, offset, total);
  for (int i = static_cast<int>(threadIdx.x); i < n; i += Policy::kThreads) {
    if (keys[i] <= bound && offset < Policy::kSmallSort) kept[offset++] = keys[i];
  }
  __syncthreads();
  sort_and_write<T, kSmallPer>([kept](int i) { return kept[i]; }, min(total, Policy::kSmallSort),
                               count, v, points, work);
}

// The finish's first keys of the candidate buffer, thread t: keys t + kThreads·u (loaded while
// the header is read).
constexpr int kPrefetch = 4;
struct Prefetched {
  u64 k[kPrefetch];
};

// The grid's finish when the keys are few (n ≤ kRankKeys·gridDim.x and ≤ kRankMax): each block
// takes kpb keys (8, 16 or 32: the fewest with which the grid holds all n), a warp a key, whose
// lanes count the keys below it over all n keys (in shared memory; `pre`, if given, holds src's
// first keys already loaded); a key's count is its place in the order (the keys are distinct), so
// the first `count` places are written, each once, without a sort. About kpb·n/kThreads
// comparisons a thread (8 keys a block: n/32): cheaper than block 0's select and merge sort, which
// leave the rest of the grid idle.
// Only the keys below `limit` count (candidates run ahead of the frame's maximum, kept with a lower
// threshold, are at or above it; ~0 keeps every key): they are the smallest keys, so their ranks
// among all n are their places among themselves, and the keys at or above the limit rank after
// them and are never written. Each block counts them in its copy of the keys; returns that count
// (the same in every block that has keys to rank, which block 0 always has; 0 in the others).
template <class T>
__device__ __forceinline__ u64 rank_write(const u64* src, int n, u64 limit, u64 k,
                                          const ResponseView& v, Detection* points,
                                          unsigned char* work, const Prefetched* pre = nullptr) {
  const int grid = static_cast<int>(gridDim.x);
  const int kpb = n <= 8 * grid ? 8 : n <= 16 * grid ? 16 : Policy::kRankKeys;  // uniform
  const int first = static_cast<int>(blockIdx.x) * kpb;
  if (first >= n) return 0;                                        // uniform over the block
  u64* keys = reinterpret_cast<u64*>(work);                        // kRankMax
  __shared__ int warp_valid[Policy::kThreads / 32];
  int mine_valid = 0;
  int i0 = static_cast<int>(threadIdx.x);
  if (pre != nullptr) {  // src's first keys, already loaded
#pragma unroll
    for (int u = 0; u < kPrefetch; ++u, i0 += Policy::kThreads) {
      if (i0 < n) {
        keys[i0] = pre->k[u];
        mine_valid += pre->k[u] < limit ? 1 : 0;
      }
    }
  }
#pragma unroll 4
  for (int i = i0; i < n; i += Policy::kThreads) {
    const u64 key = __ldcg(src + i);
    keys[i] = key;
    mine_valid += key < limit ? 1 : 0;
  }
  mine_valid = __reduce_add_sync(0xffffffffu, mine_valid);
  if (threadIdx.x % 32 == 0) warp_valid[threadIdx.x / 32] = mine_valid;
  __syncthreads();
  int valid = 0;
#pragma unroll
  for (int w = 0; w < Policy::kThreads / 32; ++w) valid += warp_valid[w];
  const u64 count = min(static_cast<u64>(valid), k);
  // A warp per key (kpb / 8 keys a warp): its lanes count the keys below it over all n (32
  // consecutive keys a step: no bank conflicts), one warp reduction gives its rank.
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  for (int s = warp; s < kpb; s += Policy::kThreads / 32) {
    const int i = first + s;
    if (i >= n) break;  // uniform over the warp
    const u64 mine = keys[i];
    int below = 0;
#pragma unroll 4
    for (int j = lane; j < n; j += 32) below += keys[j] < mine ? 1 : 0;
    const int rank = __reduce_add_sync(0xffffffffu, below);
    if (lane == 0 && static_cast<u64>(rank) < count) points[rank] = decode<T>(mine, v);
  }
  return static_cast<u64>(valid);
}

// (256, 2): at most 128 registers, so two blocks fit an SM; with (256) alone ptxas trimmed the
// integer responses' instances to 64 registers and spilled.
template <class T, bool kSmemTile>
__global__ void __launch_bounds__(Policy::kThreads, 2) detect_finish_kernel(FinishArgs a) {
  dev::BlockTrace trace(5);
  dev::pdl_wait();  // the candidates before it have finished (launch_cooperative_pdl)
  trace.waited();
  Grid grid{cg::this_grid()};
  FinishShared& fs = *reinterpret_cast<FinishShared*>(dyn_smem());
  unsigned char* work = dyn_smem() + kFinishFixed;
  Header* h = a.h;
  // The first keys of the buffer, loaded while the header is read (the finish by ranks takes them
  // from here when they are all it needs): one round trip through L2 fewer.
  Prefetched pre;
#pragma unroll
  for (int u = 0; u < kPrefetch; ++u) {
    const u64 i = threadIdx.x + static_cast<u64>(u) * Policy::kThreads;
    pre.k[u] = i < a.cap ? __ldcg(a.cand + i) : 0;
  }
  // The header's count and maximum, read once by thread 0 for the block; uniform over the grid, as
  // every branch below. Then the last block to have read them resets them for the next frame (no
  // block reads them again), here rather than at the kernel's end: its atomic round trip overlaps
  // the work below instead of following it.
  __shared__ u64 count_read;
  __shared__ u32 max_read;
  if (threadIdx.x == 0) {
    count_read = *static_cast<volatile const u64*>(&h->count);
    max_read = *static_cast<volatile const u32*>(&h->max_key);
  }
  __syncthreads();
  // The candidates have read the feed's bands: zeroed for the next frame (16-byte stores; the band
  // area is a multiple of 16 bytes).
  for (u32 i = blockIdx.x * Policy::kThreads + threadIdx.x; i < a.band_words / 4;
       i += gridDim.x * Policy::kThreads) {
    reinterpret_cast<uint4*>(a.bands)[i] = make_uint4(0, 0, 0, 0);
  }
  const u64 n_all = count_read;
  const float thresh = candidates_threshold(a.c, max_read);  // the frame's
  if (threadIdx.x == 0) {
    __threadfence();  // the reads above are done before this block counts itself
    if (atomicAdd(&h->done, 1u) == gridDim.x - 1) {
      h->count = 0;
      h->max_key = 0;
      h->done = 0;
    }
  }
  // Candidates possibly found with a lower threshold than the frame's (strips ahead of the whole
  // response): only the keys below the frame's limit count.
  const bool lower = a.c.use_quality && a.ahead && n_all > 0;
  int pass = 0;
  bool ready = false;
  auto init = [&] {
    if (ready) return;
    if (blockIdx.x == 0) {
      u32* hist = &h->hist[0][0];
      for (int i = static_cast<int>(threadIdx.x); i < 3 * Policy::kBins; i += Policy::kThreads) {
        hist[i] = 0;
      }
      if (threadIdx.x == 0) {
        h->valid = 0;
        h->compacted[0] = h->compacted[1] = 0;
        h->lo[0] = h->lo[1] = ~0ull;
        h->hi[0] = h->hi[1] = 0;
      }
    }
    grid.sync();
    ready = true;
  };
  u64 n_valid = n_all, m = n_all, limit = ~0ull;
  // Few enough keys in the buffer for the finish by ranks over all of them (rank_write), even
  // those of a lower threshold: no grid-wide count, select or compaction first.
  const bool rank_all = n_all <= a.cap && !a.big && n_all <= static_cast<u64>(Policy::kRankMax) &&
                        n_all <= static_cast<u64>(Policy::kRankKeys) * gridDim.x;
  if (rank_all) {
    if (lower) limit = threshold_limit(thresh);
    n_valid =
        rank_write<T>(a.cand, static_cast<int>(n_all), limit, a.k, a.c.nms.v, a.points, work, &pre);
  } else if (n_all > a.cap) {  // the buffer overflowed: re-run the NMS until the wanted keys fit
    init();
    const ImageSource<T, kSmemTile> image{a.c.nms, thresh, reinterpret_cast<float*>(work)};
    u64 bound = ~0ull;
    if (lower) n_valid = grid_count(image, &h->valid, fs, grid);
    if (n_valid > a.cap) bound = select_bound(image, a.k, a.cap, h, 0, pass, fs, grid);
    compact_to(image, bound, a.cand, a.cap, &h->compacted[0], work);
    grid.sync();
    m = min(__ldcg(&h->compacted[0]), a.cap);  // all above the frame's threshold
  } else if (lower) {
    init();
    limit = threshold_limit(thresh);
    n_valid = grid_count(BufferSource{a.cand, m, limit}, &h->valid, fs, grid);
  }
  const u64 count = min(n_valid, a.k);
  const u64* src = a.cand;
  u64 n_src = 0;
  bool block_sort = false;
  if (count > 0 && !rank_all) {
    // What block 0 sorts, and what a grid-wide select narrows to when there is more (or, with
    // keys of a lower threshold in the buffer, where the wanted ones are gathered).
    const bool small_k = a.k <= static_cast<u64>(Policy::kSmallSort);
    const u64 block_cap = small_k ? Policy::kBlockKeys : Policy::kSortCap;
    const u64 target = a.big ? a.k : small_k ? Policy::kSmallSort : Policy::kSortCap;
    if (limit != ~0ull || m > (a.big ? a.k : block_cap)) {
      init();
      const BufferSource buffer{a.cand, m, limit};
      const u64 held = limit != ~0ull ? n_valid : m;  // keys of the buffer below the limit
      const u64 bound =
          held > target ? select_bound(buffer, a.k, target, h, 1, pass, fs, grid) : ~0ull;
      compact_to(buffer, bound, a.kept, target, &h->compacted[1], work);
      grid.sync();
      src = a.kept;
      n_src = min(__ldcg(&h->compacted[1]), target);
    } else {
      n_src = m;
    }
    if (a.big) {  // kept[0, K): the keys, then sentinels; CUB sorts them next
      const u64 stride = static_cast<u64>(gridDim.x) * Policy::kThreads;
      for (u64 i = blockIdx.x * static_cast<u64>(Policy::kThreads) + threadIdx.x; i < a.k;
           i += stride) {
        if (i >= n_src) {
          a.kept[i] = ~0ull;
        } else if (src != a.kept) {
          a.kept[i] = __ldcg(src + i);
        }
      }
    } else if (n_src <= static_cast<u64>(Policy::kRankMax) &&
               n_src <= static_cast<u64>(Policy::kRankKeys) * gridDim.x) {
      rank_write<T>(src, static_cast<int>(n_src), limit, a.k, a.c.nms.v, a.points, work);
    } else {
      block_sort = true;
    }
  }
  if (blockIdx.x == 0) {
    if (block_sort) {
      block_finish<T>(src, static_cast<int>(n_src), a.k, count, a.c.nms.v, a.points, fs, work);
    }
    if (threadIdx.x == 0) {
      a.out->count = count;
      a.out->overflow = n_valid - count;
      h->out_count = count;
    }
  }
}

// ---- detect_write (K > kSortCap)
// -----------------------------------------------------------------------
template <class T>
__global__ void __launch_bounds__(Policy::kThreads)
    detect_write_kernel(const u64* sorted, const Header* h, ResponseView v, Detection* points) {
  const u64 i = blockIdx.x * static_cast<u64>(Policy::kThreads) + threadIdx.x;
  if (i < h->out_count) points[i] = decode<T>(sorted[i], v);
}

// ---- Host side
// -----------------------------------------------------------------------------------------
bool valid_format(PixelFormat f) {
  return f == PixelFormat::kF32 || f == PixelFormat::kS16 || f == PixelFormat::kGray8;
}

cudaError_t check_args(const DetectParams& p, const ImageView& v, int y0, int y1,
                       const void* workspace) {
  if (v.data == nullptr || v.width < 1 || v.height < 1 || !valid_format(v.format) ||
      v.pitch < v.row_bytes() || workspace == nullptr || y0 < 0 || y1 > v.height || y0 > y1 ||
      p.nms_radius < 0 || p.nms_radius > Policy::kMaxRadius ||
      static_cast<u64>(v.width) * static_cast<u64>(v.height) > (1ull << 32)) {
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

ResponseView response_view(const ImageView& v) { return {v.data, v.pitch, v.width, v.height}; }

CandArgs cand_args(const DetectParams& p, const ImageView& v, int y0, int y1) {
  CandArgs a{};
  a.nms.v = response_view(v);
  a.nms.y0 = y0;
  a.nms.y1 = y1;
  a.nms.r = p.nms_radius;
  a.nms.tiles_x = (v.width + Policy::kTileW - 1) / Policy::kTileW;
  a.nms.ntiles = a.nms.tiles_x * ((y1 - y0 + Policy::kTileH - 1) / Policy::kTileH);
  a.nms.vec = detect_f32_aligned(v);
  a.early = dev::pdl_early();
  a.tile_stride = 1;
  a.use_quality = p.use_quality;
  a.quality = p.quality;
  a.thresh = static_cast<float>(p.threshold);
  return a;
}

Header* header_of(void* ws) { return static_cast<Header*>(ws); }

template <class T>
cudaError_t launch_max_t(const ImageView& v, int y0, int y1, void* ws, cudaStream_t stream) {
  MaxArgs a{response_view(v), y0, y1, (v.width + Policy::kMaxCols - 1) / Policy::kMaxCols};
  const u64 blocks =
      static_cast<u64>(a.chunks_x) * ((y1 - y0 + Policy::kMaxRows - 1) / Policy::kMaxRows);
  return dev::launch_pdl(detect_max_kernel<T>, static_cast<unsigned>(blocks), Policy::kThreads, 0,
                         stream, a, header_of(ws));
}

// The candidates' dynamic shared memory stays within the 48 KiB every launch gets without opting
// in.
static_assert(nms_smem_floats(Policy::kMaxSmemTileRadius, true) * sizeof(float) <= 48 * 1024 &&
                  sizeof(Compact::TempStorage) <= 48 * 1024,
              "the candidates' tile fits the default dynamic shared memory");

template <class T, int R, bool kSmemTile>
cudaError_t launch_cand_rt(const CandArgs& a, const Layout& l, void* ws, cudaStream_t stream) {
  const std::size_t smem =
      std::max(static_cast<std::size_t>(nms_smem_floats(a.nms.r, kSmemTile)) * sizeof(float),
               sizeof(Compact::TempStorage));
  auto* base = static_cast<unsigned char*>(ws);
  return dev::launch_pdl(detect_candidates_kernel<T, R, kSmemTile>,
                         static_cast<unsigned>(a.nms.ntiles), Policy::kThreads, smem, stream, a,
                         header_of(ws), reinterpret_cast<u64*>(base + l.cand), l.cap);
}

// Rows per warp of the row-streaming kernel: enough warps for about kStreamWarpsPerSm per SM,
// between kStreamRowsMin (each warp re-reads 2R rows) and kStreamRowsMax; the grid's y extent stays
// under 65536. H100, 16384² harris response, the first version of the kernel (µs): 32 → 689,
// 64 → 630, 128 → 611.
constexpr int kStreamWarpsPerSm = 32, kStreamRowsMin = 8, kStreamRowsMax = 128;

int stream_rows_per_warp(int rows, int strips, int sms) {
  long long r = static_cast<long long>(rows) * strips /
                std::max<long long>(1, static_cast<long long>(sms) * kStreamWarpsPerSm);
  r = std::min<long long>(std::max<long long>(r, kStreamRowsMin), kStreamRowsMax);
  r = std::max<long long>(r, (rows + 65534) / 65535);
  return static_cast<int>(r);
}

template <int R>
cudaError_t launch_stream_r(const CandArgs& c, const Layout& l, void* ws, cudaStream_t stream) {
  dev::DeviceInfo d;
  if (const cudaError_t e = dev::current_device(&d)) return e;
  StreamArgs a{};
  a.v = c.nms.v;
  a.y0 = c.nms.y0;
  a.y1 = c.nms.y1;
  a.strips = (a.v.width + StreamPolicy::kOut - 1) / StreamPolicy::kOut;
  a.rows_per_warp = stream_rows_per_warp(a.y1 - a.y0, a.strips, d.sms);
  a.use_quality = c.use_quality;
  a.quality = c.quality;
  a.thresh = c.thresh;
  const dim3 grid(dev::div_up(a.strips, StreamPolicy::kWarps),
                  dev::div_up(a.y1 - a.y0, a.rows_per_warp));
  auto* base = static_cast<unsigned char*>(ws);
  return dev::launch_pdl(detect_stream_kernel<R>, grid, StreamPolicy::kThreads, 0, stream, a,
                         header_of(ws), reinterpret_cast<u64*>(base + l.cand), l.cap);
}

// Whether a launch takes the rows kernel: where it applies (detect_rows_apply), and on the path
// asked for (kAuto: large launches; H100, tiles / rows: 1920 × 1080 harris 10.7 / 16.8 µs,
// 3840 × 2160 26.7 / 34.6 µs, 16384² 721 / 479 µs; CUB DeviceSelect::If 17.5 / 30.3 / 527 µs).
bool use_rows(const DetectParams& p, const ImageView& response, int y0, int y1) {
  if (p.path == DetectPath::kTiles || !detect_rows_apply(p, response)) return false;
  return p.path == DetectPath::kRows ||
         static_cast<long long>(response.width) * (y1 - y0) >= kDetectRowsMinPixels;
}

template <class T>
cudaError_t launch_cand_t(const CandArgs& a, bool rows, const Layout& l, void* ws,
                          cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    if (rows) {
      switch (a.nms.r) {
        case 0:
          return launch_stream_r<0>(a, l, ws, stream);
        case 1:
          return launch_stream_r<1>(a, l, ws, stream);
        case 2:
          return launch_stream_r<2>(a, l, ws, stream);
        case 3:
          return launch_stream_r<3>(a, l, ws, stream);
        default:
          return launch_stream_r<4>(a, l, ws, stream);
      }
    }
  }
  switch (a.nms.r) {
    case 0:
      return launch_cand_rt<T, 0, true>(a, l, ws, stream);
    case 1:
      return launch_cand_rt<T, 1, true>(a, l, ws, stream);
    case 2:
      return launch_cand_rt<T, 2, true>(a, l, ws, stream);
    case 3:
      return launch_cand_rt<T, 3, true>(a, l, ws, stream);
    case 4:
      return launch_cand_rt<T, 4, true>(a, l, ws, stream);
    case 5:
      return launch_cand_rt<T, 5, true>(a, l, ws, stream);
    default:
      return a.nms.r <= Policy::kMaxSmemTileRadius ? launch_cand_rt<T, -1, true>(a, l, ws, stream)
                                                   : launch_cand_rt<T, -1, false>(a, l, ws, stream);
  }
}
static_assert(Policy::kMaxFixedRadius == 5, "launch_cand_t lists the fixed radii");

// The finish's grid: one block per SM, not the two that fit. Two blocks of 256 threads at up to
// 128 registers take an SM's whole register file, so a cooperative grid of two per SM is launched
// only once every SM is empty of other work: in the executor, a 1080p K = 4 frame's finish waited
// ~3 µs after the last candidates for the histogram beside them to drain (CUPTI, H100). With one
// per SM it starts as the candidates end. Alone, a frame of sparse or dense candidates is no
// slower (1080p harris 27.2 µs against 27.6, noise 33.9 against 36.3); one whose candidates
// overflow the buffer (a flat response: the NMS re-run in passes over half the threads) is
// slower, 117 µs against 85 at 1080p (jetpipe-bench --area detect, docs/PERFORMANCE.md,
// twenty-first session). JETPIPE_FINISH_BLOCKS_PER_SM=2 restores the full grid (for
// comparisons).
int finish_blocks_per_sm() {
  static const int n = [] {
    const char* env = std::getenv("JETPIPE_FINISH_BLOCKS_PER_SM");
    const int v = env != nullptr ? std::atoi(env) : 0;
    return v >= 1 ? v : 1;
  }();
  return n;
}

template <class T, bool kSmemTile>
cudaError_t launch_finish_rt(const FinishArgs& a, const Layout& l, cudaStream_t stream) {
  auto kernel = detect_finish_kernel<T, kSmemTile>;
  const std::size_t smem = kFinishFixed + finish_work_bytes(a.c.nms.r, kSmemTile);
  cudaError_t e;
  if (smem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  int device = 0, sms = 0, per_sm = 0;
  if ((e = cudaGetDevice(&device)) != cudaSuccess) return e;
  if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) {
    return e;
  }
  if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Policy::kThreads,
                                                         smem)) != cudaSuccess) {
    return e;
  }
  // Co-resident blocks (grid barriers), no more than the largest pass has chunks.
  const u64 chunks = std::max<u64>(
      {1, static_cast<u64>(a.c.nms.ntiles),
       (l.cap + Policy::kThreads * Policy::kItems - 1) / (Policy::kThreads * Policy::kItems)});
  per_sm = std::min(per_sm, finish_blocks_per_sm());
  const unsigned blocks = static_cast<unsigned>(
      std::min<u64>(chunks, static_cast<u64>(std::max(per_sm, 1)) * static_cast<u64>(sms)));
  // Programmatic too: its blocks are resident when the candidates before it end (they trigger at
  // their start), 0.6-0.7 µs off the 1080p chain (docs/PERFORMANCE.md, twentieth session).
  return dev::launch_cooperative_pdl(kernel, blocks, Policy::kThreads, smem, stream, a);
}

template <class T>
cudaError_t launch_finish_t(const DetectParams& p, const ImageView& v, int y0, int y1, void* ws,
                            DetectDeviceResult* out, cudaStream_t stream) {
  const Layout l = make_layout(p, v.width, v.height);
  auto* base = static_cast<unsigned char*>(ws);
  FinishArgs a{};
  a.c = cand_args(p, v, y0, y1);
  a.ahead = p.candidates_ahead;
  a.h = header_of(ws);
  a.cand = reinterpret_cast<u64*>(base + l.cand);
  a.cap = l.cap;
  a.kept = reinterpret_cast<u64*>(base + l.kept);
  a.k = l.k;
  a.big = l.big;
  a.out = out;
  a.points = detect_result_points(out);
  a.bands = reinterpret_cast<u32*>(base + l.bands);
  a.band_words = static_cast<u32>(l.band_pitch) * static_cast<u32>(l.band_cols);
  const cudaError_t e = a.c.nms.r <= Policy::kMaxSmemTileRadius
                            ? launch_finish_rt<T, true>(a, l, stream)
                            : launch_finish_rt<T, false>(a, l, stream);
  if (e != cudaSuccess || !l.big) return e;
  auto* sorted = reinterpret_cast<u64*>(base + l.sorted);
  std::size_t cub_bytes = l.cub_bytes;
  const cudaError_t s = cub::DeviceRadixSort::SortKeys(base + l.cub, cub_bytes, a.kept, sorted,
                                                       static_cast<int>(l.k), 0, 64, stream);
  if (s != cudaSuccess) return s;
  const unsigned blocks = static_cast<unsigned>((l.k + Policy::kThreads - 1) / Policy::kThreads);
  detect_write_kernel<T><<<blocks, Policy::kThreads, 0, stream>>>(sorted, a.h, a.c.nms.v, a.points);
  return cudaPeekAtLastError();
}

}  // namespace

std::size_t detect_workspace_bytes(const DetectParams& p, int width, int height) {
  return make_layout(p, width, height).total;
}

cudaError_t detect_workspace_init(void* workspace, int width, int height, cudaStream_t stream) {
  if (workspace == nullptr) return cudaErrorInvalidValue;
  const BandLayout b = band_layout(width, height);
  return cudaMemsetAsync(workspace, 0, b.offset + b.bytes, stream);
}

MaxFeed detect_feed(void* workspace, int width, int height) {
  MaxFeed f;
  if (workspace == nullptr) return f;
  static const bool bands = [] {
    const char* e = std::getenv("JETPIPE_DETECT_BANDS");
    return e == nullptr || e[0] != '0';
  }();
  const BandLayout b = band_layout(width, height);
  f.max_key = &header_of(workspace)->max_key;
  if (bands) {
    f.bands = reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(workspace) + b.offset);
  }
  f.band_pitch = b.pitch;
  return f;
}

std::uint32_t* detect_max_slot(void* workspace) { return &header_of(workspace)->max_key; }

cudaError_t launch_detect_max(const DetectParams& p, const ImageView& response, int y0, int y1,
                              void* workspace, cudaStream_t stream) {
  if (const cudaError_t e = check_args(p, response, y0, y1, workspace); e != cudaSuccess) return e;
  if (!p.use_quality || y0 == y1) return cudaSuccess;
  switch (response.format) {
    case PixelFormat::kF32:
      return launch_max_t<float>(response, y0, y1, workspace, stream);
    case PixelFormat::kS16:
      return launch_max_t<std::int16_t>(response, y0, y1, workspace, stream);
    default:
      return launch_max_t<std::uint8_t>(response, y0, y1, workspace, stream);
  }
}

cudaError_t launch_detect_candidates(const DetectParams& p, const ImageView& response, int y0,
                                     int y1, void* workspace, cudaStream_t stream) {
  if (const cudaError_t e = check_args(p, response, y0, y1, workspace); e != cudaSuccess) return e;
  if (y0 == y1) return cudaSuccess;
  const Layout l = make_layout(p, response.width, response.height);
  CandArgs a = cand_args(p, response, y0, y1);
  a.bands = reinterpret_cast<const u32*>(static_cast<unsigned char*>(workspace) + l.bands);
  a.band_pitch = l.band_pitch;
  // The tiles in a scattered order (block b takes tile b · stride mod ntiles, the stride coprime
  // near 0.618 · ntiles): the tiles with candidates, which the feed's bands leave to run, lie
  // together in the image, and in order they would crowd onto few SMs while the others sat idle.
  // H100, 1080p chain: 32.2-32.3 µs against 32.9 in order (32.5-32.7 without the bands).
  // JETPIPE_DETECT_SCATTER=0: in order.
  static const bool scatter = [] {
    const char* e = std::getenv("JETPIPE_DETECT_SCATTER");
    return e == nullptr || e[0] != '0';
  }();
  if (scatter && a.nms.ntiles > 2) {
    u32 st = static_cast<u32>(a.nms.ntiles * 0.618);
    while (std::gcd(st, static_cast<u32>(a.nms.ntiles)) != 1) ++st;
    a.tile_stride = st;
  }
  const bool rows = use_rows(p, response, y0, y1);
  switch (response.format) {
    case PixelFormat::kF32:
      return launch_cand_t<float>(a, rows, l, workspace, stream);
    case PixelFormat::kS16:
      return launch_cand_t<std::int16_t>(a, rows, l, workspace, stream);
    default:
      return launch_cand_t<std::uint8_t>(a, rows, l, workspace, stream);
  }
}

cudaError_t launch_detect_finish(const DetectParams& p, const ImageView& response, int y0, int y1,
                                 void* workspace, DetectDeviceResult* out, cudaStream_t stream) {
  if (const cudaError_t e = check_args(p, response, y0, y1, workspace); e != cudaSuccess) return e;
  if (out == nullptr) return cudaErrorInvalidValue;
  switch (response.format) {
    case PixelFormat::kF32:
      return launch_finish_t<float>(p, response, y0, y1, workspace, out, stream);
    case PixelFormat::kS16:
      return launch_finish_t<std::int16_t>(p, response, y0, y1, workspace, out, stream);
    default:
      return launch_finish_t<std::uint8_t>(p, response, y0, y1, workspace, out, stream);
  }
}

cudaError_t launch_detect(const DetectParams& p, const ImageView& response, int y0, int y1,
                          void* workspace, DetectDeviceResult* out, cudaStream_t stream) {
  if (const cudaError_t e = check_args(p, response, y0, y1, workspace); e != cudaSuccess) return e;
  if (out == nullptr) return cudaErrorInvalidValue;
  cudaError_t e = launch_detect_max(p, response, y0, y1, workspace, stream);
  if (e == cudaSuccess) e = launch_detect_candidates(p, response, y0, y1, workspace, stream);
  if (e == cudaSuccess) e = launch_detect_finish(p, response, y0, y1, workspace, out, stream);
  return e;
}

}  // namespace jetpipe
JP_BLOCK_TRACE_EXPORT(detect)
