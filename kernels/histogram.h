// SPDX-License-Identifier: MIT
// histogram: uniform bins over [lo, hi) of a GRAY8 image, as OpenCV calcHist (uniform): a value v in
// range goes to bin floor((v − lo) · bins / (hi − lo)); values outside [lo, hi) are not counted.
// Like calcHist, lo and hi are taken as float (its ranges are float) and the bin is computed in
// double as floor(v·t − t·lo), t = bins / (hi − lo), clamped to [0, bins).
#pragma once

#include <cstdint>

#include "core/image.h"

namespace jetpipe {

struct HistogramParams {
  int bins = 256;  // 1..256
  double lo = 0, hi = 256;
};

// The bin of each 8-bit value, or −1 when out of range (the table the GPU uses too).
void histogram_lut(const HistogramParams& p, int lut[256]);

// Adds the counts of rows [y0, y1) of src to counts[0 .. bins).
void histogram_ref(const HistogramParams& p, const ImageView& src, int y0, int y1,
                   std::uint64_t* counts);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>  // cudaStream_t, cudaError_t only: no device headers

#include <cstddef>

namespace jetpipe {

struct StatsAccum;

// Which counting kernel a launch uses (kernels/block/lane_histogram.cuh): kAuto = kLaneStriped,
// counters s[value][lane] shared by a block's warps (conflict-free); kWarpShared, one 256-bin table
// per warp, is the simple variant kept for comparison in benchmarks and tests.
enum class HistogramKernel : std::uint8_t { kAuto, kLaneStriped, kWarpShared };

// Launch shape overrides for benchmarks and tests; zeros follow kernels/tuning.h. Results never
// depend on them.
struct HistogramLaunchOptions {
  HistogramKernel kernel = HistogramKernel::kAuto;
  int warps_per_block = 0;   // 1..8
  int tables_per_block = 0;  // kLaneStriped: 32 KB tables per block (= warps: one private per warp)
  int max_blocks = 0;        // 0: a persistent grid (SMs × resident blocks); tests use tiny grids
  // > 0: no more blocks than give each warp this many work items (rows of ≤ 4 KB). A launch that
  // runs beside other kernels (the executor's side stream) leaves them the SMs: on an H100 the
  // persistent grid's 135 blocks at 1080p shared the SMs with harris' few warps rather than
  // overlapping them.
  int min_items_per_warp = 0;
};

// Bytes of device workspace for launch_histogram / launch_histogram_stats. Zero-fill it once after
// allocating (cudaMemset); every completed image leaves it zeroed again. One workspace per image
// in flight (strips of one image share it).
std::size_t histogram_workspace_bytes();

// GPU histogram of the whole GRAY8 view src (device or mapped memory, any pitch or ROI), accumulated
// strip by strip: a launch counts rows [y0, y1); when the launches on this workspace have covered
// every row of src exactly once, the last block to finish writes bins[0 .. p.bins) (uint64, device
// or mapped host memory; overwritten, not added to) and resets the workspace. One launch of
// [0, height) does a whole image. Strips may run concurrently on several streams; bins is complete
// once all of them have. Exact and deterministic (integer counts). Never synchronizes, never
// allocates; returns the launch error (cudaErrorInvalidValue for bad arguments).
cudaError_t launch_histogram(const HistogramParams& p, const ImageView& src, std::uint64_t* bins,
                             int y0, int y1, void* workspace, cudaStream_t stream,
                             const HistogramLaunchOptions& options = {});

// Histogram and stats of a GRAY8 view in one pass (same contract as launch_histogram): the stats are
// derived exactly from the 256 value counts when the image completes, so they cost nothing per
// pixel. *stats receives min, max, isum, isumsq, count (fsum = fsumsq = 0), ready for stats_finish.
cudaError_t launch_histogram_stats(const HistogramParams& p, const ImageView& src,
                                   std::uint64_t* bins, StatsAccum* stats, int y0, int y1,
                                   void* workspace, cudaStream_t stream,
                                   const HistogramLaunchOptions& options = {});

}  // namespace jetpipe
#endif
