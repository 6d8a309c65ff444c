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
#include "pipeline/executor.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "kernels/launch_context.h"
#include "kernels/stream_flag.h"
#include "core/cuda_memory.h"
#include "core/error.h"
#include "pipeline/frame_pool.h"

namespace jetpipe {

namespace {

using Clock = std::chrono::steady_clock;

// Whether the environment variable `name` is set and starts with `c` (the JETPIPE_* switches that
// restore an earlier arrangement for comparisons, or turn on a debugging aid).
bool env_starts_with(const char* name, char c) {
  const char* e = std::getenv(name);
  return e != nullptr && e[0] == c;
}

enum class Memory { kCopy, kPinnedChunked, kZeroCopy, kManaged };

Memory parse_memory(const std::string& m) {
  if (m == "copy") return Memory::kCopy;
  if (m == "pinned-chunked") return Memory::kPinnedChunked;
  if (m == "zero-copy") return Memory::kZeroCopy;
  if (m == "managed") return Memory::kManaged;
  throw config_error("memory '" + m + "' is not a CUDA strategy");
}

class GraphExec {
 public:
  explicit GraphExec(cudaGraph_t g) {
    const cudaError_t err = cudaGraphInstantiate(&exec_, g, 0);
    cudaGraphDestroy(g);
    JP_CUDA(err);
  }
  ~GraphExec() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

struct ScopedRange {
  explicit ScopedRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~ScopedRange() { nvtxRangePop(); }
};

// A stage of the pipeline as the executor plans it (the same in every slot).
struct StagePlan {
  const Stage* stage = nullptr;
  int producer = -1;      // stage writing its input; -1: the frame
  int absorbed_by = -1;   // another stage computes this one (fusion)
  int fused_into = -1;    // the stage reading this one's output computes it as it reads (fusion)
  std::string reads;      // the image its GPU twin reads: its input, or its fused producer's
  bool keep = false;      // its output image is asked for
  // On frames of one strip, or on one stream: launched on the slot's side stream as soon as its
  // input is written, beside the stages after it (a result-only stage of one pass, e.g. histogram
  // + stats beside harris and the detection); joined back at the frame's end.
  bool beside = false;
  // Its input's maximum is gathered by its producer's launches (StageGpu::feed_maximum: harris
  // into a detection with quality, whose own maximum pass then launches nothing).
  bool max_fed = false;
  // Its strips are the frame's moved up by this many rows: its producer's skew plus its own halo
  // (skewed_bounds), so that its strip k reads only rows its producer's strips 0..k write and
  // waits for no later strip; the frame's last strip alone is left when its copy lands.
  int skew = 0;
};

// The input rows a strip [y0, y1) with this halo may read in an image of h rows: the window
// clipped to the image, and for a stage that wraps, where the window crosses an edge, also the rows
// within the halo of the opposite edge (reflect, replicate and constant stay inside the clipped
// window).
struct RowRanges {
  int a0 = 0, a1 = 0, b0 = 0, b1 = 0;  // [a0, a1) and [b0, b1)
  bool overlaps(int y0, int y1) const {
    return (y0 < a1 && y1 > a0) || (y0 < b1 && y1 > b0);
  }
};
RowRanges rows_read(int y0, int y1, int halo, int h, bool wraps) {
  const int lo = y0 - halo, hi = y1 + halo;
  if (hi - lo >= h) return {0, h, 0, 0};
  RowRanges r{std::max(0, lo), std::min(h, hi), 0, 0};
  if (!wraps) return r;
  if (lo < 0) r.b0 = h + lo, r.b1 = h;
  if (hi > h) r.b0 = 0, r.b1 = hi - h;
  return r;
}

// Rows [y0, y1) of src into dst (same size and format): one linear copy when both are unpadded
// rows of the same pitch (the DMA engines move a contiguous range faster than the rows of a 2D
// copy; padding is never copied: nothing wrote it), else 2D.
cudaError_t copy_rows(const ImageView& dst, const ImageView& src, int y0, int y1,
                      cudaMemcpyKind kind, cudaStream_t s) {
  const std::size_t rows = static_cast<std::size_t>(y1 - y0);
  if (rows == 0) return cudaSuccess;
  if (dst.pitch == src.pitch && src.pitch == src.row_bytes()) {
    return cudaMemcpyAsync(dst.row<std::uint8_t>(y0), src.row<std::uint8_t>(y0),
                           rows * src.pitch, kind, s);
  }
  return cudaMemcpy2DAsync(dst.row<std::uint8_t>(y0), dst.pitch, src.row<std::uint8_t>(y0),
                           src.pitch, src.row_bytes(), rows, kind, s);
}

// One stage in one slot.
struct StageSlot {
  std::unique_ptr<StageGpu> gpu;
  std::vector<CudaEvent> done;   // per strip: its rows of the current pass written
  std::vector<CudaEvent> t_end;  // per strip (timing): after the stage's last pass
  CudaEvent joined{false};       // between passes: all strips (and the merge) done
  CudaEvent t_merge0{true}, t_merge1{true};
  CudaEvent t_side{true};  // a stage beside the others: its start on the side stream (timing)
  bool beside = false;     // the current frame runs it beside the others (StagePlan::beside)
  bool merged = false;     // the current frame ran a merge (timing)
};

// An image buffer of a slot: device memory, or (images asked for) pool memory.
struct SlotImage {
  DeviceImage device;
  ImageView view;  // what the kernels use
};

struct Slot {
  int index = 0;
  CudaStream main;
  std::vector<CudaStream> streams;  // strip streams (empty: everything on main)
  CudaEvent fork{false};
  std::vector<CudaEvent> h2d_done;  // per strip
  CudaEvent join{false};            // each strip stream's end, waited on by main in turn
  CudaStream copy_in, copy_out;     // pinned-chunked with strip streams: the strips' copies
  CudaStream side;                  // the stages that run beside the others (StagePlan::beside)
  std::vector<CudaEvent> t_start, t_h2d, t_d2h0, t_d2h;  // per strip (timing)
  CudaEvent t_begin{true}, t_finish{true}, complete{false};
  // With the copies polled (CudaExecutor::poll_): [0] written by main before the frame's graph,
  // [1 + k] by the copy stream after the copy ending with strip k; each the frame's number in the
  // slot.
  DeviceBuffer landed;
  std::uint32_t landed_seq = 0;
  std::vector<StageSlot> stages;
  std::map<std::string, SlotImage> images;  // device images by name (the frame included)
  std::map<std::vector<std::uintptr_t>, std::unique_ptr<GraphExec>> graphs;

  // The frame in this slot.
  bool busy = false;
  std::size_t pending = 0;  // its entry in the pending queue (sequence number)
};

struct Pending {
  std::size_t seq = 0;
  FrameRecord record;
  bool ready = false;
  int slot = -1;
  Frame frame;                                 // keeps the host frame alive while it runs
  std::map<std::string, HostImage> outputs;    // host images the frame's outputs land in
  std::vector<int> bounds;
  Clock::time_point submitted;
  bool timed = false;  // stage and copy events recorded (timing_every)
};

class CudaExecutor : public Executor {
 public:
  CudaExecutor(const PipelineConfig& cfg, const PlatformProfile& profile,
               std::vector<std::string> keep)
      : cfg_(cfg), profile_(profile), keep_(std::move(keep)), memory_(parse_memory(profile.memory)) {
    JP_CUDA(cudaGetDevice(&device_));
    int concurrent = 0;
    JP_CUDA(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device_));
    concurrent_managed_ = concurrent != 0;
    chunks_ = std::max(1, profile.chunks);
    streams_ = std::max(1, std::min(profile.streams, chunks_));
    frames_ = std::max(1, profile.frames_in_flight);
    graphs_ = profile.cuda_graphs;
    timing_level_ = profile.timing == "frame"    ? Timing::kFrame
                    : profile.timing == "strips" ? Timing::kStrips
                                                 : Timing::kStages;
    timing_every_ = std::max(1, profile.timing_every);
    if (memory_ == Memory::kCopy) frames_ = 1, streams_ = 1;
    // copy_wait: poll: the stages reading the frame's strip copies wait for them by polling
    // (kernels/stream_flag.h) instead of through their events: a kernel after an event started
    // 6-8 µs after the copy ended, after the poller ~2.5 (H100). Every copy, not the last only:
    // with the first three of four strips in one copy (strip_copies: 2), their chains then start
    // in time to end before the last copy lands (1080p K = 4 single frames: GPU span 0.155 ms
    // against 0.167 polling the last copy only, 0.149-0.152 with the early trigger off as well;
    // docs/PERFORMANCE.md, twenty-second session). Pinned-chunked frames with graphs only (their
    // copies are queued ahead of the graph, which waits for them), one frame in flight only: the
    // polling kernel holds its queue while it waits, and other frames' work queued behind it
    // waits too (H100, 1080p K = 4 F = 3: 76% of the PCIe floor against 94%).
    poll_ = profile.copy_wait == "poll" && memory_ == Memory::kPinnedChunked && graphs_ &&
            frames_ == 1 && stream_values_supported();
    // Managed memory attached to one stream is accessed by that stream only (Jetson without
    // concurrent managed access): a frame runs on its slot's main stream alone.
    if (memory_ == Memory::kManaged) streams_ = 1;
    // auto: mapped for every strategy. Measured on an H100 (docs/PERFORMANCE.md): the kernels'
    // few bytes over the bus cost less than the copy nodes after the merges (pinned-chunked
    // K=4 F=3 at 1080p: 7805 fps mapped, 4664 copied back).
    results_ = profile.results == "copy" ? ResultMemory::kCopy : ResultMemory::kMapped;
    switch (memory_) {
      case Memory::kPinnedChunked: pool_.emplace(PoolMemory::kPinned); break;
      case Memory::kZeroCopy: pool_.emplace(PoolMemory::kMapped); break;
      case Memory::kManaged: pool_.emplace(PoolMemory::kManaged); break;
      case Memory::kCopy: break;
    }
    plan();
    for (int f = 0; f < frames_; ++f) slots_.push_back(make_slot(f));
    JP_CUDA(cudaEventRecord(origin_.get(), slots_[0]->main.get()));
    JP_CUDA(cudaEventSynchronize(origin_.get()));
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
    os << profile_.memory << ", " << chunks_ << " strip" << (chunks_ == 1 ? "" : "s");
    if (memory_ == Memory::kPinnedChunked && profile_.min_strip_mb > 0) {
      os << " (of at least " << profile_.min_strip_mb << " MiB)";
    }
    if (chunks_ > 1 && profile_.strip_ratio < 1.0) {
      os << ", each " << profile_.strip_ratio << " of the one before";
    }
    if (memory_ == Memory::kPinnedChunked && profile_.strip_copies > 0 &&
        profile_.strip_copies < chunks_) {
      os << ", in " << profile_.strip_copies << " cop" << (profile_.strip_copies == 1 ? "y" : "ies")
         << " (the first strips together)";
    }
    if (poll_) os << ", copies polled";
    os << " on "
       << (single_stream() ? 1 : streams_) << " stream"
       << (single_stream() || streams_ == 1 ? "" : "s")
       << ", " << frames_ << " frame" << (frames_ == 1 ? "" : "s") << " in flight, graphs "
       << (graphs_ ? "on" : "off") << ", results "
       << (results_ == ResultMemory::kMapped ? "mapped" : "copied back") << ", timing "
       << (timing_level_ == Timing::kStrips   ? "per stage and strip"
           : timing_level_ == Timing::kStages ? "per stage (last strip)"
                                              : "per frame");
    if (timing_level_ != Timing::kFrame && timing_every_ > 1) {
      os << " on every " << timing_every_ << "th frame";
    }
    if (!fusions_.empty()) os << ", fused: " << fusions_;
    if (!beside_.empty()) {
      os << ", beside: " << beside_ << (single_stream() ? "" : " (frames of one strip)");
    }
    return os.str();
  }

  void submit(Frame frame) override {
    Pending p;
    p.seq = next_seq_++;
    p.submitted = Clock::now();
    p.record.index = frame.index;
    p.record.source = frame.source;
    p.record.error = frame.error;
    if (!p.record.error.empty()) {
      p.ready = true;
      pending_.push_back(std::move(p));
      return;
    }
    p.record.width = frame.image.width();
    p.record.height = frame.image.height();
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
    } catch (const Error& e) {
      // The frame fails; the slot is drained so the next frame starts clean. A sticky CUDA
      // error (the context is lost) surfaces again at the next call and ends the run.
      abandon(slot);
      p.record.error = label + ": " + e.what();
      p.ready = true;
      p.frame = Frame{};
    }
    pending_.push_back(std::move(p));
    if (memory_ == Memory::kCopy) finish(slot);  // the synchronous baseline
  }

  bool take(FrameRecord* record, bool wait) override {
    if (pending_.empty()) return false;
    Pending& front = pending_.front();
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
    if (record->latency_ms == 0) {
      record->latency_ms =
          std::chrono::duration<double, std::milli>(Clock::now() - front.submitted).count();
    }
    pending_.pop_front();
    return true;
  }

  std::size_t in_flight() const override { return pending_.size(); }
  double blocked_ms() const override { return blocked_ms_; }

 private:
  bool single_stream() const { return streams_ <= 1 && memory_ != Memory::kPinnedChunked; }
  // Whether a frame of `strips` strips runs the StagePlan::beside stages on the side stream:
  // always, unless JETPIPE_BESIDE_STRIPS=0 keeps them in line on frames of several strips on
  // several streams (as before; for comparisons). H100, 1080p K = 4 single frame: 1.39× the H2D
  // beside, 1.46× in line (jetpipe bench pipeline, docs/PERFORMANCE.md).
  bool beside_on(int strips) const {
    static const bool strips_too = !env_starts_with("JETPIPE_BESIDE_STRIPS", '0');
    return strips_too || single_stream() || strips == 1;
  }

  // Which stage writes each stage's input, which outputs are kept, what fuses.
  void plan() {
    std::map<std::string, int> writer;
    for (std::size_t i = 0; i < cfg_.stages.size(); ++i) {
      const Stage& s = *cfg_.stages[i];
      StagePlan sp;
      sp.stage = &s;
      sp.reads = s.input();
      auto it = writer.find(s.input());
      sp.producer = it == writer.end() ? -1 : it->second;
      if (s.has_output()) {
        writer[s.output()] = static_cast<int>(i);
        writer_[s.output()] = static_cast<int>(i);
        sp.keep = std::find(keep_.begin(), keep_.end(), s.output()) != keep_.end();
      }
      plans_.push_back(sp);
    }
    // Launch order on each strip's stream (a strip's stages run one after another there): the
    // image stages first, in the config's order (a stage's producer comes before it), then the
    // stages that only return results (nothing reads them), those that wait on more strips first
    // (more passes: each later pass waits for every strip; a halo: a strip waits for its
    // neighbours): a detection waits on other streams, and a histogram queued before it on the
    // same stream would sit on its path; queued after, it runs beside the detection's merge.
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      if (plans_[i].stage->has_output()) order_.push_back(i);
    }
    std::vector<std::size_t> leaves;
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      if (!plans_[i].stage->has_output()) leaves.push_back(i);
    }
    auto waits = [&](std::size_t i) {
      return 2 * plans_[i].stage->passes() + (plans_[i].stage->halo() > 0 ? 1 : 0);
    };
    std::stable_sort(leaves.begin(), leaves.end(),
                     [&](std::size_t a, std::size_t b) { return waits(a) > waits(b); });
    order_.insert(order_.end(), leaves.begin(), leaves.end());
  }

  std::unique_ptr<Slot> make_slot(int index) {
    auto slot = std::make_unique<Slot>();
    slot->index = index;
    const int strip_streams = single_stream() ? 0 : streams_;
    for (int s = 0; s < strip_streams; ++s) slot->streams.emplace_back();
    if (poll_) {
      const std::size_t words = static_cast<std::size_t>(chunks_) + 1;
      slot->landed = DeviceBuffer(words * sizeof(std::uint32_t));
      JP_CUDA(cudaMemset(slot->landed.get(), 0, words * sizeof(std::uint32_t)));
    }
    for (int k = 0; k < chunks_; ++k) {
      slot->h2d_done.emplace_back(false);
      slot->t_start.emplace_back(true);
      slot->t_h2d.emplace_back(true);
      slot->t_d2h0.emplace_back(true);
      slot->t_d2h.emplace_back(true);
    }
    for (const auto& sp : plans_) {
      StageSlot ss;
      ss.gpu = sp.stage->make_gpu();
      if (!ss.gpu) throw Error(sp.stage->label() + ": no GPU implementation");
      for (int k = 0; k < chunks_; ++k) {
        ss.done.emplace_back(false);
        ss.t_end.emplace_back(true);
      }
      slot->stages.push_back(std::move(ss));
    }
    // "gray into blur"; what: the part of `from` that goes, e.g. "'s maximum".
    auto note_fusion = [&](std::size_t from, std::size_t into, const char* what = "") {
      fusions_ += (fusions_.empty() ? "" : "; ") + plans_[from].stage->name() + what + " into " +
                  plans_[into].stage->name();
    };
    // Fusion: a later stage over the same image that an earlier one computes in its own launches
    // (histogram + stats: one pass). Decided on slot 0, repeated on the others.
    for (std::size_t b = 0; b < plans_.size(); ++b) {
      if (index == 0) {
        for (std::size_t a = 0; a < b && plans_[b].absorbed_by < 0; ++a) {
          if (plans_[a].absorbed_by >= 0 || plans_[a].stage->input() != plans_[b].stage->input()) {
            continue;
          }
          if (slot->stages[a].gpu->absorb(*slot->stages[b].gpu)) {
            plans_[b].absorbed_by = static_cast<int>(a);
            note_fusion(b, a);
          }
        }
      } else if (plans_[b].absorbed_by >= 0 &&
                 !slot->stages[plans_[b].absorbed_by].gpu->absorb(*slot->stages[b].gpu)) {
        throw Error(plans_[b].stage->label() + ": fusion differs between frame slots");
      }
    }
    // Producer fusion: a one-pass producer whose output only this stage reads, and nobody keeps
    // (to_gray into the gaussian after it: the colour frame read once, no gray image written).
    // Not over a frame read across the bus (zero-copy): a filter reads its input rows more than
    // once (halos), the producer reads each byte once (measured on an H100: fused, zero-copy fell
    // from 60% to 31% of the PCIe floor at 1080p).
    for (std::size_t b = 0; b < plans_.size(); ++b) {
      const int p = plans_[b].producer;
      if (index == 0) {
        if (p < 0 || (plans_[p].producer < 0 && memory_ == Memory::kZeroCopy) ||
            plans_[b].absorbed_by >= 0 || plans_[p].absorbed_by >= 0 ||
            plans_[p].fused_into >= 0 || plans_[p].keep || plans_[p].stage->passes() != 1 ||
            readers(plans_[p].stage->output()) != 1) {
          continue;
        }
        if (slot->stages[b].gpu->fuse_producer(*plans_[p].stage)) {
          plans_[p].fused_into = static_cast<int>(b);
          plans_[b].reads = plans_[p].reads;
          plans_[b].producer = plans_[p].producer;
          note_fusion(static_cast<std::size_t>(p), b);
        }
      } else if (plans_[b].fused_into >= 0 &&
                 !slot->stages[plans_[b].fused_into].gpu->fuse_producer(*plans_[b].stage)) {
        throw Error(plans_[plans_[b].fused_into].stage->label() +
                    ": fusion differs between frame slots");
      }
    }
    // Maximum feeding: a launched producer gathers its output's maximum for a reader that uses it
    // (harris into the detection: the detection's pass over the response for its maximum goes).
    for (std::size_t b = 0; b < plans_.size(); ++b) {
      const int p = plans_[b].producer;
      if (index == 0) {
        if (p < 0 || plans_[b].absorbed_by >= 0 || plans_[b].fused_into >= 0 ||
            plans_[p].absorbed_by >= 0 || plans_[p].fused_into >= 0 ||
            !slot->stages[b].gpu->wants_maximum() ||
            !slot->stages[p].gpu->feed_maximum(*slot->stages[b].gpu)) {
          continue;
        }
        plans_[b].max_fed = true;
        note_fusion(static_cast<std::size_t>(p), b, "'s maximum");
      } else if (plans_[b].max_fed && !slot->stages[p].gpu->feed_maximum(*slot->stages[b].gpu)) {
        throw Error(plans_[b].stage->label() + ": fusion differs between frame slots");
      }
      if (plans_[b].max_fed) slot->stages[b].gpu->set_maximum_fed();
    }
    if (index == 0) {
      plan_beside();
      for (const std::size_t i : order_) {  // producers first
        const int p = plans_[i].producer;
        plans_[i].skew = (p < 0 ? 0 : plans_[p].skew) + plans_[i].stage->halo();
      }
    }
    return slot;
  }

  // Which stages may run beside the others (StagePlan::beside; beside_on): result-only stages of
  // one pass and no halo that some other launched stage follows (from the same input or later),
  // so there is work to overlap. H100, the 1080p default chain as a CUDA graph: 48.7 µs with
  // histogram + stats on the side branch, 55.3 µs in line (jetpipe-bench --area pipeline,
  // docs/PERFORMANCE.md). Not a stage reading managed memory (the frame, or an image asked for):
  // that memory is attached to the frame's main stream, and a kernel on another stream reading it
  // is undefined where the device has no concurrent managed access (Jetson; compute-sanitizer
  // memcheck reports it on an H100 too).
  void plan_beside() {
    auto launched = [&](std::size_t i) {
      return plans_[i].absorbed_by < 0 && plans_[i].fused_into < 0;
    };
    auto reads_managed = [&](std::size_t i) {
      const int p = plans_[i].producer;
      return memory_ == Memory::kManaged && (p < 0 || plans_[p].keep);
    };
    auto candidate = [&](std::size_t i) {
      const Stage& s = *plans_[i].stage;
      return launched(i) && !s.has_output() && s.passes() == 1 && s.halo() == 0;
    };
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      if (!candidate(i) || reads_managed(i)) continue;
      for (std::size_t j = 0; j < plans_.size(); ++j) {
        if (j != i && launched(j) && !candidate(j) && plans_[j].producer >= plans_[i].producer) {
          plans_[i].beside = true;
          break;
        }
      }
    }
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      if (plans_[i].beside) beside_ += (beside_.empty() ? "" : ", ") + plans_[i].stage->name();
    }
  }

  // Strips of a frame: `chunks`, fewer where a strip would hold under min_strip_mb MiB (each
  // strip copy costs the copy engine a start-up: on an H100 the four strips of a 1080p frame cross
  // the bus in ~150 µs against ~124 µs for one copy of the whole frame).
  int strips_for(const ImageView& frame) const {
    if (memory_ != Memory::kPinnedChunked || profile_.min_strip_mb <= 0) return chunks_;
    const std::size_t bytes = frame.row_bytes() * static_cast<std::size_t>(frame.height);
    const std::size_t fit = bytes / (static_cast<std::size_t>(profile_.min_strip_mb) << 20);
    return static_cast<int>(std::clamp<std::size_t>(fit, 1, static_cast<std::size_t>(chunks_)));
  }

  // Stages reading the image `name` (their declared input).
  int readers(const std::string& name) const {
    int n = 0;
    for (const auto& sp : plans_) n += sp.stage->input() == name ? 1 : 0;
    return n;
  }

  cudaStream_t strip_stream(const Slot& slot, int k) const {
    return slot.streams.empty() ? slot.main.get() : slot.streams[k % slot.streams.size()].get();
  }

  // Whether strip k of `strips` records its timing event: every strip (timing: strips), or only
  // the first strip's start events and the last strip's end events (timing: stages: a handful of
  // graph nodes instead of one per stage and strip).
  bool timed(int k, int strips, bool start_event) const {
    if (timing_level_ == Timing::kStrips) return true;
    if (timing_level_ == Timing::kFrame) return false;
    return start_event ? k == 0 : k == strips - 1;
  }

  void record_timing(cudaEvent_t e, cudaStream_t s, bool capturing) {
    if (!timing_now_) return;
    JP_CUDA(capturing ? cudaEventRecordWithFlags(e, s, cudaEventRecordExternal)
                      : cudaEventRecord(e, s));
  }

  // A device image of the slot with this shape (reallocated only when the shape changes). With a
  // pitch (the pool's, for images copied to or from pool memory), rows are laid out as in the host
  // buffer, so a strip crosses the bus as one contiguous copy. JETPIPE_POISON=1 fills each new
  // image with 0xCD (a debugging aid: a stage reading rows before they are written then reads
  // that instead of a freed buffer's old contents, often the same frame's from an earlier run).
  ImageView device_image(Slot& slot, const std::string& name, int w, int h, PixelFormat f,
                         bool* changed, std::size_t pitch = 0) {
    static const bool poison = env_starts_with("JETPIPE_POISON", '1');
    SlotImage& img = slot.images[name];
    const ImageView& v = img.device.view();
    if (v.data == nullptr || v.width != w || v.height != h || v.format != f ||
        (pitch != 0 && v.pitch != pitch)) {
      img.device = DeviceImage(w, h, f, pitch);
      if (poison) {
        const ImageView& n = img.device.view();
        JP_CUDA(cudaMemset(n.data, 0xCD, n.pitch * static_cast<std::size_t>(h)));
        JP_CUDA(cudaDeviceSynchronize());
      }
      *changed = true;
    }
    img.view = img.device.view();
    return img.view;
  }

  // Each image's pixel format for frames of format `in`; throws where a stage cannot take its
  // input. Kept for the last format (a stream's frames share one), off the path to the frame's
  // first copy.
  const std::map<std::string, PixelFormat>& formats_for(PixelFormat in) {
    if (formats_.empty() || formats_.at(kFrameImage) != in) {
      std::map<std::string, PixelFormat> formats = {{kFrameImage, in}};
      for (const auto& sp : plans_) {
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
  void start(Slot& slot, Pending* p) {
    const ImageView host = p->frame.image.view();
    const int w = host.width, h = host.height;
    // Formats first: a frame the stages cannot take fails before any work.
    const std::map<std::string, PixelFormat>& formats = formats_for(host.format);
    p->bounds = strip_bounds(h, strips_for(host), profile_.strip_ratio);
    const int strips = static_cast<int>(p->bounds.size()) - 1;
    bool changed = false;

    // The frame as the GPU reads it. Pool strategies need the frame in pool memory: a frame from a
    // source that ignores the allocator is staged there with one host copy.
    ImageView pooled;
    if (pool_ && !pool_->device_view(host, &pooled)) {
      HostImage copy = pool_->allocate(w, h, host.format);
      copy_image(host, copy.view());
      p->frame.image = std::move(copy);
      pool_->device_view(p->frame.image.view(), &pooled);
    }
    const ImageView frame_dev =
        (memory_ == Memory::kCopy || memory_ == Memory::kPinnedChunked)
            ? device_image(slot, kFrameImage, w, h, host.format, &changed,
                           pool_ ? pooled.pitch : 0)
            : pooled;
    std::map<std::string, ImageView> views = {{kFrameImage, frame_dev}};
    // Stage timing on every timing_every-th frame; the others get only their GPU span.
    const cudaStream_t main = slot.main.get();
    auto timed_frame = [&] {
      p->timed = timing_level_ != Timing::kFrame && started_++ % timing_every_ == 0;
      timing_now_ = p->timed;
    };
    // Strip copies issued first, ahead of the bindings and the graph launch (plain stream work on
    // the copy stream), so the first strip crosses the bus while the host prepares the rest. The
    // copy stream need not wait for the slot's other streams: the slot's previous frame has
    // completed (submit() and take() wait for it before its slot takes another frame), so the
    // frame's first copy is its first call. Its start event follows on the slot's main stream,
    // idle until the graph: recorded as the copy starts, within ~1 µs, where recording it ahead of
    // the copy on the copy stream cost the copy the call's ~1.8 µs (H100, 1080p K = 4 single
    // frames: 1.281-1.307× the H2D against 1.308-1.316; docs/PERFORMANCE.md, twenty-second
    // session).
    const bool copies_first = graphs_ && copies_outside_graph(slot);
    const bool poll = polls(slot);
    if (poll) slot.landed_seq = slot.landed_seq == UINT32_MAX ? 1 : slot.landed_seq + 1;
    if (copies_first) {
      timed_frame();
      copy_strips_in(slot, *p, frame_dev, false, poll, true);
    }

    // Outputs: device images; the ones asked for also get host memory (pool or pageable).
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      const StagePlan& sp = plans_[i];
      if (!sp.stage->has_output() || sp.fused_into >= 0) continue;  // a fused output is never made
      const std::string& name = sp.stage->output();
      const PixelFormat f = formats.at(name);
      if (sp.keep) {
        HostImage out = pool_ ? pool_->allocate(w, h, f) : HostImage(w, h, f);
        if (memory_ == Memory::kZeroCopy || memory_ == Memory::kManaged) {
          ImageView dv;
          pool_->device_view(out.view(), &dv);
          views[name] = dv;
        } else {
          views[name] = device_image(slot, name, w, h, f, &changed, pool_ ? out.view().pitch : 0);
        }
        p->outputs[name] = std::move(out);
      } else {
        views[name] = device_image(slot, name, w, h, f, &changed);
      }
    }

    // Bind every stage twin to this frame's views.
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      const Stage& s = *plans_[i].stage;
      if (plans_[i].fused_into >= 0) continue;
      GpuBinding b;
      b.in = views.at(plans_[i].reads);
      if (s.has_output()) b.out = views.at(s.output());
      b.strips = strips;
      b.results = results_;
      b.stream = slot.main.get();
      b.beside = plans_[i].beside && beside_on(strips);
      changed |= slot.stages[i].gpu->bind(b);
    }
    if (changed) slot.graphs.clear();

    if (memory_ == Memory::kCopy) {
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
    if (memory_ == Memory::kManaged) attach_managed(slot, *p, views, cudaMemAttachSingle);

    if (!copies_first) {
      timed_frame();
      JP_CUDA(cudaEventRecord(slot.t_begin.get(), main));
    }
    if (graphs_) {
      // Everything a captured graph refers to: host and device buffers and their shapes, and
      // whether it records the timing events.
      std::vector<std::uintptr_t> key = {reinterpret_cast<std::uintptr_t>(p->frame.image.view().data),
                                         static_cast<std::uintptr_t>(p->timed)};
      for (const auto& [name, out] : p->outputs) {
        key.push_back(reinterpret_cast<std::uintptr_t>(out.view().data));
      }
      for (const auto& [name, v] : views) {
        key.insert(key.end(), {reinterpret_cast<std::uintptr_t>(v.data),
                               static_cast<std::uintptr_t>(v.width),
                               static_cast<std::uintptr_t>(v.height), v.pitch});
      }
      auto it = slot.graphs.find(key);
      if (it == slot.graphs.end()) {
        if (slot.graphs.size() >= 16) slot.graphs.clear();
        JP_CUDA(cudaStreamBeginCapture(main, cudaStreamCaptureModeThreadLocal));
        try {
          enqueue(slot, *p, views, true, copies_first);
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
      enqueue(slot, *p, views, false, false);
    }
    JP_CUDA(cudaEventRecord(slot.t_finish.get(), main));
    if (memory_ == Memory::kManaged) attach_managed(slot, *p, views, cudaMemAttachHost);
    JP_CUDA(cudaEventRecord(slot.complete.get(), main));
  }

  // Whether a stage's merge (and the join before its next pass) runs on the frame's last strip's
  // stream, right after that strip's pass, which first waits for the pass on the other strips:
  // where the strips land in row order on the copy stream (pinned-chunked), so that the last
  // strip's pass ends last and the merge follows it as a kernel after a kernel on one stream,
  // instead of on main after a wait for every strip (H100, 1080p K = 4 single frames: ~1 µs
  // sooner, docs/PERFORMANCE.md). JETPIPE_JOIN_LAST=0 merges on main (as before; for
  // comparisons).
  bool merges_on_last(const Slot& slot, int strips) const {
    static const bool off = env_starts_with("JETPIPE_JOIN_LAST", '0');
    return !off && strips > 1 && copy_streams(slot);
  }

  // Whether the frame's last strip is deferred (enqueue): its passes queued after every other
  // strip's, behind one join of the other strip streams, so that on its stream each kernel
  // follows the one before it with no wait on another stream between them. Where the strips land
  // in row order on the copy stream (pinned-chunked), and only where no other strip reads rows of
  // a stage's last strip (a stage that wraps; strips shorter than the skew). Its kernels are
  // launched without the early trigger, as every kernel of a frame of several strips (enqueue).
  // H100, 1080p K = 4 single frames (copies 3, poll), with the finish's grid of one block per SM:
  // 1.300-1.324× the frame's H2D against 1.331-1.348× before, GPU span 150.5-153.4 µs against
  // 153.3-156.5 (docs/PERFORMANCE.md, twenty-first session). JETPIPE_DEFER_LAST=0 turns it off
  // (for comparisons).
  bool defers_last(const Slot& slot, int strips, const std::vector<std::vector<int>>& sb,
                   int h) const {
    static const bool off = env_starts_with("JETPIPE_DEFER_LAST", '0');
    if (off || strips < 2 || !copy_streams(slot)) return false;
    const int last = strips - 1;
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      const StagePlan& sp = plans_[i];
      if (sp.producer < 0 || sp.absorbed_by >= 0 || sp.fused_into >= 0) continue;
      const std::vector<int>& pb = sb[sp.producer];
      for (int k = 0; k < last; ++k) {
        const RowRanges need =
            rows_read(sb[i][k], sb[i][k + 1], sp.stage->halo(), h, sp.stage->wraps());
        if (need.overlaps(pb[last], pb[last + 1])) return false;
      }
    }
    return true;
  }

  // Managed buffers (the frame and the outputs asked for) change hands between host and stream.
  void attach_managed(Slot& slot, const Pending& p, const std::map<std::string, ImageView>& views,
                      unsigned flags) {
    const cudaStream_t s = slot.main.get();
    auto attach = [&](const ImageView& v) {
      const std::size_t bytes = (static_cast<std::size_t>(v.height) - 1) * v.pitch + v.row_bytes();
      JP_CUDA(cudaStreamAttachMemAsync(s, v.data, 0, flags));
      if (flags == cudaMemAttachSingle && concurrent_managed_) {
        cudaMemLocation loc{};
        loc.type = cudaMemLocationTypeDevice;
        loc.id = device_;
        JP_CUDA(cudaMemPrefetchAsync(v.data, bytes, loc, 0, s));
      }
    };
    attach(views.at(kFrameImage));
    for (const auto& [name, img] : p.outputs) attach(views.at(name));
  }

  // Whether the strip copies go ahead of the captured graph: pinned-chunked frames on strip
  // streams with their copy stream. JETPIPE_COPIES_IN_GRAPH=1 keeps them in the graph.
  bool copies_outside_graph(const Slot& slot) const {
    static const bool in_graph = env_starts_with("JETPIPE_COPIES_IN_GRAPH", '1');
    return !in_graph && copy_streams(slot);
  }

  // Whether the stages wait for the frame's copies by polling (poll_): where the copies are
  // queued ahead of the graph.
  bool polls(const Slot& slot) const {
    return poll_ && copies_outside_graph(slot);
  }

  // Whether the slot's strip copies run on its copy streams: pinned-chunked with strip streams.
  bool copy_streams(const Slot& slot) const {
    return !slot.streams.empty() && memory_ == Memory::kPinnedChunked;
  }

  // How many of the frame's first strips cross the bus in one copy (strip_copies): 1 = a copy per
  // strip. Only where every copy is on one stream (the copy stream, or the single stream), so that
  // a strip's stages never skip the wait for a copy issued on another strip's stream.
  int first_copy_strips(const Slot& slot, int strips) const {
    const int copies = profile_.strip_copies;
    if (memory_ != Memory::kPinnedChunked || copies <= 0 || copies >= strips) return 1;
    if (!copy_streams(slot) && !slot.streams.empty()) return 1;
    return strips - copies + 1;
  }

  // The frame's strips in, in row order, on the copy stream (with strip streams) or each on its
  // strip's stream; h2d_done[k] recorded after strip k's copy (the first first_copy_strips()
  // strips share one).
  // With begin_after_first, the frame's start event (t_begin) on the main stream right after the
  // first copy is queued.
  void copy_strips_in(Slot& slot, const Pending& p, const ImageView& frame_dev, bool capturing,
                      bool poll = false, bool begin_after_first = false) {
    const std::vector<int>& b = p.bounds;
    const int strips = static_cast<int>(b.size()) - 1;
    const bool copy_stream = copy_streams(slot);
    const ImageView host = p.frame.image.view();
    const int first = first_copy_strips(slot, strips);
    for (int k = 0; k < strips; ++k) {
      const cudaStream_t s = copy_stream ? slot.copy_in.get() : strip_stream(slot, k);
      if (k < first - 1) continue;  // in the first copy: issued with strip first - 1
      const int k0 = k < first ? 0 : k;
      for (int j = k0; j <= k; ++j) {
        if (timed(j, strips, true)) record_timing(slot.t_start[j].get(), s, capturing);
      }
      if (memory_ == Memory::kPinnedChunked) {
        JP_CUDA(copy_rows(frame_dev, host, b[k0], b[k + 1], cudaMemcpyHostToDevice, s));
      }
      if (begin_after_first && k == first - 1) {
        JP_CUDA(cudaEventRecord(slot.t_begin.get(), slot.main.get()));
      }
      for (int j = k0; j <= k; ++j) {
        JP_CUDA(cudaEventRecord(slot.h2d_done[j].get(), s));
        if (timed(j, strips, false)) record_timing(slot.t_h2d[j].get(), s, capturing);
      }
      if (poll) {  // the copy's flag: its last strip's word (CudaExecutor::poll_)
        JP_CUDA(write_stream_value(slot.landed.get<std::uint32_t>() + 1 + k, slot.landed_seq, s));
      }
    }
  }

  // Queues one frame's work on the slot's streams (also while capturing a graph). With
  // copies_done, the strip copies are already queued (copy_strips_in, outside the capture): the
  // graph waits for their events as external events.
  void enqueue(Slot& slot, const Pending& p, const std::map<std::string, ImageView>& views,
               bool capturing, bool copies_done) {
    const cudaStream_t main = slot.main.get();
    const std::vector<int>& b = p.bounds;  // the frame's strips (its copies)
    std::vector<std::vector<int>> sb(plans_.size());  // each stage's (StagePlan::skew)
    for (std::size_t i = 0; i < plans_.size(); ++i) sb[i] = skewed_bounds(b, plans_[i].skew);
    const int strips = static_cast<int>(b.size()) - 1;
    const int h = b.back();
    const bool multi = !slot.streams.empty();
    if (multi) {
      JP_CUDA(cudaEventRecord(slot.fork.get(), main));
      for (const auto& s : slot.streams) JP_CUDA(cudaStreamWaitEvent(s.get(), slot.fork.get(), 0));
    }
    // Strip copies in, in row order on one copy stream: strip 0 lands after 1/K of the copy and
    // its stages run while the later strips are still crossing the bus (copies issued on K
    // streams at once share the engines and all land at the end).
    const bool copy_stream = copy_streams(slot);
    if (copy_stream) {
      if (!copies_done) JP_CUDA(cudaStreamWaitEvent(slot.copy_in.get(), slot.fork.get(), 0));
      JP_CUDA(cudaStreamWaitEvent(slot.copy_out.get(), slot.fork.get(), 0));
    }
    if (!copies_done) copy_strips_in(slot, p, views.at(kFrameImage), capturing);
    // Waits for strip j's copy (an external event when the copies ran ahead of the capture).
    const unsigned copy_wait = copies_done && capturing ? cudaEventWaitExternal : 0;
    const bool poll = copies_done && capturing && polls(slot);  // as start() decided
    const int first_copy = first_copy_strips(slot, strips);
    std::map<cudaStream_t, int> polled;  // per stream, the latest copy polled (its last strip)
    // Frames of several strips launch without the early trigger (kernels/block/pdl.cuh): with
    // it, each kernel's blocks became resident before the one ahead had started and held the SMs
    // from the other strips' chains and the histogram beside them. H100, 1080p K = 4 single
    // frames: GPU span 0.149-0.152 ms without, against 0.155 with the first three strips in one
    // copy, and 0.165 against 0.151 for the deferred last strip alone (docs/PERFORMANCE.md,
    // twenty-first and twenty-second sessions); frames in flight unchanged. Frames of one strip
    // keep it (the 1080p chain: 37.2 µs against 39.3).
    LaunchContext ctx;
    ctx.early_trigger = strips <= 1;
    // Makes stream s wait for the strips of stage i's producer (the frame's copies, or the stage
    // writing its input) that hold the rows stage i's strip k reads, except those `skip(j)` says
    // are already ordered before s.
    auto wait_rows = [&](cudaStream_t s, std::size_t i, int k, auto&& skip) {
      const StagePlan& sp = plans_[i];
      const RowRanges need =
          rows_read(sb[i][k], sb[i][k + 1], sp.stage->halo(), h, sp.stage->wraps());
      const std::vector<int>& pb = sp.producer < 0 ? b : sb[sp.producer];  // its strips
      // With the copies polled, one poller per stream for the latest copy it needs: the copies
      // land in order on one stream, each flag written after its copy.
      int poll_copy = -1;  // that copy's last strip
      for (int j = 0; j < strips; ++j) {
        if (!need.overlaps(pb[j], pb[j + 1]) || skip(j)) continue;
        if (sp.producer < 0 && poll) {
          poll_copy = std::max(poll_copy, std::max(j, first_copy - 1));  // the copy's last strip
          continue;
        }
        JP_CUDA(sp.producer < 0
                    ? cudaStreamWaitEvent(s, slot.h2d_done[j].get(), copy_wait)
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
    const bool defer = defers_last(slot, strips, sb, h);
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
    std::vector<std::vector<char>> beside_waited(plans_.size());  // producer strips waited for
    bool side_used = false;
    const bool beside_now = beside_on(strips);  // as bound (start)
    // Strip k of a beside stage: the producer strips holding its rows (each once per frame: all
    // on the side stream), its launch.
    auto beside_strip = [&](std::size_t i, int k) {
      StageSlot& ss = slot.stages[i];
      const cudaStream_t side = slot.side.get();
      const int producer = plans_[i].producer;
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
      if (k == 0 && timed(0, strips, true)) record_timing(ss.t_side.get(), side, capturing);
      ss.gpu->launch(0, k, sb[i][k], sb[i][k + 1], ctx, side);
      JP_CUDA(cudaEventRecord(ss.done[k].get(), side));
      if (timed(k, strips, false)) record_timing(ss.t_end[k].get(), side, capturing);
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
      for (std::size_t i = 0; i < plans_.size(); ++i) {
        if (!slot.stages[i].beside || plans_[i].producer != producer) continue;
        slot.stages[i].merged = false;
        ScopedRange range(plans_[i].stage->label());
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
      const StagePlan& sp = plans_[i];
      StageSlot& ss = slot.stages[i];
      const cudaStream_t s = strip_stream(slot, k);
      if (multi && (pass == 0 || !ss.gpu->joins_before(pass))) {
        // The rows this strip reads, written by other streams' strips.
        wait_rows(s, i, k, [&](int j) {
          return (joined && j != k) ||
                 (strip_stream(slot, j) == s && (sp.producer >= 0 || !copy_stream));
        });
      } else if (multi) {
        JP_CUDA(cudaStreamWaitEvent(s, ss.joined.get(), 0));
      }
      if (merge_after) {  // the merge's other strips, before this one
        for (int j = 0; j < k; ++j) {
          if (strip_stream(slot, j) != s) JP_CUDA(cudaStreamWaitEvent(s, ss.done[j].get(), 0));
        }
      }
      ss.gpu->launch(pass, k, sb[i][k], sb[i][k + 1], ctx, s);
      JP_CUDA(cudaEventRecord(ss.done[k].get(), s));
      if (pass + 1 == sp.stage->passes() && timed(k, strips, false)) {
        record_timing(ss.t_end[k].get(), s, capturing);
      }
    };
    // The deferred last strip: its stream joins the other strip streams (their work so far) and
    // the frame's other copies, then runs its passes and the beside stages' last strips.
    auto run_deferred = [&] {
      if (deferred.empty() && deferred_beside.empty()) return;
      const cudaStream_t ls = strip_stream(slot, last);
      for (const auto& st : slot.streams) {
        if (st.get() != ls) join(ls, st.get());
      }
      if (copy_stream) {
        for (int j = 0; j < last; ++j) {
          JP_CUDA(cudaStreamWaitEvent(ls, slot.h2d_done[j].get(), copy_wait));
        }
      }
      for (const Unit& u : deferred) {
        ScopedRange range(plans_[u.stage].stage->label());
        run_strip(u.stage, u.pass, last, true, false);
      }
      deferred.clear();
      for (const std::size_t i : deferred_beside) {
        ScopedRange range(plans_[i].stage->label());
        beside_strip(i, last);
        beside_merge(i);
      }
      deferred_beside.clear();
    };
    for (std::size_t i = 0; i < plans_.size(); ++i) {
      slot.stages[i].beside = plans_[i].beside && beside_now;
    }
    launch_beside(-1);  // those reading the frame
    for (const std::size_t i : order_) {
      const StagePlan& sp = plans_[i];
      StageSlot& ss = slot.stages[i];
      if (ss.beside) continue;
      ss.merged = false;
      if (sp.absorbed_by >= 0 || sp.fused_into >= 0) continue;
      ScopedRange range(sp.stage->label());
      const int passes = sp.stage->passes();
      for (int pass = 0; pass < passes; ++pass) {
        const bool merge = ss.gpu->merges_after(pass);
        const bool join_next = pass + 1 < passes && ss.gpu->joins_before(pass + 1);
        const bool on_last = (merge || join_next) && merges_on_last(slot, strips);
        for (int k = 0; k < (defer ? last : strips); ++k) {
          run_strip(i, pass, k, false, on_last && k == last);
        }
        if (defer) deferred.push_back({i, pass});
        if (merge || join_next) {
          run_deferred();
          const cudaStream_t ms = on_last ? strip_stream(slot, strips - 1) : main;
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
      const cudaStream_t s = copy_stream ? out_stream : strip_stream(slot, k);
      if (memory_ == Memory::kPinnedChunked && !p.outputs.empty()) {
        for (const auto& [name, out] : p.outputs) {
          if (copy_stream) {
            JP_CUDA(cudaStreamWaitEvent(s, slot.stages[writer_.at(name)].done[k].get(), 0));
          }
        }
        if (timed(k, strips, true)) record_timing(slot.t_d2h0[k].get(), s, capturing);
        for (const auto& [name, out] : p.outputs) {
          const std::vector<int>& wb = sb[writer_.at(name)];
          JP_CUDA(
              copy_rows(out.view(), views.at(name), wb[k], wb[k + 1], cudaMemcpyDeviceToHost, s));
        }
        if (timed(k, strips, false)) record_timing(slot.t_d2h[k].get(), s, capturing);
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

  // ms from the executor's origin to e; NaN when the time cannot be read (then timing is off for
  // the rest of the run, said once on stderr, and records carry no spans).
  double since_origin(cudaEvent_t e) {
    float ms = 0;
    const cudaError_t err = cudaEventElapsedTime(&ms, origin_.get(), e);
    if (err == cudaSuccess) return ms;
    cudaGetLastError();
    if (timing_) {
      std::fprintf(stderr, "jetpipe: GPU timing unavailable (%s); stage times are not reported\n",
                   cudaGetErrorString(err));
    }
    timing_ = false;
    return std::numeric_limits<double>::quiet_NaN();
  }

  // Waits for the slot's frame and fills its record.
  void finish(Slot& slot) {
    auto it = std::find_if(pending_.begin(), pending_.end(),
                           [&](const Pending& p) { return p.seq == slot.pending; });
    const auto w0 = Clock::now();
    JP_CUDA(cudaEventSynchronize(slot.complete.get()));
    blocked_ms_ += std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
    slot.busy = false;
    if (it == pending_.end()) return;
    Pending& p = *it;
    FrameRecord& rec = p.record;
    try {
      for (std::size_t i = 0; i < plans_.size(); ++i) {
        StageResult r = slot.stages[i].gpu->result();
        if (!std::holds_alternative<std::monostate>(r)) {
          rec.results.emplace_back(plans_[i].stage->name(), std::move(r));
        }
      }
      for (auto& [name, img] : p.outputs) {
        if (memory_ == Memory::kCopy) {
          const ImageView dv = slot.images.at(name).view;
          const ImageView hv = img.view();
          JP_CUDA(cudaMemcpy2DAsync(hv.data, hv.pitch, dv.data, dv.pitch, dv.row_bytes(),
                                    static_cast<std::size_t>(dv.height), cudaMemcpyDeviceToHost,
                                    slot.main.get()));
          JP_CUDA(cudaStreamSynchronize(slot.main.get()));
        }
        rec.images[name] = std::move(img);
      }
      if (std::find(keep_.begin(), keep_.end(), kFrameImage) != keep_.end()) {
        rec.images[kFrameImage] = p.frame.image;
      }
      if (timing_) collect_timing(slot, p);
      if (!timing_) {
        rec.spans.clear();
        rec.stage_ms.clear();
      }
    } catch (const Error& e) {
      rec.error = "frame " + std::to_string(rec.index) + " (" + rec.source + "): " + e.what();
      rec.results.clear();
      rec.images.clear();
    }
    rec.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - p.submitted).count();
    p.frame = Frame{};
    p.outputs.clear();
    p.ready = true;
  }

  // The timeline row of a strip's copies: the copy stream, or the strip's own stream.
  std::string copy_track(const Slot& slot, const char* dir, int k) const {
    if (slot.streams.empty()) return " main";
    if (memory_ == Memory::kPinnedChunked) return std::string(" copy ") + dir;
    return " strip " + std::to_string(k);
  }

  void collect_timing(Slot& slot, Pending& p) {
    FrameRecord& rec = p.record;
    const int strips = static_cast<int>(p.bounds.size()) - 1;
    const int last = strips - 1;
    const std::string prefix = "frame slot " + std::to_string(slot.index);
    const double t0 = since_origin(slot.t_begin.get());
    rec.gpu_start_ms = t0;
    rec.gpu_ms = since_origin(slot.t_finish.get()) - t0;
    if (!p.timed) return;
    const bool all = timing_level_ == Timing::kStrips;
    auto strip_track = [&](int k) {
      return prefix + (slot.streams.empty() ? " main" : " strip " + std::to_string(k));
    };
    // Copies in: per strip, or first start to last end.
    std::vector<double> prev(strips, 0.0);
    if (all) {
      for (int k = 0; k < strips; ++k) {
        const double a = since_origin(slot.t_start[k].get());
        prev[k] = since_origin(slot.t_h2d[k].get());
        if (memory_ == Memory::kPinnedChunked) {
          rec.spans.push_back({Span::kH2D, "h2d " + std::to_string(k),
                               prefix + copy_track(slot, "in", k), a, prev[k]});
        }
      }
    } else {
      const double a = since_origin(slot.t_start[0].get());
      prev[last] = since_origin(slot.t_h2d[last].get());
      if (memory_ == Memory::kPinnedChunked) {
        rec.spans.push_back({Span::kH2D, "h2d", prefix + copy_track(slot, "in", 0), a, prev[last]});
      }
    }
    // Stages: per strip, or on the last strip (the end of the frame's critical path); merges.
    rec.stage_ms.assign(plans_.size(), 0.0);
    for (const std::size_t i : order_) {
      if (plans_[i].absorbed_by >= 0 || plans_[i].fused_into >= 0) continue;
      StageSlot& ss = slot.stages[i];
      if (ss.beside) {  // its own row of the timeline, from its start on the side stream
        const double a = since_origin(ss.t_side.get()), e = since_origin(ss.t_end[last].get());
        double hi = e;
        rec.spans.push_back({Span::kCompute, plans_[i].stage->name(), prefix + " side", a, e});
        if (ss.merged) {
          const double m0 = since_origin(ss.t_merge0.get()), m1 = since_origin(ss.t_merge1.get());
          rec.spans.push_back({Span::kCompute, plans_[i].stage->name() + " merge",
                               prefix + " side", m0, m1});
          hi = m1;
        }
        rec.stage_ms[i] = std::max(0.0, hi - a);
        continue;
      }
      double lo = std::numeric_limits<double>::max(), hi = 0;
      for (int k = all ? 0 : last; k < strips; ++k) {
        const double e = since_origin(ss.t_end[k].get());
        rec.spans.push_back({Span::kCompute, plans_[i].stage->name(), strip_track(k), prev[k], e});
        lo = std::min(lo, prev[k]);
        hi = std::max(hi, e);
        prev[k] = e;
      }
      if (ss.merged) {
        const double m0 = since_origin(ss.t_merge0.get()), m1 = since_origin(ss.t_merge1.get());
        rec.spans.push_back({Span::kCompute, plans_[i].stage->name() + " merge",
                             merges_on_last(slot, strips) ? strip_track(last) : prefix + " main",
                             m0, m1});
        hi = std::max(hi, m1);
      }
      rec.stage_ms[i] = std::max(0.0, hi - lo);
    }
    if (memory_ != Memory::kPinnedChunked || p.outputs.empty()) return;
    for (int k = all ? 0 : last; k < strips; ++k) {
      const double a = since_origin(slot.t_d2h0[all ? k : 0].get());
      rec.spans.push_back({Span::kD2H, all ? "d2h " + std::to_string(k) : "d2h",
                           prefix + copy_track(slot, "out", k), a,
                           since_origin(slot.t_d2h[k].get())});
    }
  }

  const PipelineConfig& cfg_;
  PlatformProfile profile_;
  std::vector<std::string> keep_;
  Memory memory_;
  int device_ = 0;
  bool concurrent_managed_ = false;
  int chunks_ = 1, streams_ = 1, frames_ = 1;
  bool graphs_ = false;
  bool poll_ = false;  // copy_wait: poll (and it can)
  ResultMemory results_ = ResultMemory::kCopy;
  std::optional<FramePool> pool_;
  std::vector<StagePlan> plans_;
  std::vector<std::size_t> order_;  // the stages in launch order
  std::map<std::string, int> writer_;  // image name → the stage writing it
  std::string fusions_;
  std::string beside_;  // the stages on the side stream (StagePlan::beside)
  std::vector<std::unique_ptr<Slot>> slots_;
  std::size_t next_slot_ = 0;
  std::deque<Pending> pending_;
  std::size_t next_seq_ = 0;
  std::map<std::string, PixelFormat> formats_;  // formats_for()'s, for the last frame format
  double blocked_ms_ = 0;     // in cudaEventSynchronize (blocked_ms())
  bool timing_ = true;        // event times can be read (else none are reported)
  enum class Timing { kFrame, kStages, kStrips };
  Timing timing_level_ = Timing::kStages;  // profile key timing
  int timing_every_ = 1;                   // profile key timing_every
  std::size_t started_ = 0;                // frames started (which ones are timed)
  bool timing_now_ = false;                // the frame being queued records timing events
  CudaEvent origin_{true};
};

}  // namespace

std::unique_ptr<Executor> make_cuda_executor(const PipelineConfig& config,
                                             const PlatformProfile& profile,
                                             std::vector<std::string> keep_images) {
  return std::make_unique<CudaExecutor>(config, profile, std::move(keep_images));
}

}  // namespace jetpipe

#else  // !JETPIPE_HAVE_CUDA

#include "core/error.h"

namespace jetpipe {

std::unique_ptr<Executor> make_cuda_executor(const PipelineConfig&, const PlatformProfile& profile,
                                             std::vector<std::string>) {
  throw config_error(profile.file + ": backend cuda: this build has no CUDA");
}

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
