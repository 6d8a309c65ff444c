// SPDX-License-Identifier: MIT
// `jetpipe bench pipeline --sources 1,2,4,8`: N inputs at once through one executor, driven as
// `jetpipe run` drives several inputs (a thread and a queue per input, frames taken in turn:
// pipeline/source_set.h, pipeline/interleaver.h). Each input gives `frames` frames of W×H BGR from
// host memory (the executor's frame pool, as decoders fill it; no decode), or, in the device-frame
// rows, from device memory. Aggregate fps = N · frames / wall (the first frame taken to the last
// record), against the PCIe floor measured in the same run as `bench pipeline`'s rows do; per
// input: its fps (its frames over the time to its last record) and its latency p50/p99 from the
// frame's read to its record (the wait in its input's queue included). Median of `repeat` runs
// by aggregate fps.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/interleaver.h"
#include "pipeline/platform.h"
#include "pipeline/source_set.h"
#include "tools/cli/bench_util.h"
#include "tools/cli/commands.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda_check.h"
#endif

namespace jetpipe::cli {

#if JETPIPE_HAVE_CUDA
namespace {

// `count` frames taken in turn from `frames` (host) or `device` (device frames), starting at
// `offset`, each stamped with its read time as its capture time (read → record latency).
class MemorySource : public Source {
 public:
  MemorySource(const std::vector<HostImage>* frames, const DeviceFrames* device, std::int64_t count,
               std::size_t offset)
      : frames_(frames), device_(device), count_(count), offset_(offset) {}
  bool next(Frame* f) override {
    if (i_ >= count_) return false;
    const std::size_t n = device_ ? device_->frames.size() : frames_->size();
    const std::size_t k = (offset_ + static_cast<std::size_t>(i_)) % n;
    f->index = i_;
    f->source = "memory#" + std::to_string(i_);
    if (device_) {
      f->device = device_->frames[k];
    } else {
      f->image = (*frames_)[k];
    }
    f->capture = Clock::now();
    ++i_;
    return true;
  }
  std::optional<std::int64_t> total() const override { return count_; }
  std::string describe() const override { return "frames in memory"; }

 private:
  const std::vector<HostImage>* frames_;
  const DeviceFrames* device_;
  std::int64_t count_;
  std::size_t offset_;
  std::int64_t i_ = 0;
};

struct SourcesRun {
  double fps = 0;
  std::vector<double> input_fps, p50_ms, p99_ms;  // per input
  std::string executor, error;
};

// One setting: `inputs` inputs of `frames` frames each, after a warm-up run of the same shape.
SourcesRun measure_inputs(const PipelineConfig& cfg, const PlatformProfile& profile,
                          const std::vector<HostImage>& images, int inputs, int frames,
                          bool device) {
  SourcesRun m;
  try {
    std::unique_ptr<Executor> exec = make_executor(cfg, profile, {});
    m.executor = exec->describe();
    const std::vector<HostImage> in = device ? images : pool_frames(*exec, images);
    const DeviceFrames on_device = device ? device_frames(images) : DeviceFrames{};
    auto run_once = [&](std::int64_t count, SourcesRun* out) {
      std::vector<SourceSet::Input> set;
      for (int i = 0; i < inputs; ++i) {
        SourceSet::Input s;
        s.name = "input" + std::to_string(i);
        s.uri = "memory";
        s.open = [&, count, i](const SourceOptions&) {
          return std::make_unique<MemorySource>(&in, device ? &on_device : nullptr, count,
                                                static_cast<std::size_t>(i));
        };
        set.push_back(std::move(s));
      }
      SourceSet sources(std::move(set));
      sources.wait_open();
      Interleaver run(sources, *exec);
      std::vector<std::vector<double>> lat(static_cast<std::size_t>(inputs));
      std::vector<double> last_ms(static_cast<std::size_t>(inputs), 0);
      FrameRecord rec;
      std::size_t from = 0;
      const auto t0 = Clock::now();
      while (run.next(&rec, &from)) {
        if (!rec.error.empty()) throw Error(rec.error);
        lat[from].push_back(rec.capture_latency_ms.value_or(rec.latency_ms));
        last_ms[from] = ms_since(t0);
      }
      const double wall_ms = ms_since(t0);
      out->fps = static_cast<double>(count) * inputs / (wall_ms / 1000.0);
      out->input_fps.clear();
      out->p50_ms.clear();
      out->p99_ms.clear();
      for (int i = 0; i < inputs; ++i) {
        out->input_fps.push_back(static_cast<double>(count) / (last_ms[i] / 1000.0));
        out->p50_ms.push_back(percentile(lat[i], 0.5));
        out->p99_ms.push_back(percentile(lat[i], 0.99));
      }
    };
    SourcesRun warm;
    run_once(3 * static_cast<std::int64_t>(images.size()) + 8, &warm);  // allocations, graphs
    run_once(frames, &m);
  } catch (const Error& e) {
    m.error = e.what();
  }
  return m;
}

SourcesRun measure_inputs_median(const PipelineConfig& cfg, const PlatformProfile& profile,
                                 const std::vector<HostImage>& images, int inputs, int frames,
                                 int repeat, bool device) {
  std::vector<SourcesRun> runs;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    runs.push_back(measure_inputs(cfg, profile, images, inputs, frames, device));
    if (!runs.back().error.empty()) return runs.back();
  }
  std::sort(runs.begin(), runs.end(),
            [](const SourcesRun& a, const SourcesRun& b) { return a.fps < b.fps; });
  return runs[runs.size() / 2];
}

}  // namespace

int cmd_bench_sources(const StreamBenchOptions& o) {
  const PipelineConfig cfg = load_config(o.config);
  std::string reason;
  const PlatformProfile profile =
      resolve_platform(o.platform.empty() ? cfg.platform : o.platform, &reason);
  if (profile.backend != Backend::kCuda) {
    throw config_error("bench pipeline --sources: profile " + profile.name + " is not a CUDA one");
  }
  const Bandwidth bw = best_pinned_bandwidth();
  cudaDeviceProp props{};
  int dev = 0;
  JP_CUDA(cudaGetDevice(&dev));
  JP_CUDA(cudaGetDeviceProperties(&props, dev));
  std::printf("device: %s; pinned H2D %.1f GB/s, D2H %.1f GB/s (64 MiB, best of 3 medians of 10)\n",
              props.name, bw.h2d_gbps, bw.d2h_gbps);
  std::printf(
      "pipeline: %s (%zu stages), profile %s (%s); %d frames per input per run, median "
      "of %d runs; inputs of frames held in memory, each on its own thread\n\n",
      o.config.c_str(), cfg.stages.size(), profile.name.c_str(), reason.c_str(), o.frames,
      o.repeat);
  nlohmann::ordered_json j;
  j["device"] = props.name;
  j["config"] = o.config;
  j["profile"] = profile.name;
  j["pinned_h2d_gbps"] = bw.h2d_gbps;
  j["pinned_d2h_gbps"] = bw.d2h_gbps;
  j["runs"] = nlohmann::ordered_json::array();
  for (const auto& [w, h] : o.sizes) {
    const std::vector<HostImage> frames = synthetic_frames(w, h, 8);
    const double in_bytes = 3.0 * w * h, out_bytes = frame_bytes_out(cfg);
    const double floor_fps = 1000.0 / pcie_floor_ms(in_bytes, out_bytes, bw);
    std::printf(
        "%dx%d BGR: %.2f MB in, %.1f KB out per frame; PCIe floor %.0f fps (all inputs "
        "together)\n",
        w, h, in_bytes / 1e6, out_bytes / 1e3, floor_fps);
    std::printf("  %-14s %6s %9s %8s %19s %9s %9s %9s\n", "", "inputs", "fps", "floor",
                "fps/input min..max", "p50 ms", "p99 ms", "worst p99");
    for (const bool device : {false, true}) {
      for (const int n : o.sources) {
        const SourcesRun m =
            measure_inputs_median(cfg, profile, frames, n, o.frames, o.repeat, device);
        const char* kind = device ? "device frames" : "host frames";
        nlohmann::ordered_json r = {{"size", std::to_string(w) + "x" + std::to_string(h)},
                                    {"inputs", n},
                                    {"device_frames", device},
                                    {"executor", m.executor}};
        if (!m.error.empty()) {
          std::printf("  %-14s %6d error: %s\n", kind, n, m.error.c_str());
          r["error"] = m.error;
          j["runs"].push_back(r);
          continue;
        }
        const auto [lo, hi] = std::minmax_element(m.input_fps.begin(), m.input_fps.end());
        std::vector<double> p50 = m.p50_ms, p99 = m.p99_ms;
        std::printf("  %-14s %6d %9.0f %7.1f%s %9.0f..%-9.0f %9.3f %9.3f %9.3f\n", kind, n, m.fps,
                    device ? m.fps / floor_fps : 100 * m.fps / floor_fps, device ? "x" : "%", *lo,
                    *hi, percentile(p50, 0.5), percentile(p99, 0.5),
                    *std::max_element(p99.begin(), p99.end()));
        r.update({{"fps", m.fps},
                  {device ? "times_pcie_floor" : "percent_of_pcie_floor",
                   device ? m.fps / floor_fps : 100 * m.fps / floor_fps},
                  {"pcie_floor_fps", floor_fps},
                  {"input_fps", m.input_fps},
                  {"read_to_record_p50_ms", m.p50_ms},
                  {"read_to_record_p99_ms", m.p99_ms}});
        j["runs"].push_back(r);
      }
    }
    std::printf("\n");
  }
  if (!o.json.empty()) std::ofstream(o.json) << j.dump(2) << '\n';
  return 0;
}

#else  // !JETPIPE_HAVE_CUDA

int cmd_bench_sources(const StreamBenchOptions&) {
  throw config_error("bench pipeline --sources: this build has no CUDA");
}

#endif  // JETPIPE_HAVE_CUDA

}  // namespace jetpipe::cli
