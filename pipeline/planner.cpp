// SPDX-License-Identifier: MIT
#include "pipeline/planner.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "core/error.h"
#include "pipeline/executor.h"

namespace jetpipe {

ExecSettings exec_settings(const PlatformProfile& profile, bool stream_values) {
  ExecSettings s;
  s.memory = profile.memory;
  if (s.memory == MemoryStrategy::kHost) {
    throw config_error("memory 'host' is not a CUDA strategy");
  }
  s.chunks = std::max(1, profile.chunks);
  s.streams = std::max(1, std::min(profile.streams, s.chunks));
  s.frames = std::max(1, profile.frames_in_flight);
  s.graphs = profile.cuda_graphs;
  s.min_strip_mb = profile.min_strip_mb;
  s.strip_ratio = profile.strip_ratio;
  s.strip_copies = profile.strip_copies;
  s.timing = profile.timing;
  s.timing_every = std::max(1, profile.timing_every);
  if (s.memory == MemoryStrategy::kCopy) s.frames = 1, s.streams = 1;
  // copy_wait: poll: the stages reading the frame's strip copies wait for them by polling
  // (kernels/stream_flag.h) instead of through their events: a kernel after an event started
  // 6-8 µs after the copy ended, after the poller ~2.5 (H100). Pinned-chunked frames with graphs
  // only (their copies are queued ahead of the graph, which waits for them), one frame in flight
  // only: the polling kernel holds its queue while it waits, and other frames' work queued behind
  // it waits too (H100, 1080p K = 4 F = 3: 76% of the PCIe floor against 94%).
  s.poll = profile.copy_wait == CopyWait::kPoll && s.memory == MemoryStrategy::kPinnedChunked &&
           s.graphs && s.frames == 1 && stream_values;
  // Managed memory attached to one stream is accessed by that stream only (Jetson without
  // concurrent managed access): a frame runs on its slot's main stream alone.
  if (s.memory == MemoryStrategy::kManaged) s.streams = 1;
  // auto: mapped for every strategy. Measured on an H100: the kernels' few bytes over the bus
  // cost less than the copy nodes after the merges (pinned-chunked K=4 F=3 at 1080p: 7805 fps
  // mapped, 4664 copied back).
  s.results =
      profile.results == ResultsPlacement::kCopy ? ResultMemory::kCopy : ResultMemory::kMapped;
  return s;
}

namespace {

// Stages reading the image `name` (their declared input).
int readers(const std::vector<StagePlan>& plans, const std::string& name) {
  int n = 0;
  for (const auto& sp : plans) n += sp.stage->input() == name ? 1 : 0;
  return n;
}

// "gray into blur"; what: the part of `from` that goes, e.g. "'s maximum".
void note_fusion(PipelinePlan& plan, std::size_t from, std::size_t into, const char* what = "") {
  plan.fusions += (plan.fusions.empty() ? "" : "; ") + plan.stages[from].stage->name() + what +
                  " into " + plan.stages[into].stage->name();
}

// Launch order on each strip's stream (a strip's stages run one after another there): the image
// stages first, in the config's order (a stage's producer comes before it), then the stages that
// only return results (nothing reads them), those that wait on more strips first (more passes:
// each later pass waits for every strip; a halo: a strip waits for its neighbours): a detection
// waits on other streams, and a histogram queued before it on the same stream would sit on its
// path; queued after, it runs beside the detection's merge.
std::vector<std::size_t> launch_order(const std::vector<StagePlan>& plans) {
  std::vector<std::size_t> order, leaves;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    (plans[i].stage->has_output() ? order : leaves).push_back(i);
  }
  auto waits = [&](std::size_t i) {
    return 2 * plans[i].stage->passes() + (plans[i].stage->halo() > 0 ? 1 : 0);
  };
  std::stable_sort(leaves.begin(), leaves.end(),
                   [&](std::size_t a, std::size_t b) { return waits(a) > waits(b); });
  order.insert(order.end(), leaves.begin(), leaves.end());
  return order;
}

// Fusion: a later stage over the same image that an earlier one computes in its own launches
// (histogram + stats: one pass).
void plan_absorb(PipelinePlan& plan, const std::vector<StageGpu*>& twins) {
  std::vector<StagePlan>& plans = plan.stages;
  for (std::size_t b = 0; b < plans.size(); ++b) {
    for (std::size_t a = 0; a < b && plans[b].absorbed_by < 0; ++a) {
      if (plans[a].absorbed_by >= 0 || plans[a].stage->input() != plans[b].stage->input()) {
        continue;
      }
      if (twins[a]->absorb(*twins[b])) {
        plans[b].absorbed_by = static_cast<int>(a);
        note_fusion(plan, b, a);
      }
    }
  }
}

// Producer fusion: a one-pass producer whose output only this stage reads, and nobody keeps
// (to_gray into the gaussian after it: the colour frame read once, no gray image written). Not
// over a frame read across the bus (zero-copy): a filter reads its input rows more than once
// (halos), the producer reads each byte once (measured on an H100: fused, zero-copy fell from 60%
// to 31% of the PCIe floor at 1080p).
void plan_producer_fusion(PipelinePlan& plan, MemoryStrategy memory,
                          const std::vector<StageGpu*>& twins) {
  std::vector<StagePlan>& plans = plan.stages;
  for (std::size_t b = 0; b < plans.size(); ++b) {
    const int p = plans[b].producer;
    if (p < 0 || (plans[p].producer < 0 && memory == MemoryStrategy::kZeroCopy) ||
        plans[b].absorbed_by >= 0 || plans[p].absorbed_by >= 0 || plans[p].fused_into >= 0 ||
        plans[p].keep || plans[p].stage->passes() != 1 ||
        readers(plans, plans[p].stage->output()) != 1) {
      continue;
    }
    if (twins[b]->fuse_producer(*plans[p].stage)) {
      plans[p].fused_into = static_cast<int>(b);
      plans[b].reads = plans[p].reads;
      plans[b].producer = plans[p].producer;
      note_fusion(plan, static_cast<std::size_t>(p), b);
    }
  }
}

// Maximum feeding: a launched producer gathers its output's maximum for a reader that uses it
// (harris into the detection: the detection's pass over the response for its maximum goes).
void plan_max_feed(PipelinePlan& plan, const std::vector<StageGpu*>& twins) {
  std::vector<StagePlan>& plans = plan.stages;
  for (std::size_t b = 0; b < plans.size(); ++b) {
    const int p = plans[b].producer;
    if (p < 0 || !plans[b].launched() || !plans[p].launched() || !twins[b]->wants_maximum() ||
        !twins[p]->feed_maximum(*twins[b])) {
      continue;
    }
    plans[b].max_fed = true;
    note_fusion(plan, static_cast<std::size_t>(p), b, "'s maximum");
  }
}

// Which stages may run beside the others: result-only stages of one pass and no halo that some
// other launched stage follows (from the same input or later), so there is work to overlap.
// docs/decisions/006-beside-strips.md. Not a stage reading managed memory (the frame, or an image
// asked for): that memory is attached to the frame's main stream, and a kernel on another stream
// reading it is undefined where the device has no concurrent managed access (Jetson;
// compute-sanitizer memcheck reports it on an H100 too).
void plan_beside(PipelinePlan& plan, MemoryStrategy memory) {
  std::vector<StagePlan>& plans = plan.stages;
  auto reads_managed = [&](std::size_t i) {
    const int p = plans[i].producer;
    return memory == MemoryStrategy::kManaged && (p < 0 || plans[p].keep);
  };
  auto candidate = [&](std::size_t i) {
    const Stage& s = *plans[i].stage;
    return plans[i].launched() && !s.has_output() && s.passes() == 1 && s.halo() == 0;
  };
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!candidate(i) || reads_managed(i)) continue;
    for (std::size_t j = 0; j < plans.size(); ++j) {
      if (j != i && plans[j].launched() && !candidate(j) &&
          plans[j].producer >= plans[i].producer) {
        plans[i].beside = true;
        break;
      }
    }
  }
  for (const StagePlan& sp : plans) {
    if (sp.beside) plan.beside += (plan.beside.empty() ? "" : ", ") + sp.stage->name();
  }
}

}  // namespace

PipelinePlan plan_pipeline(const std::vector<const Stage*>& stages,
                           const std::vector<std::string>& keep, MemoryStrategy memory,
                           const std::vector<StageGpu*>& twins) {
  if (twins.size() != stages.size()) throw Error("plan_pipeline: one twin per stage");
  PipelinePlan plan;
  std::map<std::string, int> writer;  // so far, in config order
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const Stage& s = *stages[i];
    if (twins[i] == nullptr) throw Error(s.label() + ": no GPU implementation");
    StagePlan sp;
    sp.stage = &s;
    sp.reads = s.input();
    auto it = writer.find(s.input());
    sp.producer = it == writer.end() ? -1 : it->second;
    if (s.has_output()) {
      writer[s.output()] = static_cast<int>(i);
      sp.keep = std::find(keep.begin(), keep.end(), s.output()) != keep.end();
    }
    plan.stages.push_back(sp);
  }
  plan.writer = std::move(writer);
  plan.order = launch_order(plan.stages);
  plan_absorb(plan, twins);
  plan_producer_fusion(plan, memory, twins);
  plan_max_feed(plan, twins);
  plan_beside(plan, memory);
  for (const std::size_t i : plan.order) {  // producers first
    const int p = plan.stages[i].producer;
    plan.stages[i].skew = (p < 0 ? 0 : plan.stages[p].skew) + plan.stages[i].stage->halo();
  }
  return plan;
}

PipelinePlan plan_config(const PipelineConfig& cfg, const std::vector<std::string>& keep,
                         MemoryStrategy memory) {
  std::vector<const Stage*> stages;
  std::vector<std::unique_ptr<StageGpu>> probes;
  std::vector<StageGpu*> twins;
  for (const auto& s : cfg.stages) {
    stages.push_back(s.get());
    probes.push_back(s->make_gpu());
    twins.push_back(probes.back().get());
  }
  return plan_pipeline(stages, keep, memory, twins);
}

void apply_fusions(const PipelinePlan& plan, const std::vector<StageGpu*>& twins) {
  const std::vector<StagePlan>& plans = plan.stages;
  auto differs = [](const StagePlan& sp) {
    return Error(sp.stage->label() + ": fusion differs between frame slots");
  };
  for (std::size_t b = 0; b < plans.size(); ++b) {
    if (twins[b] == nullptr) throw Error(plans[b].stage->label() + ": no GPU implementation");
  }
  for (std::size_t b = 0; b < plans.size(); ++b) {
    const int a = plans[b].absorbed_by;
    if (a >= 0 && !twins[a]->absorb(*twins[b])) throw differs(plans[b]);
  }
  for (std::size_t p = 0; p < plans.size(); ++p) {
    const int b = plans[p].fused_into;
    if (b >= 0 && !twins[b]->fuse_producer(*plans[p].stage)) throw differs(plans[b]);
  }
  for (std::size_t b = 0; b < plans.size(); ++b) {
    if (!plans[b].max_fed) continue;
    if (!twins[plans[b].producer]->feed_maximum(*twins[b])) throw differs(plans[b]);
    twins[b]->set_maximum_fed();
  }
}

RowRanges rows_read(int y0, int y1, int halo, int h, bool wraps) {
  const int lo = y0 - halo, hi = y1 + halo;
  if (hi - lo >= h) return {0, h, 0, 0};
  RowRanges r{std::max(0, lo), std::min(h, hi), 0, 0};
  if (!wraps) return r;
  if (lo < 0) r.b0 = h + lo, r.b1 = h;
  if (hi > h) r.b0 = 0, r.b1 = hi - h;
  return r;
}

// Strips of a frame: `chunks`, fewer where a strip would hold under min_strip_mb MiB (each strip
// copy costs the copy engine a start-up: on an H100 the four strips of a 1080p frame cross the
// bus in ~150 µs against ~124 µs for one copy of the whole frame).
int strips_for(const ExecSettings& s, std::size_t frame_bytes) {
  if (s.memory != MemoryStrategy::kPinnedChunked || s.min_strip_mb <= 0) return s.chunks;
  const std::size_t fit = frame_bytes / (static_cast<std::size_t>(s.min_strip_mb) << 20);
  return static_cast<int>(std::clamp<std::size_t>(fit, 1, static_cast<std::size_t>(s.chunks)));
}

namespace {

// How many of the frame's first strips cross the bus in one copy (strip_copies): 1 = a copy per
// strip. Only where every copy is on one stream (the copy stream, or the single stream), so that a
// strip's stages never skip the wait for a copy issued on another strip's stream.
int first_copy_strips(const ExecSettings& s, int strips) {
  const int copies = s.strip_copies;
  if (s.memory != MemoryStrategy::kPinnedChunked || copies <= 0 || copies >= strips) return 1;
  if (!s.copy_streams() && s.strip_streams() > 0) return 1;
  return strips - copies + 1;
}

// Whether the frame's last strip is deferred: its passes queued after every other strip's, behind
// one join of the other strip streams, so that on its stream each kernel follows the one before it
// with no wait on another stream between them. Where the strips land in row order on the copy
// stream (pinned-chunked), and only where no other strip reads rows of a stage's last strip (a
// stage that wraps; strips shorter than the skew). docs/decisions/008-deferred-last-strip.md.
bool defers_last(const PipelinePlan& plan, const ExecSettings& s, const FramePlan& f) {
  if (f.strips < 2 || !s.copy_streams()) return false;
  const int last = f.strips - 1;
  const std::vector<std::vector<int>>& sb = f.stage_bounds;
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const StagePlan& sp = plan.stages[i];
    if (sp.producer < 0 || !sp.launched()) continue;
    const std::vector<int>& pb = sb[sp.producer];
    for (int k = 0; k < last; ++k) {
      const RowRanges need =
          rows_read(sb[i][k], sb[i][k + 1], sp.stage->halo(), f.height, sp.stage->wraps());
      if (need.overlaps(pb[last], pb[last + 1])) return false;
    }
  }
  return true;
}

}  // namespace

FramePlan plan_frame(const PipelinePlan& plan, const ExecSettings& s, std::vector<int> bounds) {
  FramePlan f;
  f.bounds = std::move(bounds);
  f.strips = static_cast<int>(f.bounds.size()) - 1;
  f.height = f.bounds.back();
  for (const StagePlan& sp : plan.stages) {
    f.stage_bounds.push_back(skewed_bounds(f.bounds, sp.skew));
  }
  f.first_copy = first_copy_strips(s, f.strips);
  // Where the strips land in row order on the copy stream, the last strip's pass ends last and a
  // merge follows it as a kernel after a kernel on one stream, instead of on the main stream after
  // a wait for every strip (H100, 1080p K = 4 single frames: ~1 µs sooner).
  f.merges_on_last = f.strips > 1 && s.copy_streams();
  f.defer_last = defers_last(plan, s, f);
  f.early_trigger = f.strips == 1;
  return f;
}

std::vector<int> producer_strips(const PipelinePlan& plan, const FramePlan& f, std::size_t i,
                                 int k) {
  const StagePlan& sp = plan.stages[i];
  const std::vector<int>& own = f.stage_bounds[i];
  const RowRanges need =
      rows_read(own[k], own[k + 1], sp.stage->halo(), f.height, sp.stage->wraps());
  const std::vector<int>& pb = sp.producer < 0 ? f.bounds : f.stage_bounds[sp.producer];
  std::vector<int> js;
  for (int j = 0; j < f.strips; ++j) {
    if (need.overlaps(pb[j], pb[j + 1])) js.push_back(j);
  }
  return js;
}

}  // namespace jetpipe
