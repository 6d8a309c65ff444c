// SPDX-License-Identifier: MIT
// The CUDA executor: every stage's GPU twin on every frame, with the platform profile's memory
// strategy (DESIGN.md, "Memory strategies"):
//   copy            pageable frames, one stream, synchronous whole-frame copies (the baseline)
//   pinned-chunked  frames in the pinned frame pool; each frame in K row strips on S streams:
//                   strip H2D → the stages on the strip → strip D2H of the images asked for
//   zero-copy       frames in mapped pool memory, read by the kernels over the bus; images asked
//                   for are written straight into mapped buffers; intermediates in device memory
//   managed         frames and images asked for in managed memory, attached to the frame's stream
//                   while it runs, prefetched where the device supports it
// F frames in flight, each in its own slot: streams, events, device images and stage twins. A
// stage's strip k starts once the rows it reads ([y0 − halo, y1 + halo) of its input) have been
// written: it waits on the events of the producing strips on other streams. Passes of a stage are
// joined on the slot's main stream, where the merges run (per-frame work after all strips). No
// device-wide synchronization in steady state; records come back in input order.
// CUDA graphs: one frame's work captured per slot and per set of buffers (shapes and pointers),
// replayed; a new shape or a re-made texture or workspace captures again.
// The parts, one-way: the planner (pipeline/planner.h: fusions, side-stream stages, skews, waits;
// host-only) → the slots built from its plan (pipeline/gpu_slot.h) → the scheduler that queues a
// frame's work on a slot (pipeline/gpu_scheduler.h) and its timing (pipeline/gpu_timing.h). This
// file holds the executor itself: frames in, slots in turn, records out in input order.
#include "pipeline/executor.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <utility>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/stream_flag.h"
#include "pipeline/device_frame.h"
#include "pipeline/frame_pool.h"
#include "pipeline/gpu_scheduler.h"
#include "pipeline/gpu_slot.h"
#include "pipeline/gpu_timing.h"
#include "pipeline/planner.h"

namespace jetpipe {

namespace {

using Clock = std::chrono::steady_clock;

struct ScopedRange {
  explicit ScopedRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~ScopedRange() { nvtxRangePop(); }
};

class CudaExecutor : public Executor {
 public:
  CudaExecutor(const PipelineConfig& cfg, const PlatformProfile& profile,
               std::vector<std::string> keep, std::vector<std::string> device_keep)
      : profile_(profile),
        keep_(std::move(keep)),
        device_keep_(std::move(device_keep)),
        s_(exec_settings(profile, stream_values_supported())),
        plan_(plan_config(cfg, joined(keep_, device_keep_), s_.memory)) {
    JP_CUDA(cudaGetDevice(&device_));
    int concurrent = 0;
    JP_CUDA(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device_));
    concurrent_managed_ = concurrent != 0;
    switch (s_.memory) {
      case MemoryStrategy::kPinnedChunked:
        pool_.emplace(PoolMemory::kPinned);
        break;
      case MemoryStrategy::kZeroCopy:
        pool_.emplace(PoolMemory::kMapped);
        break;
      case MemoryStrategy::kManaged:
        pool_.emplace(PoolMemory::kManaged);
        break;
      default:
        break;
    }
    for (int f = 0; f < s_.frames; ++f) slots_.push_back(make_slot(plan_, s_, f));
    clock_.emplace(slots_[0]->main.get());
  }

  ~CudaExecutor() override {
    // Never leave work queued on buffers about to be freed.
    for (auto& s : slots_) cudaStreamSynchronize(s->main.get());
  }

  ImageAllocator allocator() const override {
    return pool_ ? pool_->allocator() : ImageAllocator{};
  }

  std::string describe() const override {
    std::ostringstream os;
    os << name(s_.memory) << ", " << s_.chunks << " strip" << (s_.chunks == 1 ? "" : "s");
    if (s_.memory == MemoryStrategy::kPinnedChunked && profile_.min_strip_mb > 0) {
      os << " (of at least " << profile_.min_strip_mb << " MiB)";
    }
    if (s_.chunks > 1 && profile_.strip_ratio < 1.0) {
      os << ", each " << profile_.strip_ratio << " of the one before";
    }
    if (s_.memory == MemoryStrategy::kPinnedChunked && profile_.strip_copies > 0 &&
        profile_.strip_copies < s_.chunks) {
      os << ", in " << profile_.strip_copies << " cop" << (profile_.strip_copies == 1 ? "y" : "ies")
         << " (the first strips together)";
    }
    if (s_.poll) os << ", copies polled";
    os << " on " << (s_.single_stream() ? 1 : s_.streams) << " stream"
       << (s_.single_stream() || s_.streams == 1 ? "" : "s") << ", " << s_.frames << " frame"
       << (s_.frames == 1 ? "" : "s") << " in flight, graphs " << (s_.graphs ? "on" : "off")
       << ", results " << (s_.results == ResultMemory::kMapped ? "mapped" : "copied back")
       << ", timing "
       << (s_.timing == TimingLevel::kStrips   ? "per stage and strip"
           : s_.timing == TimingLevel::kStages ? "per stage (last strip)"
                                               : "per frame");
    if (s_.timing != TimingLevel::kFrame && s_.timing_every > 1) {
      os << " on every " << s_.timing_every << "th frame";
    }
    if (!plan_.fusions.empty()) os << ", fused: " << plan_.fusions;
    if (!plan_.beside.empty()) {
      os << ", beside: " << plan_.beside;
    }
    return os.str();
  }

  void submit(Frame frame) override {
    InFlight p;
    p.seq = next_seq_++;
    p.submitted = Clock::now();
    p.record = record_for(frame);
    if (!p.record.error.empty()) {
      p.ready = true;
      pending_.push_back(std::move(p));
      return;
    }
    p.record.width = frame.view().width;
    p.record.height = frame.view().height;
    Slot& slot = *slots_[next_slot_];
    if (slot.busy) finish(slot);
    next_slot_ = (next_slot_ + 1) % slots_.size();
    p.frame = std::move(frame);
    p.slot = slot.index;
    const std::string label = "frame " + std::to_string(p.record.index) + " (" +
                              p.record.source + ")";
    ScopedRange range(label);
    try {
      start(slot, &p);
      slot.busy = true;
      slot.pending = p.seq;
    } catch (const std::exception& e) {
      // The frame fails (a jetpipe::Error, or host memory running out: std::bad_alloc); the slot
      // is drained so the next frame starts clean. A sticky CUDA error (the context is lost)
      // surfaces again at the next call and ends the run.
      abandon(slot);
      p.record.error = label + ": " +
                       (dynamic_cast<const std::bad_alloc*>(&e) ? "out of host memory" : e.what());
      p.ready = true;
      p.frame = Frame{};
    }
    pending_.push_back(std::move(p));
    if (s_.memory == MemoryStrategy::kCopy) finish(slot);  // the synchronous baseline
  }

  bool take(FrameRecord* record, bool wait) override {
    if (pending_.empty()) return false;
    InFlight& front = pending_.front();
    if (!front.ready) {
      Slot& slot = *slots_[front.slot];
      if (!wait) {
        const cudaError_t q = cudaEventQuery(slot.complete.get());
        if (q == cudaErrorNotReady) return false;
        JP_CUDA(q);
      }
      finish(slot);
    }
    *record = std::move(front.record);
    if (record->latency_ms == 0) stamp_ready(record, front.submitted);
    pending_.pop_front();
    return true;
  }

  std::size_t in_flight() const override { return pending_.size(); }
  double blocked_ms() const override { return blocked_ms_; }

 private:
 private:
  // Each image's pixel format for frames of format `in`; throws where a stage cannot take its
  // input. Kept for the last format (a stream's frames share one), off the path to the frame's
  // first copy.
  const std::map<std::string, PixelFormat>& formats_for(PixelFormat in) {
    if (formats_.empty() || formats_.at(kFrameImage) != in) {
      std::map<std::string, PixelFormat> formats = {{kFrameImage, in}};
      for (const auto& sp : plan_.stages) {
        const Stage& s = *sp.stage;
        const PixelFormat f = formats.at(s.input());
        check_stage_input(s, f);
        if (s.has_output()) formats[s.output()] = s.output_format(f);
      }
      formats_ = std::move(formats);
    }
    return formats_;
  }

  // Everything for one frame: buffers, bindings, then the work (directly or as a graph).
  void start(Slot& slot, InFlight* p) {
    // A device frame is read in place; a host frame as the strategy says. The stages read NV12's
    // luma plane as the frame (its chroma stays where it is, for a sink that keeps the frame).
    const bool resident = p->frame.device != nullptr;
    if (resident) check_device_frame(*p->frame.device);
    const ImageView host = luma_plane(p->frame.view());
    const int w = host.width, h = host.height;
    // Formats first: a frame the stages cannot take fails before any work.
    const std::map<std::string, PixelFormat>& formats = formats_for(host.format);
    p->plan =
        plan_frame(plan_, s_,
                   strip_bounds(h, strips_for(s_, host.row_bytes() * static_cast<std::size_t>(h)),
                                s_.strip_ratio));
    const int strips = p->plan.strips;
    FrameScheduler scheduler(plan_, s_, slot, *p, false);
    bool changed = false;

    // The frame as the GPU reads it. Pool strategies need the frame in pool memory: a frame from a
    // source that ignores the allocator is staged there with one host copy.
    ImageView pooled;
    if (!resident && pool_ && !pool_->device_view(p->frame.image.view(), &pooled)) {
      const ImageView whole = p->frame.image.view();
      HostImage copy = pool_->allocate(w, h, whole.format);
      copy_image(whole, copy.view());
      p->frame.image = std::move(copy);
      pool_->device_view(p->frame.image.view(), &pooled);
    }
    pooled = luma_plane(pooled);
    const ImageView frame_dev =
        resident ? host
        : (s_.memory == MemoryStrategy::kCopy || s_.memory == MemoryStrategy::kPinnedChunked)
            ? slot.device_image(kFrameImage, w, h, host.format, &changed, pool_ ? pooled.pitch : 0)
            : pooled;
    // The frame's owner said when its pixels are ready: the slot's work starts after that (the
    // graph and every other stream of the frame follow the main stream).
    if (resident) {
      const DeviceFrame& d = *p->frame.device;
      if (d.ready_event != nullptr) {
        JP_CUDA(cudaStreamWaitEvent(slot.main.get(), d.ready_event, 0));
      } else if (d.ready_stream != nullptr) {
        JP_CUDA(cudaEventRecord(slot.join.get(), d.ready_stream));
        JP_CUDA(cudaStreamWaitEvent(slot.main.get(), slot.join.get(), 0));
      }
    }
    std::map<std::string, ImageView> views = {{kFrameImage, frame_dev}};
    // Stage timing on every timing_every-th frame; the others get only their GPU span.
    const cudaStream_t main = slot.main.get();
    auto timed_frame = [&] {
      p->timed = s_.timing != TimingLevel::kFrame && started_++ % s_.timing_every == 0;
      scheduler.set_timing(p->timed);
    };
    // Strip copies issued first, ahead of the bindings and the graph launch (plain stream work on
    // the copy stream), so the first strip crosses the bus while the host prepares the rest. The
    // copy stream need not wait for the slot's other streams: the slot's previous frame has
    // completed (submit() and take() wait for it before its slot takes another frame), so the
    // frame's first copy is its first call. Its start event follows on the slot's main stream,
    // idle until the graph: recorded as the copy starts, within ~1 µs, where recording it ahead of
    // the copy on the copy stream cost the copy the call's ~1.8 µs (H100, 1080p K = 4 single
    // frames: 1.281-1.307× the H2D against 1.308-1.316, 2026-11-24;
    // docs/decisions/013-discrete-latency-profile.md).
    const bool copies_first = s_.graphs && s_.copy_streams() && !resident;
    const bool poll = s_.polls();
    if (poll) slot.landed_seq = slot.landed_seq == UINT32_MAX ? 1 : slot.landed_seq + 1;
    if (copies_first) {
      timed_frame();
      scheduler.copy_strips_in(frame_dev, false, poll, true);
    }

    // Outputs: device images; the ones asked for also get host memory (pool or pageable).
    for (std::size_t i = 0; i < plan_.stages.size(); ++i) {
      const StagePlan& sp = plan_.stages[i];
      if (!sp.stage->has_output() || sp.fused_into >= 0) continue;  // a fused output is never made
      const std::string& name = sp.stage->output();
      const PixelFormat f = formats.at(name);
      if (sp.keep && has(keep_, name)) {
        HostImage out = pool_ ? pool_->allocate(w, h, f) : HostImage(w, h, f);
        if (s_.memory == MemoryStrategy::kZeroCopy || s_.memory == MemoryStrategy::kManaged) {
          ImageView dv;
          pool_->device_view(out.view(), &dv);
          views[name] = dv;
        } else {
          views[name] = slot.device_image(name, w, h, f, &changed, pool_ ? out.view().pitch : 0);
        }
        p->outputs[name] = std::move(out);
      } else {
        views[name] = slot.device_image(name, w, h, f, &changed);
      }
      if (has(device_keep_, name)) p->device_views[name] = views[name];
    }
    if (has(device_keep_, kFrameImage)) p->device_views[kFrameImage] = views.at(kFrameImage);

    // Bind every stage twin to this frame's views.
    for (std::size_t i = 0; i < plan_.stages.size(); ++i) {
      const Stage& s = *plan_.stages[i].stage;
      if (plan_.stages[i].fused_into >= 0) continue;
      GpuBinding b;
      b.in = views.at(plan_.stages[i].reads);
      if (s.has_output()) b.out = views.at(s.output());
      b.strips = strips;
      b.results = s_.results;
      b.stream = slot.main.get();
      b.beside = plan_.stages[i].beside;
      changed |= slot.stages[i].gpu->bind(b);
    }
    if (changed) slot.graphs.clear();

    if (s_.memory == MemoryStrategy::kCopy && !resident) {
      // The baseline: a synchronous copy from pageable memory, the whole frame at once.
      ScopedRange r("h2d (synchronous)");
      // On the frame's stream: a plain cudaMemcpy2D from pageable memory may return before its
      // DMA lands, and the legacy stream does not order the non-blocking streams.
      JP_CUDA(cudaMemcpy2DAsync(frame_dev.data, frame_dev.pitch, host.data, host.pitch,
                                host.row_bytes(), static_cast<std::size_t>(h),
                                cudaMemcpyHostToDevice, main));
      const auto w0 = Clock::now();
      JP_CUDA(cudaStreamSynchronize(main));
      blocked_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
    }
    if (s_.memory == MemoryStrategy::kManaged) attach_managed(slot, *p, views, cudaMemAttachSingle);

    if (!copies_first) {
      timed_frame();
      JP_CUDA(cudaEventRecord(slot.t_begin.get(), main));
    }
    if (s_.graphs) {
      // Everything a captured graph refers to: host and device buffers, their shapes and formats
      // (a BGRx frame after an RGBA one of the same size in the same buffers replayed the RGBA
      // graph), and whether it records the timing events.
      std::vector<std::uintptr_t> key = {reinterpret_cast<std::uintptr_t>(p->frame.view().data),
                                         static_cast<std::uintptr_t>(p->timed)};
      for (const auto& [name, out] : p->outputs) {
        key.push_back(reinterpret_cast<std::uintptr_t>(out.view().data));
      }
      for (const auto& [name, v] : views) {
        key.insert(key.end(), {reinterpret_cast<std::uintptr_t>(v.data),
                               static_cast<std::uintptr_t>(v.width),
                               static_cast<std::uintptr_t>(v.height), v.pitch,
                               static_cast<std::uintptr_t>(v.format)});
      }
      auto it = slot.graphs.find(key);
      if (it == slot.graphs.end()) {
        if (slot.graphs.size() >= 16) slot.graphs.clear();
        JP_CUDA(cudaStreamBeginCapture(main, cudaStreamCaptureModeThreadLocal));
        try {
          scheduler.enqueue(views, true, copies_first);
        } catch (...) {
          cudaGraph_t g = nullptr;
          cudaStreamEndCapture(main, &g);
          if (g) cudaGraphDestroy(g);
          throw;
        }
        cudaGraph_t g = nullptr;
        JP_CUDA(cudaStreamEndCapture(main, &g));
        it = slot.graphs.emplace(std::move(key), std::make_unique<GraphExec>(g)).first;
      }
      if (poll) {
        JP_CUDA(write_stream_value(slot.landed.get<std::uint32_t>(), slot.landed_seq, main));
      }
      JP_CUDA(cudaGraphLaunch(it->second->get(), main));
      if (copies_first) {  // the frame ends after its copies too (its stages wait for them)
        JP_CUDA(cudaStreamWaitEvent(main, slot.h2d_done[strips - 1].get(), 0));
      }
    } else {
      scheduler.enqueue(views, false, false);
    }
    JP_CUDA(cudaEventRecord(slot.t_finish.get(), main));
    if (s_.memory == MemoryStrategy::kManaged) attach_managed(slot, *p, views, cudaMemAttachHost);
    JP_CUDA(cudaEventRecord(slot.complete.get(), main));
  }

  // Managed buffers (the frame and the outputs asked for) change hands between host and stream.
  void attach_managed(Slot& slot, const InFlight& p, const std::map<std::string, ImageView>& views,
                      unsigned flags) {
    const cudaStream_t s = slot.main.get();
    auto attach = [&](const ImageView& v) {
      const std::size_t bytes = (static_cast<std::size_t>(v.height) - 1) * v.pitch + v.row_bytes();
      JP_CUDA(cudaStreamAttachMemAsync(s, v.data, 0, flags));
      if (flags == cudaMemAttachSingle && concurrent_managed_) {
#if CUDART_VERSION >= 13000
        cudaMemLocation loc{};
        loc.type = cudaMemLocationTypeDevice;
        loc.id = device_;
        JP_CUDA(cudaMemPrefetchAsync(v.data, bytes, loc, 0, s));
#else
        // Before 13: the same prefetch to device_, by device ordinal (no slower).
        JP_CUDA(cudaMemPrefetchAsync(v.data, bytes, device_, s));
#endif
      }
    };
    if (!p.frame.device) attach(views.at(kFrameImage));  // a device frame is not managed memory
    for (const auto& [name, img] : p.outputs) attach(views.at(name));
  }

  // Drains a slot after a failure (its streams may hold partial work).
  void abandon(Slot& slot) {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    cudaStreamIsCapturing(slot.main.get(), &st);
    if (st != cudaStreamCaptureStatusNone) {
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(slot.main.get(), &g);
      if (g) cudaGraphDestroy(g);
    }
    for (const auto& s : slot.streams) cudaStreamSynchronize(s.get());
    cudaStreamSynchronize(slot.copy_in.get());  // copies issued ahead of the stages (start)
    cudaStreamSynchronize(slot.copy_out.get());
    cudaStreamSynchronize(slot.side.get());
    cudaStreamSynchronize(slot.main.get());
    cudaGetLastError();  // clear a non-sticky launch error
    slot.busy = false;
    slot.graphs.clear();
  }

  // Waits for the slot's frame and fills its record.
  void finish(Slot& slot) {
    auto it = std::find_if(pending_.begin(), pending_.end(),
                           [&](const InFlight& p) { return p.seq == slot.pending; });
    const auto w0 = Clock::now();
    JP_CUDA(cudaEventSynchronize(slot.complete.get()));
    blocked_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
    slot.busy = false;
    if (it == pending_.end()) return;
    InFlight& p = *it;
    FrameRecord& rec = p.record;
    try {
      for (std::size_t i = 0; i < plan_.stages.size(); ++i) {
        StageResult r = slot.stages[i].gpu->result();
        if (!std::holds_alternative<std::monostate>(r)) {
          rec.results.emplace_back(plan_.stages[i].stage->name(), std::move(r));
        }
      }
      for (auto& [name, img] : p.outputs) {
        if (s_.memory == MemoryStrategy::kCopy) {
          const ImageView dv = slot.images.at(name).view;
          const ImageView hv = img.view();
          JP_CUDA(cudaMemcpy2DAsync(hv.data, hv.pitch, dv.data, dv.pitch, dv.row_bytes(),
                                    static_cast<std::size_t>(dv.height), cudaMemcpyDeviceToHost,
                                    slot.main.get()));
          JP_CUDA(cudaStreamSynchronize(slot.main.get()));
        }
        rec.images[name] = std::move(img);
      }
      hand_over_device_images(slot, p);
      if (std::find(keep_.begin(), keep_.end(), kFrameImage) != keep_.end()) {
        rec.images[kFrameImage] =
            p.frame.device ? download_device_frame(*p.frame.device) : p.frame.image;
      }
      if (clock_->ok()) collect_timing(plan_, s_, slot, p, *clock_);
      if (!clock_->ok()) {
        rec.spans.clear();
        rec.stage_ms.clear();
      }
    } catch (const std::exception& e) {
      rec.error = "frame " + std::to_string(rec.index) + " (" + rec.source + "): " +
                  (dynamic_cast<const std::bad_alloc*>(&e) ? "out of host memory" : e.what());
      rec.results.clear();
      rec.images.clear();
      rec.device_images.clear();
    }
    stamp_ready(&rec, p.submitted);
    p.frame = Frame{};
    p.outputs.clear();
    p.device_views.clear();
    p.ready = true;
  }

  // The images asked for in device memory: each copied (device to device, on the slot's main
  // stream, after the frame's work) into its own buffer from the device's default memory pool
  // (stream-ordered: cudaMallocAsync); the record is handed over after the copies. A buffer is
  // freed stream-ordered when its last holder lets go, whenever that is, the executor gone or not.
  void hand_over_device_images(Slot& slot, InFlight& p) {
    if (p.device_views.empty()) return;
    const cudaStream_t s = slot.main.get();
    for (const auto& [name, v] : p.device_views) {
      const std::size_t row = v.row_bytes();
      const std::size_t pitch = (row + 255) / 256 * 256;
      const std::size_t bytes = image_bytes(v.width, v.height, v.format, pitch);
      void* d = nullptr;
      JP_CUDA(cudaMallocAsync(&d, bytes, s));
      std::shared_ptr<void> owner(d, [](void* q) { cudaFreeAsync(q, cudaStreamLegacy); });
      const ImageView out = make_view(static_cast<std::uint8_t*>(d), v.width, v.height, v.format,
                                      pitch);
      JP_CUDA(cudaMemcpy2DAsync(out.data, pitch, v.data, v.pitch, row,
                                static_cast<std::size_t>(v.height), cudaMemcpyDeviceToDevice, s));
      if (v.format == PixelFormat::kNv12) {
        JP_CUDA(cudaMemcpy2DAsync(out.uv, out.uv_pitch, v.uv, v.uv_pitch, row,
                                  static_cast<std::size_t>((v.height + 1) / 2),
                                  cudaMemcpyDeviceToDevice, s));
      }
      p.record.device_images[name] = KeptDeviceImage{out, device_, std::move(owner)};
    }
    JP_CUDA(cudaStreamSynchronize(s));
  }

  static bool has(const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  }
  static std::vector<std::string> joined(std::vector<std::string> a,
                                         const std::vector<std::string>& b) {
    for (const auto& n : b) {
      if (!has(a, n)) a.push_back(n);
    }
    return a;
  }

  PlatformProfile profile_;
  std::vector<std::string> keep_;
  std::vector<std::string> device_keep_;
  ExecSettings s_;
  PipelinePlan plan_;
  int device_ = 0;
  bool concurrent_managed_ = false;
  std::optional<FramePool> pool_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::optional<GpuClock> clock_;
  std::size_t next_slot_ = 0;
  std::deque<InFlight> pending_;
  std::size_t next_seq_ = 0;
  std::map<std::string, PixelFormat> formats_;  // formats_for()'s, for the last frame format
  double blocked_ms_ = 0;                       // in cudaEventSynchronize (blocked_ms())
  std::size_t started_ = 0;                     // frames started (which ones are timed)
};

}  // namespace

std::unique_ptr<Executor> make_cuda_executor(const PipelineConfig& config,
                                             const PlatformProfile& profile,
                                             std::vector<std::string> keep_images,
                                             std::vector<std::string> device_images) {
  return std::make_unique<CudaExecutor>(config, profile, std::move(keep_images),
                                        std::move(device_images));
}

}  // namespace jetpipe

#else  // !JETPIPE_HAVE_CUDA

#include "core/error.h"

namespace jetpipe {

std::unique_ptr<Executor> make_cuda_executor(const PipelineConfig&, const PlatformProfile& profile,
                                             std::vector<std::string>, std::vector<std::string>) {
  throw config_error(profile.file + ": backend cuda: this build has no CUDA");
}

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
