// SPDX-License-Identifier: MIT
// The `jetpipe` subcommands, each in its own file.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace jetpipe::cli {

struct RegressOptions {
  std::string dir;       // holds configs/, frames/, golden/
  std::string work_dir;  // where the runs write
  std::string platform = "cpu";
  bool update = false;
};

// jetpipe bench pipeline: the executor's strategies on frames held in memory.
struct StreamBenchOptions {
  std::string config;
  std::vector<std::pair<int, int>> sizes = {{1920, 1080}, {3840, 2160}};
  int frames = 300;
  int repeat = 3;  // runs per setting; the median frame rate is reported
  std::string json;
  std::string filter;  // only the settings whose label contains it
  // > 0: only single frames, this many rounds, the selected settings (and one synchronous H2D of
  // the frame) taken in turn within each round, so that slow drift of the machine falls on all
  // alike: for side-by-side latency comparisons.
  int interleave = 0;
  // Not empty: instead of the strategies, N inputs at once for each N (cmd_bench_sources), under
  // `platform` (empty: the config's).
  std::vector<int> sources;
  std::string platform;
};
// jetpipe tune: every strategy, strip count, frames in flight, graphs and result memory on this
// device with the config's pipeline and frames; the fastest written as a platform profile.
struct TuneOptions {
  std::string config;
  std::string output = "platforms/tuned.yaml";
  int frames = 200;
  int repeat = 3;  // runs per setting; the median frame rate decides
};

// jetpipe bench source: the CPU time a GStreamer source spends per frame on its copy (no GPU).
struct SourceBenchOptions {
  std::vector<std::pair<int, int>> sizes = {{1920, 1080}, {3840, 2160}};
  int frames = 100;
  int warmup = 10;
  std::string json;
};

// jetpipe bench cpu: the CPU backend's harris beside cv::cornerHarris, and a config's chain
// through the host executor, at each thread count (no GPU needed).
struct CpuBenchOptions {
  std::string config;
  std::vector<std::pair<int, int>> sizes = {{768, 576}, {1920, 1080}};
  std::vector<int> threads;  // empty: 1 and every CPU of the process
  int reps = 50;
  std::string json;
};

int cmd_info();
int cmd_bench_pipeline(const StreamBenchOptions& options);
// jetpipe bench pipeline --sources N,...: several inputs through one executor (sources_bench.cpp).
int cmd_bench_sources(const StreamBenchOptions& options);
int cmd_bench_source(const SourceBenchOptions& options);
int cmd_bench_cpu(const CpuBenchOptions& options);
int cmd_tune(const TuneOptions& options);
int cmd_stages();
int cmd_regress(const RegressOptions& options);

}  // namespace jetpipe::cli
