// SPDX-License-Identifier: MIT
// detect_finish (a cooperative launch: the best max_detections keys in the contract's order, the
// NMS re-run in passes where the candidates overflowed the buffer) and detect_write (K > 4096).
#pragma once

#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/detect/tile_candidates.cuh"

namespace jetpipe {
namespace {  // kernels/detect/dispatch.cu is the one includer

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

// Pixels [begin, end) of n taken by this block in the plateau finish: a whole kThreads step each,
// contiguous, in block order.
struct PixelRange {
  u64 begin, end;
};
__device__ __forceinline__ PixelRange block_pixels(u32 n) {
  const u64 steps = (static_cast<u64>(n) + Policy::kThreads - 1) / Policy::kThreads;
  const u64 per = (steps + gridDim.x - 1) / gridDim.x * Policy::kThreads;
  const u64 begin = min(blockIdx.x * per, static_cast<u64>(n));
  return {begin, min(begin + per, static_cast<u64>(n))};
}

// Pixel j of rows from y0 (width w) into *d; whether its score's order key is `key`.
template <class T>
__device__ __forceinline__ bool pixel_is(const ResponseView& v, int y0, u32 w, u64 j, u32 key,
                                         Detection* d) {
  const u32 dy = static_cast<u32>(j) / w;
  d->x = static_cast<int>(static_cast<u32>(j) - dy * w);
  d->y = y0 + static_cast<int>(dy);
  d->score = load_score<T>(v, d->x, d->y);
  return order_key(d->score) == key;
}

// What the finish of an overflowing buffer learns in one grid-wide barrier: the order key of the
// largest score of the launch's rows (every pixel, no NMS: at least every candidate's; fmaxf drops
// NaN, which is never a candidate), and, for the plateau finish, how many of the first n pixels of
// those rows have the score whose order key is `key` (before this block's range and in all).
struct RowsTop {
  u32 top;
  u64 before, total;
};

// Each block writes its maximum and its count to `slots` (2 · gridDim.x words, no zeroing needed),
// then reads every block's: one barrier for both, none to initialize. n = 0: no count.
template <class T>
__device__ RowsTop rows_top(const NmsArgs& a, u32 n, u32 key, u32* slots, FinishShared& fs,
                            Grid& grid) {
  // A row's columns 8 loads at a time, all issued before their maximum (a 1080p row is 7.5 a
  // thread, 4K 15); no index arithmetic beyond the row's.
  constexpr int kBatch = 8;
  float m = -INFINITY;
  for (int y = a.y0 + static_cast<int>(blockIdx.x); y < a.y1; y += static_cast<int>(gridDim.x)) {
    for (int x0 = static_cast<int>(threadIdx.x); x0 < a.v.width; x0 += kBatch * Policy::kThreads) {
      float v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int x = x0 + u * Policy::kThreads;
        v[u] = x < a.v.width ? load_score<T>(a.v, x, y) : -INFINITY;
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) m = fmaxf(m, v[u]);
    }
  }
  const u32 w = static_cast<u32>(a.v.width);
  const PixelRange range = block_pixels(n);
  u64 mine = 0;
  for (u64 j = range.begin + threadIdx.x; j < range.end; j += Policy::kThreads) {
    Detection d;
    mine += pixel_is<T>(a.v, a.y0, w, j, key, &d) ? 1 : 0;
  }
  const auto larger = [](u64 p, u64 q) { return max(p, q); };
  const u64 top = ReduceU64(fs.t.reduce).Reduce(m > -INFINITY ? order_key(m) : 0u, larger);
  __syncthreads();  // fs is reused next
  mine = ReduceU64(fs.t.reduce).Sum(mine);
  if (threadIdx.x == 0) {
    slots[blockIdx.x] = static_cast<u32>(top);
    slots[gridDim.x + blockIdx.x] = static_cast<u32>(mine);
  }
  grid.sync();
  // Every block's, uniform over the block.
  u64 t = 0, part = 0, all = 0;
  for (u32 b = threadIdx.x; b < gridDim.x; b += Policy::kThreads) {
    t = max(t, static_cast<u64>(__ldcg(slots + b)));
    const u64 c = __ldcg(slots + gridDim.x + b);
    all += c;
    part += b < blockIdx.x ? c : 0;
  }
  __shared__ u32 top_all;
  t = ReduceU64(fs.t.reduce).Reduce(t, larger);
  if (threadIdx.x == 0) top_all = static_cast<u32>(t);  // thread 0's, for the block
  __syncthreads();  // fs is reused next
  RowsTop r;
  ScanU64(fs.t.scan).ExclusiveSum(part, part, r.before);
  __syncthreads();
  ScanU64(fs.t.scan).ExclusiveSum(all, part, r.total);
  __syncthreads();  // fs is reused next
  r.top = top_all;
  return r;
}

// The plateau finish (docs/decisions/041-detect-dense-bounds.md), for a buffer that overflowed
// where the bound's score is the largest of the launch's rows and the NMS windows of rows
// [y0, y0 + n / W) read no row outside them: the K smallest keys are then the first K pixels in
// raster order of those rows whose score's order key is `top`. Each such pixel is a candidate (no
// neighbour is larger; the bound's own score passes the threshold), and at least K of them lie at
// or before the bound's. rows_top counted them per block; each block writes its own at their
// places after those of the blocks before it (`before`), a kThreads step at a time (block scans).
template <class T>
__device__ void plateau_write(const ResponseView& v, int y0, u32 n, u32 top, u64 k, u64 before,
                              Detection* points, FinishShared& fs) {
  const u32 w = static_cast<u32>(v.width);
  const PixelRange range = block_pixels(n);
  for (u64 j0 = range.begin; j0 < range.end && before < k; j0 += Policy::kThreads) {  // uniform
    Detection d;
    const int hit =
        j0 + threadIdx.x < range.end && pixel_is<T>(v, y0, w, j0 + threadIdx.x, top, &d) ? 1 : 0;
    int off = 0, all = 0;
    ScanInt(fs.t.scan_int).ExclusiveSum(hit, off, all);
    if (hit && before + static_cast<u64>(off) < k) points[before + static_cast<u64>(off)] = d;
    before += static_cast<u64>(all);
    __syncthreads();  // fs is reused next step
  }
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
  __shared__ u64 count_read, dropped_read, bound_read;
  __shared__ u32 max_read;
  if (threadIdx.x == 0) {
    count_read = *static_cast<volatile const u64*>(&h->count);
    max_read = *static_cast<volatile const u32*>(&h->max_key);
    dropped_read = *static_cast<volatile const u64*>(&h->dropped);
    bound_read = ~*static_cast<volatile const u64*>(&h->bound_c);
  }
  __syncthreads();
  // The candidates have read the feed's bands: zeroed for the next frame (16-byte stores; the band
  // area is a multiple of 16 bytes).
  for (u32 i = blockIdx.x * Policy::kThreads + threadIdx.x; i < a.band_words / 4;
       i += gridDim.x * Policy::kThreads) {
    reinterpret_cast<uint4*>(a.bands)[i] = make_uint4(0, 0, 0, 0);
  }
  // Keys in the buffer (also those beyond it) and all candidates: dense blocks dropped keys above
  // the frame's bound, so the buffer holds every key up to it, and at least K of them (Header).
  const u64 stored = count_read;
  const u64 n_all = count_read + dropped_read;
  const float thresh = candidates_threshold(a.c, max_read);  // the frame's
  if (threadIdx.x == 0) {
    __threadfence();  // the reads above are done before this block counts itself
    if (atomicAdd(&h->done, 1u) == gridDim.x - 1) {
      h->count = 0;
      h->max_key = 0;
      h->bound_c = 0;
      h->dropped = 0;
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
  u64 n_valid = n_all, m = stored, limit = ~0ull;
  bool written = false;  // the points by plateau_write
  // Few enough keys in the buffer for the finish by ranks over all of them (rank_write), even
  // those of a lower threshold: no grid-wide count, select or compaction first.
  const bool rank_all = stored <= a.cap && !a.big && stored <= static_cast<u64>(Policy::kRankMax) &&
                        stored <= static_cast<u64>(Policy::kRankKeys) * gridDim.x;
  if (rank_all) {
    if (lower) limit = threshold_limit(thresh);
    n_valid = dropped_read + rank_write<T>(a.cand, static_cast<int>(stored), limit, a.k, a.c.nms.v,
                                           a.points, work, &pre);
  } else if (stored > a.cap) {  // the buffer overflowed: re-run the NMS until the wanted keys fit
    // Where the bound's score is the rows' largest (a flat frame), every key up to it lies in the
    // rows up to the bound's: one pass over those rows gathers them (no candidates run ahead here),
    // or, where no NMS window of those rows leaves the launch's rows, the first K pixels of that
    // score in raster order are the result (the plateau finish). The largest score: one read of
    // the rows (no NMS), only where the bound's rows fit the buffer.
    NmsArgs rows = a.c.nms;
    u64 bound = ~0ull;
    bool near = false;
    // The bound's row, the rows up to it and their pixels (where a bound exists).
    const u64 last_row = static_cast<u32>(bound_read) / static_cast<u32>(rows.v.width);
    const u64 n_rows = last_row + 1 - static_cast<u64>(rows.y0);
    const u64 n_near = n_rows * static_cast<u64>(rows.v.width);
    if (!lower && bound_read != ~0ull && n_near <= a.cap) {
      const u32 key = ~static_cast<u32>(bound_read >> 32);  // the order key of the bound's score
      const int r = rows.r, last = static_cast<int>(last_row);
      const bool flat = !a.big && (rows.y0 == 0 || r == 0) &&
                        (last + r < rows.y1 || rows.y1 == rows.v.height) && n_near < (1ull << 32);
      const RowsTop t = rows_top<T>(rows, flat ? static_cast<u32>(n_near) : 0u, key,
                                    reinterpret_cast<u32*>(a.kept), fs, grid);
      if (t.top == key) {
        rows.ntiles =
            rows.tiles_x * static_cast<int>((n_rows + Policy::kTileH - 1) / Policy::kTileH);
        bound = bound_read;
        near = true;
        // Fewer than K there never happens while the bound's invariant holds: the NMS pass then.
        if (flat && t.total >= a.k) {
          plateau_write<T>(rows.v, rows.y0, static_cast<u32>(n_near), key, a.k, t.before, a.points,
                           fs);
          written = true;
        }
      }
    }
    if (!written) {
      init();
      const ImageSource<T, kSmemTile> image{rows, thresh, reinterpret_cast<float*>(work)};
      if (!near) {
        if (lower) n_valid = grid_count(image, &h->valid, fs, grid);
        if (n_valid > a.cap) bound = select_bound(image, a.k, a.cap, h, 0, pass, fs, grid);
      }
      compact_to(image, bound, a.cand, a.cap, &h->compacted[0], work);
      grid.sync();
      m = min(__ldcg(&h->compacted[0]), a.cap);  // all above the frame's threshold
    }
  } else if (lower) {
    init();
    limit = threshold_limit(thresh);
    n_valid = grid_count(BufferSource{a.cand, m, limit}, &h->valid, fs, grid);
  }
  const u64 count = min(n_valid, a.k);
  const u64* src = a.cand;
  u64 n_src = 0;
  bool block_sort = false;
  if (count > 0 && !rank_all && !written) {
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

}  // namespace
}  // namespace jetpipe
