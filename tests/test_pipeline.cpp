// SPDX-License-Identifier: MIT
// End-to-end runs on the host backend: records per frame, order, errors, strips, summaries.
#include <gtest/gtest.h>

#include <algorithm>
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
  // A cpu profile of `chunks` strips on `threads` threads (a frame gets max(chunks, threads)).
  std::string write_platform(int chunks, double ratio = 1.0, int threads = 1) {
    const fs::path p = dir_ / ("cpu_k" + std::to_string(chunks) + "_r" + std::to_string(ratio) +
                               "_t" + std::to_string(threads) + ".yaml");
    std::ofstream(p) << "backend: cpu\nmemory: host\nchunks: " << chunks
                     << "\nstrip_ratio: " << ratio << "\nthreads: " << threads << "\n";
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

// The strips of a pass run at once on the host executor's threads: results and images equal one
// thread and one strip, for thread counts 1, 2, 3, 7 with odd strip counts and tapered strips, on a
// real frame and random frames of odd sizes, every filter under each border mode. The reductions
// (histogram, stats per row, Otsu, detect with quality and with a threshold) merge per-strip
// partials in strip order.
class ThreadedRun : public PipelineRun, public ::testing::WithParamInterface<const char*> {};

TEST_P(ThreadedRun, ThreadCountDoesNotChangeResults) {
  const std::uint32_t seed = test::fresh_seed();
  std::mt19937 rng(seed);
  fs::copy_file(JETPIPE_SOURCE_DIR "/tests/regression/frames/vtest_0120.ppm",
                dir_ / "frames" / "vtest_0120.ppm");
  const int sizes[][2] = {{113, 113}, {129, 3}, {7, 1}, {1, 7}, {57, 2}, {331, 97}, {64, 201}};
  int n = 0;
  for (const auto& sz : sizes) {
    const bool gray = n % 2 == 1;
    const HostImage img =
        test::random_image(sz[0], sz[1], gray ? PixelFormat::kGray8 : PixelFormat::kBgr8, rng);
    write_image(
        (dir_ / "frames" / ("rand_" + std::to_string(n++) + (gray ? ".pgm" : ".ppm"))).string(),
        img.view());
  }
  const std::string mode = GetParam();
  const std::string b =
      mode == std::string("constant") ? "border: constant, border_value: 9" : "border: " + mode;
  std::string yaml = R"(input: frames://frames
stages:
  - {type: to_gray, name: gray}
  - {type: gaussian, name: blur, ksize: 5, BORDER}
  - {type: histogram, name: hist, bins: 256}
  - {type: stats, name: stats}
  - {type: box, name: box, input: gray, ksize: 7, BORDER}
  - {type: sobel, name: sxy, input: gray, dx: 1, dy: 1, ksize: 3, BORDER}
  - {type: stats, name: sxy_stats}
  - {type: convolve, name: conv, input: gray, kernel: [[1, 2, 1], [0, 0, 0], [-1, -2, -1]], delta: 128, BORDER}
  - {type: threshold, name: otsu, input: blur, value: otsu}
  - {type: harris, name: resp, input: blur, block_size: 3, ksize: 3, BORDER}
  - {type: stats, name: resp_stats}
  - {type: detect, name: corners, quality: 0.01, nms_radius: 4, max_detections: 500}
  - {type: detect, name: strong, input: resp, threshold: 1e-5, nms_radius: 2, max_detections: 50}
)";
  for (std::size_t at; (at = yaml.find("BORDER")) != std::string::npos;) yaml.replace(at, 6, b);
  const std::string cfg = write_config("threads.yaml", yaml);
  struct Setting {
    int threads, chunks;
    double ratio;
  };
  const Setting settings[] = {{1, 1, 1.0}, {2, 1, 1.0},  {3, 1, 1.0}, {7, 1, 1.0}, {2, 5, 1.0},
                              {3, 7, 1.0}, {7, 13, 1.0}, {3, 3, 0.5}, {7, 9, 0.7}, {2, 600, 1.0}};
  std::string reference, reference_img;
  for (const Setting& st : settings) {
    const std::string what = std::to_string(st.threads) + " threads, chunks " +
                             std::to_string(st.chunks) + " ratio " + std::to_string(st.ratio) +
                             ", border " + mode + " (seed " + std::to_string(seed) + ")";
    RunOptions o;
    o.config = cfg;
    o.platform = write_platform(st.chunks, st.ratio);  // threads: 1, overridden as --threads does
    o.threads = st.threads;
    o.output_dir = (dir_ / ("out_t" + std::to_string(st.threads) + "_k" +
                            std::to_string(st.chunks) + "_r" + std::to_string(st.ratio)))
                       .string();
    o.save_images = true;
    const RunSummary s = run_pipeline(o);
    EXPECT_EQ(s.failed, 0) << what;
    const json sum = json::parse(test::slurp(fs::path(o.output_dir) / "summary.json"));
    EXPECT_EQ(sum["platform"]["threads"], st.threads) << what;
    EXPECT_TRUE(test::has(sum["executor"].get<std::string>(),
                          "on " + std::to_string(st.threads) + " thread"))
        << sum["executor"];
    const std::string results = test::slurp(fs::path(o.output_dir) / "results.jsonl");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(fs::path(o.output_dir) / "images")) {
      files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    std::string images;
    for (const fs::path& f : files) images += f.filename().string() + test::slurp(f);
    EXPECT_EQ(files.size(), 8u * 7u) << what;  // 8 frames, 7 images each
    if (st.threads == 1 && st.chunks == 1) {
      reference = results;
      reference_img = images;
      continue;
    }
    EXPECT_EQ(results, reference) << what;
    EXPECT_TRUE(images == reference_img) << what;
  }
}
INSTANTIATE_TEST_SUITE_P(Borders, ThreadedRun,
                         ::testing::Values("constant", "replicate", "reflect", "reflect101",
                                           "wrap"));

TEST_F(PipelineRun, ThreadsAreForTheCpuBackend) {
  const std::string cfg =
      write_config("c.yaml", "input: frames://frames\nstages:\n  - {type: histogram}\n");
  RunOptions o;
  o.config = cfg;
  o.platform = "discrete";
  o.threads = 2;
  o.output_dir = (dir_ / "out").string();
  const std::string e = test::error_of([&] { run_pipeline(o); });
  EXPECT_TRUE(test::has(e, "--threads 2: platform 'discrete' runs on the GPU")) << e;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "results.jsonl"));
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
