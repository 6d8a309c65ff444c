// SPDX-License-Identifier: MIT
#include "pipeline/interleaver.h"

#include <chrono>
#include <utility>

namespace jetpipe {

bool Interleaver::next(FrameRecord* record, std::size_t* input) {
  auto out = [&] {
    *input = order_.front();
    order_.pop_front();
    return true;
  };
  for (;;) {
    if (exec_.in_flight() > 0 && exec_.take(record, false)) return out();
    // While frames are in flight, a frame is waited for only briefly: their records come first.
    const auto wait = std::chrono::milliseconds(exec_.in_flight() > 0 ? 1 : 50);
    Frame frame;
    std::size_t i = 0;
    switch (inputs_.take(&frame, &i, wait)) {
      case SourceSet::Take::kFrame:
        order_.push_back(i);
        ++submitted_;
        exec_.submit(std::move(frame));
        break;
      case SourceSet::Take::kNone:
        break;
      case SourceSet::Take::kEnd:
        if (exec_.in_flight() == 0) return false;
        exec_.take(record, true);
        return out();
    }
  }
}

}  // namespace jetpipe
