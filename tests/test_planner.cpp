// SPDX-License-Identifier: MIT
// The CUDA executor's planner (pipeline/planner.h), host-only: the fusions, side-stream stages,
// launch order and skews it plans for real configs, and per frame the strips each strip waits for,
// the first copy, the deferred last strip and the merges, with fake GPU twins that take the same
// fusions as the real ones (GpuPlanner checks that on a GPU machine).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "gpu_test_util.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/planner.h"

namespace jetpipe {
namespace {

// A GPU twin that launches nothing and takes the fusions the real twins take (stages/*.cpp):
// a histogram absorbs the first stats over its image; a gaussian computes a to_gray producer as
// it reads; a harris gathers its response's maximum for one reader that wants it (a detection
// with quality).
class FakeTwin : public StageGpu {
 public:
  FakeTwin(std::string type, bool wants_maximum)
      : type_(std::move(type)), wants_maximum_(wants_maximum) {}
  bool bind(const GpuBinding&) override { return false; }
  void launch(int, int, int, int, const LaunchContext&, GpuStream) override {}
  bool absorb(StageGpu& later) override {
    auto* other = dynamic_cast<FakeTwin*>(&later);
    if (type_ != "histogram" || absorbed_ || other == nullptr || other->type_ != "stats") {
      return false;
    }
    absorbed_ = true;
    return true;
  }
  bool fuse_producer(const Stage& producer) override {
    return type_ == "gaussian" && producer.type() == "to_gray";
  }
  bool feed_maximum(StageGpu& reader) override {
    if (type_ != "harris" || fed_ || !reader.wants_maximum()) return false;
    fed_ = true;
    return true;
  }
  bool wants_maximum() const override { return wants_maximum_; }

 private:
  std::string type_;
  bool wants_maximum_ = false;
  bool absorbed_ = false, fed_ = false;
};

// A config's stages with a fake twin each (`quality` names the detections with quality).
struct Planned {
  PipelineConfig cfg;
  std::vector<std::unique_ptr<StageGpu>> twins;

  std::vector<const Stage*> stages() const {
    std::vector<const Stage*> v;
    for (const auto& s : cfg.stages) v.push_back(s.get());
    return v;
  }
  std::vector<StageGpu*> twin_ptrs() const {
    std::vector<StageGpu*> v;
    for (const auto& t : twins) v.push_back(t.get());
    return v;
  }
  PipelinePlan plan(MemoryStrategy memory, const std::vector<std::string>& keep = {}) {
    twins.clear();
    for (const auto& s : cfg.stages) {
      twins.push_back(std::make_unique<FakeTwin>(s->type(), s->name() == "corners"));
    }
    return plan_pipeline(stages(), keep, memory, twin_ptrs());
  }
};

Planned from_file(const std::string& path) { return Planned{load_config(path), {}}; }
Planned from_yaml(const std::string& yaml) { return Planned{parse_config(yaml, "test.yaml"), {}}; }

std::string default_config() { return std::string(JETPIPE_TEST_DATA) + "/../config/default.yaml"; }

int index_of(const PipelinePlan& plan, const std::string& name) {
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    if (plan.stages[i].stage->name() == name) return static_cast<int>(i);
  }
  return -1;
}

ExecSettings pinned(int k, int frames = 1, int strip_copies = 0) {
  PlatformProfile p = strategy_profile(MemoryStrategy::kPinnedChunked, k, frames, true);
  p.strip_copies = strip_copies;
  return exec_settings(p, true);
}

TEST(Planner, DefaultConfigFusesGrayIntoBlurStatsIntoHistAndFeedsTheMaximum) {
  Planned d = from_file(default_config());
  const PipelinePlan plan = d.plan(MemoryStrategy::kPinnedChunked, {"blur"});
  EXPECT_EQ(plan.fusions, "stats into hist; gray into blur; response's maximum into corners");
  EXPECT_EQ(plan.beside, "hist");
  const int gray = index_of(plan, "gray"), blur = index_of(plan, "blur"),
            hist = index_of(plan, "hist"), stats = index_of(plan, "stats"),
            response = index_of(plan, "response"), corners = index_of(plan, "corners");
  EXPECT_EQ(plan.stages[gray].fused_into, blur);
  EXPECT_EQ(plan.stages[blur].reads, kFrameImage);  // the colour frame, as its gray image
  EXPECT_EQ(plan.stages[blur].producer, -1);
  EXPECT_EQ(plan.stages[stats].absorbed_by, hist);
  EXPECT_TRUE(plan.stages[corners].max_fed);
  EXPECT_TRUE(plan.stages[blur].keep);
  EXPECT_FALSE(plan.stages[response].keep);
  // Image stages in config order, then the detection (two passes) before the histogram.
  const std::vector<std::size_t> order(plan.order.begin(), plan.order.end());
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 4, 5, 2, 3}));
  // Skews: the blur's halo 2, harris' 2 more, the detection's radius 4 more.
  EXPECT_EQ(plan.stages[blur].skew, 2);
  EXPECT_EQ(plan.stages[hist].skew, 2);
  EXPECT_EQ(plan.stages[response].skew, 4);
  EXPECT_EQ(plan.stages[corners].skew, 8);
  EXPECT_EQ(plan.writer.at("blur"), blur);
}

TEST(Planner, ZeroCopyKeepsToGrayApartAndManagedKeepsSavedImagesOnTheMainStream) {
  Planned d = from_file(default_config());
  const PipelinePlan zero = d.plan(MemoryStrategy::kZeroCopy);
  EXPECT_EQ(zero.fusions, "stats into hist; response's maximum into corners");
  EXPECT_EQ(zero.stages[index_of(zero, "gray")].fused_into, -1);
  EXPECT_EQ(zero.stages[index_of(zero, "blur")].skew, 2);
  // The histogram reads the blur: kept (managed memory, attached to the main stream), in line.
  EXPECT_EQ(d.plan(MemoryStrategy::kManaged, {"blur"}).beside, "");
  EXPECT_EQ(d.plan(MemoryStrategy::kManaged).beside, "hist");
}

TEST(Planner, AKeptGrayImageIsNotFusedAway) {
  Planned d = from_file(default_config());
  const PipelinePlan plan = d.plan(MemoryStrategy::kPinnedChunked, {"gray"});
  EXPECT_EQ(plan.fusions, "stats into hist; response's maximum into corners");
  EXPECT_EQ(plan.stages[index_of(plan, "blur")].producer, index_of(plan, "gray"));
}

TEST(Planner, EveryStripWaitsOnlyForStripsUpToItsOwn) {
  Planned d = from_file(default_config());
  const PipelinePlan plan = d.plan(MemoryStrategy::kPinnedChunked);
  for (const int h : {1080, 97, 33}) {
    for (const int k : {1, 2, 3, 4, 8}) {
      const FramePlan f = plan_frame(plan, pinned(k), strip_bounds(h, k));
      for (std::size_t i = 0; i < plan.stages.size(); ++i) {
        if (!plan.stages[i].launched()) continue;
        for (int s = 0; s < f.strips; ++s) {
          const std::vector<int> js = producer_strips(plan, f, i, s);
          ASSERT_FALSE(js.empty()) << plan.stages[i].stage->name() << " strip " << s;
          // Each strip's skewed rows end where its producer's strip s ends or above, except where
          // strips are shorter than the skew (then a later strip may hold them).
          if (h >= 8 * 2 * k) {
            EXPECT_LE(js.back(), s)
                << plan.stages[i].stage->name() << " h " << h << " K " << k << " strip " << s;
          }
        }
      }
    }
  }
}

TEST(Planner, DefaultConfigAt1080pInFourStrips) {
  Planned d = from_file(default_config());
  const PipelinePlan plan = d.plan(MemoryStrategy::kPinnedChunked);
  const FramePlan f = plan_frame(plan, pinned(4, 1, 2), strip_bounds(1080, 4));
  EXPECT_EQ(f.bounds, (std::vector<int>{0, 270, 540, 810, 1080}));
  const int blur = index_of(plan, "blur"), response = index_of(plan, "response"),
            corners = index_of(plan, "corners");
  EXPECT_EQ(f.stage_bounds[blur], (std::vector<int>{0, 268, 538, 808, 1080}));
  EXPECT_EQ(f.stage_bounds[response], (std::vector<int>{0, 266, 536, 806, 1080}));
  EXPECT_EQ(f.stage_bounds[corners], (std::vector<int>{0, 262, 532, 802, 1080}));
  // The blur's strip 1 reads frame rows [266, 540): the copies of strips 0 and 1.
  EXPECT_EQ(producer_strips(plan, f, blur, 1), (std::vector<int>{0, 1}));
  // The detection's strip 1 reads response rows [258, 536): harris' strips 0 and 1.
  EXPECT_EQ(producer_strips(plan, f, corners, 1), (std::vector<int>{0, 1}));
  EXPECT_EQ(producer_strips(plan, f, corners, 3), (std::vector<int>{2, 3}));
  EXPECT_EQ(f.first_copy, 3);  // strip_copies 2: strips 0-2 in one copy, strip 3 alone
  EXPECT_TRUE(f.merges_on_last);
  EXPECT_TRUE(f.defer_last);
  EXPECT_FALSE(f.early_trigger);
  // One strip: the early trigger, no deferral, merges on the main stream.
  const FramePlan one = plan_frame(plan, pinned(1), strip_bounds(1080, 1));
  EXPECT_TRUE(one.early_trigger);
  EXPECT_FALSE(one.defer_last);
  EXPECT_FALSE(one.merges_on_last);
  EXPECT_EQ(one.first_copy, 1);
}

TEST(Planner, WrapBordersAndShortStripsKeepTheLastStripInLine) {
  Planned wrap = from_yaml(
      "stages:\n"
      "  - {type: to_gray, name: gray}\n"
      "  - {type: gaussian, name: blur, ksize: 5}\n"
      "  - {type: box, name: smooth, ksize: 3, border: wrap}\n"
      "  - {type: stats, name: stats}\n");
  const PipelinePlan wp = wrap.plan(MemoryStrategy::kPinnedChunked);
  const FramePlan wf = plan_frame(wp, pinned(4), strip_bounds(1080, 4));
  EXPECT_FALSE(wf.defer_last);  // the box's strip 0 reads the blur's last rows
  EXPECT_EQ(producer_strips(wp, wf, index_of(wp, "smooth"), 0), (std::vector<int>{0, 3}));

  // Short strips: the last strip is deferred exactly when no earlier strip of a stage reads rows
  // of its producer's last strip.
  Planned d = from_file(default_config());
  const PipelinePlan plan = d.plan(MemoryStrategy::kPinnedChunked);
  int in_line = 0;
  for (int h = 8; h <= 64; ++h) {
    const FramePlan f = plan_frame(plan, pinned(8), strip_bounds(h, 8));
    bool reads_last = false;
    for (std::size_t i = 0; i < plan.stages.size(); ++i) {
      if (plan.stages[i].producer < 0 || !plan.stages[i].launched()) continue;
      for (int k = 0; k + 1 < f.strips; ++k) {
        const std::vector<int> js = producer_strips(plan, f, i, k);
        reads_last |= std::find(js.begin(), js.end(), f.strips - 1) != js.end();
      }
    }
    EXPECT_EQ(f.defer_last, !reads_last) << "h " << h;
    in_line += f.defer_last ? 0 : 1;
  }
  EXPECT_GT(in_line, 0) << "some short strips read their producer's last strip";
  EXPECT_TRUE(plan_frame(plan, pinned(8), strip_bounds(1080, 8)).defer_last);
}

TEST(Planner, SettingsFromProfiles) {
  PlatformProfile copy = strategy_profile(MemoryStrategy::kCopy, 4, 3, true);
  const ExecSettings c = exec_settings(copy, true);
  EXPECT_EQ(c.frames, 1);
  EXPECT_EQ(c.streams, 1);
  EXPECT_TRUE(c.single_stream());
  EXPECT_FALSE(c.copy_streams());

  PlatformProfile managed = strategy_profile(MemoryStrategy::kManaged, 4, 2, false);
  EXPECT_EQ(exec_settings(managed, true).streams, 1);
  EXPECT_EQ(exec_settings(managed, true).strip_streams(), 0);

  PlatformProfile p = strategy_profile(MemoryStrategy::kPinnedChunked, 4, 1, true);
  p.copy_wait = CopyWait::kPoll;
  EXPECT_TRUE(exec_settings(p, true).polls());
  EXPECT_FALSE(exec_settings(p, false).poll);  // the device cannot wait on stream values
  p.cuda_graphs = false;
  EXPECT_FALSE(exec_settings(p, true).poll);  // the copies are queued ahead of a graph only
  EXPECT_EQ(exec_settings(p, true).stream_of(5), 1);
  // A frame of 1080p BGR (6.2 MB) in strips of at least 4 MiB: one strip.
  p.min_strip_mb = 4;
  EXPECT_EQ(strips_for(exec_settings(p, true), 1920 * 3 * 1080), 1);
  p.min_strip_mb = 1;
  EXPECT_EQ(strips_for(exec_settings(p, true), 1920 * 3 * 1080), 4);

  PlatformProfile host = strategy_profile(MemoryStrategy::kHost, 1, 1, false);
  EXPECT_THROW(exec_settings(host, true), Error);
  EXPECT_EQ(p.results, ResultsPlacement::kAuto);
  EXPECT_EQ(exec_settings(p, true).results, ResultMemory::kMapped);
  p.results = ResultsPlacement::kCopy;
  EXPECT_EQ(exec_settings(p, true).results, ResultMemory::kCopy);
}

TEST(Planner, SlotsTakeThePlansFusionsOrSayTheyDiffer) {
  Planned d = from_file(default_config());
  const PipelinePlan plan = d.plan(MemoryStrategy::kPinnedChunked);
  std::vector<std::unique_ptr<StageGpu>> twins;
  std::vector<StageGpu*> ptrs;
  for (const auto& s : d.cfg.stages) {
    twins.push_back(std::make_unique<FakeTwin>(s->type(), s->name() == "corners"));
    ptrs.push_back(twins.back().get());
  }
  EXPECT_NO_THROW(apply_fusions(plan, ptrs));
  // The same twins again: the histogram has already absorbed its stats.
  EXPECT_THROW(apply_fusions(plan, ptrs), Error);
}

#if JETPIPE_HAVE_CUDA
// The real twins take the fusions the fakes above take (so the tests above plan what runs).
TEST(GpuPlanner, RealTwinsPlanTheDefaultConfigAsTheFakes) {
  JP_REQUIRE_GPU();
  Planned d = from_file(default_config());
  const PipelinePlan got = plan_config(d.cfg, {"blur"}, MemoryStrategy::kPinnedChunked);
  const PipelinePlan want = d.plan(MemoryStrategy::kPinnedChunked, {"blur"});
  EXPECT_EQ(got.fusions, want.fusions);
  EXPECT_EQ(got.beside, want.beside);
  for (std::size_t i = 0; i < got.stages.size(); ++i) {
    EXPECT_EQ(got.stages[i].skew, want.stages[i].skew) << i;
  }
}
#endif

}  // namespace
}  // namespace jetpipe
