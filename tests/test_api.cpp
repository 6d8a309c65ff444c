// SPDX-License-Identifier: MIT
// The application-facing API (pipeline/api.h): pipelines from YAML or built in code, run over a
// source by callback or pulled as a stream, equal to what `jetpipe run` writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/api.h"
#include "pipeline/results_json.h"
#include "pipeline/runner.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace jetpipe {
namespace {

constexpr const char* kYaml = R"(
input: test://blobs?w=96&h=64&frames=6
platform: cpu
stages:
  - {type: to_gray, name: gray}
  - {type: gaussian, name: blur, ksize: 5}
  - {type: histogram, name: hist, bins: 32}
  - {type: stats, name: stats}
  - {type: harris, name: response, input: blur}
  - {type: detect, name: corners, quality: 0.05}
)";

std::vector<nlohmann::ordered_json> collect(Pipeline& p, Source& s) {
  std::vector<nlohmann::ordered_json> out;
  p.run(s, [&](const FrameRecord& r) {
    out.push_back(record_to_json(r));
    return true;
  });
  return out;
}

TEST(ApiPipeline, FromYamlEqualsTheCliRun) {
  const test::TempDir tmp;
  const fs::path& dir = tmp.path();
  std::ofstream(dir / "c.yaml") << kYaml;

  Pipeline p = Pipeline::from_file((dir / "c.yaml").string());
  EXPECT_EQ(p.platform().name, "cpu");
  auto src = p.open();
  const auto records = collect(p, *src);
  ASSERT_EQ(records.size(), 6u);

  RunOptions o;
  o.config = (dir / "c.yaml").string();
  o.output_dir = (dir / "out").string();
  run_pipeline(o);
  std::ifstream in(dir / "out" / "results.jsonl");
  std::string line;
  for (std::size_t i = 0; std::getline(in, line); ++i) {
    ASSERT_LT(i, records.size());
    EXPECT_EQ(records[i].dump(), line) << "frame " << i;
  }
}

TEST(ApiPipeline, BuiltInCodeStreamAndCallbackAgree) {
  PipelineBuilder b = Pipeline::builder();
  b.input("test://checker?w=64&h=48&frames=5")
      .platform("cpu")
      .stage("to_gray", {{"name", "gray"}})
      .stage("histogram", {{"bins", "8"}, {"range", "[0, 256]"}})
      .stage("stats");
  EXPECT_NE(b.yaml().find("- {type: histogram, bins: 8, range: [0, 256]}"), std::string::npos)
      << b.yaml();
  Pipeline p = b.build();
  auto s1 = p.open();
  const auto by_callback = collect(p, *s1);

  auto s2 = p.open();
  Pipeline::Stream stream = p.stream(*s2);
  std::vector<nlohmann::ordered_json> pulled;
  for (FrameRecord r; stream.next(&r);) pulled.push_back(record_to_json(r));
  EXPECT_EQ(stream.stats().read, 5);
  EXPECT_EQ(stream.stats().processed, 5);
  EXPECT_TRUE(stream.stats().source_error.empty());
  ASSERT_EQ(pulled.size(), 5u);
  EXPECT_EQ(pulled, by_callback);
  EXPECT_EQ(pulled[4]["results"]["histogram"]["bins"].size(), 8u);

  // Stopping early, and max_frames.
  auto s3 = p.open();
  int seen = 0;
  const RunStats st = p.run(*s3, [&](const FrameRecord&) { return ++seen < 2; });
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(st.read, 2);
  auto s4 = p.open();
  EXPECT_EQ(p.run(
                 *s4, [](const FrameRecord&) { return true; }, 3)
                .read,
            3);
}

TEST(ApiPipeline, ProcessOneImageAndKeepImages) {
  Pipeline p = Pipeline::builder().stage("gaussian", {{"name", "blur"}, {"ksize", "3"}}).build();
  HostImage img(16, 8, PixelFormat::kGray8);
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 16; ++x)
      img.view().row<std::uint8_t>(y)[x] = static_cast<std::uint8_t>(x * 16);
  }
  p.keep_images({"blur"});
  const FrameRecord r = p.process(img, 4, "mine");
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.index, 4);
  EXPECT_EQ(r.source, "mine");
  ASSERT_EQ(r.images.count("blur"), 1u);
  EXPECT_EQ(r.images.at("blur").width(), 16);
  // A colour image fed to a gray-only pipeline: the record says why.
  const FrameRecord bad = p.process(HostImage(4, 4, PixelFormat::kBgr8));
  EXPECT_NE(bad.error.find("gaussian"), std::string::npos) << bad.error;
  try {
    p.keep_images({"nope"});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_NE(std::string(e.what()).find("frame, blur"), std::string::npos) << e.what();
  }
}

TEST(ApiPipeline, FrameColourFollowsTheFirstStages) {
  EXPECT_TRUE(source_options_for(Pipeline::builder().stage("to_gray").build().config()).colour);
  EXPECT_FALSE(source_options_for(Pipeline::builder().stage("stats").build().config()).colour);
  EXPECT_TRUE(source_options_for(Pipeline::builder()
                                     .stage("stats")
                                     .stage("to_gray", {{"input", "frame"}})
                                     .build()
                                     .config())
                  .colour);
}

// The built-in test patterns follow it as decoders do: a pipeline reading gray gets gray8 frames
// (not bgr8 frames its first stage refuses), the same picture as ?format=gray8; ?format= wins.
TEST(ApiPipeline, TestPatternsGiveGrayToAGrayPipeline) {
  Pipeline gray = Pipeline::builder().platform("cpu").stage("histogram").stage("stats").build();
  auto json_of = [&](const std::string& uri) {
    std::vector<std::string> out;
    auto src = gray.open(uri);
    gray.run(*src, [&](const FrameRecord& r) {
      EXPECT_EQ(r.error, "") << uri;
      out.push_back(record_to_json(r)["results"].dump());
      return true;
    });
    return out;
  };
  for (const char* p : {"checker", "noise", "blobs", "gradient"}) {
    const std::string uri = std::string("test://") + p + "?w=41&h=29&frames=3";
    EXPECT_EQ(json_of(uri), json_of(uri + "&format=gray8")) << p;
  }
  Frame f;
  ASSERT_TRUE(gray.open("test://checker?w=8&h=4&frames=1&format=bgr8")->next(&f));
  EXPECT_EQ(f.image.view().format, PixelFormat::kBgr8);
  Pipeline colour = Pipeline::builder().platform("cpu").stage("to_gray").build();
  ASSERT_TRUE(colour.open("test://checker?w=8&h=4&frames=1")->next(&f));
  EXPECT_EQ(f.image.view().format, PixelFormat::kBgr8);
}

TEST(ApiPipeline, ErrorsNameWhatIsWrong) {
  try {
    Pipeline::from_yaml("stages:\n  - {type: blur}\n");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_NE(std::string(e.what()).find("<yaml>:2"), std::string::npos) << e.what();
  }
  try {
    Pipeline::builder().stage("gaussian", {{"ksize", "4"}}).build();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_NE(std::string(e.what()).find("<builder>"), std::string::npos) << e.what();
  }
  Pipeline p = Pipeline::builder().stage("stats").build();
  EXPECT_THROW(p.open(), Error);  // no input anywhere
  try {
    p.open("frames:///no/such/dir");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
  }
}

}  // namespace
}  // namespace jetpipe
