// SPDX-License-Identifier: MIT
// `jetpipe bench pipeline` and `jetpipe tune`: the executor on frames held in memory (no decode),
// per memory strategy, against the PCIe floor measured in the same run.
//
// Throughput: `frames` frames submitted back to back after a warm-up, each taken as it is ready;
// fps = frames / wall. Latency p50/p99: submit → record, from those records. Single-frame latency:
// one frame at a time (submit, wait), median, beside the time of the frame's H2D copy alone
// (pinned, one cudaMemcpy, synchronized). The PCIe floor: the bytes in and out of a frame over the
// pinned H2D and D2H bandwidths measured here (64 MiB copies, median of 10), the two directions
// overlapped: frame-bound fps = 1 / max(in / H2D, out / D2H). Device-frame rows: the same frames
// already in device memory (DeviceFrame), read in place.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/io/source.h"
#include "tools/cli/bench_util.h"
#include "tools/cli/commands.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda_check.h"
#endif

namespace jetpipe::cli {

#if JETPIPE_HAVE_CUDA
namespace {

// One frame's H2D copy alone from pinned memory, synchronized: what single frames are compared
// with.
class FrameH2D {
 public:
  explicit FrameH2D(std::size_t bytes) : bytes_(bytes) {
    JP_CUDA(cudaHostAlloc(&h_, bytes, cudaHostAllocDefault));
    JP_CUDA(cudaMalloc(&d_, bytes));
    std::memset(h_, 1, bytes);
  }
  ~FrameH2D() {
    cudaFree(d_);
    cudaFreeHost(h_);
  }
  FrameH2D(const FrameH2D&) = delete;
  FrameH2D& operator=(const FrameH2D&) = delete;
  // One copy's time, ms.
  double time_ms() {
    const auto t0 = Clock::now();
    JP_CUDA(cudaMemcpy(d_, h_, bytes_, cudaMemcpyHostToDevice));
    return ms_since(t0);
  }

 private:
  std::size_t bytes_;
  void* h_ = nullptr;
  void* d_ = nullptr;
};

// Time (ms) of one frame's H2D copy alone (FrameH2D), median of 20.
double frame_h2d_ms(std::size_t bytes) {
  FrameH2D copy(bytes);
  std::vector<double> v;
  for (int i = 0; i < 23; ++i) {
    const double ms = copy.time_ms();
    if (i >= 3) v.push_back(ms);
  }
  return percentile(v, 0.5);
}

// Frame `index` of a run over the frames `in`. Managed: a decoder writes every frame, so each page
// is dirtied from the host and migrates as it would (without it the pages stay on the GPU and
// managed memory beats the bus).
Frame memory_frame(const PlatformProfile& profile, const std::vector<HostImage>& in,
                   std::int64_t index) {
  Frame f;
  f.index = index;
  f.source = "memory#" + std::to_string(index);
  f.image = in[static_cast<std::size_t>(index) % in.size()];
  if (profile.memory == MemoryStrategy::kManaged) {
    const ImageView v = f.image.view();
    volatile std::uint8_t* bytes = v.data;
    const std::size_t n = static_cast<std::size_t>(v.height) * v.pitch;
    for (std::size_t i = 0; i < n; i += 4096) bytes[i] = static_cast<std::uint8_t>(bytes[i] + 1);
  }
  return f;
}

struct Measured {
  PlatformProfile profile;
  std::string executor;
  double fps = 0, p50_ms = 0, p99_ms = 0, single_ms = 0;
  double host_us = 0;  // per frame, in submit (slot waits included) and non-blocking takes
  double busy_us = 0;  // host_us less the time blocked on the device in them: host work
  double single_gpu_ms = 0;  // the single frame's GPU span (first to last event)
  std::string error;
};

// `device`: the frames are given as device frames (no copy in).
Measured measure(const PipelineConfig& cfg, const PlatformProfile& profile,
                 const std::vector<HostImage>& images, int frames, bool device = false) {
  Measured m;
  m.profile = profile;
  try {
    std::unique_ptr<Executor> exec = make_executor(cfg, profile, {});
    m.executor = exec->describe();
    const std::vector<HostImage> in = device ? images : pool_frames(*exec, images);
    const DeviceFrames on_device = device ? device_frames(images) : DeviceFrames{};
    std::int64_t index = 0;
    FrameRecord rec;
    std::vector<double> lat;
    double host_ms = 0;  // in submit() and non-blocking take(): the executor's host cost
    double blocked_ms = 0;  // of which blocked on the device
    auto submit = [&] {
      Frame f;
      if (device) {
        f.index = index;
        f.source = "device#" + std::to_string(index);
        f.device = on_device.frames[static_cast<std::size_t>(index) % on_device.frames.size()];
      } else {
        f = memory_frame(profile, in, index);
      }
      const auto h0 = Clock::now();
      const double b0 = exec->blocked_ms();
      ++index;
      exec->submit(std::move(f));
      host_ms += ms_since(h0);
      blocked_ms += exec->blocked_ms() - b0;
    };
    auto take = [&](bool wait) {
      const auto h0 = Clock::now();
      const double b0 = exec->blocked_ms();
      while (exec->take(&rec, wait)) {
        if (!rec.error.empty()) throw Error(rec.error);
        lat.push_back(rec.latency_ms);
        if (wait) break;
      }
      if (!wait) {
        host_ms += ms_since(h0);
        blocked_ms += exec->blocked_ms() - b0;
      }
    };
    // Warm-up: allocations, textures and graph captures for every frame buffer.
    for (int i = 0; i < 3 * static_cast<int>(in.size()) + 8; ++i) {
      submit();
      take(false);
    }
    while (exec->in_flight() > 0) take(true);
    // Throughput.
    lat.clear();
    host_ms = 0;
    blocked_ms = 0;
    const auto t0 = Clock::now();
    for (int i = 0; i < frames; ++i) {
      submit();
      take(false);
    }
    while (exec->in_flight() > 0) take(true);
    const double wall = ms_since(t0);
    m.fps = frames / (wall / 1000.0);
    m.host_us = 1000.0 * host_ms / frames;
    m.busy_us = 1000.0 * (host_ms - blocked_ms) / frames;
    m.p50_ms = percentile(lat, 0.5);
    m.p99_ms = percentile(lat, 0.99);
    // Single-frame latency: one at a time.
    std::vector<double> single, single_gpu;
    for (int i = 0; i < 30; ++i) {
      const auto s0 = Clock::now();
      submit();
      exec->take(&rec, true);
      if (!rec.error.empty()) throw Error(rec.error);
      if (i >= 5) {
        single.push_back(ms_since(s0));
        single_gpu.push_back(rec.gpu_ms);
      }
    }
    m.single_ms = percentile(single, 0.5);
    m.single_gpu_ms = percentile(single_gpu, 0.5);
  } catch (const Error& e) {
    m.error = e.what();
  }
  return m;
}

// `repeat` runs of measure(); the one with the median frame rate (runs of a few hundred
// milliseconds move by 5-10% between runs on a shared machine).
Measured measure_median(const PipelineConfig& cfg, const PlatformProfile& profile,
                        const std::vector<HostImage>& images, int frames, int repeat,
                        bool device = false) {
  std::vector<Measured> runs;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    runs.push_back(measure(cfg, profile, images, frames, device));
    if (!runs.back().error.empty()) return runs.back();
  }
  std::sort(runs.begin(), runs.end(), [](const Measured& a, const Measured& b) { return a.fps < b.fps; });
  return runs[runs.size() / 2];
}

std::string profile_label(const PlatformProfile& p) {
  std::ostringstream os;
  if (!p.file.empty()) os << "[" << p.name << "] ";
  os << name(p.memory) << " K=" << p.chunks;
  if (p.min_strip_mb > 0) os << ">=" << p.min_strip_mb << "MiB";
  if (p.chunks > 1 && p.strip_ratio < 1.0) os << " ratio " << p.strip_ratio;
  if (p.chunks > 1 && p.strip_copies > 0 && p.strip_copies < p.chunks) {
    os << " copies " << p.strip_copies;
  }
  if (p.copy_wait != CopyWait::kEvent) os << " " << name(p.copy_wait);
  os << " S=" << p.streams << " F=" << p.frames_in_flight << (p.cuda_graphs ? " graphs" : "")
     << " results=" << name(p.results) << " timing=" << name(p.timing);
  if (p.timing != TimingLevel::kFrame && p.timing_every > 1) os << "/" << p.timing_every;
  return os.str();
}

PlatformProfile make_profile(const std::string& memory, int k, int f, bool graphs,
                             const std::string& results, const std::string& timing = "stages") {
  PlatformProfile p = strategy_profile(parse_memory_strategy(memory), k, f, graphs);
  p.results = parse_results_placement(results);
  p.timing = parse_timing_level(timing);
  return p;
}

PlatformProfile tapered(PlatformProfile p, double ratio) {
  p.strip_ratio = ratio;
  return p;
}

PlatformProfile in_copies(PlatformProfile p, int copies) {
  p.strip_copies = copies;
  return p;
}

PlatformProfile polled(PlatformProfile p) {
  p.copy_wait = CopyWait::kPoll;
  return p;
}

// Whether a setting's label matches the filter: any of its '|'-separated parts (all: empty).
bool selected(const std::string& filter, const std::string& label) {
  if (filter.empty()) return true;
  std::size_t b = 0;
  while (true) {
    const std::size_t e = filter.find('|', b);
    if (label.find(filter.substr(b, e == std::string::npos ? e : e - b)) != std::string::npos) {
      return true;
    }
    if (e == std::string::npos) return false;
    b = e + 1;
  }
}

PlatformProfile sampled(PlatformProfile p, int every) {
  p.timing_every = every;
  return p;
}

// Single frames of several settings taken in turn, `rounds` times, with one synchronous H2D of
// the frame in each round; prints each setting's median latency, its ratio to the median H2D, and
// its median GPU span.
void interleaved_single(const PipelineConfig& cfg, const std::vector<PlatformProfile>& profiles,
                        const std::vector<HostImage>& images, int rounds) {
  struct Run {
    PlatformProfile profile;
    std::unique_ptr<Executor> exec;
    std::vector<HostImage> in;
    std::vector<double> single, gpu, submit, after;
  };
  std::vector<Run> runs;
  for (const PlatformProfile& p : profiles) {
    Run r;
    r.profile = p;
    r.exec = make_executor(cfg, p, {});
    r.in = pool_frames(*r.exec, images);
    runs.push_back(std::move(r));
  }
  const ImageView v0 = images.at(0).view();
  FrameH2D copy(v0.row_bytes() * static_cast<std::size_t>(v0.height));
  std::vector<double> h2d;
  FrameRecord rec;
  std::int64_t index = 0;
  for (int round = -8; round < rounds; ++round) {  // 8 rounds of warm-up
    for (Run& r : runs) {
      Frame f = memory_frame(r.profile, r.in, index++);
      const auto t0 = Clock::now();
      r.exec->submit(std::move(f));
      const double submit_ms = ms_since(t0);
      const double b0 = r.exec->blocked_ms();
      const auto t1 = Clock::now();
      r.exec->take(&rec, true);
      const double ms = ms_since(t0);
      // take()'s time less its wait for the device: the record's host work after the frame.
      const double after_ms = ms_since(t1) - (r.exec->blocked_ms() - b0);
      if (!rec.error.empty()) throw Error(profile_label(r.profile) + ": " + rec.error);
      if (round >= 0) {
        r.single.push_back(ms);
        r.gpu.push_back(rec.gpu_ms);
        r.submit.push_back(submit_ms);
        r.after.push_back(after_ms);
      }
    }
    const double ms = copy.time_ms();
    if (round >= 0) h2d.push_back(ms);
  }
  const double h2d_ms = percentile(h2d, 0.5);
  std::printf("%dx%d: %d rounds; one frame's H2D alone %.1f us (median; p10 %.1f, p90 %.1f)\n",
              v0.width, v0.height, rounds, 1000 * h2d_ms, 1000 * percentile(h2d, 0.1),
              1000 * percentile(h2d, 0.9));
  std::printf("  %-66s %9s %8s %9s %9s %9s %9s %8s\n", "strategy", "single ms", "xH2D", "p10 ms",
              "p90 ms", "1 gpu ms", "submit us", "after us");
  for (const Run& r : runs) {
    const double m = percentile(r.single, 0.5);
    std::printf("  %-66s %9.4f %8.3f %9.4f %9.4f %9.4f %9.1f %8.1f\n",
                profile_label(r.profile).c_str(), m, m / h2d_ms, percentile(r.single, 0.1),
                percentile(r.single, 0.9), percentile(r.gpu, 0.5),
                1000 * percentile(r.submit, 0.5), 1000 * percentile(r.after, 0.5));
  }
}

}  // namespace

int cmd_bench_pipeline(const StreamBenchOptions& o) {
  const PipelineConfig cfg = load_config(o.config);
  const Bandwidth bw = best_pinned_bandwidth();
  cudaDeviceProp props{};
  int dev = 0;
  JP_CUDA(cudaGetDevice(&dev));
  JP_CUDA(cudaGetDeviceProperties(&props, dev));
  std::printf("device: %s; pinned H2D %.1f GB/s, D2H %.1f GB/s (64 MiB, best of 3 medians of 10)\n",
              props.name, bw.h2d_gbps, bw.d2h_gbps);
  std::printf("pipeline: %s (%zu stages), %d frames per run, median of %d runs, frames held in "
              "memory\n\n",
              o.config.c_str(), cfg.stages.size(), o.frames, o.repeat);
  nlohmann::ordered_json j;
  j["device"] = props.name;
  j["config"] = o.config;
  j["pinned_h2d_gbps"] = bw.h2d_gbps;
  j["pinned_d2h_gbps"] = bw.d2h_gbps;
  j["runs"] = nlohmann::ordered_json::array();
  for (const auto& [w, h] : o.sizes) {
    // More frames than can be in flight: a frame is rewritten only after its last use finished.
    const std::vector<HostImage> frames = synthetic_frames(w, h, 8);
    const double in_bytes = 3.0 * w * h, out_bytes = frame_bytes_out(cfg);
    const double floor_ms = pcie_floor_ms(in_bytes, out_bytes, bw);
    const double floor_fps = 1000.0 / floor_ms;
    const double h2d_ms = frame_h2d_ms(static_cast<std::size_t>(in_bytes));
    std::printf("%dx%d BGR: %.2f MB in, %.1f KB out per frame; PCIe floor %.0f fps; one frame's "
                "H2D alone %.1f us\n",
                w, h, in_bytes / 1e6, out_bytes / 1e3, floor_fps, h2d_ms * 1000);
    std::printf("  %-66s %9s %7s %9s %9s %11s %8s %8s %8s %9s\n", "strategy", "fps", "%floor",
                "p50 ms", "p99 ms", "single ms", "xH2D", "host us", "busy us", "1 gpu ms");
    std::vector<PlatformProfile> runs = {
        make_profile("copy", 1, 1, false, "auto"),
        resolve_platform("discrete", nullptr),
        tapered(resolve_platform("discrete", nullptr), 0.5),
        in_copies(resolve_platform("discrete", nullptr), 3),
        resolve_platform("discrete-latency", nullptr),
        make_profile("pinned-chunked", 1, 2, true, "auto"),
        make_profile("pinned-chunked", 1, 3, true, "auto"),
        make_profile("pinned-chunked", 1, 4, true, "auto"),
        make_profile("pinned-chunked", 1, 3, true, "auto", "frame"),
        sampled(make_profile("pinned-chunked", 1, 3, true, "auto", "stages"), 10),
        make_profile("pinned-chunked", 2, 3, true, "auto"),
        make_profile("pinned-chunked", 4, 1, true, "auto"),
        make_profile("pinned-chunked", 4, 1, true, "auto", "frame"),
        make_profile("pinned-chunked", 4, 1, false, "auto", "frame"),
        tapered(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 0.7),
        tapered(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 0.5),
        tapered(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 0.35),
        tapered(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 0.25),
        tapered(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 0.15),
        in_copies(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 2),
        in_copies(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 3),
        polled(make_profile("pinned-chunked", 4, 1, true, "auto", "frame")),
        polled(in_copies(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 3)),
        polled(in_copies(make_profile("pinned-chunked", 4, 1, true, "auto", "frame"), 2)),
        make_profile("pinned-chunked", 4, 2, false, "auto"),
        make_profile("pinned-chunked", 4, 2, true, "auto"),
        make_profile("pinned-chunked", 4, 2, true, "auto", "frame"),
        in_copies(make_profile("pinned-chunked", 4, 2, true, "auto", "frame"), 3),
        make_profile("pinned-chunked", 4, 3, true, "mapped", "stages"),
        make_profile("pinned-chunked", 4, 3, true, "mapped", "frame"),
        make_profile("pinned-chunked", 4, 3, true, "copy", "frame"),
        make_profile("pinned-chunked", 8, 2, true, "auto", "frame"),
        make_profile("zero-copy", 1, 2, true, "auto"),
        make_profile("zero-copy", 1, 3, true, "auto", "frame"),
        make_profile("zero-copy", 4, 1, true, "auto", "frame"),
        make_profile("managed", 1, 2, true, "auto"),
        make_profile("managed", 1, 3, true, "auto", "frame"),
    };
    if (o.interleave > 0) {
      std::vector<PlatformProfile> chosen;
      for (const auto& p : runs) {
        if (selected(o.filter, profile_label(p))) chosen.push_back(p);
      }
      interleaved_single(cfg, chosen, frames, o.interleave);
      continue;
    }
    double copy_fps = 0;
    for (const auto& p : runs) {
      if (p.memory != MemoryStrategy::kCopy && !selected(o.filter, profile_label(p))) continue;
      const Measured m = measure_median(cfg, p, frames, o.frames, o.repeat);
      if (p.memory == MemoryStrategy::kCopy) copy_fps = m.fps;
      nlohmann::ordered_json r = {{"size", std::to_string(w) + "x" + std::to_string(h)},
                                  {"strategy", profile_label(p)},
                                  {"executor", m.executor}};
      if (!m.error.empty()) {
        std::printf("  %-66s error: %s\n", profile_label(p).c_str(), m.error.c_str());
        r["error"] = m.error;
      } else {
        std::printf("  %-66s %9.0f %6.1f%% %9.3f %9.3f %11.3f %8.2f %8.1f %8.1f %9.3f%s\n",
                    profile_label(p).c_str(), m.fps, 100 * m.fps / floor_fps, m.p50_ms, m.p99_ms,
                    m.single_ms, m.single_ms / h2d_ms, m.host_us, m.busy_us, m.single_gpu_ms,
                    copy_fps > 0 && p.memory != MemoryStrategy::kCopy
                        ? (" (" + std::to_string(m.fps / copy_fps).substr(0, 4) + "x copy)").c_str()
                        : "");
        r.update({{"fps", m.fps},
                  {"percent_of_pcie_floor", 100 * m.fps / floor_fps},
                  {"latency_p50_ms", m.p50_ms},
                  {"latency_p99_ms", m.p99_ms},
                  {"single_frame_ms", m.single_ms},
                  {"single_over_h2d", m.single_ms / h2d_ms},
                  {"host_us_per_frame", m.host_us},
                  {"host_busy_us_per_frame", m.busy_us},
                  {"single_frame_gpu_ms", m.single_gpu_ms},
                  {"pcie_floor_fps", floor_fps},
                  {"frame_h2d_ms", h2d_ms}});
      }
      j["runs"].push_back(r);
    }
    // Frames already in device memory (DeviceFrame: a GPU decoder's, an NVMM surface's, a
    // caller's): no bus in, so "x floor" is the rate over the PCIe-bound one.
    std::printf("  device frames (already on the GPU; no copy in):\n");
    const std::vector<PlatformProfile> device_runs = {
        resolve_platform("discrete", nullptr),
        make_profile("pinned-chunked", 1, 2, true, "auto", "frame"),
        make_profile("pinned-chunked", 1, 3, true, "auto", "frame"),
        make_profile("pinned-chunked", 1, 4, true, "auto", "frame"),
        make_profile("zero-copy", 1, 3, true, "auto", "frame"),
    };
    for (const auto& p : device_runs) {
      const std::string label = "device " + profile_label(p);
      if (!selected(o.filter, label)) continue;
      const Measured m = measure_median(cfg, p, frames, o.frames, o.repeat, true);
      nlohmann::ordered_json r = {{"size", std::to_string(w) + "x" + std::to_string(h)},
                                  {"strategy", label},
                                  {"device_frames", true},
                                  {"executor", m.executor}};
      if (!m.error.empty()) {
        std::printf("  %-66s error: %s\n", label.c_str(), m.error.c_str());
        r["error"] = m.error;
      } else {
        std::printf("  %-66s %9.0f %5.2fx %9.3f %9.3f %11.3f %8s %8.1f %8.1f %9.3f\n",
                    label.c_str(), m.fps, m.fps / floor_fps, m.p50_ms, m.p99_ms, m.single_ms, "-",
                    m.host_us, m.busy_us, m.single_gpu_ms);
        r.update({{"fps", m.fps},
                  {"times_pcie_floor", m.fps / floor_fps},
                  {"latency_p50_ms", m.p50_ms},
                  {"latency_p99_ms", m.p99_ms},
                  {"single_frame_ms", m.single_ms},
                  {"host_us_per_frame", m.host_us},
                  {"host_busy_us_per_frame", m.busy_us},
                  {"single_frame_gpu_ms", m.single_gpu_ms},
                  {"pcie_floor_fps", floor_fps}});
      }
      j["runs"].push_back(r);
    }
    std::printf("\n");
  }
  if (!o.json.empty()) std::ofstream(o.json) << j.dump(2) << '\n';
  return 0;
}

int cmd_tune(const TuneOptions& o) {
  const PipelineConfig cfg = load_config(o.config);
  // The config's own frames (up to 8 of its first input, held in memory), or synthetic 1080p BGR
  // frames.
  std::vector<HostImage> frames;
  std::string frames_from = "synthetic 1920x1080 BGR";
  const std::string input = cfg.inputs.empty() ? "" : cfg.inputs[0].uri;
  try {
    std::unique_ptr<Source> src = open_source(input);
    Frame f;
    while (frames.size() < 8 && src->next(&f)) {
      if (f.error.empty()) frames.push_back(f.image);
    }
    if (!frames.empty()) frames_from = input + " (" + std::to_string(frames.size()) + " frames)";
  } catch (const Error&) {
  }
  if (frames.empty()) frames = synthetic_frames(1920, 1080, 8);
  while (frames.size() < 8) frames.push_back(frames[frames.size() % frames.size()]);
  cudaDeviceProp props{};
  int dev = 0;
  JP_CUDA(cudaGetDevice(&dev));
  JP_CUDA(cudaGetDeviceProperties(&props, dev));
  std::printf("tuning %s on %s with %s, %d frames per run\n", o.config.c_str(), props.name,
              frames_from.c_str(), o.frames);
  std::vector<PlatformProfile> grid = {make_profile("copy", 1, 1, false, "auto")};
  for (const char* memory : {"pinned-chunked", "zero-copy", "managed"}) {
    for (int k : {1, 2, 4, 8}) {
      if (std::string(memory) == "managed" && k > 1) continue;  // one stream: strips only add launches
      for (int f : {1, 2, 3, 4}) {
        for (bool graphs : {false, true}) {
          for (const char* results : {"mapped", "copy"}) {
            grid.push_back(make_profile(memory, k, f, graphs, results, "frame"));
          }
        }
      }
    }
  }
  std::vector<Measured> all;
  for (const auto& p : grid) {
    Measured m = measure_median(cfg, p, frames, o.frames, o.repeat);
    std::printf("  %-66s %s\n", profile_label(p).c_str(),
                m.error.empty() ? (std::to_string(static_cast<int>(m.fps)) + " fps, p50 " +
                                   std::to_string(m.p50_ms).substr(0, 6) + " ms")
                                      .c_str()
                                : ("error: " + m.error).c_str());
    if (m.error.empty()) all.push_back(std::move(m));
  }
  if (all.empty()) throw Error("tune: no strategy ran on this device");
  const auto best = std::max_element(all.begin(), all.end(),
                                     [](const Measured& a, const Measured& b) { return a.fps < b.fps; });
  const auto copy = std::find_if(all.begin(), all.end(), [](const Measured& m) {
    return m.profile.memory == MemoryStrategy::kCopy;
  });
  std::ofstream out(o.output);
  if (!out) throw Error(o.output + ": cannot write the profile");
  const PlatformProfile& p = best->profile;
  out << "# Written by `jetpipe tune --config " << o.config << "` on " << props.name << ":\n"
      << "# the fastest of " << all.size() << " strategy / strips / frames-in-flight / graphs /"
      << " results settings\n# on " << frames_from << ", " << o.frames << " frames per run"
      << (o.repeat > 1 ? ", median of " + std::to_string(o.repeat) + " runs" : "") << ".\n"
      << "# Measured: " << static_cast<int>(best->fps) << " fps, latency p50 " << best->p50_ms
      << " ms, p99 " << best->p99_ms << " ms, one frame alone " << best->single_ms << " ms";
  if (copy != all.end()) {
    out << ";\n# the copy baseline: " << static_cast<int>(copy->fps) << " fps";
  }
  out << ".\ndescription: tuned for " << o.config << " on " << props.name << "\n"
      << "backend: cuda\nmemory: " << name(p.memory) << "\nchunks: " << p.chunks
      << "\nstrip_ratio: " << p.strip_ratio << "\nstrip_copies: " << p.strip_copies
      << "\nstreams: " << p.streams << "\nframes_in_flight: " << p.frames_in_flight
      << "\ncuda_graphs: " << (p.cuda_graphs ? "true" : "false") << "\nresults: " << name(p.results)
      << "\n# Measured with timing: frame. Per-stage times (summary.json) on every 10th frame cost"
      << "\n# 1-2% beside it on an H100 (every frame: ~10% at 1080p); timing: frame drops them.\n"
      << "timing: stages\ntiming_every: 10\n";
  std::printf("fastest: %s, %.0f fps -> %s\n", profile_label(p).c_str(), best->fps,
              o.output.c_str());
  return 0;
}

#else  // !JETPIPE_HAVE_CUDA

int cmd_bench_pipeline(const StreamBenchOptions&) {
  throw config_error("bench pipeline: this build has no CUDA");
}
int cmd_tune(const TuneOptions&) { throw config_error("tune: this build has no CUDA"); }

#endif  // JETPIPE_HAVE_CUDA

}  // namespace jetpipe::cli
