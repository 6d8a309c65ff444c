// SPDX-License-Identifier: MIT
// The output files' writers (pipeline/results_json.h): JSON text from any bytes, results.jsonl
// never left with a torn line, summary.json whole or not at all; write failures simulated with a
// file size limit (RLIMIT_FSIZE, in a child process) and /dev/full.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "pipeline/results_json.h"
#include "pipeline/runner.h"
#include "test_util.h"

namespace jetpipe {
namespace {

namespace fs = std::filesystem;

// In a child process: writes beyond `bytes` fail (EFBIG) instead of raising SIGXFSZ.
void limit_file_size(rlim_t bytes) {
  std::signal(SIGXFSZ, SIG_IGN);
  const rlimit r{bytes, bytes};
  setrlimit(RLIMIT_FSIZE, &r);
}

TEST(OutputFiles, JsonTextReplacesInvalidUtf8) {
  nlohmann::ordered_json j = {{"source", std::string("f\xff\xfe.pgm")}, {"ok", "caf\xc3\xa9"}};
  const std::string t = json_text(j);
  EXPECT_EQ(t, "{\"source\":\"f\xef\xbf\xbd\xef\xbf\xbd.pgm\",\"ok\":\"caf\xc3\xa9\"}");
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what json_text spares the run
}

TEST(OutputFiles, JsonLinesWriterWritesWholeLines) {
  test::TempDir dir;
  {
    JsonLinesWriter w(dir / "r.jsonl");
    w.write({{"frame", 0}});
    w.write({{"frame", 1}, {"source", std::string("\x80")}});
    EXPECT_EQ(w.lines(), 2u);
  }
  EXPECT_EQ(test::slurp(dir / "r.jsonl"),
            "{\"frame\":0}\n{\"frame\":1,\"source\":\"\xef\xbf\xbd\"}\n");
  EXPECT_THROW(JsonLinesWriter(dir / "missing/r.jsonl"), Error);
}

TEST(OutputFiles, AFullDiskIsAnErrorNamingTheFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  JsonLinesWriter w("/dev/full");
  try {
    w.write({{"frame", 0}});
    FAIL() << "a write to /dev/full succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line 1"), std::string::npos) << e.what();
  }
}

// 10 lines of 28 bytes against a limit of 120 bytes: 4 whole lines, then the failure; the file is
// cut back to them.
TEST(OutputFiles, ResultsNeverEndInATornLine) {
  test::TempDir dir;
  const fs::path path = dir / "r.jsonl";
  EXPECT_EXIT(
      {
        limit_file_size(120);
        JsonLinesWriter w(path);
        try {
          for (int i = 0; i < 10; ++i) w.write({{"frame", i}, {"pad", "xxxxxxx"}});
        } catch (const Error&) {
          std::_Exit(w.lines() == 4 ? 7 : 8);
        }
        std::_Exit(9);
      },
      ::testing::ExitedWithCode(7), "");
  const std::string text = test::slurp(path);
  ASSERT_EQ(text.size(), 4u * 28u) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(OutputFiles, SummaryIsWrittenWholeOrNotAtAll) {
  test::TempDir dir;
  const fs::path path = dir / "summary.json";
  write_file_atomically(path, "{\"old\": 1}\n");
  EXPECT_EQ(test::slurp(path), "{\"old\": 1}\n");
  EXPECT_FALSE(fs::exists(dir / "summary.json.tmp"));
  // Over a size limit: the write fails, the earlier summary stays, no temporary is left.
  EXPECT_EXIT(
      {
        limit_file_size(64);
        try {
          write_file_atomically(path, std::string(1000, 'x'));
        } catch (const Error& e) {
          std::_Exit(std::string(e.what()).find("summary.json") != std::string::npos ? 7 : 8);
        }
        std::_Exit(9);
      },
      ::testing::ExitedWithCode(7), "");
  EXPECT_EQ(test::slurp(path), "{\"old\": 1}\n");
  EXPECT_FALSE(fs::exists(dir / "summary.json.tmp"));
  // A folder where the temporary would go: an error, the summary untouched.
  fs::create_directory(dir / "summary.json.tmp");
  EXPECT_THROW(write_file_atomically(path, "{}"), Error);
  EXPECT_EQ(test::slurp(path), "{\"old\": 1}\n");
}

// The reproducer: a frame file whose name holds a 0xFF byte ended the run with an empty
// results.jsonl and no summary. Now each frame gets its record, the name with U+FFFD in it.
TEST(OutputFiles, AFrameNamedInNonUtf8GetsItsRecord) {
  test::TempDir dir;
  fs::create_directories(dir.path() / "frames");
  for (const std::string name : {std::string("a.pgm"), std::string("b\xff.pgm")}) {
    std::ofstream(dir.path() / "frames" / name, std::ios::binary) << "P5\n4 3\n255\n"
                                                                  << std::string(12, '\x40');
  }
  std::ofstream(dir.path() / "c.yaml") << "input: frames://frames\nplatform: cpu\nstages:\n"
                                          "  - {type: stats}\n";
  RunOptions o;
  o.config = dir / "c.yaml";
  o.output_dir = dir / "out";
  const RunSummary s = run_pipeline(o);
  EXPECT_EQ(s.processed, 2);
  std::istringstream lines(test::slurp(dir.path() / "out/results.jsonl"));
  std::string a, b, end;
  ASSERT_TRUE(std::getline(lines, a) && std::getline(lines, b));
  EXPECT_FALSE(std::getline(lines, end));
  EXPECT_EQ(nlohmann::json::parse(b)["source"], "b\xef\xbf\xbd.pgm");
  EXPECT_EQ(
      nlohmann::json::parse(test::slurp(dir.path() / "out/summary.json"))["frames"]["processed"],
      2);
}

// The reproducer: a sparse PGM whose header asks for 40000 x 40000 (1.6 GB), really that large
// on disk, was read whole. Now the frame is refused before any allocation (the default limit is
// 1 GiB; the config's max_frame_mb lowers it), as that frame's error; the run goes on.
TEST(FrameLimit, AFrameOverTheLimitIsRefusedBeforeAllocation) {
  test::TempDir dir;
  fs::create_directories(dir.path() / "frames");
  {
    std::ofstream big(dir.path() / "frames/a_big.pgm", std::ios::binary);
    big << "P5\n40000 40000\n255\n";
  }
  fs::resize_file(dir.path() / "frames/a_big.pgm", 40000ull * 40000ull + 20);  // sparse
  std::ofstream(dir.path() / "frames/b_small.pgm", std::ios::binary)
      << "P5\n64 64\n255\n"
      << std::string(64 * 64, '\x20');
  for (const std::string limit : {std::string(), std::string("max_frame_mb: 2\n")}) {
    std::ofstream(dir.path() / "c.yaml") << "input: frames://frames\nplatform: cpu\n"
                                         << limit << "stages:\n  - {type: stats}\n";
    RunOptions o;
    o.config = dir / "c.yaml";
    o.output_dir = dir / "out";
    const RunSummary s = run_pipeline(o);
    EXPECT_EQ(s.read, 2);
    EXPECT_EQ(s.failed, 1);
    std::istringstream lines(test::slurp(dir.path() / "out/results.jsonl"));
    std::string a, b;
    ASSERT_TRUE(std::getline(lines, a) && std::getline(lines, b));
    const std::string err = nlohmann::json::parse(a)["error"];
    EXPECT_NE(err.find("40000x40000 gray8 (1525 MiB) is over the frame size limit of " +
                       std::string(limit.empty() ? "1024" : "2") + " MiB"),
              std::string::npos)
        << err;
    EXPECT_FALSE(nlohmann::json::parse(b).contains("error")) << b;
  }
}

}  // namespace
}  // namespace jetpipe
