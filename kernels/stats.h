// SPDX-License-Identifier: MIT
// stats: min, max, mean, population stddev and count of a single-channel image (GRAY8, S16, F32).
// Integer images are summed exactly (64-bit integers); F32 in double.
#pragma once

#include <cstdint>

#include "core/image.h"
#include "core/results.h"

namespace jetpipe {

// A partial over some rows; partials merge in a fixed order, so results are deterministic.
struct StatsAccum {
  double min = 0, max = 0;
  std::int64_t isum = 0;       // integer formats
  std::uint64_t isumsq = 0;    // integer formats
  double fsum = 0, fsumsq = 0; // F32
  std::uint64_t count = 0;
};

void stats_ref(const ImageView& src, int y0, int y1, StatsAccum* acc);
void stats_merge(StatsAccum* into, const StatsAccum& part);
StatsResult stats_finish(const StatsAccum& acc, PixelFormat format);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>  // cudaStream_t, cudaError_t only: no device headers

#include <cstddef>

namespace jetpipe {

// Bytes of device workspace for launch_stats on images of this format and height (F32 keeps one
// partial per row). Zero-fill it once after allocating (cudaMemset); every completed image leaves
// it ready again. One workspace per image in flight (strips of one image share it).
std::size_t stats_workspace_bytes(PixelFormat format, int height);

// GPU stats of the whole view src (GRAY8, S16 or F32; device or mapped memory; any pitch or ROI,
// S16/F32 rows aligned to their element size), accumulated strip by strip: a launch reads rows
// [y0, y1); when the launches on this workspace have covered every row exactly once, the last block
// writes *out (a StatsAccum, device or mapped host memory, overwritten) for stats_finish on the host,
// and resets the workspace. Strips may run concurrently on several streams.
//  - GRAY8, S16: exact (integer min, max, sum, sum of squares in 64 bits), bit-equal to stats_ref.
//  - F32: min and max exact; each row summed in double in a fixed order (lane-strided, then a
//    fixed shuffle tree), rows merged in a fixed tree over row index: the same bits for any launch
//    shape and strip split, within ~1e-12 relative of stats_ref's sequential sums. NaN: unspecified.
// Never synchronizes, never allocates; cudaErrorInvalidValue for bad arguments.
cudaError_t launch_stats(const ImageView& src, StatsAccum* out, int y0, int y1, void* workspace,
                         cudaStream_t stream);

}  // namespace jetpipe
#endif
