// SPDX-License-Identifier: MIT
// GPU histogram of GRAY8 images (and the fused histogram + stats), twin of histogram_ref.cpp.
//
// Design (kernels/block/lane_histogram.cuh, kernels/warp/row_stream.cuh):
//  - count raw byte values (256 counters), map values to bins once per image (bins[lut[v]] += n[v]):
//    any bins / range costs nothing per pixel;
//  - lane-striped 32-bit counters s[value][lane] in one 32 KB table per block, updated with
//    red.shared.add: the 32 lanes of an instruction always hit 32 different banks, and atomics let
//    all 8 warps of the block share the table; 3 instructions per pixel (PRMT, LEA, ATOMS), ~31
//    pixels per clock per SM of counting capacity on an H100 (the memory needs ~11). Small tables
//    leave the SM's L1 to the loads in flight: 2 blocks of 8 warps per SM, persistent grid;
//  - each lane streams 16-byte loads, 8 per work item, double-buffered (8 in flight while it counts
//    the previous 8), work items (row, 4 KB chunk) strided over all warps;
//  - the block sums its table's columns and adds 256 totals to 64-bit global counters (atomics:
//    exact, so deterministic); the last block of the image (dev::frame_complete) maps values to
//    bins (and derives the stats for the fused launch) and resets the workspace.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/block/last_block.cuh"
#include "kernels/block/lane_histogram.cuh"
#include "kernels/launch/launch_config.cuh"
#include "kernels/launch/pdl_launch.cuh"
#include "kernels/histogram.h"
#include "kernels/stats.h"
#include "kernels/tuning.h"
#include "kernels/warp/row_stream.cuh"
#include "kernels/warp/warp_reduce.cuh"

namespace jetpipe {

namespace {

struct HistWorkspace {
  unsigned long long counts[256];  // per byte value, over the launches of the current image
  unsigned long long items_done;   // work items published so far (dev::frame_complete)
};

struct HistArgs {
  dev::RowSource src;
  unsigned items;                  // this launch's work items: (y1 − y0) · chunks
  unsigned long long items_total;  // the whole view's: height · chunks
  HistWorkspace* ws;
  std::uint64_t* bins;
  int nbins;
  int tables;  // counter tables in dynamic shared memory (LaneStriped: shared by warps; WarpShared: one per warp)
  StatsAccum* stats;  // fused launch, else null
  short lut[256];   // bin of each value, −1 outside the range
};

// The last block: value counts → bins (and stats), workspace reset. scratch: ≥ 4 KB of shared.
__device__ void finish_image(const HistArgs& a, unsigned long long* scratch) {
  unsigned long long* s_cnt = scratch;
  unsigned long long* s_bins = scratch + 256;
  for (int v = threadIdx.x; v < 256; v += blockDim.x) {
    s_cnt[v] = atomicExch(&a.ws->counts[v], 0ull);
    s_bins[v] = 0;
  }
  __syncthreads();
  for (int v = threadIdx.x; v < 256; v += blockDim.x) {
    const int b = a.lut[v];
    if (b >= 0 && s_cnt[v]) atomicAdd(&s_bins[b], s_cnt[v]);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < a.nbins; b += blockDim.x) a.bins[b] = s_bins[b];
  if (a.stats && threadIdx.x < 32) {
    // Lane l takes values 8l .. 8l + 7: exact integer sums, then the warp combines them.
    const int lane = threadIdx.x;
    unsigned lo = 256, hi = 0;
    unsigned long long n = 0, sum = 0, sumsq = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const unsigned v = lane * 8 + k;
      const unsigned long long c = s_cnt[v];
      if (c) {
        lo = min(lo, v);
        hi = v;
        n += c;
        sum += c * v;
        sumsq += c * (v * v);
      }
    }
    lo = dev::warp_min(lo);
    hi = dev::warp_max(hi);
    n = dev::warp_sum(n);
    sum = dev::warp_sum(sum);
    sumsq = dev::warp_sum(sumsq);
    if (lane == 0) {
      StatsAccum* s = a.stats;
      s->min = n ? static_cast<double>(lo) : 0.0;
      s->max = n ? static_cast<double>(hi) : 0.0;
      s->isum = static_cast<std::int64_t>(sum);
      s->isumsq = sumsq;
      s->fsum = 0;
      s->fsumsq = 0;
      s->count = n;
    }
  }
  if (threadIdx.x == 0) atomicExch(&a.ws->items_done, 0ull);
}

template <class Counter>
__global__ void __launch_bounds__(Counter::kMaxThreads, 2)
    histogram_kernel(const __grid_constant__ HistArgs a) {
  dev::BlockTrace trace(3);
  dev::pdl_wait();  // the kernel before it has finished (launch_pdl)
  trace.waited();
  extern __shared__ uint4 smem[];
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warps = static_cast<int>(blockDim.x >> 5);

  Counter::zero_tables(smem, a.tables);
  __syncthreads();
  Counter c(smem, warp, lane, a.tables);
  const unsigned first = blockIdx.x * warps + warp;
  const unsigned stride = gridDim.x * warps;
  dev::consume_items<kHistVectors, 1>(a.src, a.items, first, stride, c);
  __syncthreads();
  Counter::publish(smem, a.tables, a.ws->counts);

  unsigned long long block_items = 0;
  for (int w = 0; w < warps; ++w) {
    block_items += dev::items_of(a.items, blockIdx.x * warps + w, stride);
  }
  if (dev::frame_complete(&a.ws->items_done, block_items, a.items_total)) {
    finish_image(a, reinterpret_cast<unsigned long long*>(smem));
  }
}

using Kernel = void(HistArgs);

dev::KernelSlot g_slot_striped, g_slot_shared;

cudaError_t launch(const HistogramParams& p, const ImageView& src, std::uint64_t* bins,
                   StatsAccum* stats, int y0, int y1, void* workspace, cudaStream_t stream,
                   const HistogramLaunchOptions& opt) {
  if (src.format != PixelFormat::kGray8 || src.data == nullptr || src.width < 1 ||
      src.height < 1 || src.pitch < static_cast<std::size_t>(src.width) || y0 < 0 || y1 < y0 ||
      y1 > src.height || p.bins < 1 || p.bins > 256 || bins == nullptr || workspace == nullptr ||
      opt.warps_per_block < 0 || opt.warps_per_block > 8 || opt.tables_per_block < 0 ||
      opt.max_blocks < 0 || opt.min_items_per_warp < 0) {
    return cudaErrorInvalidValue;
  }
  if (y0 == y1) return cudaSuccess;
  const unsigned chunks = dev::chunks_per_row(src.width, kHistVectors);
  const unsigned long long items_total = static_cast<unsigned long long>(src.height) * chunks;
  if (items_total > 0x7fffffffull) return cudaErrorInvalidValue;  // > 8 · 10^12 pixels

  dev::DeviceInfo d;
  if (cudaError_t e = dev::current_device(&d)) return e;
  const ReductionPolicy& pol = reduction_policy(d.cc_major, d.cc_minor);

  const bool striped = opt.kernel != HistogramKernel::kWarpShared;
  Kernel* kernel = striped ? histogram_kernel<dev::LaneStriped> : histogram_kernel<dev::WarpShared>;
  dev::KernelSlot& slot = striped ? g_slot_striped : g_slot_shared;
  const int table_bytes = striped ? dev::LaneStriped::kTableBytes : dev::WarpShared::kTableBytes;
  int warps = opt.warps_per_block ? opt.warps_per_block : striped ? pol.hist_warps
                                                                    : pol.hist_shared_warps;
  warps = std::min(warps, 8);  // kMaxThreads of both counters
  int tables = striped ? (opt.tables_per_block ? opt.tables_per_block : pol.hist_tables) : warps;
  tables = std::min(std::max(tables, 1), warps);
  if (tables * table_bytes > d.smem_optin) tables = std::max(1, d.smem_optin / table_bytes);

  HistArgs a;
  a.src = dev::RowSource{src.data, src.pitch, src.width, y0, chunks};
  a.items = static_cast<unsigned>(static_cast<unsigned long long>(y1 - y0) * chunks);
  a.items_total = items_total;
  a.ws = static_cast<HistWorkspace*>(workspace);
  a.bins = bins;
  a.nbins = p.bins;
  a.tables = tables;
  a.stats = stats;
  int lut[256];
  histogram_lut(p, lut);
  for (int v = 0; v < 256; ++v) a.lut[v] = static_cast<short>(lut[v]);

  const int threads = warps * 32;
  const int smem = std::max(tables * table_bytes, 4096);  // ≥ 4 KB: finish_image's scratch
  if (cudaError_t e = dev::allow_dynamic_smem(kernel, slot, d, smem)) return e;
  int per_sm = 1;
  if (cudaError_t e = dev::blocks_per_sm(kernel, slot, d, threads, smem, &per_sm)) return e;
  unsigned grid = std::min(static_cast<unsigned>(d.sm_count * per_sm), dev::div_up(a.items, warps));
  if (opt.max_blocks > 0) grid = std::min(grid, static_cast<unsigned>(opt.max_blocks));
  if (opt.min_items_per_warp > 0) {
    grid = std::min(grid, dev::div_up(a.items, static_cast<unsigned>(warps) *
                                                   static_cast<unsigned>(opt.min_items_per_warp)));
  }
  return dev::launch_pdl(kernel, grid, threads, static_cast<std::size_t>(smem), stream, a);
}

}  // namespace

std::size_t histogram_workspace_bytes() { return sizeof(HistWorkspace); }

cudaError_t launch_histogram(const HistogramParams& p, const ImageView& src, std::uint64_t* bins,
                             int y0, int y1, void* workspace, cudaStream_t stream,
                             const HistogramLaunchOptions& options) {
  return launch(p, src, bins, nullptr, y0, y1, workspace, stream, options);
}

cudaError_t launch_histogram_stats(const HistogramParams& p, const ImageView& src,
                                   std::uint64_t* bins, StatsAccum* stats, int y0, int y1,
                                   void* workspace, cudaStream_t stream,
                                   const HistogramLaunchOptions& options) {
  if (stats == nullptr) return cudaErrorInvalidValue;
  return launch(p, src, bins, stats, y0, y1, workspace, stream, options);
}

}  // namespace jetpipe
JP_BLOCK_TRACE_EXPORT(histogram)
