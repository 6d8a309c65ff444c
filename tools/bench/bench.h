// SPDX-License-Identifier: MIT
// jetpipe-bench: kernel benchmarks (a tool, never a test). Each area adds its entries in its own
// file (bench_<area>.cu) as a function `void bench_<area>(Bench&)` listed in bench_main.cpp.
// Timing: CUDA events around each launch on one stream, warm-up first, median of ≥ reps runs;
// inputs rotate over several buffers when one image is smaller than 3 × L2, so no run is served from
// L2. Every figure is printed as µs, GB/s and % of the device copy bandwidth measured in the same run.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_memory.h"
#if JETPIPE_HAVE_NPP
#include <nppdefs.h>
#endif
#include "core/image.h"
#include "tools/bench/filter.h"

namespace jetpipe::bench {

struct Size {
  int width, height;
  std::string name() const { return std::to_string(width) + "x" + std::to_string(height); }
};

// What a row of the report says. bytes = the fewest bytes the operation must move through device
// memory (each input read once, each output written once); GB/s and % follow from it.
struct Row {
  std::string kernel;  // "histogram"
  std::string impl;    // "jetpipe", "cub", "npp", "opencv-cpu", "jetpipe-tex", ...
  std::string size;    // "16384x16384"
  std::string data;    // "uniform", "skewed", "photo", ""
  double us = 0;       // median
  double bytes = 0;
  std::string note;
};

// Input contents: uniform random bytes; skewed (90% one value, the rest uniform); a real photo
// tiled to the size (or a smooth synthetic scene when no photo is found).
enum class Data { kUniform, kSkewed, kPhoto };
const char* to_string(Data d);

class Bench {
 public:
  Bench(int reps, std::string filter, std::vector<Size> sizes);
  ~Bench();

  cudaStream_t stream() const { return stream_; }
  const std::vector<Size>& sizes() const { return sizes_; }
  const cudaDeviceProp& props() const { return props_; }
  double copy_gbps() const { return copy_gbps_; }  // read + write bytes of a large D2D copy
  // SMs the launchers size grids for: the device's, or a green context's (--sms); `note` (what the
  // run is, e.g. that memory bandwidth is not scaled) is printed under the table and in the JSON.
  int launch_sms() const { return launch_sms_; }
  void set_launch_sms(int sms, std::string note);
  // --filter (tools/bench/filter.h): whether the group `kernel` runs; the rows add() takes after
  // it are kept whole or by name.
  bool wants(const std::string& kernel) const;
  // The kernel groups asked about so far, and whether any row was kept (a filter that keeps none
  // is an error: bench_main).
  const std::vector<std::string>& groups() const { return groups_; }
  bool any_rows() const { return !rows_.empty(); }

  // Median µs of `launch(rep)`, which enqueues the work of one run on stream() (rep counts from 0
  // over warm-up and timed runs, for rotating inputs). Checks every launch's error.
  double time_us(const std::function<void(int rep)>& launch);
  // The same work's GPU time alone: a blocking kernel (tools/bench/blocking.h) holds the stream
  // while the host queues the start event, the work and the stop event, then the host releases it.
  // time_us() from an idle stream also counts the host's submission of the work (the GPU idles
  // while cudaLaunchKernel or cudaGraphLaunch runs on the host); this does not (NVBench's method).
  double time_gpu_us(const std::function<void(int rep)>& launch);
  // Median µs of a host function (CPU baselines), warm-up excluded.
  double time_host_us(const std::function<void()>& fn, int reps = 0);

  // Device images of the size and format holding `data`, enough copies to rotate past L2.
  std::vector<DeviceImage> inputs(const Size& s, PixelFormat f, Data data, std::size_t pitch = 0);
  // A host image of the same content (for CPU baselines and checks).
  HostImage host_input(const Size& s, PixelFormat f, Data data);

  void add(Row row);
  void print_table() const;
  void write_json(const std::string& path) const;

 private:
  double measure_copy_bandwidth();
  double time_impl(const std::function<void(int rep)>& launch, bool blocked);

  int reps_;
  std::string filter_;
  mutable tools::FilterMatch match_;         // the last group wants() let run
  mutable std::vector<std::string> groups_;  // every group wants() was asked about
  std::vector<Size> sizes_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  int* release_ = nullptr;  // host-mapped: [0] releases the blocking kernel, [1] its timeout
  cudaDeviceProp props_{};
  double copy_gbps_ = 0;
  int launch_sms_ = 0;
  std::string note_;
  std::vector<Row> rows_;
};

#if JETPIPE_HAVE_NPP
// NPP's stream context for the bench's stream and device (the *_Ctx entry points).
NppStreamContext npp_context(const Bench& b);
#endif

// Areas (one file each).
void bench_reductions(Bench& b);  // histogram, stats, fused; CUB and NPP and OpenCV beside
void bench_filters(Bench& b);     // gaussian, box, sobel, convolve, harris; NPP and OpenCV beside
void bench_detect(Bench& b);      // detect + compaction; CUB DeviceSelect beside
void bench_pipeline(Bench& b);    // config/default.yaml's stages for one 1920x1080 frame

}  // namespace jetpipe::bench
