// SPDX-License-Identifier: MIT
// `jetpipe bench cpu`: the CPU backend (no GPU needed).
//
// harris rows: the harris twin (block 3, ksize 3, k 0.04, reflect101: config/default.yaml's) on a
// GRAY8 frame, the frame's rows in one strip per thread on the host executor's pool, beside
// cv::cornerHarris with the same parameters after cv::setNumThreads(threads) (OpenCV builds). The
// two are timed in turn within each repetition, so drift of a shared machine falls on both alike;
// medians of --reps. The frame: the synthetic BGR frames' gray (blobs on noise), blurred 5x5.
//
// chain rows: the config's pipeline (default config/default.yaml) through the host executor with
// the cpu profile at each thread count, on synthetic BGR frames of each size held in memory: wall
// time per frame (submit to record), median of --reps frames after 3 warm-up frames, and the
// harris stage's median.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/gaussian.h"
#include "kernels/harris.h"
#include "kernels/to_gray.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/platform.h"
#include "pipeline/thread_pool.h"
#include "tools/cli/bench_util.h"
#include "tools/cli/commands.h"

#if JETPIPE_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace jetpipe::cli {

namespace {

using BenchClock = std::chrono::steady_clock;

double since_ms(BenchClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(BenchClock::now() - t0).count();
}

std::string size_name(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

// The harris input: a synthetic frame's gray, blurred as the default chain blurs it.
HostImage harris_input(int w, int h) {
  const std::vector<HostImage> bgr = synthetic_frames(w, h, 1);
  HostImage gray(w, h, PixelFormat::kGray8), blur(w, h, PixelFormat::kGray8);
  to_gray_ref(bgr[0].view(), gray.view(), 0, h);
  gaussian_ref(resolve_gaussian(5, 0, Border{}), gray.view(), blur.view(), 0, h);
  return blur;
}

}  // namespace

int cmd_bench_cpu(const CpuBenchOptions& o) {
  std::printf("CPU: %s, %d CPUs for this process; %d repetitions, medians\n", cpu_model().c_str(),
              hardware_threads(), o.reps);
  nlohmann::ordered_json j;
  j["cpu"] = cpu_model();
  j["cpus"] = hardware_threads();
  j["harris"] = nlohmann::ordered_json::array();
  j["chain"] = nlohmann::ordered_json::array();

  HarrisParams hp;  // config/default.yaml's response: block 3, ksize 3, k 0.04, reflect101
  std::printf("\nharris (block 3, ksize 3, reflect101), GRAY8 -> F32, one strip per thread:\n");
  std::printf("  %-10s %7s %14s %20s %9s\n", "size", "threads", "jetpipe ms", "cv::cornerHarris ms",
              "ratio");
  for (const auto& [w, h] : o.sizes) {
    const HostImage in = harris_input(w, h);
    HostImage out(w, h, PixelFormat::kF32);
#if JETPIPE_HAVE_OPENCV
    const ImageView v = in.view();
    const cv::Mat src(h, w, CV_8UC1, v.data, v.pitch);
    cv::Mat theirs;
#endif
    for (int t : o.threads) {
      ThreadPool pool(t);
      const std::vector<int> b = strip_bounds(h, t, 1.0);
      const int strips = static_cast<int>(b.size()) - 1;
      const auto ours = [&] {
        pool.run(strips, [&](int k) { harris_ref(hp, in.view(), out.view(), b[k], b[k + 1]); });
      };
      std::vector<double> ours_ms, theirs_ms;
#if JETPIPE_HAVE_OPENCV
      cv::setNumThreads(t);
      const auto cv_harris = [&] {
        cv::cornerHarris(src, theirs, hp.block_size, hp.ksize, hp.k, cv::BORDER_REFLECT_101);
      };
      cv_harris();
#endif
      ours();
      for (int r = 0; r < o.reps; ++r) {
        auto t0 = BenchClock::now();
        ours();
        ours_ms.push_back(since_ms(t0));
#if JETPIPE_HAVE_OPENCV
        t0 = BenchClock::now();
        cv_harris();
        theirs_ms.push_back(since_ms(t0));
#endif
      }
      const double a = percentile(ours_ms, 0.5);
      nlohmann::ordered_json row = {{"size", size_name(w, h)}, {"threads", t}, {"jetpipe_ms", a}};
      if (theirs_ms.empty()) {
        std::printf("  %-10s %7d %14.3f %20s %9s\n", size_name(w, h).c_str(), t, a, "(no OpenCV)",
                    "");
      } else {
        const double c = percentile(theirs_ms, 0.5);
        std::printf("  %-10s %7d %14.3f %20.3f %8.2fx\n", size_name(w, h).c_str(), t, a, c, a / c);
        row["opencv_ms"] = c;
      }
      j["harris"].push_back(row);
    }
  }

  const PipelineConfig cfg = load_config(o.config);
  std::size_t harris_stage = cfg.stages.size();
  for (std::size_t i = 0; i < cfg.stages.size(); ++i) {
    if (cfg.stages[i]->type() == "harris") harris_stage = i;
  }
  std::printf("\nchain %s through the host executor, per frame (BGR frames in memory):\n",
              o.config.c_str());
  std::printf("  %-10s %7s %12s %9s %12s\n", "size", "threads", "frame ms", "fps", "harris ms");
  for (const auto& [w, h] : o.sizes) {
    const std::vector<HostImage> frames = synthetic_frames(w, h, 4);
    for (int t : o.threads) {
      PlatformProfile profile = strategy_profile(MemoryStrategy::kHost, 1, 1, false);
      profile.threads = t;
      std::unique_ptr<Executor> exec = make_executor(cfg, profile, {});
      std::vector<double> frame_ms, harris_ms;
      constexpr int kWarmup = 3;
      for (int i = -kWarmup; i < o.reps; ++i) {
        Frame f;
        f.index = i + kWarmup;
        f.source = "synthetic";
        f.image = frames[static_cast<std::size_t>(f.index) % frames.size()];
        const auto t0 = BenchClock::now();
        exec->submit(std::move(f));
        FrameRecord rec;
        if (!exec->take(&rec, true)) throw Error("bench cpu: the executor gave no record");
        const double ms = since_ms(t0);
        if (!rec.error.empty()) throw Error("bench cpu: " + rec.error);
        if (i < 0) continue;
        frame_ms.push_back(ms);
        if (harris_stage < rec.stage_ms.size()) harris_ms.push_back(rec.stage_ms[harris_stage]);
      }
      const double fm = percentile(frame_ms, 0.5), hm = percentile(harris_ms, 0.5);
      std::printf("  %-10s %7d %12.3f %9.1f %12.3f\n", size_name(w, h).c_str(), t, fm, 1e3 / fm,
                  hm);
      j["chain"].push_back({{"size", size_name(w, h)},
                            {"threads", t},
                            {"frame_ms", fm},
                            {"harris_ms", hm},
                            {"executor", exec->describe()}});
    }
  }
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << j.dump(2) << '\n';
    if (!out) throw Error("bench cpu: cannot write " + o.json);
  }
  return 0;
}

}  // namespace jetpipe::cli
