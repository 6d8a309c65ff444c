// SPDX-License-Identifier: MIT
// The CUDA executor's timing (CUDA builds only): a clock whose origin is an event recorded when
// the executor started, and a frame's spans and stage times read from its slot's events after the
// frame completed (DESIGN.md, Timing).
#pragma once

#if JETPIPE_HAVE_CUDA
#include "core/cuda_memory.h"
#include "pipeline/gpu_slot.h"
#include "pipeline/planner.h"

namespace jetpipe {

class GpuClock {
 public:
  // Records the origin on `stream` and waits for it.
  explicit GpuClock(cudaStream_t stream);
  // ms from the origin to e; NaN when the time cannot be read (then timing is off for the rest of
  // the run, said once on stderr, and records carry no spans).
  double since_origin(cudaEvent_t e);
  bool ok() const { return ok_; }

 private:
  CudaEvent origin_{true};
  bool ok_ = true;
};

// Fills the frame's record: its GPU span, and for a timed frame its spans (copies, stages per
// strip or on the last strip, merges) and per-stage times.
void collect_timing(const PipelinePlan& plan, const ExecSettings& s, Slot& slot, InFlight& frame,
                    GpuClock& clock);

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
