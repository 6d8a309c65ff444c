// SPDX-License-Identifier: MIT
// Queues one frame's work on a slot's streams (CUDA builds only), following the pipeline's plan
// and the frame's: strip copies in, the stages pass by pass and strip by strip (each strip after
// the rows it reads have been written), merges, the stages beside the others, copies out, the
// joins back to the slot's main stream. Used directly or while a stream is captured into a graph.
#pragma once

#if JETPIPE_HAVE_CUDA
#include <map>
#include <string>

#include "pipeline/gpu_slot.h"
#include "pipeline/planner.h"

namespace jetpipe {

// Whether strip k of `strips` records a timing event: every strip (timing: strips), or only the
// first strip's start events and the last strip's end events (timing: stages: a handful of graph
// nodes instead of one per stage and strip), none with timing: frame.
bool timed_strip(TimingLevel level, int k, int strips, bool start_event);

class FrameScheduler {
 public:
  // `timing`: the frame records its stage and copy timing events.
  FrameScheduler(const PipelinePlan& plan, const ExecSettings& settings, Slot& slot,
                 const InFlight& frame, bool timing)
      : plan_(plan), s_(settings), slot_(slot), frame_(frame), timing_(timing) {}

  // The frame's strips in, in row order, on the copy stream (with strip streams) or each on its
  // strip's stream; h2d_done[k] recorded after strip k's copy (the first FramePlan::first_copy
  // strips share one). With `poll`, each copy's flag written after it; with begin_after_first, the
  // frame's start event (t_begin) on the main stream right after the first copy is queued.
  void copy_strips_in(const ImageView& frame_dev, bool capturing, bool poll = false,
                      bool begin_after_first = false);

  void set_timing(bool timing) { timing_ = timing; }

  // Everything else. With copies_done, the strip copies are already queued (copy_strips_in,
  // outside the capture): the graph waits for their events as external events.
  void enqueue(const std::map<std::string, ImageView>& views, bool capturing, bool copies_done);

 private:
  void record_timing(cudaEvent_t e, cudaStream_t s, bool capturing);

  const PipelinePlan& plan_;
  const ExecSettings& s_;
  Slot& slot_;
  const InFlight& frame_;
  bool timing_;
};

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
