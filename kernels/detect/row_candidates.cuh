// SPDX-License-Identifier: MIT
// The row-streaming path of detect_candidates (F32, 16-byte aligned rows, radius ≤ 4): warps
// stream rows through shared memory (docs/decisions/010-detect-rows-path.md).
#pragma once

#include "kernels/block/cp_async.cuh"
#include "kernels/detect/tile_candidates.cuh"

namespace jetpipe {
namespace {  // kernels/detect/dispatch.cu is the one includer

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
  u32 k;  // CandArgs::k
};

// A warp's dense state (decision 041), after its keys in its part of the shared buffer. A warp
// turns dense at a flush of its part where it has found at least one candidate per
// kDenseRowPixels pixels (a flat frame; noise has ~1/9 at r = 1, real frames far fewer); from then
// on its keys above its bound are dropped, and once it has kept k of them it proposes their largest
// as the frame's bound and takes that as its own.
struct StreamDense {
  u64 bound;    // the frame's bound when the warp turned dense, or its own proposal (~0: none)
  u64 last;     // the largest key kept since the warp turned dense
  u32 k;        // max_detections; 0: never dense
  u32 seen;     // keys flushed so far (the density test)
  u32 kept;     // keys kept since the warp turned dense
  u32 dropped;  // keys dropped (for h->dropped)
  int state;    // 0: plain, 1: dense, 2: dense and proposed
  int unused;
};
constexpr int kDenseRowPixels = 4;
struct StreamPart {
  u64 keys[StreamPolicy::kWarpCap];
  StreamDense dense;
};
__device__ __forceinline__ StreamDense& dense_of(u64* buf) {
  return reinterpret_cast<StreamPart*>(buf)->dense;  // buf: a part's keys, its first member
}

template <int R>
struct StreamShared {
  float4 rows[StreamPolicy::kWarps][StreamPolicy::kSlots][StreamPolicy::kRowF4];
  float4 hmax[StreamPolicy::kWarps][2 * R + 1][32];  // row maxima of the last 2R + 1 input rows
  StreamPart parts[StreamPolicy::kWarps];  // each warp's keys and dense state
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
  dev::cp_async16(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst)), src);
}
__device__ __forceinline__ void stream_copy4(float* dst, const void* src) {
  dev::cp_async4(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst)), src);
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
// atomic) if they would not fit, and a flush of a dense warp's part turns it dense (StreamDense;
// rows: the output rows the warp has tested). Returns the new count.
__device__ __forceinline__ int stream_append_keys(unsigned surv, float4 c, u32 index, int count,
                                                  u64* buf, Header* h, u64* cand, u64 cap,
                                                  int rows) {
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
    StreamDense& d = dense_of(buf);
    if (d.state == 0 && d.k > 0) {  // uniform
      const u32 seen = d.seen + static_cast<u32>(count);
      const bool dense = static_cast<long long>(seen) * kDenseRowPixels >=
                         static_cast<long long>(rows) * StreamPolicy::kOut;
      const u64 bound = dense ? read_bound(h) : 0;
      __syncwarp();
      if (lane == 0) {
        d.seen = seen;
        if (dense) {
          d.bound = bound;
          d.last = 0;
          d.kept = 0;
          d.state = 1;
        }
      }
    }
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

// stream_append_keys for a dense warp: its keys above its bound dropped first; with k kept since
// it turned dense, it proposes the largest (StreamDense).
__device__ __noinline__ int stream_append_dense(unsigned surv, float4 c, u32 index, int count,
                                                u64* buf, Header* h, u64* cand, u64 cap, int rows) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  StreamDense& d = dense_of(buf);
  const u64 bound = d.bound;
  const float sc[4] = {c.x, c.y, c.z, c.w};
  u32 dropped = 0;
  u64 mine = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (surv & (1u << j)) {
      const u64 key = candidate_key(sc[j], index + j);
      if (key > bound) {
        surv &= ~(1u << j);
        ++dropped;
      } else {
        mine = max(mine, key);
      }
    }
  }
  const u32 n = __reduce_add_sync(kAll, static_cast<u32>(__popc(surv)));
  dropped = __reduce_add_sync(kAll, dropped);
  if (n > 0) count = stream_append_keys(surv, c, index, count, buf, h, cand, cap, rows);
  const u32 hi = __reduce_max_sync(kAll, static_cast<u32>(mine >> 32));
  const u32 lo =
      __reduce_max_sync(kAll, static_cast<u32>(mine >> 32) == hi ? static_cast<u32>(mine) : 0u);
  const u64 wmax = (static_cast<u64>(hi) << 32) | lo;
  __syncwarp();
  if (lane == 0) {
    d.dropped += dropped;
    d.kept += n;
    d.last = max(d.last, wmax);
    if (d.state == 1 && d.kept >= d.k) {
      propose_bound(h, d.last);
      d.bound = min(d.bound, d.last);
      d.state = 2;
    }
  }
  __syncwarp();
  return count;
}

// The survivors of one row, as stream_append_keys (or stream_append_dense for a dense warp). Not
// inlined: rare next to the rows without one.
__device__ __noinline__ int stream_append(unsigned surv, float4 c, u32 index, int count, u64* buf,
                                          Header* h, u64* cand, u64 cap, int rows) {
  if (dense_of(buf).state != 0) {
    return stream_append_dense(surv, c, index, count, buf, h, cand, cap, rows);
  }
  return stream_append_keys(surv, c, index, count, buf, h, cand, cap, rows);
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
  u64* buf = sh.parts[warp].keys;
  if (lane == 0) {
    StreamDense& d = sh.parts[warp].dense;
    d.k = a.k;
    d.seen = 0;
    d.dropped = 0;
    d.state = 0;
  }
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
      dev::cp_async_commit();  // one group per row, empty ones too: wait_group counts rows
    };

#pragma unroll
    for (int i = 0; i < P::kAhead; ++i) issue(i, i);
    unsigned mask = 0;                           // 4 bits per input row, the newest lowest
    int slot = 0, ahead = P::kAhead, mslot = 0;  // slots of rows i and i + kAhead; of row i in hmax
#pragma unroll 1
    for (int i = 0; i < n_in; ++i) {
      issue(i + P::kAhead, ahead);
      dev::cp_async_wait<P::kAhead>();  // this lane's copies of row i have landed ...
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
          count = stream_append(surv, c, index, count, buf, h, cand, cap, i - 2 * R + 1);
        }
      }
      slot = slot + 1 == P::kSlots ? 0 : slot + 1;
      ahead = ahead + 1 == P::kSlots ? 0 : ahead + 1;
      mslot = mslot + 1 == kRing ? 0 : mslot + 1;
    }
    dev::cp_async_wait<0>();
  }

  // The block's survivors: one global atomic for all its warps.
  if (lane == 0) {
    sh.count[warp] = count;
    const u32 dropped = sh.parts[warp].dense.dropped;  // 0 unless the warp turned dense
    if (dropped) atomicAdd(&h->dropped, static_cast<u64>(dropped));
  }
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

}  // namespace
}  // namespace jetpipe
