// SPDX-License-Identifier: MIT
#include "pipeline/gpu_timing.h"

#if JETPIPE_HAVE_CUDA
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/cuda_check.h"

namespace jetpipe {

GpuClock::GpuClock(cudaStream_t stream) {
  JP_CUDA(cudaEventRecord(origin_.get(), stream));
  JP_CUDA(cudaEventSynchronize(origin_.get()));
}

double GpuClock::since_origin(cudaEvent_t e) {
  float ms = 0;
  const cudaError_t err = cudaEventElapsedTime(&ms, origin_.get(), e);
  if (err == cudaSuccess) return ms;
  cudaGetLastError();
  if (ok_) {
    std::fprintf(stderr, "jetpipe: GPU timing unavailable (%s); stage times are not reported\n",
                 cudaGetErrorString(err));
  }
  ok_ = false;
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

// The timeline row of a strip's copies: the copy stream, or the strip's own stream.
std::string copy_track(const ExecSettings& s, const Slot& slot, const char* dir, int k) {
  if (slot.streams.empty()) return " main";
  if (s.memory == MemoryStrategy::kPinnedChunked) return std::string(" copy ") + dir;
  return " strip " + std::to_string(k);
}

}  // namespace

void collect_timing(const PipelinePlan& plan, const ExecSettings& s, Slot& slot, InFlight& p,
                    GpuClock& clock) {
  FrameRecord& rec = p.record;
  const int strips = p.plan.strips;
  const int last = strips - 1;
  const std::string prefix = "frame slot " + std::to_string(slot.index);
  const double t0 = clock.since_origin(slot.t_begin.get());
  rec.gpu_start_ms = t0;
  rec.gpu_ms = clock.since_origin(slot.t_finish.get()) - t0;
  if (!p.timed) return;
  const bool all = s.timing == TimingLevel::kStrips;
  auto strip_track = [&](int k) {
    return prefix + (slot.streams.empty() ? " main" : " strip " + std::to_string(k));
  };
  // Copies in: per strip, or first start to last end (none for a device frame).
  const bool copied_in = s.memory == MemoryStrategy::kPinnedChunked && !p.frame.device;
  std::vector<double> prev(strips, 0.0);
  if (all) {
    for (int k = 0; k < strips; ++k) {
      const double a = clock.since_origin(slot.t_start[k].get());
      prev[k] = clock.since_origin(slot.t_h2d[k].get());
      if (copied_in) {
        rec.spans.push_back({Span::kH2D, "h2d " + std::to_string(k),
                             prefix + copy_track(s, slot, "in", k), a, prev[k]});
      }
    }
  } else {
    const double a = clock.since_origin(slot.t_start[0].get());
    prev[last] = clock.since_origin(slot.t_h2d[last].get());
    if (copied_in) {
      rec.spans.push_back(
          {Span::kH2D, "h2d", prefix + copy_track(s, slot, "in", 0), a, prev[last]});
    }
  }
  // Stages: per strip, or on the last strip (the end of the frame's critical path); merges.
  rec.stage_ms.assign(plan.stages.size(), 0.0);
  for (const std::size_t i : plan.order) {
    if (!plan.stages[i].launched()) continue;
    StageSlot& ss = slot.stages[i];
    if (plan.stages[i].beside) {  // its own row of the timeline, from its start on the side stream
      const double a = clock.since_origin(ss.t_side.get()),
                   e = clock.since_origin(ss.t_end[last].get());
      double hi = e;
      rec.spans.push_back({Span::kCompute, plan.stages[i].stage->name(), prefix + " side", a, e});
      if (ss.merged) {
        const double m0 = clock.since_origin(ss.t_merge0.get()),
                     m1 = clock.since_origin(ss.t_merge1.get());
        rec.spans.push_back(
            {Span::kCompute, plan.stages[i].stage->name() + " merge", prefix + " side", m0, m1});
        hi = m1;
      }
      rec.stage_ms[i] = std::max(0.0, hi - a);
      continue;
    }
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (int k = all ? 0 : last; k < strips; ++k) {
      const double e = clock.since_origin(ss.t_end[k].get());
      rec.spans.push_back(
          {Span::kCompute, plan.stages[i].stage->name(), strip_track(k), prev[k], e});
      lo = std::min(lo, prev[k]);
      hi = std::max(hi, e);
      prev[k] = e;
    }
    if (ss.merged) {
      const double m0 = clock.since_origin(ss.t_merge0.get()),
                   m1 = clock.since_origin(ss.t_merge1.get());
      rec.spans.push_back({Span::kCompute, plan.stages[i].stage->name() + " merge",
                           p.plan.merges_on_last ? strip_track(last) : prefix + " main", m0, m1});
      hi = std::max(hi, m1);
    }
    rec.stage_ms[i] = std::max(0.0, hi - lo);
  }
  if (s.memory != MemoryStrategy::kPinnedChunked || p.outputs.empty()) return;
  for (int k = all ? 0 : last; k < strips; ++k) {
    const double a = clock.since_origin(slot.t_d2h0[all ? k : 0].get());
    rec.spans.push_back({Span::kD2H, all ? "d2h " + std::to_string(k) : "d2h",
                         prefix + copy_track(s, slot, "out", k), a,
                         clock.since_origin(slot.t_d2h[k].get())});
  }
}

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
