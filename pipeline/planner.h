// SPDX-License-Identifier: MIT
// The CUDA executor's planner: host-only, no CUDA, no slots and no streams (stream indices only),
// so it builds and is tested in every build. From the stages, the images asked for and the
// platform profile it decides, once per pipeline, which stage computes which (fusions), which
// stages run beside the others, the launch order and each stage's strip skew; and per frame, the
// strips, which producer strips (or frame copies) each strip of a stage waits for, how many
// strips share the first copy, whether the last strip is deferred and where merges run.
// Slots (pipeline/gpu_slot.h) are built from a plan; the scheduler (pipeline/gpu_scheduler.h)
// reads both.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "pipeline/config.h"
#include "pipeline/platform.h"
#include "stages/stage.h"

namespace jetpipe {

// The profile's settings as the executor runs them (clamped and combined once).
struct ExecSettings {
  MemoryStrategy memory = MemoryStrategy::kCopy;
  int chunks = 1;   // strips per frame (at most)
  int streams = 1;  // strip streams
  int frames = 1;   // frames in flight
  bool graphs = false;
  // copy_wait: poll, where it applies: pinned-chunked with graphs and one frame in flight, and
  // the device can wait on stream values.
  bool poll = false;
  int min_strip_mb = 0;
  double strip_ratio = 1.0;
  int strip_copies = 0;
  ResultMemory results = ResultMemory::kMapped;
  TimingLevel timing = TimingLevel::kStages;
  int timing_every = 1;

  // Every launch on the slot's main stream (no strip streams).
  bool single_stream() const { return streams <= 1 && memory != MemoryStrategy::kPinnedChunked; }
  // Strip streams per slot (0: everything on the main stream).
  int strip_streams() const { return single_stream() ? 0 : streams; }
  // The strip stream of strip k (strip_streams() > 0).
  int stream_of(int k) const { return k % strip_streams(); }
  // The strips' copies run in row order on the slot's copy streams: pinned-chunked with strip
  // streams. They are then queued ahead of a captured graph, which waits for them.
  bool copy_streams() const {
    return strip_streams() > 0 && memory == MemoryStrategy::kPinnedChunked;
  }
  // The stages wait for the frame's copies by polling (kernels/stream_flag.h), not on events.
  bool polls() const { return poll && copy_streams(); }
};

// `stream_values` says whether the device can wait on stream values (copy_wait: poll).
ExecSettings exec_settings(const PlatformProfile& profile, bool stream_values);

// A stage as the executor plans it (the same in every slot).
struct StagePlan {
  const Stage* stage = nullptr;
  int producer = -1;     // stage writing its input; -1: the frame
  int absorbed_by = -1;  // another stage computes this one (fusion)
  int fused_into = -1;   // the stage reading this one's output computes it as it reads (fusion)
  std::string reads;     // the image its GPU twin reads: its input, or its fused producer's
  bool keep = false;     // its output image is asked for
  // Launched on the slot's side stream as soon as its input is written, beside the stages after it
  // (a result-only stage of one pass, e.g. histogram + stats beside harris and the detection);
  // joined back at the frame's end.
  bool beside = false;
  // Its input's maximum is gathered by its producer's launches (StageGpu::feed_maximum: harris
  // into a detection with quality, whose own maximum pass then launches nothing).
  bool max_fed = false;
  // Its strips are the frame's moved up by this many rows: its producer's skew plus its own halo,
  // so that its strip k reads only rows its producer's strips 0..k write and waits for no later
  // strip; the frame's last strip alone is left when its copy lands.
  int skew = 0;

  bool launched() const { return absorbed_by < 0 && fused_into < 0; }
};

struct PipelinePlan {
  std::vector<StagePlan> stages;
  std::vector<std::size_t> order;     // launch order on each strip's stream
  std::map<std::string, int> writer;  // image name → the stage writing it
  std::string fusions;                // "stats into hist; gray into blur; ..." (describe())
  std::string beside;                 // the stages beside the others, by name
};

// Plans the stages. `twins` are GPU twins of the stages (one each, in order), asked which fusions
// they take (StageGpu::absorb, fuse_producer, feed_maximum); they are probes: a slot applies the
// plan to its own twins (apply_fusions).
PipelinePlan plan_pipeline(const std::vector<const Stage*>& stages,
                           const std::vector<std::string>& keep, MemoryStrategy memory,
                           const std::vector<StageGpu*>& twins);

// plan_pipeline over a config's stages, asking a probe twin of each (Stage::make_gpu; throws in a
// build without CUDA).
PipelinePlan plan_config(const PipelineConfig& cfg, const std::vector<std::string>& keep,
                         MemoryStrategy memory);

// Makes a slot's twins take the plan's fusions; throws where a twin refuses one.
void apply_fusions(const PipelinePlan& plan, const std::vector<StageGpu*>& twins);

// The input rows a strip [y0, y1) with this halo may read in an image of h rows: the window
// clipped to the image, and for a stage that wraps, where the window crosses an edge, also the rows
// within the halo of the opposite edge.
struct RowRanges {
  int a0 = 0, a1 = 0, b0 = 0, b1 = 0;  // [a0, a1) and [b0, b1)
  bool overlaps(int y0, int y1) const { return (y0 < a1 && y1 > a0) || (y0 < b1 && y1 > b0); }
};
RowRanges rows_read(int y0, int y1, int halo, int h, bool wraps);

// One frame's plan.
struct FramePlan {
  std::vector<int> bounds;                     // the frame's strips (its copies): K + 1 row bounds
  std::vector<std::vector<int>> stage_bounds;  // each stage's strips (StagePlan::skew)
  int strips = 1;
  int height = 0;
  // How many of the first strips cross the bus in one copy (strip_copies); 1: a copy per strip.
  int first_copy = 1;
  // Merges (and joins before a next pass) run on the last strip's stream, right after its pass.
  bool merges_on_last = false;
  // The last strip's passes are queued after every other strip's, behind one join.
  bool defer_last = false;
  // The chain's programmatic launches trigger their dependents at their start: frames of one
  // strip only (docs/decisions/001-pdl-early-trigger.md).
  bool early_trigger = true;
};

// The number of strips for a frame of `frame_bytes` (min_strip_mb).
int strips_for(const ExecSettings& s, std::size_t frame_bytes);

FramePlan plan_frame(const PipelinePlan& plan, const ExecSettings& s, std::vector<int> bounds);

// The strips of stage i's producer (of the frame's copies when it reads the frame) holding rows
// that stage i's strip k reads, in order.
std::vector<int> producer_strips(const PipelinePlan& plan, const FramePlan& f, std::size_t i,
                                 int k);

}  // namespace jetpipe
