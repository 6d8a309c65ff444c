// SPDX-License-Identifier: MIT
#include "tools/bench/planned_chain.h"

#include "core/cuda_check.h"
#include "pipeline/executor.h"
#include "pipeline/gpu_scheduler.h"

namespace jetpipe::bench {

namespace {

// The copy strategy on one stream, graphs on: one strip, the side stream for the stages beside,
// no strip copies; the fusions are those of every strategy but zero-copy.
ExecSettings one_strip_settings() {
  return exec_settings(strategy_profile(MemoryStrategy::kCopy, 1, 1, true), false);
}

}  // namespace

PlannedChain::PlannedChain(const std::string& config_path, const ImageView& frame)
    : cfg_(load_config(config_path)), settings_(one_strip_settings()) {
  plan_ = plan_config(cfg_, {}, settings_.memory);
  slot_ = make_slot(plan_, settings_, 0);

  const int w = frame.width, h = frame.height;
  frame_dev_ = DeviceImage(w, h, frame.format);
  const ImageView d = frame_dev_.view();
  JP_CUDA(cudaMemcpy2D(d.data, d.pitch, frame.data, frame.pitch, frame.row_bytes(),
                       static_cast<std::size_t>(h), cudaMemcpyHostToDevice));
  frame_.plan = plan_frame(plan_, settings_, {0, h});
  views_[kFrameImage] = d;
  std::map<std::string, PixelFormat> formats = {{kFrameImage, frame.format}};
  bool changed = false;
  for (const StagePlan& sp : plan_.stages) {
    const Stage& s = *sp.stage;
    check_stage_input(s, formats.at(s.input()));
    if (!s.has_output()) continue;
    formats[s.output()] = s.output_format(formats.at(s.input()));
    if (sp.fused_into < 0) {
      views_[s.output()] = slot_->device_image(s.output(), w, h, formats[s.output()], &changed);
    }
  }
  for (std::size_t i = 0; i < plan_.stages.size(); ++i) {
    const StagePlan& sp = plan_.stages[i];
    if (sp.fused_into >= 0) continue;
    GpuBinding b;
    b.in = views_.at(sp.reads);
    if (sp.stage->has_output()) b.out = views_.at(sp.stage->output());
    b.strips = 1;
    b.results = settings_.results;
    b.stream = slot_->main.get();
    b.beside = sp.beside;
    slot_->stages[i].gpu->bind(b);
  }
  JP_CUDA(cudaStreamSynchronize(slot_->main.get()));
}

void PlannedChain::enqueue(cudaStream_t stream) {
  JP_CUDA(cudaEventRecord(fork_.get(), stream));
  JP_CUDA(cudaStreamWaitEvent(slot_->main.get(), fork_.get(), 0));
  FrameScheduler(plan_, settings_, *slot_, frame_, false).enqueue(views_, false, false);
  JP_CUDA(cudaEventRecord(join_.get(), slot_->main.get()));
  JP_CUDA(cudaStreamWaitEvent(stream, join_.get(), 0));
}

std::vector<std::pair<std::string, StageResult>> PlannedChain::results() const {
  std::vector<std::pair<std::string, StageResult>> out;
  for (std::size_t i = 0; i < plan_.stages.size(); ++i) {
    StageResult r = slot_->stages[i].gpu->result();
    if (!std::holds_alternative<std::monostate>(r)) {
      out.emplace_back(plan_.stages[i].stage->name(), std::move(r));
    }
  }
  return out;
}

}  // namespace jetpipe::bench
