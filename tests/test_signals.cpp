// SPDX-License-Identifier: MIT
// Stopping a run: RunOptions::stop from another thread, and `jetpipe run` on an endless source
// stopped by SIGINT / SIGTERM / SIGHUP: no more frames are read, every frame read gets its record,
// the summary says how the run ended, the exit code is 128 + the signal. A live source that
// stalls (its next frame 1000 s away, the stall limit 10 s) stops waiting at once.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/io/gst_source.h"
#include "pipeline/io/source.h"
#include "pipeline/runner.h"
#include "test_util.h"

namespace jetpipe {
namespace {

namespace fs = std::filesystem;

// Whole lines written so far (while the run writes: no parsing of a line being written).
int newlines_in(const fs::path& p) {
  const std::string text = test::slurp(p);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// The records of a finished run, each parsed.
int lines_of(const fs::path& p) {
  std::istringstream in(test::slurp(p));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const auto record = nlohmann::json::parse(line);  // each one whole
    EXPECT_TRUE(record.is_object()) << line;
    ++n;
  }
  return n;
}

const char* kEndless = "test://noise?w=64&h=48&frames=1000000000&format=gray8";

void write_config(const fs::path& p, const std::string& input = kEndless) {
  std::ofstream(p) << "input: " << input << "\nplatform: cpu\nstages:\n  - {type: stats}\n";
}

// A live source that gives one frame at once and the next after 1000 s: a camera or stream that
// stalled. Reads after the first block until the stall limit (SourceOptions::timeout_s, 10 s).
// (sync=false: a synchronised sink would hold even the first frame for the source's latency,
// one frame's duration.)
const char* kStalled =
    "gst://videotestsrc is-live=true ! video/x-raw,format=GRAY8,width=64,height=48,"
    "framerate=1/1000 ! appsink sync=false";

#define REQUIRE_VIDEOTESTSRC()                                                         \
  do {                                                                                 \
    if (!have_gstreamer()) GTEST_SKIP() << "built without GStreamer";                  \
    if (!detect_gst_features().has("videotestsrc")) GTEST_SKIP() << "no videotestsrc"; \
  } while (0)

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Until `p` holds n whole lines, or 20 s.
void wait_for_lines(const fs::path& p, int n) {
  const auto t0 = std::chrono::steady_clock::now();
  while (newlines_in(p) < n && seconds_since(t0) < 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST(StopRun, AStopFlagEndsTheRunWithCompleteFiles) {
  test::TempDir dir;
  write_config(dir.path() / "c.yaml");
  std::atomic<int> stop{0};
  RunOptions o;
  o.config = dir / "c.yaml";
  o.output_dir = dir / "out";
  o.stop = &stop;
  RunSummary s;
  {
    test::RaiseLater later(stop, SIGTERM, std::chrono::milliseconds(300));
    s = run_pipeline(o);
  }
  EXPECT_EQ(s.stopped_by, SIGTERM);
  EXPECT_GT(s.read, 0);
  EXPECT_EQ(s.processed, s.read);
  EXPECT_EQ(lines_of(dir.path() / "out/results.jsonl"), s.read);
  const auto sum = nlohmann::json::parse(test::slurp(dir.path() / "out/summary.json"));
  EXPECT_EQ(sum["stopped_by"], "SIGTERM");
  EXPECT_EQ(sum["frames"]["read"], s.read);
}

bool cli_built() { return fs::exists(test::cli_command().back()); }

// `jetpipe run --config cfg --output-dir out` in a child process (behind the emulator, if any),
// stderr to /dev/null; its pid, or -1.
pid_t start_run(const std::string& cfg, const std::string& out) {
  std::vector<std::string> args = test::cli_command();
  args.insert(args.end(), {"run", "--config", cfg, "--output-dir", out});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (std::freopen("/dev/null", "w", stderr) == nullptr) _exit(126);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

TEST(StopRun, JetpipeRunStopsCleanlyOnEachSignal) {
  if (!cli_built()) GTEST_SKIP() << test::cli_command().back() << " not built";
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    test::TempDir dir;
    write_config(dir.path() / "c.yaml");
    const std::string out = dir / "out";
    const pid_t pid = start_run(dir / "c.yaml", out);
    ASSERT_GE(pid, 0);
    wait_for_lines(fs::path(out) / "results.jsonl", 5);  // until the run has written records
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "signal " << sig << ": killed, not stopped";
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    const auto sum = nlohmann::json::parse(test::slurp(fs::path(out) / "summary.json"));
    EXPECT_EQ(sum["stopped_by"], sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP");
    EXPECT_EQ(lines_of(fs::path(out) / "results.jsonl"), sum["frames"]["read"].get<int>());
  }
}

// The source itself: a read blocked between frames returns false once a stop is requested.
TEST(StopRun, AStopWakesASourceBlockedBetweenFrames) {
  REQUIRE_VIDEOTESTSRC();
  std::atomic<int> stop{0};
  SourceOptions so;
  so.colour = false;
  so.stop = &stop;
  std::unique_ptr<Source> src = open_source(kStalled, so);
  Frame f;
  ASSERT_TRUE(src->next(&f));
  ASSERT_TRUE(f.error.empty()) << f.error;
  double waited = 0;
  {
    test::RaiseLater later(stop, SIGINT, std::chrono::milliseconds(200));
    const auto t0 = std::chrono::steady_clock::now();
    bool more = true;
    // Waiting for the stall limit (10 s) instead ends in an input error.
    EXPECT_NO_THROW(more = src->next(&f));
    EXPECT_FALSE(more);
    waited = seconds_since(t0);
  }
  EXPECT_GE(waited, 0.15);
  EXPECT_LT(waited, 9.0) << "waited for the stall limit (10 s), not for the stop";
}

// run_pipeline: the stop ends a run whose source is blocked, with complete files.
TEST(StopRun, AStopEndsARunBlockedOnAStalledSource) {
  REQUIRE_VIDEOTESTSRC();
  test::TempDir dir;
  write_config(dir.path() / "c.yaml", kStalled);
  std::atomic<int> stop{0};
  RunOptions o;
  o.config = dir / "c.yaml";
  o.output_dir = dir / "out";
  o.stop = &stop;
  std::chrono::steady_clock::time_point stopped_at;
  std::thread t([&] {
    wait_for_lines(dir.path() / "out/results.jsonl", 1);
    stopped_at = std::chrono::steady_clock::now();
    stop.store(SIGINT);
  });
  const RunSummary s = run_pipeline(o);
  const double after_stop = seconds_since(stopped_at);
  t.join();
  // Waiting for the stall limit would have ended the run with a source error after 10 s.
  EXPECT_EQ(s.source_error, "");
  EXPECT_LT(after_stop, 9.0);
  EXPECT_EQ(s.stopped_by, SIGINT);
  EXPECT_EQ(s.read, 1);
  EXPECT_EQ(lines_of(dir.path() / "out/results.jsonl"), 1);
  const auto sum = nlohmann::json::parse(test::slurp(dir.path() / "out/summary.json"));
  EXPECT_EQ(sum["stopped_by"], "SIGINT");
  EXPECT_FALSE(sum.contains("source_error")) << sum.dump();
}

// The CLI: Ctrl-C while a camera has stalled ends the run at once (exit 130), not after the
// stall limit with a source error (exit 3).
TEST(StopRun, JetpipeRunStopsAtOnceWhileTheSourceStalls) {
  REQUIRE_VIDEOTESTSRC();
  if (!cli_built()) GTEST_SKIP() << test::cli_command().back() << " not built";
  test::TempDir dir;
  write_config(dir.path() / "c.yaml", kStalled);
  const std::string out = dir / "out";
  const pid_t pid = start_run(dir / "c.yaml", out);
  ASSERT_GE(pid, 0);
  wait_for_lines(fs::path(out) / "results.jsonl", 1);
  const auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  // Waiting for the stall limit (10 s) would have ended it with a source error: exit 3.
  ASSERT_TRUE(WIFEXITED(status)) << "killed, not stopped";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_LT(seconds_since(t0), 9.0);
  const auto sum = nlohmann::json::parse(test::slurp(fs::path(out) / "summary.json"));
  EXPECT_EQ(sum["stopped_by"], "SIGINT");
  EXPECT_EQ(lines_of(fs::path(out) / "results.jsonl"), sum["frames"]["read"].get<int>());
}

}  // namespace
}  // namespace jetpipe
