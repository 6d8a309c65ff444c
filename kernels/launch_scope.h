// SPDX-License-Identifier: MIT
// Launch settings a caller holds over a group of launches it makes on its own thread, read by the
// launchers as they launch (also while a stream is captured into a graph: the setting lands in the
// captured kernel's parameters). Host-only header: no CUDA includes.
#pragma once

namespace jetpipe {

// The early trigger of the programmatic launches (kernels/block/pdl.cuh, pdl_early()) that this
// thread makes while the scope lives: off, or on as the environment has it (JETPIPE_PDL_EARLY=0
// still turns it off). Nested scopes restore the outer one. The executor turns it off for frames
// of several strips (pipeline/cuda_executor.cpp, enqueue).
class EarlyTriggerScope {
 public:
  explicit EarlyTriggerScope(bool on);
  ~EarlyTriggerScope();
  EarlyTriggerScope(const EarlyTriggerScope&) = delete;
  EarlyTriggerScope& operator=(const EarlyTriggerScope&) = delete;

 private:
  int prev_;
};

// This thread's setting: −1 none (the environment's), 0 off, 1 on.
int early_trigger_here();

}  // namespace jetpipe
