// SPDX-License-Identifier: MIT
// Several inputs through one executor: frames taken from a SourceSet as they come (each input in
// turn; one that has none is passed over), submitted at once, and the records taken back as they
// complete. Executors give records in submit order, so each input's records come in that input's
// order; records of different inputs interleave. The executor's frames in flight are shared by
// the inputs: frames of different inputs run at the same time (the CUDA executor keeps frames of
// each size in slots of their own: pipeline/cuda_executor.cpp).
//
//   Interleaver run(inputs, *executor);
//   FrameRecord rec;  std::size_t i;
//   while (run.next(&rec, &i)) { ... }     // rec.input == inputs.state(i).name
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "pipeline/executor.h"
#include "pipeline/source_set.h"

namespace jetpipe {

class Interleaver {
 public:
  // Both must outlive the Interleaver; `inputs` should have opened (SourceSet::wait_open).
  Interleaver(SourceSet& inputs, Executor& exec) : inputs_(inputs), exec_(exec) {}

  // The next record and the index of its input, waiting for frames or the device as needed;
  // false once every input has ended and every frame taken has its record.
  bool next(FrameRecord* record, std::size_t* input);
  // No more frames are taken from the inputs (SourceSet::stop); frames already submitted still
  // give their records. `discard_queued`: frames read but not yet submitted get none (--strict).
  void stop(bool discard_queued) { inputs_.stop(discard_queued); }
  // Frames submitted to the executor so far.
  std::int64_t submitted() const { return submitted_; }

 private:
  SourceSet& inputs_;
  Executor& exec_;
  std::deque<std::size_t> order_;  // the input of each frame in flight, in submit order
  std::int64_t submitted_ = 0;
};

}  // namespace jetpipe
