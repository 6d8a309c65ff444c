// SPDX-License-Identifier: MIT
// Several inputs in one run: each read on its own thread (SourceSet), interleaved into one
// executor (Interleaver). Each input's records come in that input's order and equal the records
// of the input run alone; an input that stalls does not hold back the others; one that fails, at
// open or later, ends alone; a stop ends every input with complete files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "core/error.h"
#include "pipeline/api.h"
#include "pipeline/interleaver.h"
#include "pipeline/io/gst_source.h"
#include "pipeline/io/image_io.h"
#include "pipeline/results_json.h"
#include "pipeline/runner.h"
#include "pipeline/source_set.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace jetpipe {
namespace {

// A gate a fake source waits at until the test opens it (or a stop request, or 30 s: then
// timed_out says the test would have hung).
class Gate {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(m_);
    open_ = true;
    cv_.notify_all();
  }
  void wait(const std::atomic<int>* stop) {
    std::unique_lock<std::mutex> lock(m_);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!open_ && (stop == nullptr || stop->load() == 0)) {
      if (cv_.wait_until(lock, std::min(until, std::chrono::steady_clock::now() +
                                                   std::chrono::milliseconds(20))) ==
              std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= until) {
        timed_out = true;
        return;
      }
    }
  }
  std::atomic<bool> timed_out{false};

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

// `frames` gray frames of w × h, frame k filled with k % 256; before frame `block_at` it waits at
// the gate. frames < 0: endless.
class FakeSource : public Source {
 public:
  FakeSource(std::string name, std::int64_t frames, int w, int h, const std::atomic<int>* stop,
             Gate* gate = nullptr, std::int64_t block_at = -1)
      : name_(std::move(name)),
        frames_(frames),
        w_(w),
        h_(h),
        stop_(stop),
        gate_(gate),
        block_at_(block_at) {}
  bool next(Frame* f) override {
    if (gate_ != nullptr && i_ == block_at_) gate_->wait(stop_);
    if (stop_ != nullptr && stop_->load() != 0) return false;
    if (frames_ >= 0 && i_ >= frames_) return false;
    f->index = i_;
    f->source = name_ + "#" + std::to_string(i_);
    f->image = HostImage(w_, h_, PixelFormat::kGray8);
    const ImageView v = f->image.view();
    for (int y = 0; y < h_; ++y) {
      std::fill(v.row<std::uint8_t>(y), v.row<std::uint8_t>(y) + w_,
                static_cast<std::uint8_t>(i_ % 256));
    }
    ++i_;
    return true;
  }
  std::string describe() const override { return "fake " + name_; }

 private:
  std::string name_;
  std::int64_t frames_;
  int w_, h_;
  const std::atomic<int>* stop_;
  Gate* gate_;
  std::int64_t block_at_;
  std::int64_t i_ = 0;
};

SourceSet::Input fake(const std::string& name, std::int64_t frames, int w, int h,
                      Gate* gate = nullptr, std::int64_t block_at = -1) {
  SourceSet::Input in;
  in.name = name;
  in.uri = "fake://" + name;
  in.open = [=](const SourceOptions& o) {
    return std::make_unique<FakeSource>(name, frames, w, h, o.stop, gate, block_at);
  };
  return in;
}

SourceSet::Input failing(const std::string& name, const std::string& why) {
  SourceSet::Input in;
  in.name = name;
  in.uri = "fake://" + name;
  in.open = [=](const SourceOptions&) -> std::unique_ptr<Source> { throw input_error(why); };
  return in;
}

// A stats stage on the CPU twins: a frame's record says which frame it was (mean == k % 256).
struct HostRun {
  PipelineConfig cfg = parse_config("stages: [{type: stats}]\n", "stats.yaml");
  std::unique_ptr<Executor> exec = make_executor(cfg, resolve_platform("cpu", nullptr), {});
};

double mean_of(const FrameRecord& r) { return std::get<StatsResult>(r.results.at(0).second).mean; }

TEST(SourceSet, AStalledInputDoesNotHoldBackTheOthers) {
  Gate gate;
  HostRun h;
  SourceSet set({fake("slow", 3, 8, 6, &gate, 1), fake("fast", 20, 16, 4)});
  set.wait_open();
  Interleaver run(set, *h.exec);
  FrameRecord rec;
  std::size_t from = 0;
  std::map<std::string, std::vector<std::int64_t>> seen;
  bool opened = false;
  while (run.next(&rec, &from)) {
    ASSERT_TRUE(rec.error.empty()) << rec.error;
    EXPECT_EQ(rec.input, set.state(from).name);
    EXPECT_EQ(mean_of(rec), static_cast<double>(rec.index));
    seen[rec.input].push_back(rec.index);
    // Every record of the fast input arrives while the slow one waits at its second frame (its
    // first may not have been read yet: the threads start in any order).
    if (rec.input == "fast" && seen["fast"].size() == 20) {
      EXPECT_LE(seen["slow"].size(), 1u);
      opened = true;
      gate.open();
    }
  }
  EXPECT_TRUE(opened);
  EXPECT_FALSE(gate.timed_out) << "the fast input's records waited for the stalled input";
  EXPECT_EQ(seen["slow"], (std::vector<std::int64_t>{0, 1, 2}));
  ASSERT_EQ(seen["fast"].size(), 20u);
  for (std::int64_t k = 0; k < 20; ++k) EXPECT_EQ(seen["fast"][k], k);
  EXPECT_EQ(set.state(0).end, InputEnd::kEnd);
  EXPECT_EQ(set.state(1).end, InputEnd::kEnd);
  EXPECT_EQ(set.state(0).taken, 3);
  EXPECT_EQ(set.state(1).taken, 20);
}

TEST(SourceSet, EachInputKeepsItsOrderAndCount) {
  HostRun h;
  SourceSet::Options o;
  o.max_frames = 25;
  SourceSet set({fake("a", 7, 5, 3), fake("b", 40, 9, 9), fake("c", 0, 4, 4), fake("d", 25, 1, 1)},
                o);
  set.wait_open();
  Interleaver run(set, *h.exec);
  FrameRecord rec;
  std::size_t from = 0;
  std::vector<std::int64_t> next(4, 0);
  while (run.next(&rec, &from)) {
    ASSERT_LT(from, 4u);
    EXPECT_EQ(rec.index, next[from]++) << rec.input;
    EXPECT_EQ(rec.width, (std::vector<int>{5, 9, 4, 1})[from]);
  }
  EXPECT_EQ(next, (std::vector<std::int64_t>{7, 25, 0, 25}));
  EXPECT_EQ(run.submitted(), 57);
  EXPECT_EQ(set.state(0).end, InputEnd::kEnd);
  EXPECT_EQ(set.state(1).end, InputEnd::kMaxFrames);  // 40 frames, 25 asked for
  EXPECT_EQ(set.state(2).end, InputEnd::kEnd);
  EXPECT_EQ(set.state(3).taken, 25);
  EXPECT_STREQ(name(set.state(1).end), "max_frames");
}

TEST(SourceSet, AnInputThatCannotOpenEndsAlone) {
  HostRun h;
  SourceSet set({failing("gone", "source 'x': no camera"), fake("ok", 5, 4, 4)});
  set.wait_open();
  Interleaver run(set, *h.exec);
  FrameRecord rec;
  std::size_t from = 0;
  int n = 0;
  while (run.next(&rec, &from)) {
    EXPECT_EQ(from, 1u);
    ++n;
  }
  EXPECT_EQ(n, 5);
  const InputState gone = set.state(0);
  EXPECT_EQ(gone.end, InputEnd::kOpenFailed);
  EXPECT_FALSE(gone.opened);
  EXPECT_EQ(gone.error, "source 'x': no camera");
  EXPECT_EQ(set.state(1).end, InputEnd::kEnd);
  EXPECT_EQ(set.state(1).describe, "fake ok");
}

TEST(SourceSet, NoInputOpensIsOneError) {
  {
    SourceSet one({failing("a", "source 'a': missing")});
    try {
      one.wait_open();
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput);
      EXPECT_STREQ(e.what(), "source 'a': missing");  // one input: its own error, as before
    }
  }
  SourceSet two({failing("a", "no a"), failing("b", "no b")});
  try {
    two.wait_open();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_STREQ(e.what(), "no input could be opened: a: no a; b: no b");
  }
}

TEST(SourceSet, AStopEndsEveryInput) {
  HostRun h;
  std::atomic<int> stop{0};
  Gate never;
  SourceSet::Options o;
  o.stop = &stop;
  // An endless input, and one waiting for a frame that never comes (a stalled camera).
  SourceSet set({fake("endless", -1, 6, 6), fake("stalled", 10, 6, 6, &never, 2)}, o);
  set.wait_open();
  Interleaver run(set, *h.exec);
  FrameRecord rec;
  std::size_t from = 0;
  std::int64_t n = 0;
  while (run.next(&rec, &from)) {
    if (++n == 50) stop.store(SIGINT);
  }
  EXPECT_FALSE(never.timed_out);
  EXPECT_EQ(set.stopped_by(), SIGINT);
  EXPECT_EQ(set.state(0).end, InputEnd::kStopped);
  EXPECT_EQ(set.state(1).end, InputEnd::kStopped);
  EXPECT_LE(set.state(1).taken, 2);  // its first two frames, if its thread read them in time
  // Frames read before the stop (at most the queues' depth more) get records, each one.
  EXPECT_EQ(n, set.state(0).taken + set.state(1).taken);
  EXPECT_LE(n, 50 + 2 * static_cast<std::int64_t>(SourceSet::kDepth) + 2);
}

// ---- Runs of jetpipe run with several inputs
// ------------------------------------------------------------------------------------------

class MultiInputRun : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937 rng(test::fresh_seed());
    fs::create_directories(dir_ / "frames");
    // Frame files of two sizes and formats.
    for (int i = 0; i < 5; ++i) {
      const bool gray = i % 2 == 0;
      const HostImage img = test::random_image(
          gray ? 40 : 33, gray ? 30 : 17, gray ? PixelFormat::kGray8 : PixelFormat::kBgr8, rng);
      write_image((dir_ / "frames" / ("f" + std::to_string(i) + (gray ? ".pgm" : ".ppm"))).string(),
                  img.view());
    }
    // A y4m clip (25 fps), luma random.
    std::string y4m = "YUV4MPEG2 W24 H20 F25:1 C420jpeg\n";
    for (int k = 0; k < 6; ++k) {
      y4m += "FRAME\n";
      for (int i = 0; i < 24 * 20; ++i) y4m += static_cast<char>(rng() & 0xff);
      y4m += std::string(2 * 12 * 10, '\x80');
    }
    std::ofstream(dir_ / "clip.y4m", std::ios::binary) << y4m;
  }

  // A config with these inputs (name, URI) or, with one unnamed, `input:`.
  std::string config(const std::vector<std::pair<std::string, std::string>>& inputs) {
    std::string y = "platform: cpu\n";
    if (inputs.size() == 1 && inputs[0].first.empty()) {
      y += "input: \"" + inputs[0].second + "\"\n";
    } else {
      y += "inputs:\n";
      for (const auto& [n, u] : inputs) y += "  - {name: " + n + ", uri: \"" + u + "\"}\n";
    }
    y += "stages:\n  - {type: to_gray}\n  - {type: gaussian, ksize: 5}\n"
         "  - {type: histogram, bins: 32}\n  - {type: stats}\n";
    const fs::path p = dir_ / ("c" + std::to_string(configs_++) + ".yaml");
    std::ofstream(p) << y;
    return p.string();
  }

  static std::vector<json> records(const fs::path& out) {
    std::vector<json> r;
    std::ifstream in(out / "results.jsonl");
    for (std::string line; std::getline(in, line);) r.push_back(json::parse(line));
    return r;
  }

  // Runs the inputs together, then each alone, and compares: each input's records (without the
  // `input` key) in the same order equal its run alone, frame indices counting from 0.
  void expect_each_as_alone(const std::vector<std::pair<std::string, std::string>>& inputs) {
    RunOptions o;
    o.config = config(inputs);
    o.output_dir = (dir_ / ("together" + std::to_string(runs_++))).string();
    const RunSummary all = run_pipeline(o);
    EXPECT_EQ(all.failed, 0);
    ASSERT_EQ(all.inputs.size(), inputs.size());
    std::map<std::string, std::vector<json>> by_input;
    for (json r : records(o.output_dir)) {
      ASSERT_TRUE(r.contains("input")) << r.dump();
      const std::string name = r["input"];
      r.erase("input");
      by_input[name].push_back(std::move(r));
    }
    const json sum = json::parse(test::slurp(fs::path(o.output_dir) / "summary.json"));
    std::int64_t total = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const auto& [name, uri] = inputs[i];
      SCOPED_TRACE(name + " = " + uri);
      RunOptions alone = o;
      alone.inputs = {uri};
      alone.output_dir = (dir_ / ("alone" + std::to_string(runs_++))).string();
      const RunSummary one = run_pipeline(alone);
      const std::vector<json> want = records(alone.output_dir);
      ASSERT_FALSE(want.empty());
      EXPECT_FALSE(want[0].contains("input"));  // one unnamed input: records as before
      const std::vector<json>& got = by_input[name];
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t k = 0; k < want.size(); ++k) {
        EXPECT_EQ(got[k]["frame"], k);
        EXPECT_EQ(got[k], want[k]) << "record " << k;
      }
      EXPECT_EQ(all.inputs[i].name, name);
      EXPECT_EQ(all.inputs[i].read, one.read);
      EXPECT_EQ(all.inputs[i].processed, one.processed);
      EXPECT_EQ(all.inputs[i].ended, "end");
      const json& s = sum["inputs"][name];
      EXPECT_EQ(s["frames"]["read"], one.read);
      EXPECT_EQ(s["frames"]["processed"], one.processed);
      EXPECT_EQ(s["frames"]["failed"], 0);
      EXPECT_EQ(s["latency"]["samples"], one.processed);
      EXPECT_EQ(s["ended"], "end");
      EXPECT_EQ(s["uri"], uri);
      EXPECT_GT(s["fps"].get<double>(), 0.0);
      EXPECT_FALSE(s.contains("error"));
      total += one.read;
    }
    EXPECT_EQ(all.read, total);
    EXPECT_EQ(sum["frames"]["read"], total);
    EXPECT_FALSE(sum.contains("input"));  // several inputs: per input only
  }

  test::TempDir tmp_;
  const fs::path dir_ = tmp_.path();
  int configs_ = 0, runs_ = 0;
};

TEST_F(MultiInputRun, TwoInputsOfOneSizeEqualEachAlone) {
  expect_each_as_alone({{"bgr", "test://gradient?w=64&h=48&frames=9"},
                        {"nv12", "test://gradient?w=64&h=48&frames=9&format=nv12"}});
}

TEST_F(MultiInputRun, FourInputsOfOtherSizesEqualEachAlone) {
  // GStreamer's videotestsrc where present (deterministic: smpte is a still picture).
  const bool vts = have_gstreamer() && detect_gst_features().has("videotestsrc");
  expect_each_as_alone(
      {{"files", "frames://" + (dir_ / "frames").string()},
       {"clip", "file://" + (dir_ / "clip.y4m").string()},
       {"checker", "test://checker?w=50&h=34&frames=7&format=rgbx8"},
       {"other", vts ? "test://smpte?w=40&h=30&frames=6" : "test://noise?w=64&h=48&frames=11"}});
}

TEST_F(MultiInputRun, RecordsCarryTheInputAndStreamTime) {
  RunOptions o;
  o.config = config({{"clip", "file://" + (dir_ / "clip.y4m").string()},
                     {"files", "frames://" + (dir_ / "frames").string()}});
  o.output_dir = (dir_ / "out").string();
  run_pipeline(o);
  int clip = 0;
  for (const json& r : records(o.output_dir)) {
    if (r["input"] == "clip") {
      // The y4m's frame position: its index over the header's 25 fps.
      EXPECT_DOUBLE_EQ(r["pts_s"].get<double>(), r["frame"].get<double>() / 25) << r.dump();
      ++clip;
    } else {
      EXPECT_EQ(r["input"], "files");
      EXPECT_FALSE(r.contains("pts_s"));  // frame files have no stream time
    }
    EXPECT_FALSE(r.contains("capture_latency_ms"));  // no live input
  }
  EXPECT_EQ(clip, 6);
  // A named single input keeps its name on every record.
  o.inputs = {"cam=test://blobs?w=32&h=24&frames=3"};
  o.output_dir = (dir_ / "named").string();
  run_pipeline(o);
  const std::vector<json> named = records(o.output_dir);
  ASSERT_EQ(named.size(), 3u);
  for (const json& r : named) EXPECT_EQ(r["input"], "cam");
}

TEST_F(MultiInputRun, AnInputThatCannotOpenLetsTheOthersRun) {
  RunOptions o;
  o.config = config({{"good", "test://blobs?w=32&h=24&frames=4"},
                     {"gone", "frames://" + (dir_ / "no/such/folder").string()},
                     {"also", "file://" + (dir_ / "clip.y4m").string()}});
  o.output_dir = (dir_ / "out").string();
  const RunSummary s = run_pipeline(o);
  EXPECT_EQ(s.read, 10);
  EXPECT_EQ(s.processed, 10);
  EXPECT_EQ(s.source_error.rfind("gone: ", 0), 0u) << s.source_error;
  EXPECT_NE(s.source_error.find("no/such/folder"), std::string::npos) << s.source_error;
  EXPECT_TRUE(s.stopped_early);
  ASSERT_EQ(s.inputs.size(), 3u);
  EXPECT_EQ(s.inputs[1].ended, "open_failed");
  EXPECT_EQ(s.inputs[1].read, 0);
  EXPECT_EQ(records(o.output_dir).size(), 10u);
  const json sum = json::parse(test::slurp(dir_ / "out" / "summary.json"));
  EXPECT_EQ(sum["inputs"]["gone"]["ended"], "open_failed");
  EXPECT_NE(sum["inputs"]["gone"]["error"].get<std::string>().find("no/such/folder"),
            std::string::npos);
  EXPECT_FALSE(sum["inputs"]["gone"].contains("source"));
  EXPECT_EQ(sum["inputs"]["good"]["ended"], "end");
  EXPECT_EQ(sum["source_error"], s.source_error);

  // None can be opened: one input error, nothing written (as with one input).
  o.config = config({{"a", "frames://" + (dir_ / "none1").string()},
                     {"b", "frames://" + (dir_ / "none2").string()}});
  o.output_dir = (dir_ / "nothing").string();
  try {
    run_pipeline(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("no input could be opened: a: "), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "nothing"));
}

TEST_F(MultiInputRun, ImagesGoToAFolderPerInput) {
  RunOptions o;
  o.config =
      config({{"x", "test://blobs?w=32&h=24&frames=2"}, {"y", "test://checker?w=16&h=8&frames=3"}});
  o.output_dir = (dir_ / "out").string();
  o.save_images = true;
  run_pipeline(o);
  for (const auto& [input, frames] : {std::pair<std::string, int>{"x", 2}, {"y", 3}}) {
    for (int k = 0; k < frames; ++k) {
      char file[32];
      std::snprintf(file, sizeof file, "gaussian_%06d.", k);
      bool found = false;
      for (const auto& e : fs::directory_iterator(dir_ / "out" / "images" / input)) {
        found = found || e.path().filename().string().rfind(file, 0) == 0;
      }
      EXPECT_TRUE(found) << input << "/" << file;
    }
  }
}

TEST_F(MultiInputRun, AStopFlagStopsEveryInput) {
  RunOptions o;
  o.config = config({{"a", "test://noise?w=32&h=24&frames=1000000000"},
                     {"b", "test://gradient?w=16&h=16&frames=1000000000"}});
  o.output_dir = (dir_ / "out").string();
  std::atomic<int> stop{0};
  o.stop = &stop;
  RunSummary s;
  {
    test::RaiseLater later(stop, SIGTERM, std::chrono::milliseconds(300));
    s = run_pipeline(o);
  }
  EXPECT_EQ(s.stopped_by, SIGTERM);
  EXPECT_EQ(static_cast<std::int64_t>(records(o.output_dir).size()), s.read);
  const json sum = json::parse(test::slurp(dir_ / "out" / "summary.json"));
  EXPECT_EQ(sum["stopped_by"], "SIGTERM");
  for (const char* in : {"a", "b"}) EXPECT_EQ(sum["inputs"][in]["ended"], "stopped") << in;
  EXPECT_EQ(sum["frames"]["read"], s.read);
}

// A live input's frames carry their capture time: capture → record latency per record and in
// the summary, for that input only.
TEST_F(MultiInputRun, LiveInputsReportCaptureLatency) {
  if (!have_gstreamer() || !detect_gst_features().has("videotestsrc")) {
    GTEST_SKIP() << "needs GStreamer's videotestsrc";
  }
  RunOptions o;
  o.config = config({{"live", "test://smpte?w=64&h=48&fps=200&live=true&frames=12"},
                     {"clip", "file://" + (dir_ / "clip.y4m").string()}});
  o.output_dir = (dir_ / "out").string();
  const RunSummary s = run_pipeline(o);
  ASSERT_EQ(s.inputs.size(), 2u);
  int live = 0;
  for (const json& r : records(o.output_dir)) {
    if (r["input"] != "live" || r.contains("error")) {
      EXPECT_FALSE(r.contains("capture_latency_ms")) << r.dump();
      continue;
    }
    ++live;
    EXPECT_GE(r["capture_latency_ms"].get<double>(), 0.0) << r.dump();
    EXPECT_TRUE(r.contains("pts_s")) << r.dump();
  }
  EXPECT_EQ(live, s.inputs[0].processed);
  const json sum = json::parse(test::slurp(dir_ / "out" / "summary.json"));
  EXPECT_EQ(sum["inputs"]["live"]["capture_latency"]["samples"], live);
  EXPECT_FALSE(sum["inputs"]["clip"].contains("capture_latency"));
  EXPECT_EQ(sum["capture_latency"]["samples"], live);
}

// The CLI: --input once per input, NAME=URI or numbered; one that cannot open: exit 3 after the
// others' records.
TEST_F(MultiInputRun, CommandLineTakesRepeatedInputs) {
  if (!fs::exists(test::cli_command().back())) GTEST_SKIP() << "the jetpipe CLI is not built";
  const std::string cfg = config({{"", "test://noise?frames=2"}});
  const std::string out = (dir_ / "out").string();
  const std::string cmd = test::cli_shell() + " run --config '" + cfg + "' --output-dir '" + out +
                          "' --input 'cam=test://blobs?w=32&h=24&frames=3'" +
                          " --input 'test://checker?w=16&h=8&frames=2'" + " --input 'frames://" +
                          (dir_ / "missing").string() + "' 2>/dev/null";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 3);
  std::map<std::string, int> n;
  for (const json& r : records(out)) ++n[r["input"].get<std::string>()];
  EXPECT_EQ(n, (std::map<std::string, int>{{"cam", 3}, {"input1", 2}}));
  const json sum = json::parse(test::slurp(fs::path(out) / "summary.json"));
  EXPECT_EQ(sum["inputs"]["input2"]["ended"], "open_failed");
  // Two inputs of one name: a command-line error, nothing written.
  const std::string twice = test::cli_shell() + " run --config '" + cfg + "' --output-dir '" +
                            (dir_ / "twice").string() +
                            "' --input a=test://noise --input a=test://blobs 2>/dev/null";
  const int rc2 = std::system(twice.c_str());
  ASSERT_TRUE(WIFEXITED(rc2));
  EXPECT_EQ(WEXITSTATUS(rc2), 2);
  EXPECT_FALSE(fs::exists(dir_ / "twice"));
}

// The C++ API: open_inputs() and run() over them.
TEST(MultiInputApi, RunGivesEveryInputsRecordsInTheirOrder) {
  Pipeline p = Pipeline::builder().platform("cpu").stage("to_gray").stage("stats").build();
  auto inputs = p.open_inputs({{"a", "test://blobs?w=32&h=24&frames=5"},
                               {"b", "test://noise?w=8&h=8&frames=9&format=gray8"},
                               {"c", "frames:///no/such/folder"}});
  std::map<std::string, std::int64_t> next;
  const RunStats st = p.run(*inputs, [&](const FrameRecord& r) {
    EXPECT_EQ(r.index, next[r.input]++) << r.input;
    return true;
  });
  EXPECT_EQ(next, (std::map<std::string, std::int64_t>{{"a", 5}, {"b", 9}}));
  EXPECT_EQ(st.read, 14);
  EXPECT_EQ(st.processed, 14);
  EXPECT_EQ(st.source_error.rfind("c: ", 0), 0u) << st.source_error;
  EXPECT_EQ(inputs->state(2).end, InputEnd::kOpenFailed);
  // A callback returning false stops every input.
  auto again = p.open_inputs({{"a", "test://blobs?w=32&h=24&frames=1000000"},
                              {"b", "test://noise?w=8&h=8&frames=1000000"}});
  int n = 0;
  p.run(*again, [&](const FrameRecord&) { return ++n < 10; });
  EXPECT_EQ(n, 10);
  EXPECT_EQ(again->state(0).end, InputEnd::kStopped);
  EXPECT_EQ(again->state(1).end, InputEnd::kStopped);
  // Two inputs of one name.
  EXPECT_THROW(p.open_inputs({{"a", "test://noise"}, {"a", "test://blobs"}}), Error);
}

// The pull form (Pipeline::InputStream, what Python's open_inputs iterates): the same records as
// run(), and stop(discard) ends at once.
TEST(MultiInputApi, InputStreamGivesWhatRunGives) {
  Pipeline p = Pipeline::builder().platform("cpu").stage("to_gray").stage("histogram").build();
  const std::vector<InputConfig> list = {{"a", "test://blobs?w=31&h=23&frames=6"},
                                         {"b", "test://checker?w=16&h=9&frames=4"}};
  std::map<std::string, std::vector<std::string>> pushed, pulled;
  p.run(*p.open_inputs(list), [&](const FrameRecord& r) {
    pushed[r.input].push_back(record_to_json(r)["results"].dump());
    return true;
  });
  auto inputs = p.open_inputs(list);
  Pipeline::InputStream s = p.stream(*inputs);
  FrameRecord r;
  std::size_t from = 99;
  while (s.next(&r, &from)) {
    EXPECT_EQ(inputs->state(from).name, r.input);
    pulled[r.input].push_back(record_to_json(r)["results"].dump());
  }
  EXPECT_EQ(pulled, pushed);
  EXPECT_EQ(s.stats().read, 10);
  EXPECT_EQ(s.stats().processed, 10);
  auto endless = p.open_inputs({{"a", "test://noise?w=8&h=8&frames=1000000"}});
  Pipeline::InputStream e = p.stream(*endless);
  ASSERT_TRUE(e.next(&r));
  e.stop(true);
  int after = 0;
  while (e.next(&r)) ++after;
  EXPECT_EQ(after, 0);  // the frames in flight were dropped
  EXPECT_EQ(endless->state(0).end, InputEnd::kStopped);
}

// open() with no URI takes the config's one input with its own keys (here its timeout_s and no
// reconnect: a stalled RTP listener fails in 0.3 s, not the default 10 s); a stop request given
// to open() ends a wait for a frame within 50 ms.
TEST(MultiInputApi, OpenTakesTheInputsKeysAndAStopRequest) {
  const std::string stages = "platform: cpu\nstages:\n  - {type: stats}\n";
  EXPECT_THROW(Pipeline::from_yaml("inputs: [{name: a, uri: 'test://noise'}, {name: b, uri: "
                                   "'test://blobs'}]\n" +
                                   stages)
                   .open(),
               Error);
  if (!have_gstreamer() || !test::gst_has_element("udpsrc")) GTEST_SKIP() << "no GStreamer";
  const std::string uri = "rtp://127.0.0.1:" + std::to_string(test::free_udp_port());
  Pipeline p = Pipeline::from_yaml("inputs:\n  - {name: cam, uri: '" + uri +
                                   "', timeout_s: 0.3,\n     reconnect: {attempts: 0}}\n" + stages);
  std::unique_ptr<Source> src;
  try {
    src = p.open();
  } catch (const Error& e) {
    GTEST_SKIP() << "rtp:// cannot be opened here: " << e.what();
  }
  Frame f;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(src->next(&f), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  src.reset();
  std::atomic<int> stop{0};
  auto stalled = p.open(uri, &stop);  // a URI given: SourceOptions' defaults (a 10 s stall limit)
  test::RaiseLater later(stop, SIGINT, std::chrono::milliseconds(300));
  t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(stalled->next(&f));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
}

}  // namespace
}  // namespace jetpipe
