// SPDX-License-Identifier: MIT
// Out of memory inside a stage is that frame's error record, not the end of the run (it ended the
// run with std::bad_alloc, exit 1 and nothing written, while the same in a reader was a record).
#include <gtest/gtest.h>

#include <memory>
#include <new>
#include <string>

#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/platform.h"

namespace jetpipe {
namespace {

// A result-only stage whose CPU twin runs out of memory on frame 1.
class GreedyStage : public Stage {
 public:
  bool accepts(PixelFormat, std::string*) const override { return true; }
  void begin_frame(const ImageView&, int) override { ++frame_; }
  void run_cpu(int, const ImageView&, const ImageView&, int, int, int) override {
    if (frame_ == 1) throw std::bad_alloc();
  }
  StageResult result() const override { return StatsResult{}; }
  std::unique_ptr<StageGpu> make_gpu() const override { return nullptr; }

 private:
  int frame_ = -1;
};

TEST(StageOom, IsTheFramesErrorAndTheRunGoesOn) {
  PipelineConfig cfg;
  cfg.file = "oom.yaml";
  cfg.stages.push_back(std::make_unique<GreedyStage>());
  cfg.stages.back()->set_identity("greedy", "big", kFrameImage, "");
  const std::unique_ptr<Executor> exec =
      make_executor(cfg, strategy_profile(MemoryStrategy::kHost, 2, 1, false), {});
  for (int i = 0; i < 3; ++i) {
    Frame f;
    f.index = i;
    f.source = "f" + std::to_string(i);
    f.image = HostImage(8, 4, PixelFormat::kGray8);
    exec->submit(std::move(f));
  }
  for (int i = 0; i < 3; ++i) {
    FrameRecord r;
    ASSERT_TRUE(exec->take(&r, true));
    EXPECT_EQ(r.index, i);
    if (i == 1) {
      EXPECT_EQ(r.error, "frame 1 (f1): out of memory in stage 'big' (greedy)");
      EXPECT_TRUE(r.results.empty());
    } else {
      EXPECT_TRUE(r.error.empty()) << r.error;
      EXPECT_EQ(r.results.size(), 1u);
    }
  }
}

}  // namespace
}  // namespace jetpipe
