// SPDX-License-Identifier: MIT
// What the benchmarks share: synthetic frames and the CPU's name (any build); and for `jetpipe
// bench pipeline` and `jetpipe tune` (CUDA builds) the bus's pinned copy bandwidth, frames in the
// executor's pool or in device memory, and the bytes a frame sends back (for the PCIe floor).
#pragma once

#include <string>
#include <vector>

#include "core/image.h"

namespace jetpipe::cli {

// Random BGR frames with some structure (blobs on noise), distinct per index (no GPU needed).
std::vector<HostImage> synthetic_frames(int w, int h, int n);

// The CPU's model name from /proc/cpuinfo ("unknown CPU" where absent).
std::string cpu_model();

}  // namespace jetpipe::cli

#if JETPIPE_HAVE_CUDA
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "core/image.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/io/source.h"

namespace jetpipe::cli {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Pinned copy bandwidths (GB/s) of `bytes` one way, median of 10.
struct Bandwidth {
  double h2d_gbps = 0, d2h_gbps = 0;
};
Bandwidth measure_pinned(std::size_t bytes);
// The bus's capacity: the best of three medians of 64 MiB copies (a median taken while something
// else used the bus would lower the floor and flatter every strategy).
Bandwidth best_pinned_bandwidth();
// The PCIe floor of one frame in ms: its bytes in and out at those bandwidths, the slower side
// (the copy engines run both ways at once).
inline double pcie_floor_ms(double in_bytes, double out_bytes, const Bandwidth& bw) {
  return std::max(in_bytes / (bw.h2d_gbps * 1e6), out_bytes / (bw.d2h_gbps * 1e6));
}

// Frames for a run: `images` (any memory), copied into the executor's frame pool when it has one,
// so the timed loop has no staging copy (as sources that decode into the pool).
std::vector<HostImage> pool_frames(const Executor& exec, const std::vector<HostImage>& images);

// The frames in device memory (cudaMallocPitch), as device frames ready now: what a decoder or a
// caller holding frames on the GPU hands over.
struct DeviceFrames {
  std::vector<std::shared_ptr<void>> memory;
  std::vector<std::shared_ptr<const DeviceFrame>> frames;
};
DeviceFrames device_frames(const std::vector<HostImage>& images);

// The result bytes one frame of the pipeline sends back (the D2H side of the PCIe floor).
double frame_bytes_out(const PipelineConfig& cfg);

}  // namespace jetpipe::cli
#endif  // JETPIPE_HAVE_CUDA
