// SPDX-License-Identifier: MIT
// detect: jetpipe's NMS + shared-memory compaction + finish beside CUB DeviceSelect::If (score >
// threshold, the same threshold, the same buffer) on two F32 responses per size:
//   harris  cornerHarris (harris_ref, block 3, ksize 3) of a photo, tiled to the size; the default
//           config's detect: quality 0.01, nms 4, max 500 (sparse candidates)
//   noise   uniform [0, 1) noise, threshold 0.5, nms 1, max 500 (dense: ~1/9 of the pixels are
//           local maxima, beyond the candidate buffer at no size)
//   flat    a constant response, threshold 0.5, nms 1, max 500: every pixel is a candidate, beyond
//           the candidate buffer, so the finish reads the rows again (its plateau finish)
// Rows: "detect" = launch_detect (the whole result: max for quality, NMS + compaction, finish);
// "detect finishN" = the same with the finish's grid at N blocks an SM (DetectLaunchOptions);
// "detect-max" = the maximum alone (quality); "detect-nms+compact" = the candidates kernel alone,
// threshold known: the part that compares with a select. CUB's select-if writes the selected floats
// and their count. bytes = response bytes read once. Each case is checked once against the CPU
// twin: a wrong result prints MISMATCH in its row's note, beside the candidate count.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cub/device/device_select.cuh>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda_check.h"
#include "kernels/detect.h"
#include "kernels/harris.h"
#include "tools/bench/bench.h"

namespace jetpipe::bench {

namespace {

struct Above {
  float thresh;
  __device__ bool operator()(float v) const { return v > thresh; }
};

// Harris response of the photo (at most 1920 × 1080 of it), tiled to the size.
HostImage harris_response(Bench& b, const Size& s) {
  const Size tile{std::min(s.width, 1920), std::min(s.height, 1080)};
  const HostImage gray = b.host_input(tile, PixelFormat::kGray8, Data::kPhoto);
  HostImage r(tile.width, tile.height, PixelFormat::kF32);
  HarrisParams hp;
  hp.block_size = 3;
  hp.ksize = 3;
  hp.k = 0.04;
  harris_ref(hp, gray.view(), r.view(), 0, tile.height);
  HostImage out(s.width, s.height, PixelFormat::kF32);
  for (int y = 0; y < s.height; ++y) {
    const float* src = r.view().row<float>(y % tile.height);
    float* dst = out.view().row<float>(y);
    for (int x = 0; x < s.width; ++x) dst[x] = src[x % tile.width];
  }
  return out;
}

HostImage noise_response(const Size& s) {
  HostImage out(s.width, s.height, PixelFormat::kF32);
  std::mt19937 rng(777);
  std::uniform_real_distribution<float> d(0.f, 1.f);
  for (int y = 0; y < s.height; ++y) {
    float* dst = out.view().row<float>(y);
    for (int x = 0; x < s.width; ++x) dst[x] = d(rng);
  }
  return out;
}

HostImage flat_response(const Size& s) {
  HostImage out(s.width, s.height, PixelFormat::kF32);
  for (int y = 0; y < s.height; ++y) std::fill_n(out.view().row<float>(y), s.width, 1.0f);
  return out;
}

// Contiguous device copies (pitch = row bytes: CUB reads the same buffers), enough to rotate past
// L2.
std::vector<DeviceImage> upload_rotating(Bench& b, const HostImage& h) {
  const ImageView v = h.view();
  const double bytes = static_cast<double>(v.row_bytes()) * v.height;
  const int copies =
      std::max(1, std::min(16, static_cast<int>(3.0 * b.props().l2CacheSize / bytes) + 1));
  std::vector<DeviceImage> out;
  for (int i = 0; i < copies; ++i) {
    out.emplace_back(v.width, v.height, v.format, v.row_bytes());
    const ImageView& d = out.back().view();
    JP_CUDA(cudaMemcpy2D(d.data, d.pitch, v.data, v.pitch, v.row_bytes(),
                         static_cast<std::size_t>(v.height), cudaMemcpyHostToDevice));
  }
  return out;
}

// Median µs of launch(rep) alone, setup(rep) enqueued before the timed span (Bench::time_us's
// method: warm-up runs first, then CUDA events around the launch on the bench stream).
double time_with_setup(Bench& b, const std::function<void(int)>& setup,
                       const std::function<void(int)>& launch) {
  const cudaStream_t st = b.stream();
  cudaEvent_t start = nullptr, stop = nullptr;
  JP_CUDA(cudaEventCreate(&start));
  JP_CUDA(cudaEventCreate(&stop));
  const int warmup = 3, reps = 25;
  std::vector<double> t;
  for (int i = 0; i < warmup + reps; ++i) {
    setup(i);
    JP_CUDA(cudaEventRecord(start, st));
    launch(i);
    JP_CUDA(cudaEventRecord(stop, st));
    JP_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    JP_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (i >= warmup) t.push_back(ms * 1000.0);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

bool same(const DetectResult& a, const DetectResult& b) {
  if (a.count != b.count || a.overflow != b.overflow || a.points.size() != b.points.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    const Detection &p = a.points[i], &q = b.points[i];
    if (p.x != q.x || p.y != q.y || std::memcmp(&p.score, &q.score, sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

void run_case(Bench& b, const Size& s, const char* data, const HostImage& host,
              const DetectParams& p) {
  const ImageView hv = host.view();
  const std::vector<DeviceImage> in = upload_rotating(b, host);
  const int n = static_cast<int>(in.size());
  const cudaStream_t st = b.stream();
  const double bytes = static_cast<double>(hv.row_bytes()) * hv.height;

  // The twin, and the threshold it used (CUB selects with the same one).
  const float thresh =
      p.use_quality
          ? static_cast<float>(p.quality * static_cast<double>(detect_max_ref(hv, 0, hv.height)))
          : static_cast<float>(p.threshold);
  std::vector<Detection> cands;
  detect_candidates_ref(p, thresh, hv, 0, hv.height, &cands);
  const std::size_t n_cands = cands.size();
  const DetectResult cpu = detect_finish(std::move(cands), p.max_detections);

  DeviceBuffer ws(detect_workspace_bytes(p, s.width, s.height));
  DeviceBuffer out(detect_result_bytes(p));
  JP_CUDA(detect_workspace_init(ws.get(), s.width, s.height, st));
  auto* res = out.get<DetectDeviceResult>();

  // One untimed detection of the first frame with q and o, its result (over a poisoned buffer)
  // against the twin's.
  std::vector<unsigned char> back(out.bytes());
  const auto matches_twin = [&](const DetectParams& q, const DetectLaunchOptions& o) {
    JP_CUDA(cudaMemsetAsync(out.get(), 0xA5, out.bytes(), st));
    JP_CUDA(launch_detect(q, in[0].view(), 0, s.height, ws.get(), res, LaunchContext{}, st, o));
    JP_CUDA(cudaMemcpyAsync(back.data(), out.get(), back.size(), cudaMemcpyDeviceToHost, st));
    JP_CUDA(cudaStreamSynchronize(st));
    const auto* hr = reinterpret_cast<const DetectDeviceResult*>(back.data());
    return hr->count <= static_cast<std::uint64_t>(q.max_detections) &&
           same(to_detect_result(hr), cpu);
  };
  const bool ok = matches_twin(p, DetectLaunchOptions{});
  std::string note = std::to_string(n_cands) + " candidates, " + std::to_string(cpu.count) +
                     " kept (nms " + std::to_string(p.nms_radius) + ")";
  if (!ok) note += "  MISMATCH vs CPU twin";

  const double us_detect = b.time_us([&](int rep) {
    JP_CUDA(launch_detect(p, in[rep % n].view(), 0, s.height, ws.get(), res, LaunchContext{}, st));
  });
  b.add({"detect", "jetpipe", s.name(), data, us_detect, bytes, note});

  // The finish's cooperative grid at 1 and 2 blocks an SM whatever the policy says (the policy's
  // value is one of them: kernels/detect/tuning.h), each result checked against the twin.
  for (const int per_sm : {1, 2}) {
    DetectLaunchOptions o;
    o.finish_blocks_per_sm = per_sm;
    const bool same_o = matches_twin(p, o);
    const double us = b.time_us([&](int rep) {
      JP_CUDA(
          launch_detect(p, in[rep % n].view(), 0, s.height, ws.get(), res, LaunchContext{}, st, o));
    });
    const std::string blocks = std::to_string(per_sm);
    b.add(
        {"detect finish" + blocks, "jetpipe", s.name(), data, us, bytes,
         "the finish at " + blocks + " block(s) an SM" + (same_o ? "" : "  MISMATCH vs CPU twin")});
  }

  // The kernels alone. The header is reset before each run, outside the timed span (without a
  // finish nothing resets it); with quality, the maximum is computed before the candidates.
  if (p.use_quality) {
    const double us_max = time_with_setup(
        b, [&](int) { JP_CUDA(detect_workspace_init(ws.get(), s.width, s.height, st)); },
        [&](int rep) {
          JP_CUDA(launch_detect_max(p, in[rep % n].view(), 0, s.height, ws.get(), st));
        });
    b.add({"detect-max", "jetpipe", s.name(), data, us_max, bytes, "frame maximum (quality)"});
  }
  // The candidates kernel, each path side by side (the rows only where they apply).
  std::vector<std::pair<DetectPath, const char*>> paths{{DetectPath::kTiles, "jetpipe-tiles"}};
  if (detect_rows_apply(p, in[0].view())) paths.emplace_back(DetectPath::kRows, "jetpipe-rows");
  for (const auto& [path, impl] : paths) {
    DetectParams q = p;
    q.path = path;
    // The timed candidates runs below leave their count in the header (no finish resets it).
    JP_CUDA(detect_workspace_init(ws.get(), s.width, s.height, st));
    const bool path_ok = matches_twin(q, DetectLaunchOptions{});
    const double us_nms = time_with_setup(
        b,
        [&](int rep) {
          JP_CUDA(detect_workspace_init(ws.get(), s.width, s.height, st));
          JP_CUDA(launch_detect_max(q, in[rep % n].view(), 0, s.height, ws.get(), st));
        },
        [&](int rep) {
          JP_CUDA(launch_detect_candidates(q, in[rep % n].view(), 0, s.height, ws.get(),
                                           LaunchContext{}, st));
        });
    b.add({"detect-nms+compact", impl, s.name(), data, us_nms, bytes,
           std::string("the candidates kernel: NMS, threshold, shared-memory compaction") +
               (path_ok ? "" : "  MISMATCH vs CPU twin")});
  }
  JP_CUDA(detect_workspace_init(ws.get(), s.width, s.height, st));  // ready for later use

  // CUB DeviceSelect::If on the same buffers (rows are contiguous).
  const int items = s.width * s.height;
  DeviceBuffer sel(static_cast<std::size_t>(items) * sizeof(float));
  DeviceBuffer num(sizeof(int));
  std::size_t temp_bytes = 0;
  JP_CUDA(cub::DeviceSelect::If(nullptr, temp_bytes,
                                reinterpret_cast<const float*>(in[0].view().data), sel.get<float>(),
                                num.get<int>(), items, Above{thresh}, st));
  DeviceBuffer temp(temp_bytes);
  int selected = 0;
  JP_CUDA(cub::DeviceSelect::If(temp.get(), temp_bytes,
                                reinterpret_cast<const float*>(in[0].view().data), sel.get<float>(),
                                num.get<int>(), items, Above{thresh}, st));
  JP_CUDA(cudaMemcpyAsync(&selected, num.get(), sizeof(int), cudaMemcpyDeviceToHost, st));
  JP_CUDA(cudaStreamSynchronize(st));
  const double us_cub = b.time_us([&](int rep) {
    JP_CUDA(cub::DeviceSelect::If(temp.get(), temp_bytes,
                                  reinterpret_cast<const float*>(in[rep % n].view().data),
                                  sel.get<float>(), num.get<int>(), items, Above{thresh}, st));
  });
  b.add({"detect-select-if", "cub", s.name(), data, us_cub, bytes,
         std::to_string(selected) + " selected (score > threshold, no NMS)"});
}

}  // namespace

void bench_detect(Bench& b) {
  if (!b.wants("detect")) return;
  for (const Size& s : b.sizes()) {
    if (static_cast<unsigned long long>(s.width) * static_cast<unsigned long long>(s.height) >
        (1ull << 31) - 1) {
      continue;  // CUB's int item count
    }
    DetectParams harris;
    harris.use_quality = true;
    harris.quality = 0.01;
    harris.nms_radius = 4;
    harris.max_detections = 500;
    run_case(b, s, "harris", harris_response(b, s), harris);

    DetectParams noise;
    noise.use_quality = false;
    noise.threshold = 0.5;
    noise.nms_radius = 1;
    noise.max_detections = 500;
    run_case(b, s, "noise", noise_response(s), noise);
    run_case(b, s, "flat", flat_response(s), noise);
  }
}

}  // namespace jetpipe::bench
