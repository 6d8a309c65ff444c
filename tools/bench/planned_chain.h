// SPDX-License-Identifier: MIT
// A config's chain as the CUDA executor plans and queues it (pipeline/planner.h,
// pipeline/gpu_scheduler.h) for one frame of one strip already in device memory: the planner's
// fusions and side-stream stages, one slot's twins bound to device images, the scheduler's
// launches. Nothing is copied in or out; small results land where the executor puts them (mapped
// host memory). So a fusion changed in the planner changes the benchmark's chain with it.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda_memory.h"
#include "pipeline/config.h"
#include "pipeline/gpu_slot.h"
#include "pipeline/planner.h"

namespace jetpipe::bench {

class PlannedChain {
 public:
  // Loads the config, plans it, uploads `frame`, binds the stages (complete on return).
  PlannedChain(const std::string& config_path, const ImageView& frame);

  // Queues the frame's work after `stream`'s work so far; `stream` then waits for all of it (also
  // while `stream` is captured into a graph).
  void enqueue(cudaStream_t stream);

  const PipelinePlan& plan() const { return plan_; }
  // A device image the stages wrote ("blur", "response", ...), or the frame.
  ImageView image(const std::string& name) const { return views_.at(name); }
  // Each result stage's result, by stage name; after the chain's work completed.
  std::vector<std::pair<std::string, StageResult>> results() const;

 private:
  PipelineConfig cfg_;
  ExecSettings settings_;
  PipelinePlan plan_;
  std::unique_ptr<Slot> slot_;
  InFlight frame_;
  DeviceImage frame_dev_;
  std::map<std::string, ImageView> views_;
  CudaEvent fork_{false}, join_{false};
};

}  // namespace jetpipe::bench
