// SPDX-License-Identifier: MIT
// The CUDA executor against the host executor: for every config in config/ and the regression
// set, the records (results.jsonl lines) and every image output are identical, bit for bit, across
// memory strategies, strip counts K ∈ {1, 2, 3, 4, 8} (K not dividing the height, strips shorter
// than the halo), frames in flight F ∈ {1, 2, 4} and CUDA graphs on and off. The frame stream mixes
// sizes (a resolution change mid-stream re-allocates and re-captures), gray and colour frames, a
// frame the stages reject and a frame that failed to read; every frame yields one record, in order.
#include <gtest/gtest.h>

#include <filesystem>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/io/source.h"
#include "pipeline/results_json.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_CUDA
#include "core/cuda_check.h"
#include "kernels/stream_flag.h"
#endif

namespace fs = std::filesystem;

namespace jetpipe {
namespace {

struct RunOutput {
  std::vector<std::string> records;                          // record_to_json, one per frame
  std::vector<std::map<std::string, std::string>> images;    // name → packed pixels, per frame
  std::vector<std::vector<double>> stage_ms;
};

// The input: the committed frames (colour and gray), then two odd sizes (a resolution change
// twice), a gray frame of 13 rows (strips shorter than the halos at K = 8), a frame that failed to
// read, the committed frames again, and the decoders' layouts (BGRx, RGBA, NV12 of an odd height)
// as the GStreamer sources hand them over.
std::vector<std::pair<std::string, bool>> input_uris() {
  const std::string frames = std::string(JETPIPE_TEST_DATA) + "/regression/frames";
  return {{"frames://" + frames, false},
          {"test://blobs?w=333&h=97&frames=2", false},
          {"test://noise?w=61&h=13&frames=2&format=gray8", false},
          {"", true},  // a frame that could not be read
          {"frames://" + frames + "/vtest_0000*", false},
          {"test://blobs?w=333&h=97&frames=1&format=bgrx8", false},
          {"test://checker?w=130&h=45&frames=1&format=nv12", false},
          {"test://noise?w=67&h=33&frames=1&format=rgba8", false}};
}

RunOutput run(const PipelineConfig& cfg, const PlatformProfile& profile) {
  const std::vector<std::string> keep = cfg.image_names();
  std::unique_ptr<Executor> exec = make_executor(cfg, profile, keep);
  RunOutput out;
  auto drain = [&](bool wait) {
    FrameRecord rec;
    while (exec->take(&rec, wait)) {
      out.records.push_back(record_to_json(rec).dump());
      std::map<std::string, std::string> imgs;
      for (const auto& [name, img] : rec.images) imgs[name] = test::pack_pixels(img.view());
      out.images.push_back(std::move(imgs));
      out.stage_ms.push_back(rec.stage_ms);
    }
  };
  std::int64_t index = 0;
  for (const auto& [uri, failed] : input_uris()) {
    if (failed) {
      Frame f;
      f.index = index++;
      f.source = "broken.ppm";
      f.error = "frame " + std::to_string(f.index) + " (broken.ppm): truncated PNM data";
      exec->submit(std::move(f));
      drain(false);
      continue;
    }
    SourceOptions opt;
    opt.allocator = exec->allocator();
    std::unique_ptr<Source> src = open_source(uri, opt);
    Frame f;
    while (src->next(&f)) {
      f.index = index++;
      exec->submit(std::move(f));
      f = Frame{};
      drain(false);
    }
  }
  while (exec->in_flight() > 0) drain(true);
  EXPECT_EQ(static_cast<std::int64_t>(out.records.size()), index) << "one record per frame";
  return out;
}

PlatformProfile profile(const std::string& memory, int chunks, int frames, bool graphs,
                        const std::string& timing = "stages") {
  PlatformProfile p = strategy_profile(parse_memory_strategy(memory), chunks, frames, graphs);
  p.timing = parse_timing_level(timing);
  return p;
}

std::vector<std::string> config_files() {
  std::vector<std::string> files;
  for (const char* dir : {"/../config", "/regression/configs"}) {
    for (const auto& e : fs::directory_iterator(std::string(JETPIPE_TEST_DATA) + dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Integers and strings equal; floats within `rel` (the F32 stats sum in double in a fixed tree on the
// GPU, sequentially on the CPU: ~1e-12 apart, kernels/stats.h).
bool json_near(const nlohmann::json& a, const nlohmann::json& b, double rel) {
  if (a.is_number_float() || b.is_number_float()) {
    if (!a.is_number() || !b.is_number()) return false;
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= rel * std::max(std::abs(x), std::abs(y));
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()) || !json_near(it.value(), b.at(it.key()), rel)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!json_near(a[i], b[i], rel)) return false;
    }
    return true;
  }
  return a == b;
}

// rel = 0: records equal as text, bit for bit.
void expect_same(const RunOutput& ref, const RunOutput& got, const std::string& what,
                 double rel = 0) {
  ASSERT_EQ(ref.records.size(), got.records.size()) << what;
  for (std::size_t i = 0; i < ref.records.size(); ++i) {
    if (rel == 0) {
      EXPECT_EQ(ref.records[i], got.records[i]) << what << ", record " << i;
    } else {
      EXPECT_TRUE(json_near(nlohmann::json::parse(ref.records[i]),
                            nlohmann::json::parse(got.records[i]), rel))
          << what << ", record " << i << "\n  host: " << ref.records[i]
          << "\n  gpu:  " << got.records[i];
    }
    ASSERT_EQ(ref.images[i].size(), got.images[i].size()) << what << ", record " << i;
    for (const auto& [name, pixels] : ref.images[i]) {
      auto it = got.images[i].find(name);
      ASSERT_NE(it, got.images[i].end()) << what << ", record " << i << ": no image " << name;
      EXPECT_TRUE(it->second == pixels) << what << ", record " << i << ": image " << name
                                        << " differs";
    }
  }
}

// JETPIPE_TEST_SETTINGS=TEXT: the equality test runs only the settings whose name contains TEXT
// (for example "pinned-chunked K=3" or "copy_wait poll"), to reproduce one under a tool in
// seconds; null when unset (every setting).
const char* settings_filter() {
  static const char* only = std::getenv("JETPIPE_TEST_SETTINGS");
  return only;
}

// Runs `cfg` under `p` and expects the records and images of `ref`; false once the test has
// failed, so that the caller stops. A CUDA error thrown out of the executor loses the
// SCOPED_TRACE, so the failure names the setting itself; under compute-sanitizer the setting is
// also printed before it runs, so that the tool's reports (on stdout too) fall under it. A
// setting that settings_filter() leaves out passes without running.
bool same_as_ref(const RunOutput& ref, const PipelineConfig& cfg, const PlatformProfile& p,
                 const std::string& what) {
  const char* only = settings_filter();
  if (only != nullptr && what.find(only) == std::string::npos) return true;
  if (test::under_sanitizer()) {
    std::printf("[ SETTING  ] %s\n", what.c_str());
    std::fflush(stdout);
  }
  RunOutput got;
  try {
    got = run(cfg, p);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return false;
  }
  if (::testing::Test::HasFailure()) return false;  // run()'s own checks failed
  expect_same(ref, got, what);
  return !::testing::Test::HasFailure();
}

class GpuExecutor : public ::testing::TestWithParam<std::string> {};

// The GPU equals the host (images and integer results exactly, float stats within 1e-11), and
// every strategy, K, F and graph setting equals the first GPU run bit for bit.
TEST_P(GpuExecutor, EveryStrategyChunkingAndGraphEqualsTheHost) {
  JP_REQUIRE_GPU();
  const PipelineConfig cfg = load_config(GetParam());
  const std::string file = fs::path(GetParam()).filename().string();
  if (const char* only = settings_filter()) {
    std::printf("[   NOTE   ] %s: only the settings containing \"%s\" run\n", file.c_str(), only);
  }
  const RunOutput host = run(cfg, profile("host", 1, 1, false));
  // The stream holds a failed read (record 8) and gray frames a colour-only stage may reject.
  ASSERT_NE(host.records[8].find("\"error\""), std::string::npos) << host.records[8];
  const RunOutput ref = run(cfg, profile("copy", 1, 1, false));
  expect_same(host, ref, file + ": host against copy K=1", 1e-11);
  if (HasFailure()) return;
  for (const char* memory : {"copy", "pinned-chunked", "zero-copy", "managed"}) {
    for (int k : {1, 2, 3, 4, 8}) {
      for (int f : {1, 2, 4}) {
        for (bool graphs : {false, true}) {
          const std::string what = std::string(memory) + " K=" + std::to_string(k) +
                                   " F=" + std::to_string(f) + (graphs ? " graphs" : "");
          SCOPED_TRACE(what);
          // Timing events change the work queued (and the graphs' nodes), never the results.
          const char* timing = k == 3 ? "strips" : k == 8 ? "frame" : "stages";
          PlatformProfile p = profile(memory, k, f, graphs, timing);
          if (k == 4) p.timing_every = 2;  // timed and untimed frames (two graphs) alternate
          if (!same_as_ref(ref, cfg, p, file + ": " + what)) return;
        }
      }
    }
  }
  // The shipped discrete profile, strips of at least 1 MiB (fewer strips for small frames), and
  // strips shrinking toward the bottom (strip_ratio).
  PlatformProfile min_strip = profile("pinned-chunked", 8, 2, true);
  min_strip.min_strip_mb = 1;
  PlatformProfile tapered = profile("pinned-chunked", 4, 1, true);
  tapered.strip_ratio = 0.4;
  PlatformProfile tapered_zero_copy = profile("zero-copy", 3, 2, false);
  tapered_zero_copy.strip_ratio = 0.6;
  // The first strips in one copy (strip_copies): on the copy stream (graphs or not, frames in
  // flight, with a timeline of every strip), tapered, and on one stream.
  PlatformProfile two_copies = profile("pinned-chunked", 4, 2, true, "strips");
  two_copies.strip_copies = 2;
  PlatformProfile three_copies = profile("pinned-chunked", 8, 1, false);
  three_copies.strip_copies = 3;
  three_copies.strip_ratio = 0.5;
  PlatformProfile one_copy_one_stream = profile("pinned-chunked", 3, 2, true);
  one_copy_one_stream.streams = 1;
  one_copy_one_stream.strip_copies = 1;
  // The copies polled (copy_wait; one frame in flight): one strip, strips in two copies with a
  // timing event after every stage, K = 8 (a copy each; strips shorter than the halo), and five
  // tapered strips in three copies.
  std::vector<PlatformProfile> polled = {profile("pinned-chunked", 1, 1, true),
                                         profile("pinned-chunked", 4, 1, true, "strips"),
                                         profile("pinned-chunked", 8, 1, true, "frame"),
                                         profile("pinned-chunked", 5, 1, true, "frame")};
  polled[1].strip_copies = 2;
  polled[3].strip_copies = 3;
  polled[3].strip_ratio = 0.7;
  polled.push_back(resolve_platform("discrete-latency", nullptr));  // shipped
  for (PlatformProfile& p : polled) p.copy_wait = CopyWait::kPoll;
  std::vector<PlatformProfile> profiles = {resolve_platform("discrete", nullptr),
                                           min_strip, tapered, tapered_zero_copy, two_copies,
                                           three_copies, one_copy_one_stream};
  // Under initcheck the polled profiles stay out: a poll orders a strip's stages after its copy
  // through a flag CUDA does not see (the driver API's stream memory operations warn
  // that such an order must also be visible to CUDA), and initcheck does not see it either: on
  // the H100, with the GPU to itself, the polled profiles of six configs ran clean, but the video
  // config's reported 20 reads by the box of `gray` rows that the to_gray copy on the same
  // stream had written from the polled frame rows (H100, 2026-11-24, commit 6b17bfa;
  // docs/PERFORMANCE.md, sanitizer section).
  if (test::under_sanitizer("initcheck")) {
    std::printf("[   NOTE   ] %s: copy_wait: poll profiles not run under initcheck\n",
                file.c_str());
  } else {
    profiles.insert(profiles.end(), polled.begin(), polled.end());
  }
  for (const PlatformProfile& p : profiles) {
    const std::string what =
        file + ": " + p.name + " " + name(p.memory) + " K=" + std::to_string(p.chunks) +
        " min_strip_mb " + std::to_string(p.min_strip_mb) + " strip_ratio " +
        std::to_string(p.strip_ratio) + " strip_copies " + std::to_string(p.strip_copies) +
        " streams " + std::to_string(p.streams) + " copy_wait " + name(p.copy_wait);
    SCOPED_TRACE(what);  // for run()'s own checks
    if (!same_as_ref(ref, cfg, p, what)) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, GpuExecutor, ::testing::ValuesIn(config_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = fs::path(info.param).stem().string();
                           n += fs::path(info.param).parent_path().filename() == "configs"
                                    ? "_regression"
                                    : "_example";
                           for (char& c : n) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

// config/default.yaml, the pipeline the timing tests run.
PipelineConfig default_config() {
  return load_config(std::string(JETPIPE_TEST_DATA) + "/../config/default.yaml");
}

// Submits the committed sample frames (4), read into the executor's pool memory, and returns
// every record, in order.
std::vector<FrameRecord> sample_frame_records(Executor& exec) {
  SourceOptions opt;
  opt.allocator = exec.allocator();
  auto src = open_source(std::string("frames://") + JETPIPE_TEST_DATA + "/regression/frames", opt);
  Frame f;
  while (src->next(&f)) exec.submit(std::move(f));
  std::vector<FrameRecord> records;
  FrameRecord rec;
  while (exec.in_flight() > 0 && exec.take(&rec, true)) records.push_back(std::move(rec));
  return records;
}

// Per-stage GPU times come from events: every stage that ran has a positive time; timing: strips
// gives a copy span per strip, timing: stages one for the frame.
TEST(GpuExecutorTiming, StageTimesAndSpansArePositive) {
  JP_REQUIRE_GPU();
  const PipelineConfig cfg = default_config();
  for (const char* timing : {"strips", "stages"}) {
    for (bool graphs : {false, true}) {
      SCOPED_TRACE(std::string(timing) + (graphs ? " graphs" : " streams"));
      std::unique_ptr<Executor> exec =
          make_executor(cfg, profile("pinned-chunked", 4, 2, graphs, timing), {"blur"});
      const std::vector<FrameRecord> records = sample_frame_records(*exec);
      EXPECT_EQ(records.size(), 4u);
      for (const FrameRecord& rec : records) {
        ASSERT_TRUE(rec.error.empty()) << rec.error;
        ASSERT_EQ(rec.stage_ms.size(), cfg.stages.size());
        for (std::size_t i = 0; i < cfg.stages.size(); ++i) {
          // Fused: stats into the histogram, to_gray into the gaussian (frames in device memory).
          if (cfg.stages[i]->type() == "stats" || cfg.stages[i]->type() == "to_gray") continue;
          EXPECT_GT(rec.stage_ms[i], 0.0) << cfg.stages[i]->name();
        }
        EXPECT_GT(rec.gpu_ms, 0.0);
        int h2d = 0, d2h = 0;
        for (const Span& s : rec.spans) {
          EXPECT_GE(s.end_ms, s.start_ms) << s.name << " " << s.track;
          h2d += s.kind == Span::kH2D;
          d2h += s.kind == Span::kD2H;
        }
        const int expected = std::string(timing) == "strips" ? 4 : 1;
        EXPECT_EQ(h2d, expected) << "copies in";
        EXPECT_EQ(d2h, expected) << "copies out (blur is kept)";
      }
    }
  }
  // timing_every 2: frames 0 and 2 carry stage times and spans, 1 and 3 only their GPU span.
  PlatformProfile every = profile("pinned-chunked", 4, 2, true, "stages");
  every.timing_every = 2;
  std::unique_ptr<Executor> exec = make_executor(cfg, every, {});
  const std::vector<FrameRecord> records = sample_frame_records(*exec);
  EXPECT_EQ(records.size(), 4u);
  for (std::size_t n = 0; n < records.size(); ++n) {
    const FrameRecord& rec = records[n];
    ASSERT_TRUE(rec.error.empty()) << rec.error;
    EXPECT_GT(rec.gpu_ms, 0.0) << "frame " << n;
    EXPECT_EQ(rec.stage_ms.size(), n % 2 == 0 ? cfg.stages.size() : 0u) << "frame " << n;
    EXPECT_EQ(rec.spans.empty(), n % 2 == 1) << "frame " << n;
  }
}

// On one stream, the histogram (+ stats) runs on the side stream beside harris and the detection
// (StagePlan::beside): the executor says so, and the stage has its own timeline row and a positive
// time (its results: the strategy tests above, which compare every configuration with the host).
TEST(GpuExecutorTiming, HistogramBesideTheChainOnOneStream) {
  JP_REQUIRE_GPU();
  const PipelineConfig cfg = default_config();
  for (bool graphs : {false, true}) {
    SCOPED_TRACE(graphs ? "graphs" : "streams");
    std::unique_ptr<Executor> exec =
        make_executor(cfg, profile("zero-copy", 1, 2, graphs, "stages"), {});
    EXPECT_NE(exec->describe().find("beside: hist"), std::string::npos) << exec->describe();
    // harris gathers the response's maximum for the detection (no maximum pass of its own).
    EXPECT_NE(exec->describe().find("response's maximum into corners"), std::string::npos)
        << exec->describe();
    const std::vector<FrameRecord> records = sample_frame_records(*exec);
    EXPECT_EQ(records.size(), 4u);
    for (const FrameRecord& rec : records) {
      ASSERT_TRUE(rec.error.empty()) << rec.error;
      ASSERT_EQ(rec.stage_ms.size(), cfg.stages.size());
      int side = 0;
      for (const Span& s : rec.spans) {
        EXPECT_GE(s.end_ms, s.start_ms) << s.name << " " << s.track;
        if (s.track.find(" side") != std::string::npos) {
          ++side;
          EXPECT_EQ(s.name.rfind("hist", 0), 0u) << s.name;
        }
      }
      EXPECT_GE(side, 1) << "the histogram's span on the side stream";
      for (std::size_t i = 0; i < cfg.stages.size(); ++i) {
        if (cfg.stages[i]->name() == "hist") EXPECT_GT(rec.stage_ms[i], 0.0);
      }
    }
  }
  // Strips on several streams: beside too, each strip as soon as its rows are written
  // (docs/decisions/006-beside-strips.md).
  std::unique_ptr<Executor> strips =
      make_executor(cfg, profile("pinned-chunked", 4, 2, true, "stages"), {});
  EXPECT_NE(strips->describe().find("beside: hist"), std::string::npos) << strips->describe();
}

// Managed memory is attached to the frame's main stream while the frame runs: the histogram goes
// beside the chain only where its input (blur) is device memory, and in line on the main stream
// where blur is asked for (then it lives in managed memory). compute-sanitizer memcheck reported a
// side-stream kernel reading a managed image on an H100; on a Jetson it is undefined.
TEST(GpuExecutorTiming, HistogramOfAManagedImageStaysOnTheFramesStream) {
  JP_REQUIRE_GPU();
  const PipelineConfig cfg = default_config();
  for (bool keep_blur : {false, true}) {
    SCOPED_TRACE(keep_blur ? "blur kept (managed)" : "blur in device memory");
    const std::vector<std::string> keep =
        keep_blur ? std::vector<std::string>{"blur"} : std::vector<std::string>{};
    std::unique_ptr<Executor> exec =
        make_executor(cfg, profile("managed", 1, 2, false, "stages"), keep);
    EXPECT_EQ(exec->describe().find("beside: hist") == std::string::npos, keep_blur)
        << exec->describe();
    const std::vector<FrameRecord> records = sample_frame_records(*exec);
    EXPECT_EQ(records.size(), 4u);
    for (const FrameRecord& rec : records) {
      ASSERT_TRUE(rec.error.empty()) << rec.error;
      EXPECT_EQ(rec.images.count("blur"), keep_blur ? 1u : 0u);
      int side = 0;
      for (const Span& s : rec.spans) side += s.track.find(" side") != std::string::npos;
      EXPECT_EQ(side > 0, !keep_blur) << "spans on the side stream: " << side;
    }
  }
}

#if JETPIPE_HAVE_CUDA
// kernels/stream_flag.h: work queued after the poller on one stream sees what another stream
// copied before writing the value; the pollers of later rounds find the previous round's value in
// the flag and must wait for theirs (a stale match would copy the buffer while it is written).
// Odd rounds queue the copy first (the executor's order), even rounds the poller first, so that
// it spins while the copy runs. Under compute-sanitizer initcheck (tools/gpu/sanitize.sh sets
// JETPIPE_SANITIZER) a copy queued after the polling kernel did not run before that kernel ended
// (H100: the poller trapped after its 10 s), so every round queues the copy first there.
TEST(GpuStreamValue, WorkAfterThePollSeesTheCopy) {
  JP_REQUIRE_GPU();
  if (!stream_values_supported()) GTEST_SKIP() << "cuStreamWriteValue32 not available";
  const std::size_t n = std::size_t(8) << 20;
  PinnedBuffer host(n, false);
  DeviceBuffer dst(n), check(n), words(2 * sizeof(std::uint32_t));
  JP_CUDA(cudaMemset(words.get(), 0, 2 * sizeof(std::uint32_t)));
  CudaStream copier, waiter;
  auto* flag = words.get<std::uint32_t>();
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::vector<unsigned char> got(n);
  const bool serializing = test::under_sanitizer("initcheck");
  for (std::uint32_t round = 1; round <= 4; ++round) {
    auto* h = host.get<unsigned char>();
    for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<unsigned char>(rng());
    JP_CUDA(cudaMemset(dst.get(), 0xA5, n));
    JP_CUDA(cudaMemset(check.get(), 0x5A, n));
    JP_CUDA(cudaDeviceSynchronize());
    auto copy = [&] {
      JP_CUDA(cudaMemcpyAsync(dst.get(), h, n, cudaMemcpyHostToDevice, copier.get()));
      JP_CUDA(write_stream_value(flag, round, copier.get()));
    };
    const bool poller_first = round % 2 == 0 && !serializing;
    if (!poller_first) copy();
    JP_CUDA(write_stream_value(flag + 1, round, waiter.get()));
    JP_CUDA(launch_wait_value(flag, flag + 1, waiter.get()));
    JP_CUDA(cudaMemcpyAsync(check.get(), dst.get(), n, cudaMemcpyDeviceToDevice, waiter.get()));
    if (poller_first) copy();
    JP_CUDA(cudaStreamSynchronize(copier.get()));
    JP_CUDA(cudaStreamSynchronize(waiter.get()));
    JP_CUDA(cudaMemcpy(got.data(), check.get(), n, cudaMemcpyDeviceToHost));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += got[i] != h[i];
    ASSERT_EQ(bad, 0u) << "round " << round << ", seed " << seed;
  }
}
#endif

}  // namespace
}  // namespace jetpipe
