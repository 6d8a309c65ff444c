// SPDX-License-Identifier: MIT
// config/default.yaml for ONE 1920×1080 BGR frame already on the device, kernels only, as the CUDA
// executor plans and queues it (tools/bench/planned_chain.h: the planner's fusions and side-stream
// stages, the scheduler's launches for a frame of one strip; today gray fused into the gaussian,
// histogram + stats beside harris and the detection, harris gathering the detection's maximum),
// as plain launches and as a CUDA graph captured once and replayed; median of the runs. Target:
// ≤ 30 µs of GPU time. Each is timed from an idle stream (the host's launch or cudaGraphLaunch
// falls between the start event and the GPU's first kernel) and as GPU time alone (-gpu rows:
// Bench::time_gpu_us); the graph also back to back; both also with programmatic dependent launch
// off. The chain's results are checked once against the host executor's (the CPU twins) on the
// same frame (MISMATCH in the note). Also each stage alone (plain launches of the launchers), the
// graph of the chain's first n kernels for each n (what each kernel adds to the replay, all on one
// stream), and the floor: the critical path's launches as empty kernels.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda_check.h"
#include "kernels/detect.h"
#include "kernels/filters/staged_kernel.cuh"
#include "kernels/gaussian.h"
#include "kernels/harris.h"
#include "kernels/harris/tiled_kernel.cuh"
#include "kernels/histogram.h"
#include "kernels/launch/pdl_launch.cuh"
#include "kernels/stats.h"
#include "kernels/texture.h"
#include "kernels/to_gray.h"
#include "pipeline/executor.h"
#include "pipeline/results_json.h"
#include "tools/bench/bench.h"
#include "tools/bench/planned_chain.h"

#if JP_BLOCK_TRACE
namespace jetpipe {
void block_trace_setup_gaussian(BlockTraceRec* buf, unsigned* n, unsigned cap);
void block_trace_setup_harris(BlockTraceRec* buf, unsigned* n, unsigned cap);
void block_trace_setup_histogram(BlockTraceRec* buf, unsigned* n, unsigned cap);
void block_trace_setup_detect(BlockTraceRec* buf, unsigned* n, unsigned cap);
}  // namespace jetpipe
#endif

namespace jetpipe::bench {

namespace {

HostImage download(const ImageView& d) {
  HostImage h(d.width, d.height, d.format);
  JP_CUDA(cudaMemcpy2D(h.view().data, h.view().pitch, d.data, d.pitch, d.row_bytes(),
                       static_cast<std::size_t>(d.height), cudaMemcpyDeviceToHost));
  return h;
}

void upload(const ImageView& h, const ImageView& d) {
  JP_CUDA(cudaMemcpy2D(d.data, d.pitch, h.data, h.pitch, h.row_bytes(),
                       static_cast<std::size_t>(h.height), cudaMemcpyHostToDevice));
}

bool same_pixels(const ImageView& a, const ImageView& b) {
  for (int y = 0; y < a.height; ++y) {
    if (std::memcmp(a.row<std::uint8_t>(y), b.row<std::uint8_t>(y), a.row_bytes()) != 0) {
      return false;
    }
  }
  return true;
}

struct GraphTime {
  double us = 0;       // a replay from an idle stream, the host's cudaGraphLaunch included
  double gpu_us = 0;   // the replay's GPU time alone (Bench::time_gpu_us)
  double back_us = 0;  // per replay, kBackToBack replays queued back to back
  std::size_t nodes = 0;
};
constexpr int kBackToBack = 10;

// `enqueue` (work on `st`, which may fork to other streams and join back) captured into a graph and
// instantiated; both destroyed with the object.
class CapturedGraph {
 public:
  CapturedGraph(cudaStream_t st, const std::function<void()>& enqueue) {
    JP_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(st, &graph_);
      if (graph_) cudaGraphDestroy(graph_);
      throw;
    }
    JP_CUDA(cudaStreamEndCapture(st, &graph_));
    if (const cudaError_t e = cudaGraphInstantiate(&exec_, graph_, 0); e != cudaSuccess) {
      cudaGraphDestroy(graph_);
      JP_CUDA(e);
    }
  }
  ~CapturedGraph() {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  cudaGraph_t graph() const { return graph_; }
  cudaGraphExec_t exec() const { return exec_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Captures `enqueue` (work on b.stream()) into a graph once and times its replays.
GraphTime time_graph(Bench& b, const std::function<void()>& enqueue) {
  const cudaStream_t st = b.stream();
  const CapturedGraph g(st, enqueue);
  GraphTime t;
  JP_CUDA(cudaGraphGetNodes(g.graph(), nullptr, &t.nodes));
  JP_CUDA(cudaGraphUpload(g.exec(), st));
  t.us = b.time_us([&](int) { JP_CUDA(cudaGraphLaunch(g.exec(), st)); });
  t.gpu_us = b.time_gpu_us([&](int) { JP_CUDA(cudaGraphLaunch(g.exec(), st)); });
  t.back_us = b.time_gpu_us([&](int) {
    for (int i = 0; i < kBackToBack; ++i) JP_CUDA(cudaGraphLaunch(g.exec(), st));
  }) / kBackToBack;
  return t;
}

// An empty kernel with the chain's launch handshake (programmatic dependent launch, the trigger at
// its start): what a node of the chain costs before any work. With `syncs` > 0 it also passes that
// many grid-wide barriers (a cooperative launch only): what folding the next kernel into this one,
// behind a barrier, would cost instead of a node.
__global__ void empty_kernel(bool early, int syncs) {
  if (early) dev::pdl_trigger();
  dev::pdl_wait();
  for (int i = 0; i < syncs; ++i) cooperative_groups::this_grid().sync();
}

#if JP_BLOCK_TRACE
// The chain's per-block timeline (kernels/block/block_trace.cuh) over 10 replays of its graph,
// written as CSV to $JP_TRACE_OUT.
void trace_chain(Bench& b, const std::function<void()>& enqueue, const std::string& suffix) {
  const char* out = std::getenv("JP_TRACE_OUT");
  if (out == nullptr) return;
  const std::string path_s = out + suffix;
  const char* path = path_s.c_str();
  constexpr unsigned kCap = 1u << 16;
  BlockTraceRec* buf = nullptr;
  unsigned* n = nullptr;
  JP_CUDA(cudaMalloc(&buf, kCap * sizeof(BlockTraceRec)));
  JP_CUDA(cudaMalloc(&n, sizeof(unsigned)));
  auto setup = [&](BlockTraceRec* p) {
    block_trace_setup_gaussian(p, n, kCap);
    block_trace_setup_harris(p, n, kCap);
    block_trace_setup_histogram(p, n, kCap);
    block_trace_setup_detect(p, n, kCap);
  };
  const cudaStream_t st = b.stream();
  const CapturedGraph g(st, enqueue);
  const cudaGraphExec_t exec = g.exec();
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    std::fprintf(stderr, "jetpipe-bench: cannot write the block trace to %s\n", path);
    cudaFree(buf);
    cudaFree(n);
    return;
  }
  setup(buf);
  JP_CUDA(cudaDeviceSynchronize());
  for (int i = 0; i < 20; ++i) JP_CUDA(cudaGraphLaunch(exec, st));
  JP_CUDA(cudaStreamSynchronize(st));
  std::fprintf(f, "replay,kernel,block,smid,t0,t1,t2\n");
  std::vector<BlockTraceRec> host(kCap);
  for (int r = 0; r < 10; ++r) {
    JP_CUDA(cudaMemsetAsync(n, 0, sizeof(unsigned), st));
    JP_CUDA(cudaStreamSynchronize(st));
    JP_CUDA(cudaGraphLaunch(exec, st));
    JP_CUDA(cudaStreamSynchronize(st));
    unsigned count = 0;
    JP_CUDA(cudaMemcpy(&count, n, sizeof count, cudaMemcpyDeviceToHost));
    count = std::min(count, kCap);
    JP_CUDA(cudaMemcpy(host.data(), buf, count * sizeof(BlockTraceRec), cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < count; ++i) {
      const BlockTraceRec& e = host[i];
      std::fprintf(f, "%d,%u,%u,%u,%llu,%llu,%llu\n", r, e.kernel, e.block, e.smid,
                   static_cast<unsigned long long>(e.t0), static_cast<unsigned long long>(e.t1),
                   static_cast<unsigned long long>(e.t2));
    }
  }
  std::fclose(f);
  setup(nullptr);
  JP_CUDA(cudaDeviceSynchronize());
  cudaFree(buf);
  cudaFree(n);
}
#endif

std::string fmt_us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", us);
  return buf;
}

}  // namespace

void bench_pipeline(Bench& b) {
  if (!b.wants("pipeline")) return;
  const Size s{1920, 1080};
  const int w = s.width, h = s.height;
  const cudaStream_t st = b.stream();

  // ---- Parameters (config/default.yaml)
  const GaussianParams gp = resolve_gaussian(5, 0, Border{});
  const HistogramParams hp;  // 256 bins over [0, 256)
  HarrisParams harris;
  harris.block_size = 3;
  harris.ksize = 3;
  harris.k = 0.04;
  DetectParams dp;
  dp.use_quality = true;
  dp.quality = 0.01;
  dp.nms_radius = 4;
  dp.max_detections = 500;

  // ---- The frame and every buffer, allocated once
  const HostImage frame = b.host_input(s, PixelFormat::kBgr8, Data::kPhoto);
  DeviceImage bgr(w, h, PixelFormat::kBgr8), gray(w, h, PixelFormat::kGray8),
      blur(w, h, PixelFormat::kGray8), response(w, h, PixelFormat::kF32);
  upload(frame.view(), bgr.view());
  const UniqueTexture gray_tex(gray.view(), gp.border);  // the stage would own it
  const FilterSource gray_src =
      gray_tex.valid() ? FilterSource(gray.view(), gray_tex) : FilterSource(gray.view());
  const UniqueTexture blur_tex(blur.view(), harris.border);
  const FilterSource blur_src =
      blur_tex.valid() ? FilterSource(blur.view(), blur_tex) : FilterSource(blur.view());
  DeviceBuffer hist_ws(
      std::max(histogram_workspace_bytes(), stats_workspace_bytes(PixelFormat::kGray8, h)));
  JP_CUDA(cudaMemset(hist_ws.get(), 0, hist_ws.bytes()));
  DeviceBuffer bins(256 * sizeof(std::uint64_t)), stats(sizeof(StatsAccum));
  DeviceBuffer det_ws(detect_workspace_bytes(dp, w, h)), det_out(detect_result_bytes(dp));
  JP_CUDA(detect_workspace_init(det_ws.get(), w, h, st));
  auto* det = det_out.get<DetectDeviceResult>();

  // ---- The CPU twin of to_gray alone (the chain fuses it away)
  HostImage want_gray(w, h, PixelFormat::kGray8);
  to_gray_ref(frame.view(), want_gray.view(), 0, h);

  // ---- The stages

  auto to_gray_step = [&] { JP_CUDA(launch_to_gray(bgr.view(), gray.view(), 0, h, st)); };
  auto gaussian_step = [&] {
    JP_CUDA(launch_gaussian(gp, gray_src, blur.view(), 0, h, LaunchContext{}, st));
  };
  // What the executor runs: to_gray fused into the gaussian (the colour frame read once).
  auto fused_step = [&] {
    JP_CUDA(launch_gaussian(gp, FilterSource(bgr.view()), blur.view(), 0, h, LaunchContext{}, st));
  };
  auto hist_stats_on = [&](cudaStream_t stream, const HistogramLaunchOptions& opt) {
    JP_CUDA(launch_histogram_stats(hp, blur.view(), bins.get<std::uint64_t>(),
                                   stats.get<StatsAccum>(), 0, h, hist_ws.get(), stream, opt));
  };
  auto hist_stats_step = [&] { hist_stats_on(st, HistogramLaunchOptions{}); };
  auto harris_step = [&] {
    JP_CUDA(launch_harris(harris, blur_src, response.view(), 0, h, LaunchContext{}, st));
  };
  auto detect_step = [&] {
    JP_CUDA(launch_detect(dp, response.view(), 0, h, det_ws.get(), det, LaunchContext{}, st));
  };
  // harris gathering the response's maximum for the detection (StageGpu::feed_maximum), which
  // then skips its own maximum kernel.
  auto harris_max_step = [&] {
    JP_CUDA(launch_harris_max(harris, blur_src, response.view(), 0, h,
                              detect_feed(det_ws.get(), w, h), LaunchContext{}, st));
  };
  auto candidates_step = [&] {
    JP_CUDA(launch_detect_candidates(dp, response.view(), 0, h, det_ws.get(), LaunchContext{}, st));
  };
  auto finish_step = [&] {
    JP_CUDA(launch_detect_finish(dp, response.view(), 0, h, det_ws.get(), det, st));
  };
  const std::vector<std::pair<const char*, std::function<void()>>> steps = {
      {"pipeline-to_gray", to_gray_step},      {"pipeline-gaussian5", gaussian_step},
      {"pipeline-gray+gaussian5", fused_step}, {"pipeline-hist+stats", hist_stats_step},
      {"pipeline-harris", harris_step},        {"pipeline-detect", detect_step}};
  const double stage_bytes[] = {3.0 * w * h, 1.0 * w * h, 3.0 * w * h,
                                1.0 * w * h, 1.0 * w * h, 4.0 * w * h};

  // ---- The chain as the executor plans and queues it (the config's own parameters), checked
  // once against the host executor (the CPU twins) on the same frame: every result and the blur
  // and response images, bit for bit.
  const std::string config = std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml";
  PlannedChain chain(config, frame.view());
  auto enqueue = [&] { chain.enqueue(st); };
  enqueue();
  JP_CUDA(cudaStreamSynchronize(st));
  std::string mismatch;
  to_gray_step();
  JP_CUDA(cudaStreamSynchronize(st));
  if (!same_pixels(download(gray.view()).view(), want_gray.view())) mismatch += " to_gray";
  const PipelineConfig host_cfg = load_config(config);
  const std::unique_ptr<Executor> host = make_executor(
      host_cfg, strategy_profile(MemoryStrategy::kHost, 1, 1, false), {"blur", "response"});
  Frame f;
  f.source = "bench";
  f.image = frame;
  host->submit(std::move(f));
  FrameRecord want;
  host->take(&want, true);
  auto results_json = [](const std::vector<std::pair<std::string, StageResult>>& rs) {
    std::string j;
    for (const auto& [name, r] : rs) j += name + ":" + result_to_json(r).dump() + ";";
    return j;
  };
  const std::string chain_results = results_json(chain.results());
  if (chain_results != results_json(want.results)) mismatch += " results";
  for (const char* name : {"blur", "response"}) {
    if (!same_pixels(download(chain.image(name)).view(), want.images.at(name).view())) {
      mismatch += std::string(" ") + name;
    }
  }
  const std::string check = mismatch.empty() ? "" : "  MISMATCH vs CPU twin:" + mismatch;

  // ---- Each stage alone
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double us = b.time_us([&](int) { steps[i].second(); });
    b.add({steps[i].first, "jetpipe", s.name(), "photo", us, stage_bytes[i], ""});
    b.add({steps[i].first, "jetpipe-gpu", s.name(), "photo",
           b.time_gpu_us([&](int) { steps[i].second(); }), stage_bytes[i], "GPU time alone"});
  }

  // ---- The chain: plain launches, then a captured graph replayed
  const double frame_bytes = 3.0 * w * h;
  const double us_plain = b.time_us([&](int) { enqueue(); });
  b.add({"pipeline", "jetpipe-launches", s.name(), "photo", us_plain, frame_bytes,
         "the executor's plan (" + chain.plan().fusions + "; beside: " + chain.plan().beside +
             "); kernels only" + check});
  b.add({"pipeline", "jetpipe-launches-gpu", s.name(), "photo",
         b.time_gpu_us([&](int) { enqueue(); }), frame_bytes,
         "as jetpipe-launches, GPU time alone (the host's launches hidden)"});

  // The graph with programmatic dependent launch between the kernels (kernels/block/pdl.cuh),
  // then without (side by side: what the overlap of each kernel's launch with the tail of the one
  // before saves); plain launches with it as well.
  const bool pdl_was = dev::pdl_enabled();
  for (bool pdl : {true, false}) {
    dev::set_pdl_enabled(pdl);
    if (!pdl) {
      const double us_plain_off = b.time_us([&](int) { enqueue(); });
      b.add({"pipeline", "jetpipe-launches-nopdl", s.name(), "photo", us_plain_off, frame_bytes,
             "as jetpipe-launches, programmatic dependent launch off"});
    }
    const GraphTime g = time_graph(b, enqueue);
    // The replays must give the same results.
    JP_CUDA(cudaStreamSynchronize(st));
    const std::string graph_check = results_json(chain.results()) == chain_results
                                        ? ""
                                        : "  MISMATCH: graph replay differs from plain launches";
    const std::string impl = pdl ? "jetpipe-graph" : "jetpipe-graph-nopdl";
    b.add({"pipeline", impl, s.name(), "photo", g.us, frame_bytes,
           std::to_string(g.nodes) + " nodes, from an idle stream (the host's launch included)" +
               check + graph_check});
    b.add({"pipeline", impl + "-gpu", s.name(), "photo", g.gpu_us, frame_bytes,
           "GPU time of one replay (launch latency hidden), target <= 30 us"});
    b.add({"pipeline", impl + "-back-to-back", s.name(), "photo", g.back_us, frame_bytes,
           "per replay, " + std::to_string(kBackToBack) + " replays queued back to back"});
  }
  dev::set_pdl_enabled(pdl_was);
#if JP_BLOCK_TRACE
  trace_chain(b, enqueue, "");
  trace_chain(b, harris_max_step, ".harris");
  {
    int blocks = 0;
    JP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, dev::harris_tiled_kernel<dev::kHtRows, dev::kHtThreads>, dev::kHtThreads, 0));
    cudaFuncAttributes fa{};
    JP_CUDA(cudaFuncGetAttributes(&fa, dev::harris_tiled_kernel<dev::kHtRows, dev::kHtThreads>));
    std::printf("harris_tiled: occupancy %d blocks/SM, %d registers, %zu static smem\n", blocks,
                fa.numRegs, fa.sharedSizeBytes);
  }
#endif

  // ---- Several frames of this size at once (several inputs, issue 41): one graph holding n chains
  // side by side, one replay for the batch, against n graphs of one chain each replayed on n
  // streams, the frames in flight as the CUDA executor runs them. Wall time of 20 rounds after a
  // warm-up, per frame, the host's launches included (what a batch would save); and the batch's
  // GPU time alone. Every chain's results are checked against the CPU twin's afterwards.
  if (b.wants("pipeline-batch")) {
    constexpr int kRounds = 20;
    std::vector<std::unique_ptr<PlannedChain>> chains;
    std::vector<CudaStream> lanes;
    std::vector<CudaEvent> joins;
    CudaEvent fork(false);
    for (int n : {1, 2, 4, 8}) {
      while (static_cast<int>(chains.size()) < n) {
        chains.push_back(std::make_unique<PlannedChain>(config, frame.view()));
        lanes.emplace_back();
        joins.emplace_back(false);
      }
      const std::string batch_note = std::to_string(n) + " frames of one size";
      // One graph: the chains forked from the capture stream, joined back.
      const CapturedGraph batch(st, [&] {
        JP_CUDA(cudaEventRecord(fork.get(), st));
        for (int i = 0; i < n; ++i) {
          JP_CUDA(cudaStreamWaitEvent(lanes[i].get(), fork.get(), 0));
          chains[i]->enqueue(lanes[i].get());
          JP_CUDA(cudaEventRecord(joins[i].get(), lanes[i].get()));
          JP_CUDA(cudaStreamWaitEvent(st, joins[i].get(), 0));
        }
      });
      JP_CUDA(cudaGraphUpload(batch.exec(), st));
      const double batch_us = b.time_host_us([&] {
        for (int r = 0; r < kRounds; ++r) JP_CUDA(cudaGraphLaunch(batch.exec(), st));
        JP_CUDA(cudaStreamSynchronize(st));
      });
      // n graphs, one per frame, each replayed on its own stream (the executor's slots).
      std::vector<std::unique_ptr<CapturedGraph>> singles;
      for (int i = 0; i < n; ++i) {
        singles.push_back(std::make_unique<CapturedGraph>(
            lanes[i].get(), [&, i] { chains[i]->enqueue(lanes[i].get()); }));
        JP_CUDA(cudaGraphUpload(singles[i]->exec(), lanes[i].get()));
      }
      const double flight_us = b.time_host_us([&] {
        for (int r = 0; r < kRounds; ++r) {
          for (int i = 0; i < n; ++i) JP_CUDA(cudaGraphLaunch(singles[i]->exec(), lanes[i].get()));
        }
        for (int i = 0; i < n; ++i) JP_CUDA(cudaStreamSynchronize(lanes[i].get()));
      });
      std::string batch_check;
      for (int i = 0; i < n; ++i) {
        if (results_json(chains[i]->results()) != chain_results) {
          batch_check = "  MISMATCH: frame " + std::to_string(i) + " differs from the CPU twin";
        }
      }
      const double frames = static_cast<double>(kRounds) * n;
      b.add({"pipeline-batch-" + std::to_string(n), "graph-of-n", s.name(), "photo",
             batch_us / frames, frame_bytes,
             "per frame: one graph of " + batch_note + ", " + std::to_string(kRounds) +
                 " replays back to back, wall time to the last" + batch_check});
      b.add({"pipeline-batch-" + std::to_string(n), "n-graphs-in-flight", s.name(), "photo",
             flight_us / frames, frame_bytes,
             "per frame: " + batch_note + " as n graphs on n streams, " + std::to_string(kRounds) +
                 " rounds, wall time to the last" + batch_check});
      b.add({"pipeline-batch-" + std::to_string(n), "graph-of-n-gpu", s.name(), "photo",
             b.time_gpu_us([&](int) { JP_CUDA(cudaGraphLaunch(batch.exec(), st)); }) / n,
             frame_bytes, "per frame: one replay of the batch's graph, GPU time alone"});
    }
  }

  // ---- What each kernel adds to the graph: the graph of the chain's first n kernels, for each n
  // (the marginal cost of a kernel in the replay, which the stage-alone times above, each with its
  // own launch and ramp, do not show). The detection's kernels one by one.
  {
    const std::vector<std::pair<const char*, std::function<void()>>> kernels = {
        {"gray+gaussian5", fused_step},
        {"hist+stats", hist_stats_step},
        {"harris (+ max)", harris_max_step},
        {"detect-candidates", candidates_step},
        {"detect-finish", finish_step}};
    double before = 0, before_gpu = 0;
    for (std::size_t n = 1; n <= kernels.size(); ++n) {
      // A prefix ending inside the detection leaves its workspace mid-frame: start each prefix
      // from a clean one (the finish resets it).
      JP_CUDA(detect_workspace_init(det_ws.get(), w, h, st));
      const GraphTime g = time_graph(b, [&] {
        for (std::size_t i = 0; i < n; ++i) kernels[i].second();
      });
      b.add({std::string("pipeline-prefix-") + std::to_string(n), "jetpipe-graph", s.name(),
             "photo", g.us, frame_bytes,
             std::string("+ ") + kernels[n - 1].first + ": +" + fmt_us(g.us - before) + " us"});
      b.add({std::string("pipeline-prefix-") + std::to_string(n), "jetpipe-graph-gpu", s.name(),
             "photo", g.gpu_us, frame_bytes,
             std::string("+ ") + kernels[n - 1].first + ": +" + fmt_us(g.gpu_us - before_gpu) +
                 " us (GPU time alone)"});
      before = g.us;
      before_gpu = g.gpu_us;
    }
    JP_CUDA(detect_workspace_init(det_ws.get(), w, h, st));
  }

  // ---- The floor: the chain's four launches on its critical path (gray + gaussian, harris, the
  // candidates, the finish) as empty kernels of the same grids, one graph node each: what the
  // graph's start and its node boundaries cost before any work.
  {
    // The fused gray + gaussian's grid: the staged kernel's (kernels/filters/staged_kernel.cuh), a
    // block of kStagedThreads per 480 output columns and 8 · staged_rows rows (272 at 1080p).
    const unsigned blocks_gauss =
        dev::div_up(w, dev::kFastWarpOut) *
        dev::div_up(h, dev::kStagedWarps * dev::current_filter_policy().staged_rows);
    const unsigned tiles_harris = dev::div_up(w, dev::kHtTile) * dev::div_up(h, dev::kHtRows);
    const unsigned tiles_detect = dev::div_up(w, 64) * dev::div_up(h, 32);  // detect.cu's 64 × 32
    const bool early = LaunchContext{}.early_trigger;
    const std::pair<unsigned, unsigned> shapes[] = {
        {blocks_gauss, dev::kStagedThreads},
        {tiles_harris, dev::kHtThreads},
        {tiles_detect, 256},
        {static_cast<unsigned>(dev::device_info().sm_count), 256}};
    for (int n : {1, 2, 3, 4}) {
      const GraphTime g = time_graph(b, [&] {
        for (int i = 0; i < n; ++i) {
          JP_CUDA(
              dev::launch_pdl(empty_kernel, shapes[i].first, shapes[i].second, 0, st, early, 0));
        }
      });
      b.add({std::string("pipeline-floor-") + std::to_string(n), "jetpipe-graph-gpu", s.name(),
             "photo", g.gpu_us, frame_bytes,
             std::to_string(n) + " empty kernel(s) of the chain's grids (GPU time alone)"});
    }
    // The harris grid a cooperative launch with 0, 1 or 2 grid-wide barriers, in place of the
    // candidates (then the finish too) as nodes: a barrier against a node boundary. Only where the
    // grid can be co-resident (not at 1080p on a 16-SM Orin).
    int per_sm = 0;
    JP_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, empty_kernel,
                                                          static_cast<int>(dev::kHtThreads), 0));
    const long long coresident = static_cast<long long>(per_sm) * dev::device_info().sm_count;
    for (int syncs : {0, 1, 2}) {
      if (tiles_harris > coresident) break;
      const GraphTime g = time_graph(b, [&] {
        JP_CUDA(dev::launch_pdl(empty_kernel, shapes[0].first, shapes[0].second, 0, st, early, 0));
        JP_CUDA(dev::launch_cooperative_pdl(empty_kernel, shapes[1].first, shapes[1].second, 0, st,
                                            early, syncs));
        if (syncs < 2) {
          JP_CUDA(dev::launch_cooperative_pdl(empty_kernel, shapes[3].first, shapes[3].second, 0,
                                              st, early, 0));
        }
      });
      b.add({std::string("pipeline-floor-sync") + std::to_string(syncs), "jetpipe-graph-gpu",
             s.name(), "photo", g.gpu_us, frame_bytes,
             "gaussian, harris' grid cooperative with " + std::to_string(syncs) + " barrier(s)" +
                 (syncs < 2 ? ", the finish's" : "") + " (empty kernels, GPU time alone)"});
    }
  }
}

}  // namespace jetpipe::bench
