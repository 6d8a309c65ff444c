// SPDX-License-Identifier: MIT
// jetpipe: run a pipeline over frames, inspect the build and devices, run the regression suite.
// Exit codes: 0 success; 1 runtime failure (also: the video output failed; results are complete);
// 2 bad config or command line (nothing written); 3 bad input (an input cannot be opened or
// stopped mid-stream, or frames failed: their records say why; with several inputs the others
// ran to their end); 128 + the signal's number (130
// SIGINT, 143 SIGTERM, 129 SIGHUP) when a signal stopped `run` (its records and summary are
// complete); a second signal ends the process at once.
#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "pipeline/runner.h"
#include "pipeline/thread_pool.h"
#include "tools/cli/commands.h"
#include "tools/size_list.h"

namespace {

// The first SIGINT, SIGTERM or SIGHUP asks `run` to stop after the frames in flight (the records
// and summary are written); a second one of any of them ends the process at once.
std::atomic<int> g_stop{0};

extern "C" void on_stop_signal(int sig) {
  if (g_stop.load() != 0) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_stop.store(sig);
}

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int exit_code(const jetpipe::Error& e) {
  switch (e.kind()) {
    case jetpipe::ErrorKind::kConfig: return 2;
    case jetpipe::ErrorKind::kInput: return 3;
    default: return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"jetpipe: a streaming pipeline of GPU image stages over cameras, videos and frame "
               "files"};
  app.set_version_flag("--version", std::string("jetpipe ") + JETPIPE_VERSION);
  app.require_subcommand(1);

  jetpipe::RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run a pipeline over an input");
  run_cmd->add_option("--config", run.config, "Pipeline YAML file")->required();
  run_cmd
      ->add_option("--input", run.inputs,
                   "Input URI or NAME=URI, once per input (several: each read on its own thread): "
                   "frames://DIR, a glob, file://x.y4m, file://video, test://NAME, "
                   "v4l2:///dev/videoN, csi://N, rtsp://..., rtp://[HOST]:PORT, gst://... ! "
                   "appsink (replaces the config's input or inputs; unnamed: input0, input1, ...)")
      ->allow_extra_args(false);
  run_cmd->add_option("--output-dir", run.output_dir, "Folder for results.jsonl, summary.json, "
                                                      "images/")
      ->capture_default_str();
  run_cmd->add_option("--platform", run.platform, "auto, a profile name in platforms/, or a file "
                                                  "(overrides the config's platform)");
  run_cmd
      ->add_option("--threads", run.threads,
                   "CPU backend: threads running each frame's strips (overrides the profile's "
                   "`threads`; 0: one per CPU; results are the same for any count)")
      ->check(CLI::Range(0, 1024));
  run_cmd->add_option("--max-frames", run.max_frames, "Stop each input after N frames")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_flag("--save-images", run.save_images,
                    "Save image outputs as images/<name>_<frame>.png");
  run_cmd->add_flag("--strict", run.strict, "Stop at the first frame that fails");
  run_cmd->add_option("--output-video", run.output_video,
                      "Video of one image per frame: FILE.mp4|FILE.mkv (H.264), display://, "
                      "rtp://HOST:PORT (H.264 RTP over UDP), rtsp://[HOST]:PORT/PATH (served)");
  run_cmd->add_option("--output-image", run.output_image,
                      "The image the video shows: frame or a stage's image name")
      ->capture_default_str();
  run_cmd->add_flag("--annotate", run.annotate,
                    "Draw detections, the histogram and stats on the video");
  run_cmd->add_option("--output-fps", run.output_fps, "Frame rate of the video")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  run_cmd->add_option("--timeline", run.timeline,
                      "Write a Chrome-trace JSON of every frame's GPU copies and stages per stream "
                      "(open in ui.perfetto.dev or chrome://tracing; CUDA platforms)");

  jetpipe::cli::StreamBenchOptions bench;
  bench.config = std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml";
  std::string bench_sizes = "1920x1080,3840x2160";
  CLI::App* bench_cmd = app.add_subcommand(
      "bench",
      "Benchmarks: `bench pipeline` runs the executor's memory strategies on frames held "
      "in memory, `bench source` the GStreamer source's copy, `bench cpu` the CPU backend "
      "(kernel benchmarks: jetpipe-bench)");
  CLI::App* bench_pipe = bench_cmd->add_subcommand(
      "pipeline", "fps, latency p50/p99 and single-frame latency per memory strategy, against the "
                  "PCIe floor measured in the same run (CUDA device needed)");
  bench_cmd->require_subcommand(1);
  bench_pipe->add_option("--config", bench.config, "The pipeline")->capture_default_str();
  bench_pipe->add_option("--sizes", bench_sizes, "Comma-separated WxH frame sizes (BGR)")
      ->capture_default_str();
  bench_pipe->add_option("--frames", bench.frames, "Frames per run")
      ->capture_default_str()
      ->check(CLI::Range(10, 100000));
  bench_pipe->add_option("--repeat", bench.repeat, "Runs per setting (the median fps is reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  bench_pipe->add_option("--json", bench.json, "Also write the figures as JSON");
  bench_pipe->add_option("--filter", bench.filter,
                         "Only the settings whose label (as printed) contains this text (or any "
                         "of its '|'-separated parts)");
  bench_pipe
      ->add_option("--sources", bench.sources,
                   "Several inputs instead of the strategies: for each N of the comma-separated "
                   "list, N inputs of frames in memory at once, each on its own thread (as `run` "
                   "reads several inputs), through the config's profile: aggregate fps against "
                   "the PCIe floor, per-input fps and read-to-record latency p50/p99")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  bench_pipe->add_option("--platform", bench.platform,
                         "With --sources: the profile (auto, a name or a file; default the "
                         "config's)");
  bench_pipe->add_option("--interleave", bench.interleave,
                         "Only single-frame latency: this many rounds, each taking one frame of "
                         "every selected setting and one H2D of the frame in turn (side by side)")
      ->check(CLI::Range(0, 100000));

  jetpipe::cli::SourceBenchOptions source_bench;
  std::string source_sizes = "1920x1080,3840x2160";
  CLI::App* bench_src = bench_cmd->add_subcommand(
      "source",
      "CPU time per frame of the GStreamer source's copy from the decoder's buffer into "
      "the frame, before (per-pixel BGRx to BGR) and after (memcpy rows); no GPU needed");
  bench_src->add_option("--sizes", source_sizes, "Comma-separated WxH frame sizes")
      ->capture_default_str();
  bench_src->add_option("--frames", source_bench.frames, "Frames timed per row")
      ->capture_default_str()
      ->check(CLI::Range(10, 100000));
  bench_src->add_option("--warmup", source_bench.warmup, "Frames before the timed ones")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  bench_src->add_option("--json", source_bench.json, "Also write the figures as JSON");

  jetpipe::cli::CpuBenchOptions cpu_bench;
  cpu_bench.config = std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml";
  std::string cpu_sizes = "768x576,1920x1080";
  CLI::App* bench_cpu = bench_cmd->add_subcommand(
      "cpu",
      "The CPU backend: harris beside OpenCV's cornerHarris on the same threads, and the "
      "config's chain per frame through the host executor, at each thread count; no GPU needed");
  bench_cpu->add_option("--config", cpu_bench.config, "The chain")->capture_default_str();
  bench_cpu->add_option("--sizes", cpu_sizes, "Comma-separated WxH frame sizes")
      ->capture_default_str();
  bench_cpu
      ->add_option("--threads", cpu_bench.threads,
                   "Comma-separated thread counts (default: 1 and one per CPU)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  bench_cpu->add_option("--reps", cpu_bench.reps, "Repetitions (frames) per row; medians")
      ->capture_default_str()
      ->check(CLI::Range(3, 100000));
  bench_cpu->add_option("--json", cpu_bench.json, "Also write the figures as JSON");

  jetpipe::cli::TuneOptions tune;
  CLI::App* tune_cmd = app.add_subcommand(
      "tune", "Measure every memory strategy, strip count, frames in flight, graphs and result "
              "memory with a config's pipeline and frames; write the fastest as a profile");
  tune_cmd
      ->add_option("--config", tune.config,
                   "The pipeline (its first input's first 8 frames are "
                   "used, else synthetic 1080p)")
      ->required();
  tune_cmd->add_option("--output", tune.output, "Where the profile goes")->capture_default_str();
  tune_cmd->add_option("--frames", tune.frames, "Frames per run")
      ->capture_default_str()
      ->check(CLI::Range(10, 100000));
  tune_cmd->add_option("--repeat", tune.repeat, "Runs per setting (the median fps decides)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));

  app.add_subcommand("info", "Build features, CUDA devices, and the profile `auto` picks and why");
  app.add_subcommand("stages", "Stage types and their parameters (keys, defaults, ranges)");

  jetpipe::cli::RegressOptions reg;
  reg.dir = std::string(JETPIPE_SOURCE_DIR) + "/tests/regression";
  reg.work_dir = "regress-out";
  CLI::App* reg_cmd = app.add_subcommand(
      "regress", "Run the regression configs over the committed frames and compare with goldens");
  reg_cmd->add_option("--dir", reg.dir, "Folder with configs/, frames/ and golden/")
      ->capture_default_str();
  reg_cmd->add_option("--work-dir", reg.work_dir, "Where the runs write")->capture_default_str();
  reg_cmd->add_option("--platform", reg.platform, "Platform profile to run")->capture_default_str();
  reg_cmd->add_flag("--update", reg.update, "Rewrite the goldens from this run");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (*run_cmd) {
      run.progress = true;
      run.stop = &g_stop;
      catch_stop_signals();
      const jetpipe::RunSummary s = jetpipe::run_pipeline(run);
      std::fprintf(stderr, "jetpipe: %lld frames read, %lld processed, %lld failed",
                   static_cast<long long>(s.read), static_cast<long long>(s.processed),
                   static_cast<long long>(s.failed));
      if (s.dropped > 0) std::fprintf(stderr, ", %lld dropped", static_cast<long long>(s.dropped));
      if (!run.output_video.empty()) {
        std::fprintf(stderr, ", %lld to the video", static_cast<long long>(s.video_frames));
      }
      std::fprintf(stderr, " in %.2f s -> %s\n", s.wall_s, run.output_dir.c_str());
      if (!s.source_error.empty()) {
        for (const jetpipe::InputSummary& in : s.inputs) {
          if (in.error.empty()) continue;
          std::fprintf(stderr, "jetpipe: input %s%s: %s\n", in.name.c_str(),
                       in.ended == "open_failed" ? " could not be opened" : " stopped",
                       in.error.c_str());
        }
        return 3;
      }
      if (!s.output_error.empty()) return 1;  // reported when it happened
      if (s.stopped_by != 0) {
        std::fprintf(stderr, "jetpipe: stopped by signal %d after the frames in flight\n",
                     s.stopped_by);
        return 128 + s.stopped_by;
      }
      return s.failed > 0 ? 3 : 0;
    }
    if (*bench_pipe) {
      std::string bad;
      if (!jetpipe::tools::parse_size_list(bench_sizes, &bench.sizes, &bad)) {
        throw jetpipe::config_error("--sizes: '" + bad + "' is not WxH");
      }
      if (!bench.sources.empty()) return jetpipe::cli::cmd_bench_sources(bench);
      return jetpipe::cli::cmd_bench_pipeline(bench);
    }
    if (*bench_src) {
      std::string bad;
      if (!jetpipe::tools::parse_size_list(source_sizes, &source_bench.sizes, &bad)) {
        throw jetpipe::config_error("--sizes: '" + bad + "' is not WxH");
      }
      return jetpipe::cli::cmd_bench_source(source_bench);
    }
    if (*bench_cpu) {
      std::string bad;
      if (!jetpipe::tools::parse_size_list(cpu_sizes, &cpu_bench.sizes, &bad)) {
        throw jetpipe::config_error("--sizes: '" + bad + "' is not WxH");
      }
      if (cpu_bench.threads.empty()) {
        const int cpus = jetpipe::hardware_threads();
        cpu_bench.threads = {1};
        if (cpus > 1) cpu_bench.threads.push_back(cpus);
      }
      return jetpipe::cli::cmd_bench_cpu(cpu_bench);
    }
    if (*tune_cmd) return jetpipe::cli::cmd_tune(tune);
    if (app.got_subcommand("info")) return jetpipe::cli::cmd_info();
    if (app.got_subcommand("stages")) return jetpipe::cli::cmd_stages();
    if (*reg_cmd) return jetpipe::cli::cmd_regress(reg);
  } catch (const jetpipe::Error& e) {
    std::fprintf(stderr, "jetpipe: error: %s\n", e.what());
    return exit_code(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jetpipe: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
