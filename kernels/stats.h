// SPDX-License-Identifier: MIT
// stats: min, max, mean, population stddev and count of a single-channel image (GRAY8, S16, F32).
// Integer images are summed exactly (64-bit integers); F32 in double.
#pragma once

#include <cstdint>

#include "pipeline/core/image.h"
#include "pipeline/core/results.h"

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
