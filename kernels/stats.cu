// SPDX-License-Identifier: MIT
// GPU stats (min, max, sum, sum of squares, count) of GRAY8, S16 and F32 images, twin of
// stats_ref.cpp.
//
// GRAY8: 16-byte loads (kernels/warp/row_stream.cuh, 4 per lane in flight, double-buffered) and
// SIMD instructions per 32-bit word: min and max on the even and odd bytes as 16-bit pairs (two
// PRMT, then __vimin3_u16x2 / __vimax3_u16x2: native min/max.u16x2 on sm_90, where __vminu4 /
// __vmaxu4 are ~6 LOP3 each), __dp4a(w, 0x01010101) for the sum and __dp4a(w, w) for the sum of
// squares, in 32-bit lane accumulators folded into 64 bits after every work item (at most 65 bytes
// × 65025 < 2^32 per item): 6 instructions per 4 pixels. S16: __vmins2 /
// __vmaxs2, sums per value. Then warp shuffles, one combine per block and one atomic per block per
// quantity (integers: exact, deterministic); the image's last block writes the StatsAccum.
// F32: one warp per row, double sums in a fixed order, per-row partials in the workspace merged by
// the last block in a fixed tree over row index (deterministic for any launch and strip split).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/block/last_block.cuh"
#include "kernels/launch/launch_config.cuh"
#include "kernels/stats.h"
#include "kernels/tuning.h"
#include "kernels/warp/row_stream.cuh"
#include "kernels/warp/warp_reduce.cuh"

namespace jetpipe {

namespace {

struct RowPartial {  // F32: one row's double sums and float extremes
  double sum, sumsq;
  float min, max;
  unsigned pad[2];
};

struct StatsWorkspace {
  unsigned long long sum;    // integer formats: two's complement for S16
  unsigned long long sumsq;
  unsigned long long items_done;
  unsigned min_key;  // max over (65536 − key(min)): 0 = nothing yet
  unsigned max_key;  // max over (key(max) + 1): 0 = nothing yet
  unsigned long long pad[4];
  // F32: RowPartial rows[height] follow (offset 64).
};
static_assert(sizeof(StatsWorkspace) == 64, "rows start at 64");

__device__ __forceinline__ RowPartial* rows_of(StatsWorkspace* ws) {
  return reinterpret_cast<RowPartial*>(ws + 1);
}

struct StatsArgs {
  dev::RowSource src;
  unsigned items;  // this launch's work items
  unsigned long long items_total;
  StatsWorkspace* ws;
  StatsAccum* out;
  unsigned long long count;  // width · height
  int key_offset;            // key(v) = v + key_offset ∈ [0, 65535]
  int height;
};

// ---- Integer formats: per-lane accumulators (row_stream visitors) ----------------------------------

struct AccU8 {
  unsigned mn = 0x00ff00ffu, mx = 0, s = 0, sq = 0;  // min / max: two 16-bit lanes each
  unsigned long long s64 = 0, sq64 = 0;

  __device__ __forceinline__ void word(unsigned w) {
    const unsigned even = __byte_perm(w, 0u, 0x4240u), odd = __byte_perm(w, 0u, 0x4341u);
    mn = __vimin3_u16x2(mn, even, odd);
    mx = __vimax3_u16x2(mx, even, odd);
    s = __dp4a(w, 0x01010101u, s);
    sq = __dp4a(w, w, sq);
  }
  __device__ __forceinline__ void begin_item() {}
  __device__ __forceinline__ void vec(const uint4& q) {
    word(q.x);
    word(q.y);
    word(q.z);
    word(q.w);
  }
  __device__ __forceinline__ void scalar(unsigned e) {
    const unsigned pair = e * 0x00010001u;
    mn = __vimin3_u16x2(mn, pair, pair);
    mx = __vimax3_u16x2(mx, pair, pair);
    s += e;
    sq += e * e;
  }
  __device__ __forceinline__ void end_item() {
    s64 += s;
    sq64 += sq;
    s = sq = 0;
  }
  __device__ int lane_min() const { return static_cast<int>(min(mn & 0xffffu, mn >> 16)); }
  __device__ int lane_max() const { return static_cast<int>(max(mx & 0xffffu, mx >> 16)); }
  __device__ long long sum() const { return static_cast<long long>(s64); }
  __device__ unsigned long long sumsq() const { return sq64; }
};

struct AccS16 {
  unsigned mn = 0x7fff7fffu, mx = 0x80008000u;  // packed signed 16-bit pairs
  int s = 0;
  long long s64 = 0;
  unsigned long long sq64 = 0;

  __device__ __forceinline__ void word(unsigned w) {
    mn = __vmins2(mn, w);
    mx = __vmaxs2(mx, w);
    const int lo = static_cast<short>(w & 0xffffu);
    const int hi = static_cast<int>(w) >> 16;
    s += lo + hi;
    sq64 += static_cast<unsigned>(lo * lo) + static_cast<unsigned>(hi * hi);  // ≤ 2^31
  }
  __device__ __forceinline__ void begin_item() {}
  __device__ __forceinline__ void vec(const uint4& q) {
    word(q.x);
    word(q.y);
    word(q.z);
    word(q.w);
  }
  __device__ __forceinline__ void scalar(unsigned e) {
    const int v = static_cast<short>(e & 0xffffu);
    const unsigned pair = (e & 0xffffu) * 0x10001u;
    mn = __vmins2(mn, pair);
    mx = __vmaxs2(mx, pair);
    s += v;
    sq64 += static_cast<unsigned>(v * v);
  }
  __device__ __forceinline__ void end_item() {  // ≤ 33 values of |v| ≤ 2^15 per item: no overflow
    s64 += s;
    s = 0;
  }
  __device__ int lane_min() const {
    return min(static_cast<int>(static_cast<short>(mn & 0xffffu)), static_cast<int>(mn) >> 16);
  }
  __device__ int lane_max() const {
    return max(static_cast<int>(static_cast<short>(mx & 0xffffu)), static_cast<int>(mx) >> 16);
  }
  __device__ long long sum() const { return s64; }
  __device__ unsigned long long sumsq() const { return sq64; }
};

template <class Acc, int E>
__global__ void __launch_bounds__(256) stats_int_kernel(const __grid_constant__ StatsArgs a) {
  __shared__ int s_mn[32], s_mx[32];
  __shared__ long long s_sum[32];
  __shared__ unsigned long long s_sq[32];
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warps = static_cast<int>(blockDim.x >> 5);
  const unsigned first = blockIdx.x * warps + warp;
  const unsigned stride = gridDim.x * warps;

  Acc acc;
  dev::consume_items<kStatsVectors, E>(a.src, a.items, first, stride, acc);
  // Lanes and blocks without pixels hold neutral values (min 255 / 32767, max 0 / −32768, sums 0).
  const int mn = dev::warp_min(acc.lane_min());
  const int mx = dev::warp_max(acc.lane_max());
  const long long sum = dev::warp_sum(acc.sum());
  const unsigned long long sumsq = dev::warp_sum(acc.sumsq());
  if (lane == 0) {
    s_mn[warp] = mn;
    s_mx[warp] = mx;
    s_sum[warp] = sum;
    s_sq[warp] = sumsq;
  }
  __syncthreads();
  unsigned long long block_items = 0;
  if (threadIdx.x == 0) {
    int bmn = s_mn[0], bmx = s_mx[0];
    long long bs = s_sum[0];
    unsigned long long bq = s_sq[0];
    for (int w = 1; w < warps; ++w) {
      bmn = min(bmn, s_mn[w]);
      bmx = max(bmx, s_mx[w]);
      bs += s_sum[w];
      bq += s_sq[w];
    }
    for (int w = 0; w < warps; ++w) block_items += dev::items_of(a.items, blockIdx.x * warps + w, stride);
    if (block_items) {
      atomicMax(&a.ws->min_key, 65536u - static_cast<unsigned>(bmn + a.key_offset));
      atomicMax(&a.ws->max_key, static_cast<unsigned>(bmx + a.key_offset) + 1u);
      atomicAdd(&a.ws->sum, static_cast<unsigned long long>(bs));
      atomicAdd(&a.ws->sumsq, bq);
    }
  }
  if (dev::frame_complete(&a.ws->items_done, block_items, a.items_total) && threadIdx.x == 0) {
    const unsigned long long sum_all = atomicExch(&a.ws->sum, 0ull);
    const unsigned long long sq_all = atomicExch(&a.ws->sumsq, 0ull);
    const unsigned mn_key = atomicExch(&a.ws->min_key, 0u);
    const unsigned mx_key = atomicExch(&a.ws->max_key, 0u);
    StatsAccum* o = a.out;
    o->min = static_cast<double>(65536 - static_cast<int>(mn_key) - a.key_offset);
    o->max = static_cast<double>(static_cast<int>(mx_key) - 1 - a.key_offset);
    o->isum = static_cast<std::int64_t>(sum_all);
    o->isumsq = sq_all;
    o->fsum = 0;
    o->fsumsq = 0;
    o->count = a.count;
    atomicExch(&a.ws->items_done, 0ull);
  }
}

// ---- F32 ----------------------------------------------------------------------------------------

constexpr int kFoldThreads = 256;  // the merge tree's width: fixed, so results never depend on launch

__device__ __forceinline__ void add_value(float f, double& sum, double& sq, float& mn, float& mx) {
  const double v = f;
  sum = __dadd_rn(sum, v);
  sq = __dadd_rn(sq, __dmul_rn(v, v));
  mn = fminf(mn, f);
  mx = fmaxf(mx, f);
}

__global__ void __launch_bounds__(256) stats_f32_kernel(const __grid_constant__ StatsArgs a) {
  __shared__ double s_sum[kFoldThreads], s_sq[kFoldThreads];
  __shared__ float s_mn[kFoldThreads], s_mx[kFoldThreads];
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warps = static_cast<int>(blockDim.x >> 5);
  const unsigned first = blockIdx.x * warps + warp;
  const unsigned stride = gridDim.x * warps;
  constexpr int U = kStatsVectors;
  RowPartial* rows = rows_of(a.ws);

  for (unsigned r = first; r < a.items; r += stride) {
    const int y = a.src.y0 + static_cast<int>(r);
    const dev::RowSplit s =
        dev::split_row(a.src.data + static_cast<std::size_t>(y) * a.src.pitch, a.src.row_bytes);
    double sum = 0, sq = 0;
    float mn = __int_as_float(0x7f800000), mx = -__int_as_float(0x7f800000);
    // Order per lane: its head or tail element, then its vectors by index, components x y z w.
    int off = -1;
    if (lane < 16) {
      if (lane * 4 < s.head) off = lane * 4;
    } else if ((lane - 16) * 4 < s.tail) {
      off = s.head + s.mid * 16 + (lane - 16) * 4;
    }
    if (off >= 0) add_value(__ldg(reinterpret_cast<const float*>(s.row + off)), sum, sq, mn, mx);
    const float4* vec = reinterpret_cast<const float4*>(s.row + s.head);
    for (int base = 0; base < s.mid; base += 32 * U) {
      const int nv = min(max((s.mid - base - lane + 31) >> 5, 0), U);
      float4 f[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u < nv) f[u] = __ldg(vec + base + lane + 32 * u);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u < nv) {
          add_value(f[u].x, sum, sq, mn, mx);
          add_value(f[u].y, sum, sq, mn, mx);
          add_value(f[u].z, sum, sq, mn, mx);
          add_value(f[u].w, sum, sq, mn, mx);
        }
      }
    }
    sum = dev::warp_sum_rn(sum);
    sq = dev::warp_sum_rn(sq);
    mn = dev::warp_min(mn);
    mx = dev::warp_max(mx);
    if (lane == 0) rows[y] = RowPartial{sum, sq, mn, mx, {0, 0}};
  }

  unsigned long long block_items = 0;
  for (int w = 0; w < warps; ++w) block_items += dev::items_of(a.items, blockIdx.x * warps + w, stride);
  if (!dev::frame_complete(&a.ws->items_done, block_items, a.items_total)) return;

  // Fixed-order merge: virtual thread t folds rows t, t + 256, ... in order, then a pairwise tree.
  for (int t = threadIdx.x; t < kFoldThreads; t += blockDim.x) {
    double sum = 0, sq = 0;
    float mn = __int_as_float(0x7f800000), mx = -__int_as_float(0x7f800000);
    for (int y = t; y < a.height; y += kFoldThreads) {
      sum = __dadd_rn(sum, __ldcg(&rows[y].sum));
      sq = __dadd_rn(sq, __ldcg(&rows[y].sumsq));
      mn = fminf(mn, __ldcg(&rows[y].min));
      mx = fmaxf(mx, __ldcg(&rows[y].max));
    }
    s_sum[t] = sum;
    s_sq[t] = sq;
    s_mn[t] = mn;
    s_mx[t] = mx;
  }
  __syncthreads();
  for (int half = kFoldThreads / 2; half > 0; half >>= 1) {
    for (int t = threadIdx.x; t < half; t += blockDim.x) {
      s_sum[t] = __dadd_rn(s_sum[t], s_sum[t + half]);
      s_sq[t] = __dadd_rn(s_sq[t], s_sq[t + half]);
      s_mn[t] = fminf(s_mn[t], s_mn[t + half]);
      s_mx[t] = fmaxf(s_mx[t], s_mx[t + half]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    StatsAccum* o = a.out;
    o->min = s_mn[0];
    o->max = s_mx[0];
    o->isum = 0;
    o->isumsq = 0;
    o->fsum = s_sum[0];
    o->fsumsq = s_sq[0];
    o->count = a.count;
    atomicExch(&a.ws->items_done, 0ull);
  }
}

using Kernel = void(StatsArgs);
dev::KernelSlot g_slot_u8, g_slot_s16, g_slot_f32;

}  // namespace

std::size_t stats_workspace_bytes(PixelFormat format, int height) {
  std::size_t n = sizeof(StatsWorkspace);
  if (format == PixelFormat::kF32 && height > 0) {
    n += static_cast<std::size_t>(height) * sizeof(RowPartial);
  }
  return n;
}

cudaError_t launch_stats(const ImageView& src, StatsAccum* out, int y0, int y1, void* workspace,
                         cudaStream_t stream) {
  const PixelFormat f = src.format;
  if ((f != PixelFormat::kGray8 && f != PixelFormat::kS16 && f != PixelFormat::kF32) ||
      src.data == nullptr || src.width < 1 || src.height < 1 || src.pitch < src.row_bytes() ||
      y0 < 0 || y1 < y0 || y1 > src.height || out == nullptr || workspace == nullptr) {
    return cudaErrorInvalidValue;
  }
  const int esize = bytes_per_pixel(f);
  if (reinterpret_cast<std::uintptr_t>(src.data) % esize != 0 || src.pitch % esize != 0) {
    return cudaErrorInvalidValue;  // S16 / F32 elements must be aligned
  }
  if (y0 == y1) return cudaSuccess;

  dev::DeviceInfo d;
  if (cudaError_t e = dev::current_device(&d)) return e;
  const ReductionPolicy& pol = reduction_policy(d.cc_major, d.cc_minor);
  const int row_bytes = static_cast<int>(src.row_bytes());

  StatsArgs a;
  a.ws = static_cast<StatsWorkspace*>(workspace);
  a.out = out;
  a.count = static_cast<unsigned long long>(src.width) * src.height;
  a.key_offset = f == PixelFormat::kS16 ? 32768 : 0;
  a.height = src.height;
  Kernel* kernel;
  dev::KernelSlot* slot;
  if (f == PixelFormat::kF32) {
    a.src = dev::RowSource{src.data, src.pitch, row_bytes, y0, 1};
    a.items = static_cast<unsigned>(y1 - y0);
    a.items_total = static_cast<unsigned long long>(src.height);
    kernel = stats_f32_kernel;
    slot = &g_slot_f32;
  } else {
    const unsigned chunks = dev::chunks_per_row(row_bytes, kStatsVectors);
    a.items_total = static_cast<unsigned long long>(src.height) * chunks;
    if (a.items_total > 0x7fffffffull) return cudaErrorInvalidValue;
    a.src = dev::RowSource{src.data, src.pitch, row_bytes, y0, chunks};
    a.items = static_cast<unsigned>(static_cast<unsigned long long>(y1 - y0) * chunks);
    if (f == PixelFormat::kS16) {
      kernel = stats_int_kernel<AccS16, 2>;
      slot = &g_slot_s16;
    } else {
      kernel = stats_int_kernel<AccU8, 1>;
      slot = &g_slot_u8;
    }
  }
  const int threads = std::min(std::max(pol.stats_threads / 32 * 32, 32), 256);
  int per_sm = 1;
  if (cudaError_t e = dev::blocks_per_sm(kernel, *slot, d, threads, 0, &per_sm)) return e;
  const unsigned grid =
      std::min(static_cast<unsigned>(d.sm_count * per_sm), dev::div_up(a.items, threads / 32));
  kernel<<<grid, threads, 0, stream>>>(a);
  return cudaPeekAtLastError();
}

}  // namespace jetpipe
