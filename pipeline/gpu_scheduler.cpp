// SPDX-License-Identifier: MIT
#include "pipeline/gpu_scheduler.h"

#if JETPIPE_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/cuda_check.h"
#include "kernels/launch_context.h"
#include "kernels/stream_flag.h"

namespace jetpipe {

namespace {

struct ScopedRange {
  explicit ScopedRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~ScopedRange() { nvtxRangePop(); }
};

}  // namespace

bool timed_strip(TimingLevel level, int k, int strips, bool start_event) {
  if (level == TimingLevel::kStrips) return true;
  if (level == TimingLevel::kFrame) return false;
  return start_event ? k == 0 : k == strips - 1;
}

void FrameScheduler::record_timing(cudaEvent_t e, cudaStream_t s, bool capturing) {
  if (!timing_) return;
  JP_CUDA(capturing ? cudaEventRecordWithFlags(e, s, cudaEventRecordExternal)
                    : cudaEventRecord(e, s));
}

void FrameScheduler::copy_strips_in(const ImageView& frame_dev, bool capturing, bool poll,
                                    bool begin_after_first) {
  Slot& slot = slot_;
  const std::vector<int>& b = frame_.plan.bounds;
  const int strips = frame_.plan.strips;
  const bool copy_stream = s_.copy_streams();
  const ImageView host = luma_plane(frame_.frame.image.view());  // NV12: its luma plane
  const bool resident = frame_.frame.device != nullptr;          // a device frame: nothing to copy
  const int first = frame_.plan.first_copy;
  for (int k = 0; k < strips; ++k) {
    const cudaStream_t s = copy_stream ? slot.copy_in.get() : slot.strip_stream(k);
    if (k < first - 1) continue;  // in the first copy: issued with strip first - 1
    const int k0 = k < first ? 0 : k;
    for (int j = k0; j <= k; ++j) {
      if (timed_strip(s_.timing, j, strips, true))
        record_timing(slot.t_start[j].get(), s, capturing);
    }
    if (s_.memory == MemoryStrategy::kPinnedChunked && !resident) {
      JP_CUDA(copy_rows(frame_dev, host, b[k0], b[k + 1], cudaMemcpyHostToDevice, s));
    }
    if (begin_after_first && k == first - 1) {
      JP_CUDA(cudaEventRecord(slot.t_begin.get(), slot.main.get()));
    }
    for (int j = k0; j <= k; ++j) {
      JP_CUDA(cudaEventRecord(slot.h2d_done[j].get(), s));
      if (timed_strip(s_.timing, j, strips, false))
        record_timing(slot.t_h2d[j].get(), s, capturing);
    }
    if (poll) {  // the copy's flag: its last strip's word (ExecSettings::polls)
      JP_CUDA(write_stream_value(slot.landed.get<std::uint32_t>() + 1 + k, slot.landed_seq, s));
    }
  }
}

void FrameScheduler::enqueue(const std::map<std::string, ImageView>& views, bool capturing,
                             bool copies_done) {
  Slot& slot = slot_;
  const FramePlan& fp = frame_.plan;
  const std::vector<StagePlan>& plans = plan_.stages;
  const cudaStream_t main = slot.main.get();
  const std::vector<std::vector<int>>& sb = fp.stage_bounds;  // each stage's (StagePlan::skew)
  const int strips = fp.strips;
  const bool multi = !slot.streams.empty();
  if (multi) {
    JP_CUDA(cudaEventRecord(slot.fork.get(), main));
    for (const auto& s : slot.streams) JP_CUDA(cudaStreamWaitEvent(s.get(), slot.fork.get(), 0));
  }
  // Strip copies in, in row order on one copy stream: strip 0 lands after 1/K of the copy and
  // its stages run while the later strips are still crossing the bus (copies issued on K
  // streams at once share the engines and all land at the end).
  const bool copy_stream = s_.copy_streams();
  if (copy_stream) {
    if (!copies_done) JP_CUDA(cudaStreamWaitEvent(slot.copy_in.get(), slot.fork.get(), 0));
    JP_CUDA(cudaStreamWaitEvent(slot.copy_out.get(), slot.fork.get(), 0));
  }
  if (!copies_done) copy_strips_in(views.at(kFrameImage), capturing);
  // Waits for strip j's copy (an external event when the copies ran ahead of the capture).
  const unsigned copy_wait = copies_done && capturing ? cudaEventWaitExternal : 0;
  const bool poll = copies_done && capturing && s_.polls();  // as start() decided
  const int first_copy = fp.first_copy;
  std::map<cudaStream_t, int> polled;  // per stream, the latest copy polled (its last strip)
  // Frames of several strips launch without the early trigger (FramePlan::early_trigger,
  // docs/decisions/001-pdl-early-trigger.md).
  LaunchContext ctx;
  ctx.early_trigger = fp.early_trigger;
  // Makes stream s wait for the strips of stage i's producer (the frame's copies, or the stage
  // writing its input) that hold the rows stage i's strip k reads (producer_strips), except
  // those `skip(j)` says are already ordered before s.
  auto wait_rows = [&](cudaStream_t s, std::size_t i, int k, auto&& skip) {
    const StagePlan& sp = plans[i];
    // With the copies polled, one poller per stream for the latest copy it needs: the copies
    // land in order on one stream, each flag written after its copy.
    int poll_copy = -1;  // that copy's last strip
    for (const int j : producer_strips(plan_, fp, i, k)) {
      if (skip(j)) continue;
      if (sp.producer < 0 && poll) {
        poll_copy = std::max(poll_copy, std::max(j, first_copy - 1));  // the copy's last strip
        continue;
      }
      JP_CUDA(sp.producer < 0 ? cudaStreamWaitEvent(s, slot.h2d_done[j].get(), copy_wait)
                              : cudaStreamWaitEvent(s, slot.stages[sp.producer].done[j].get(), 0));
    }
    if (poll_copy >= 0) {
      int& done = polled.try_emplace(s, -1).first->second;
      if (done >= poll_copy) return;
      done = poll_copy;
      const std::uint32_t* landed = slot.landed.get<std::uint32_t>();
      JP_CUDA(launch_wait_value(landed + 1 + poll_copy, landed, s));
    }
  };
  // Stages, pass by pass, strip by strip; a stage beside the others as soon as its input is
  // written. With the last strip deferred (defers_last), each pass's last strip waits in
  // `deferred` until a merge or a join needs it (or the frame's end): then the last strip's
  // stream joins the other strip streams once and runs its passes one after another with no
  // other wait between its kernels, so each is a programmatic launch behind the one before it
  // (launched as that one's blocks exit). A wait on another stream between them made each start
  // 1.1-1.4 µs after the one before it ended (CUPTI, H100, 1080p K = 4).
  const int last = strips - 1;
  const bool defer = fp.defer_last;
  // Stream `waiter` waits for the work queued on st so far (slot.join, recorded anew each time).
  auto join = [&](cudaStream_t waiter, cudaStream_t st) {
    JP_CUDA(cudaEventRecord(slot.join.get(), st));
    JP_CUDA(cudaStreamWaitEvent(waiter, slot.join.get(), 0));
  };
  struct Unit {
    std::size_t stage;
    int pass;
  };
  std::vector<Unit> deferred;                // main passes whose last strip waits
  std::vector<std::size_t> deferred_beside;  // beside stages whose last strip (and merge) wait
  std::vector<std::vector<char>> beside_waited(plans.size());  // producer strips waited for
  bool side_used = false;
  // Strip k of a beside stage: the producer strips holding its rows (each once per frame: all
  // on the side stream), its launch.
  auto beside_strip = [&](std::size_t i, int k) {
    StageSlot& ss = slot.stages[i];
    const cudaStream_t side = slot.side.get();
    const int producer = plans[i].producer;
    if (!multi) {
      if (k == 0) {
        JP_CUDA(cudaStreamWaitEvent(side,
                                    producer < 0 ? slot.h2d_done[strips - 1].get()
                                                 : slot.stages[producer].done[strips - 1].get(),
                                    0));
      }
    } else {
      std::vector<char>& waited = beside_waited[i];
      wait_rows(side, i, k, [&](int j) { return std::exchange(waited[j], 1) != 0; });
    }
    if (k == 0 && timed_strip(s_.timing, 0, strips, true))
      record_timing(ss.t_side.get(), side, capturing);
    ss.gpu->launch(0, k, sb[i][k], sb[i][k + 1], ctx, side);
    JP_CUDA(cudaEventRecord(ss.done[k].get(), side));
    if (timed_strip(s_.timing, k, strips, false)) record_timing(ss.t_end[k].get(), side, capturing);
  };
  auto beside_merge = [&](std::size_t i) {
    StageSlot& ss = slot.stages[i];
    const cudaStream_t side = slot.side.get();
    if (ss.gpu->merges_after(0)) {
      record_timing(ss.t_merge0.get(), side, capturing);
      ss.gpu->merge(0, side);
      record_timing(ss.t_merge1.get(), side, capturing);
      ss.merged = true;
    }
  };
  auto launch_beside = [&](int producer) {
    for (std::size_t i = 0; i < plans.size(); ++i) {
      if (!plans[i].beside || plans[i].producer != producer) continue;
      slot.stages[i].merged = false;
      ScopedRange range(plans[i].stage->label());
      // Its input written: the frame's copy in, or its producer's strips. With all strips on
      // one stream (or one strip), the last one once; on several streams, each strip waits for
      // the producer strips holding its rows (its own, once its producer has written them).
      // The side stream joins the capture before it waits for an external event.
      if (copy_wait != 0) JP_CUDA(cudaStreamWaitEvent(slot.side.get(), slot.fork.get(), 0));
      beside_waited[i].assign(static_cast<std::size_t>(strips), 0);
      const bool wait_last = defer && producer >= 0;  // its producer's last strip deferred
      for (int k = 0; k < (wait_last ? last : strips); ++k) beside_strip(i, k);
      if (wait_last) {
        deferred_beside.push_back(i);
      } else {
        beside_merge(i);
      }
      side_used = true;
    }
  };
  // Pass `pass` of stage i on strip k: the waits for the rows other streams wrote (with
  // `joined`, the last strip after the join: only its own copy's), with `merge_after` the other
  // strips of a merge that follows on this stream, the launch, its event.
  auto run_strip = [&](std::size_t i, int pass, int k, bool joined, bool merge_after) {
    const StagePlan& sp = plans[i];
    StageSlot& ss = slot.stages[i];
    const cudaStream_t s = slot.strip_stream(k);
    if (multi && (pass == 0 || !ss.gpu->joins_before(pass))) {
      // The rows this strip reads, written by other streams' strips.
      wait_rows(s, i, k, [&](int j) {
        return (joined && j != k) ||
               (slot.strip_stream(j) == s && (sp.producer >= 0 || !copy_stream));
      });
    } else if (multi) {
      JP_CUDA(cudaStreamWaitEvent(s, ss.joined.get(), 0));
    }
    if (merge_after) {  // the merge's other strips, before this one
      for (int j = 0; j < k; ++j) {
        if (slot.strip_stream(j) != s) JP_CUDA(cudaStreamWaitEvent(s, ss.done[j].get(), 0));
      }
    }
    ss.gpu->launch(pass, k, sb[i][k], sb[i][k + 1], ctx, s);
    JP_CUDA(cudaEventRecord(ss.done[k].get(), s));
    if (pass + 1 == sp.stage->passes() && timed_strip(s_.timing, k, strips, false)) {
      record_timing(ss.t_end[k].get(), s, capturing);
    }
  };
  // The deferred last strip: its stream joins the other strip streams (their work so far) and
  // the frame's other copies, then runs its passes and the beside stages' last strips.
  auto run_deferred = [&] {
    if (deferred.empty() && deferred_beside.empty()) return;
    const cudaStream_t ls = slot.strip_stream(last);
    for (const auto& st : slot.streams) {
      if (st.get() != ls) join(ls, st.get());
    }
    if (copy_stream) {
      for (int j = 0; j < last; ++j) {
        JP_CUDA(cudaStreamWaitEvent(ls, slot.h2d_done[j].get(), copy_wait));
      }
    }
    for (const Unit& u : deferred) {
      ScopedRange range(plans[u.stage].stage->label());
      run_strip(u.stage, u.pass, last, true, false);
    }
    deferred.clear();
    for (const std::size_t i : deferred_beside) {
      ScopedRange range(plans[i].stage->label());
      beside_strip(i, last);
      beside_merge(i);
    }
    deferred_beside.clear();
  };
  launch_beside(-1);  // those reading the frame
  for (const std::size_t i : plan_.order) {
    const StagePlan& sp = plans[i];
    StageSlot& ss = slot.stages[i];
    if (sp.beside) continue;
    ss.merged = false;
    if (!sp.launched()) continue;
    ScopedRange range(sp.stage->label());
    const int passes = sp.stage->passes();
    for (int pass = 0; pass < passes; ++pass) {
      const bool merge = ss.gpu->merges_after(pass);
      const bool join_next = pass + 1 < passes && ss.gpu->joins_before(pass + 1);
      const bool on_last = (merge || join_next) && fp.merges_on_last;
      for (int k = 0; k < (defer ? last : strips); ++k) {
        run_strip(i, pass, k, false, on_last && k == last);
      }
      if (defer) deferred.push_back({i, pass});
      if (merge || join_next) {
        run_deferred();
        const cudaStream_t ms = on_last ? slot.strip_stream(strips - 1) : main;
        if (multi && !on_last) {
          for (int k = 0; k < strips; ++k) JP_CUDA(cudaStreamWaitEvent(main, ss.done[k].get(), 0));
        }
        if (merge) {
          record_timing(ss.t_merge0.get(), ms, capturing);
          ss.gpu->merge(pass, ms);
          record_timing(ss.t_merge1.get(), ms, capturing);
          ss.merged = true;
        }
        if (multi && join_next) JP_CUDA(cudaEventRecord(ss.joined.get(), ms));
      }
    }
    launch_beside(static_cast<int>(i));
  }
  run_deferred();
  // Strip copies out (the images asked for, device-resident strategies only), each strip once
  // the stage writing the image has finished its rows, in row order on one copy stream.
  const cudaStream_t out_stream = copy_stream ? slot.copy_out.get() : main;
  for (int k = 0; k < strips; ++k) {
    const cudaStream_t s = copy_stream ? out_stream : slot.strip_stream(k);
    if (s_.memory == MemoryStrategy::kPinnedChunked && !frame_.outputs.empty()) {
      for (const auto& [name, out] : frame_.outputs) {
        if (copy_stream) {
          JP_CUDA(cudaStreamWaitEvent(s, slot.stages[plan_.writer.at(name)].done[k].get(), 0));
        }
      }
      if (timed_strip(s_.timing, k, strips, true))
        record_timing(slot.t_d2h0[k].get(), s, capturing);
      for (const auto& [name, out] : frame_.outputs) {
        const std::vector<int>& wb = sb[plan_.writer.at(name)];
        JP_CUDA(copy_rows(out.view(), views.at(name), wb[k], wb[k + 1], cudaMemcpyDeviceToHost, s));
      }
      if (timed_strip(s_.timing, k, strips, false))
        record_timing(slot.t_d2h[k].get(), s, capturing);
    }
  }
  if (side_used) join(main, slot.side.get());  // the side stream's work ends the frame too
  if (multi) {
    for (const auto& st : slot.streams) join(main, st.get());
    if (copy_stream) {
      if (!copies_done) join(main, slot.copy_in.get());
      join(main, slot.copy_out.get());
    }
  }
}

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
