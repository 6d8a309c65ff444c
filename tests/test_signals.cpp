// SPDX-License-Identifier: MIT
// Stopping a run: RunOptions::stop from another thread, and `jetpipe run` on an endless source
// stopped by SIGINT / SIGTERM / SIGHUP: no more frames are read, every frame read gets its record,
// the summary says how the run ended, the exit code is 128 + the signal.
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

void write_config(const fs::path& p) {
  std::ofstream(p) << "input: " << kEndless << "\nplatform: cpu\nstages:\n  - {type: stats}\n";
}

TEST(StopRun, AStopFlagEndsTheRunWithCompleteFiles) {
  test::TempDir dir;
  write_config(dir.path() / "c.yaml");
  std::atomic<int> stop{0};
  RunOptions o;
  o.config = dir / "c.yaml";
  o.output_dir = dir / "out";
  o.stop = &stop;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.store(SIGTERM);
  });
  const RunSummary s = run_pipeline(o);
  t.join();
  EXPECT_EQ(s.stopped_by, SIGTERM);
  EXPECT_GT(s.read, 0);
  EXPECT_EQ(s.processed, s.read);
  EXPECT_EQ(lines_of(dir.path() / "out/results.jsonl"), s.read);
  const auto sum = nlohmann::json::parse(test::slurp(dir.path() / "out/summary.json"));
  EXPECT_EQ(sum["stopped_by"], "SIGTERM");
  EXPECT_EQ(sum["frames"]["read"], s.read);
}

TEST(StopRun, JetpipeRunStopsCleanlyOnEachSignal) {
  const std::vector<std::string> cli = test::cli_command();  // behind the emulator, if any
  if (!fs::exists(cli.back())) GTEST_SKIP() << cli.back() << " not built";
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    test::TempDir dir;
    write_config(dir.path() / "c.yaml");
    std::vector<std::string> args = cli;
    args.insert(args.end(), {"run", "--config", dir / "c.yaml", "--output-dir", dir / "out"});
    const std::string out = dir / "out";
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (std::freopen("/dev/null", "w", stderr) == nullptr) _exit(126);
      execvp(argv[0], argv.data());
      _exit(127);
    }
    // Until the run has written some records.
    const auto t0 = std::chrono::steady_clock::now();
    while (newlines_in(fs::path(out) / "results.jsonl") < 5 &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
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

}  // namespace
}  // namespace jetpipe
