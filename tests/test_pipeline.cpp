// SPDX-License-Identifier: MIT
// End-to-end runs on the host backend: records per frame, order, errors, strips, summaries.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "pipeline/executor.h"
#include "pipeline/io/image_io.h"
#include "pipeline/platform.h"
#include "pipeline/runner.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace jetpipe {
namespace {

class PipelineRun : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_ / "frames"); }

  std::string write_config(const std::string& name, const std::string& yaml) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << yaml;
    return p.string();
  }
  std::string write_platform(int chunks, double ratio = 1.0) {
    const fs::path p =
        dir_ / ("cpu_k" + std::to_string(chunks) + "_r" + std::to_string(ratio) + ".yaml");
    std::ofstream(p) << "backend: cpu\nmemory: host\nchunks: " << chunks
                     << "\nstrip_ratio: " << ratio << "\n";
    return p.string();
  }
  static std::vector<json> read_jsonl(const fs::path& p) {
    std::vector<json> out;
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) out.push_back(json::parse(line));
    return out;
  }
  test::TempDir tmp_;
  const fs::path dir_ = tmp_.path();
};

// Every stage type, chained as a user would.
constexpr const char* kAllStages = R"(
stages:
  - {type: to_gray, name: gray}
  - {type: gaussian, name: blur, ksize: 7, border: reflect}
  - {type: histogram, name: hist, bins: 64}
  - {type: stats, name: stats}
  - {type: box, name: box, input: gray, ksize: 5, border: wrap}
  - {type: sobel, name: sx, input: gray, dx: 1, dy: 0, ksize: 5, border: constant, border_value: 9}
  - {type: stats, name: sx_stats}
  - {type: convolve, name: conv, input: gray, kernel: [[1, 2, 1], [0, 0, 0], [-1, -2, -1]], delta: 128}
  - {type: threshold, name: otsu, input: blur, value: otsu}
  - {type: harris, name: resp, input: gray, block_size: 5, ksize: 3, border: replicate}
  - {type: stats, name: resp_stats}
  - {type: detect, name: corners, quality: 0.02, nms_radius: 3, max_detections: 40}
)";

TEST_F(PipelineRun, StripCountDoesNotChangeResults) {
  const std::uint32_t seed = test::fresh_seed();
  std::mt19937 rng(seed);
  // Real frames, random frames of odd sizes, a 1-row and a 2-row frame (strips shorter than halos).
  for (const auto& e : fs::directory_iterator(JETPIPE_SOURCE_DIR "/tests/regression/frames")) {
    fs::copy_file(e.path(), dir_ / "frames" / e.path().filename());
  }
  const int sizes[][2] = {{113, 113}, {129, 3}, {7, 1}, {1, 7}, {57, 2}};
  int n = 0;
  for (const auto& s : sizes) {
    const bool gray = n % 2 == 1;
    const HostImage img =
        test::random_image(s[0], s[1], gray ? PixelFormat::kGray8 : PixelFormat::kBgr8, rng);
    const std::string file = "rand_" + std::to_string(n++) + (gray ? ".pgm" : ".ppm");
    write_image((dir_ / "frames" / file).string(), img.view());
  }
  const std::string cfg = write_config("all.yaml", std::string("input: frames://frames\n") + kAllStages);
  std::string reference, reference_img;
  // K strips, equal or each a fraction of the one before (strip_ratio).
  const std::pair<int, double> settings[] = {{1, 1.0}, {2, 1.0},  {3, 1.0},  {4, 1.0}, {8, 1.0},
                                             {13, 1.0}, {600, 1.0}, {4, 0.5}, {8, 0.3}, {3, 0.9}};
  for (const auto& [k, ratio] : settings) {
    RunOptions o;
    o.config = cfg;
    o.platform = write_platform(k, ratio);
    o.output_dir =
        (dir_ / ("out_k" + std::to_string(k) + "_r" + std::to_string(ratio))).string();
    o.save_images = true;
    const RunSummary s = run_pipeline(o);
    EXPECT_EQ(s.failed, 0);
    const std::string results = test::slurp(fs::path(o.output_dir) / "results.jsonl");
    std::string images;
    for (const auto& name : {"blur_000000", "resp_000003", "otsu_000005", "sx_000007"}) {
      for (const auto& e : fs::directory_iterator(fs::path(o.output_dir) / "images")) {
        if (e.path().stem() == name) images += test::slurp(e.path());
      }
    }
    EXPECT_FALSE(images.empty());
    if (k == 1) {
      reference = results;
      reference_img = images;
      continue;
    }
    EXPECT_EQ(results, reference) << "chunks " << k << " ratio " << ratio << " (seed " << seed
                                  << ")";
    EXPECT_EQ(images, reference_img) << "chunks " << k << " ratio " << ratio;
  }
}

TEST_F(PipelineRun, EveryFrameYieldsOneRecordInOrder) {
  std::mt19937 rng(test::fresh_seed());
  for (int i = 0; i < 12; ++i) {
    const HostImage img = test::random_image(40 + i, 30, PixelFormat::kGray8, rng);
    write_image((dir_ / "frames" / ("f" + std::to_string(i) + ".pgm")).string(), img.view());
  }
  // Frame f5 is truncated, f9 is not an image at all.
  {
    std::string data = test::slurp(dir_ / "frames" / "f5.pgm");
    std::ofstream(dir_ / "frames" / "f5.pgm", std::ios::binary) << data.substr(0, data.size() / 2);
    std::ofstream(dir_ / "frames" / "f9.pgm", std::ios::binary) << "hello";
  }
  const std::string cfg = write_config(
      "c.yaml", "input: frames://frames\nstages:\n  - {type: histogram}\n  - {type: stats}\n");
  RunOptions o;
  o.config = cfg;
  o.output_dir = (dir_ / "out").string();
  const RunSummary s = run_pipeline(o);
  EXPECT_EQ(s.read, 12);
  EXPECT_EQ(s.processed, 10);
  EXPECT_EQ(s.failed, 2);
  const auto recs = read_jsonl(dir_ / "out" / "results.jsonl");
  ASSERT_EQ(recs.size(), 12u);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(recs[i]["frame"], i);
    EXPECT_EQ(recs[i]["source"], "f" + std::to_string(i) + ".pgm");  // natural order: f2 < f10
    EXPECT_EQ(recs[i].contains("error"), i == 5 || i == 9) << recs[i].dump();
    if (i != 5 && i != 9) {
      EXPECT_EQ(recs[i]["width"], 40 + i);
      EXPECT_EQ(recs[i]["results"]["stats"]["count"], (40 + i) * 30);
    }
  }
  EXPECT_NE(recs[5]["error"].get<std::string>().find("f5.pgm"), std::string::npos);
  const json sum = json::parse(test::slurp(dir_ / "out" / "summary.json"));
  EXPECT_EQ(sum["frames"]["read"], 12);
  EXPECT_EQ(sum["frames"]["failed"], 2);
  EXPECT_EQ(sum["frames"]["processed"], 10);
  EXPECT_EQ(sum["frames"]["dropped"], 0);
  // auto: the CPU here without a GPU, the CUDA executor on a GPU machine.
  EXPECT_EQ(sum["platform"]["backend"], name(resolve_platform("auto", nullptr).backend));
  EXPECT_TRUE(sum["stages"].contains("histogram"));

  // --strict stops after the first failed frame, whose record is still written.
  o.strict = true;
  o.output_dir = (dir_ / "strict").string();
  const RunSummary st = run_pipeline(o);
  EXPECT_TRUE(st.stopped_early);
  // Reading stops there; frames already read and in flight (GPU executors) still get their
  // records: one per frame read, in order, the failed one included.
  const auto strict = read_jsonl(dir_ / "strict" / "results.jsonl");
  EXPECT_EQ(static_cast<std::int64_t>(strict.size()), st.read);
  ASSERT_GE(strict.size(), 6u);
  EXPECT_LE(strict.size(), 6u + 16u);
  EXPECT_TRUE(strict[5].contains("error"));
  for (std::size_t i = 0; i < strict.size(); ++i) EXPECT_EQ(strict[i]["frame"], i);

  // --max-frames
  o.strict = false;
  o.max_frames = 3;
  o.output_dir = (dir_ / "max").string();
  EXPECT_EQ(run_pipeline(o).read, 3);
  EXPECT_EQ(read_jsonl(dir_ / "max" / "results.jsonl").size(), 3u);
}

TEST_F(PipelineRun, WrongFrameFormatIsAFrameError) {
  std::mt19937 rng(test::fresh_seed());
  write_image((dir_ / "frames" / "a.ppm").string(),
              test::random_image(20, 10, PixelFormat::kBgr8, rng).view());
  write_image((dir_ / "frames" / "b.pgm").string(),
              test::random_image(20, 10, PixelFormat::kGray8, rng).view());
  const std::string cfg =
      write_config("c.yaml", "input: frames://frames\nstages:\n  - {type: gaussian, name: g}\n");
  RunOptions o;
  o.config = cfg;
  o.output_dir = (dir_ / "out").string();
  const RunSummary s = run_pipeline(o);
  EXPECT_EQ(s.failed, 1);
  const auto recs = read_jsonl(dir_ / "out" / "results.jsonl");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_NE(recs[0]["error"].get<std::string>().find("stage 'g' (gaussian): image 'frame' is bgr8"),
            std::string::npos)
      << recs[0].dump();
  EXPECT_FALSE(recs[1].contains("error"));
}

TEST_F(PipelineRun, MissingInputIsAnInputError) {
  const std::string cfg =
      write_config("c.yaml", "input: frames://does/not/exist\nstages:\n  - {type: stats}\n");
  RunOptions o;
  o.config = cfg;
  o.output_dir = (dir_ / "out").string();
  try {
    run_pipeline(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("does/not/exist"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST(StripBounds, CoverRowsOnce) {
  for (int h : {1, 2, 7, 480, 1081}) {
    for (int k : {1, 2, 3, 4, 8, 2000}) {
      for (double ratio : {1.0, 0.9, 0.5, 0.05}) {
        const auto b = strip_bounds(h, k, ratio);
        EXPECT_EQ(b.size(), static_cast<std::size_t>(std::min(h, k)) + 1) << h << " " << k;
        EXPECT_EQ(b.front(), 0);
        EXPECT_EQ(b.back(), h);
        for (std::size_t i = 1; i < b.size(); ++i) EXPECT_LT(b[i - 1], b[i]);
      }
    }
  }
}

TEST(StripBounds, SkewedStripsMoveUpAndKeepARow) {
  EXPECT_EQ(skewed_bounds({0, 270, 540, 810, 1080}, 8), (std::vector<int>{0, 262, 532, 802, 1080}));
  EXPECT_EQ(skewed_bounds({0, 270, 540, 810, 1080}, 0), (std::vector<int>{0, 270, 540, 810, 1080}));
  EXPECT_EQ(skewed_bounds({0, 1, 2, 3}, 5), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(skewed_bounds({0, 3, 6, 9, 12}, 4), (std::vector<int>{0, 1, 2, 5, 12}));
  EXPECT_EQ(skewed_bounds({0, 7}, 3), (std::vector<int>{0, 7}));
}

TEST(StripBounds, RatioShrinksTheLaterStrips) {
  // 1080 rows, 4 strips, each half the one before: 576, 288, 144, 72.
  EXPECT_EQ(strip_bounds(1080, 4, 0.5), (std::vector<int>{0, 576, 864, 1008, 1080}));
  EXPECT_EQ(strip_bounds(1080, 4, 1.0), (std::vector<int>{0, 270, 540, 810, 1080}));
  const auto b = strip_bounds(2160, 8, 0.7);
  for (std::size_t i = 2; i < b.size(); ++i) {
    EXPECT_LE(b[i] - b[i - 1], b[i - 1] - b[i - 2]) << "strip " << i - 1;
  }
}

}  // namespace
}  // namespace jetpipe
