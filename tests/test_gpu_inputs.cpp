// SPDX-License-Identifier: MIT
// Several inputs through the CUDA executor (SourceSet + Interleaver, as `jetpipe run` drives it):
// frames of several sizes and formats interleaved, each shape in slots of its own (more shapes
// than the executor keeps: the least recently used shape's slots change shape mid-run), give each
// input exactly the records and images of that input run alone, bit for bit, under every memory
// strategy, with frames in flight and graphs on and off. Skips without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/api.h"
#include "pipeline/interleaver.h"
#include "pipeline/results_json.h"
#include "pipeline/runner.h"
#include "pipeline/source_set.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

namespace jetpipe {
namespace {

using Inputs = std::vector<std::pair<std::string, std::string>>;  // name, URI

struct Output {
  std::map<std::string, std::vector<std::string>> records;  // per input: record_to_json
  std::map<std::string, std::vector<std::map<std::string, std::string>>> images;  // packed
};

Output run_inputs(const PipelineConfig& cfg, const PlatformProfile& profile, const Inputs& inputs) {
  std::unique_ptr<Executor> exec = make_executor(cfg, profile, cfg.image_names());
  SourceOptions base = source_options_for(cfg);
  base.allocator = exec->allocator();
  base.device_frames = true;
  std::vector<SourceSet::Input> set;
  for (const auto& [name, uri] : inputs) set.push_back({name, uri, base, {}});
  SourceSet sources(std::move(set));
  sources.wait_open();
  Interleaver run(sources, *exec);
  Output out;
  FrameRecord rec;
  std::size_t from = 0;
  while (run.next(&rec, &from)) {
    const std::string name = rec.input;
    EXPECT_EQ(name, inputs[from].first);
    rec.input.clear();  // the records of an input run alone
    out.records[name].push_back(record_to_json(rec).dump());
    std::map<std::string, std::string> imgs;
    for (const auto& [image, img] : rec.images) imgs[image] = test::pack_pixels(img.view());
    out.images[name].push_back(std::move(imgs));
  }
  return out;
}

PlatformProfile profile(const std::string& memory, int chunks, int frames, bool graphs) {
  return strategy_profile(parse_memory_strategy(memory), chunks, frames, graphs);
}

TEST(GpuInputs, InterleavedSizesAndFormatsEqualEachInputAlone) {
  JP_REQUIRE_GPU();
  const std::string frames = std::string(JETPIPE_TEST_DATA) + "/regression/frames";
  // Six shapes (size and format of the stages' view) from five inputs: more than the executor
  // keeps slots for, so slots change shape while frames of other shapes are in flight.
  const Inputs inputs = {{"files", "frames://" + frames},  // 768x576 BGR and a gray crop
                         {"blobs", "test://blobs?w=333&h=97&frames=9"},
                         {"noise", "test://noise?w=61&h=13&frames=12&format=gray8"},
                         {"nv12", "test://checker?w=130&h=45&frames=7&format=nv12"},
                         {"bgrx", "test://gradient?w=640&h=480&frames=5&format=bgrx8"}};
  const PipelineConfig cfg = load_config(std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml");
  PlatformProfile discrete = resolve_platform("discrete", nullptr);
  for (const PlatformProfile& p :
       {discrete, profile("pinned-chunked", 4, 2, true), profile("pinned-chunked", 1, 3, false),
        profile("zero-copy", 2, 2, true), profile("managed", 1, 2, true),
        profile("copy", 1, 1, false)}) {
    const std::string what = std::string(name(p.memory)) + " K=" + std::to_string(p.chunks) +
                             " F=" + std::to_string(p.frames_in_flight) +
                             (p.cuda_graphs ? " graphs" : "");
    SCOPED_TRACE(what);
    const Output together = run_inputs(cfg, p, inputs);
    for (const auto& input : inputs) {
      const Output alone = run_inputs(cfg, p, {input});
      const std::string& name = input.first;
      ASSERT_FALSE(alone.records.at(name).empty()) << name;
      ASSERT_EQ(together.records.at(name).size(), alone.records.at(name).size()) << name;
      for (std::size_t k = 0; k < alone.records.at(name).size(); ++k) {
        EXPECT_EQ(together.records.at(name)[k], alone.records.at(name)[k])
            << what << ", " << name << " record " << k;
        EXPECT_TRUE(together.images.at(name)[k] == alone.images.at(name)[k])
            << what << ", " << name << " record " << k << ": an image differs";
      }
      if (HasFailure()) return;
    }
  }
}

// The whole run on the GPU profile: jetpipe run with several inputs, each input's records equal to
// its run alone (frames decoded into the executor's frame pool by the inputs' threads).
TEST(GpuInputs, RunOfSeveralInputsEqualsEachAlone) {
  JP_REQUIRE_GPU();
  test::TempDir dir;
  const Inputs inputs = {{"a", "test://blobs?w=1920&h=1080&frames=6"},
                         {"b", "test://noise?w=640&h=480&frames=10&format=gray8"},
                         {"c", "test://blobs?w=1920&h=1080&frames=6&format=nv12"}};
  // config/default.yaml's stages and outputs, with these inputs.
  const std::string dflt = test::slurp(std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml");
  std::string yaml = "platform: discrete\ninputs:\n";
  for (const auto& [name, uri] : inputs) yaml += "  - {name: " + name + ", uri: \"" + uri + "\"}\n";
  std::ofstream(dir / "c.yaml") << yaml << dflt.substr(dflt.find("stages:"));
  RunOptions o;
  o.config = dir / "c.yaml";
  o.output_dir = dir / "together";
  const RunSummary all = run_pipeline(o);
  EXPECT_EQ(all.failed, 0);
  std::map<std::string, std::vector<nlohmann::json>> by_input;
  {
    std::ifstream in(dir / "together/results.jsonl");
    for (std::string line; std::getline(in, line);) {
      nlohmann::json r = nlohmann::json::parse(line);
      const std::string name = r["input"];
      r.erase("input");
      by_input[name].push_back(std::move(r));
    }
  }
  for (const auto& [name, uri] : inputs) {
    RunOptions alone = o;
    alone.inputs = {uri};
    alone.output_dir = dir / ("alone_" + name);
    run_pipeline(alone);
    std::ifstream in(dir / ("alone_" + name + "/results.jsonl"));
    std::size_t k = 0;
    for (std::string line; std::getline(in, line); ++k) {
      ASSERT_LT(k, by_input[name].size()) << name;
      EXPECT_EQ(by_input[name][k], nlohmann::json::parse(line)) << name << " record " << k;
    }
    EXPECT_EQ(k, by_input[name].size()) << name;
  }
}

}  // namespace
}  // namespace jetpipe
