// SPDX-License-Identifier: MIT
#include "tools/cli/bench_util.h"

#include <fstream>
#include <random>

namespace jetpipe::cli {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::vector<HostImage> synthetic_frames(int w, int h, int n) {
  std::vector<HostImage> out;
  std::mt19937 rng(1234);
  for (int i = 0; i < n; ++i) {
    HostImage img(w, h, PixelFormat::kBgr8);
    const ImageView v = img.view();
    for (int y = 0; y < h; ++y) {
      std::uint8_t* r = v.row<std::uint8_t>(y);
      for (int x = 0; x < w; ++x) {
        const int base = ((x / 64 + y / 64 + i) % 2) ? 180 : 60;
        for (int c = 0; c < 3; ++c) r[3 * x + c] = static_cast<std::uint8_t>(base + (rng() % 32));
      }
    }
    out.push_back(std::move(img));
  }
  return out;
}

}  // namespace jetpipe::cli

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "core/cuda_check.h"

namespace jetpipe::cli {

Bandwidth measure_pinned(std::size_t bytes) {
  void *h = nullptr, *d = nullptr;
  JP_CUDA(cudaHostAlloc(&h, bytes, cudaHostAllocDefault));
  JP_CUDA(cudaMalloc(&d, bytes));
  std::memset(h, 1, bytes);
  cudaStream_t s;
  JP_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  JP_CUDA(cudaEventCreate(&a));
  JP_CUDA(cudaEventCreate(&b));
  auto time = [&](cudaMemcpyKind kind) {
    std::vector<double> v;
    for (int i = 0; i < 12; ++i) {
      JP_CUDA(cudaEventRecord(a, s));
      JP_CUDA(kind == cudaMemcpyHostToDevice ? cudaMemcpyAsync(d, h, bytes, kind, s)
                                             : cudaMemcpyAsync(h, d, bytes, kind, s));
      JP_CUDA(cudaEventRecord(b, s));
      JP_CUDA(cudaEventSynchronize(b));
      float ms = 0;
      JP_CUDA(cudaEventElapsedTime(&ms, a, b));
      if (i >= 2) v.push_back(static_cast<double>(bytes) / (ms * 1e6));
    }
    return percentile(v, 0.5);
  };
  Bandwidth bw{time(cudaMemcpyHostToDevice), time(cudaMemcpyDeviceToHost)};
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
  cudaFree(d);
  cudaFreeHost(h);
  return bw;
}

Bandwidth best_pinned_bandwidth() {
  Bandwidth bw;
  for (int i = 0; i < 3; ++i) {
    const Bandwidth b = measure_pinned(64u << 20);
    bw.h2d_gbps = std::max(bw.h2d_gbps, b.h2d_gbps);
    bw.d2h_gbps = std::max(bw.d2h_gbps, b.d2h_gbps);
  }
  return bw;
}

std::vector<HostImage> pool_frames(const Executor& exec, const std::vector<HostImage>& images) {
  const ImageAllocator alloc = exec.allocator();
  std::vector<HostImage> out;
  for (const HostImage& img : images) {
    HostImage f = allocate_image(alloc, img.width(), img.height(), img.format());
    copy_image(img.view(), f.view());
    out.push_back(std::move(f));
  }
  return out;
}

DeviceFrames device_frames(const std::vector<HostImage>& images) {
  DeviceFrames d;
  for (const HostImage& img : images) {
    const ImageView h = img.view();
    void* p = nullptr;
    std::size_t pitch = 0;
    JP_CUDA(cudaMallocPitch(&p, &pitch, h.row_bytes(), static_cast<std::size_t>(h.height)));
    d.memory.emplace_back(p, [](void* q) { cudaFree(q); });
    JP_CUDA(cudaMemcpy2D(p, pitch, h.data, h.pitch, h.row_bytes(),
                         static_cast<std::size_t>(h.height), cudaMemcpyHostToDevice));
    DeviceFrame f;
    f.view = make_view(static_cast<std::uint8_t*>(p), h.width, h.height, h.format, pitch);
    d.frames.push_back(std::make_shared<const DeviceFrame>(std::move(f)));
  }
  return d;
}

double frame_bytes_out(const PipelineConfig& cfg) {
  double out = 0;
  for (const auto& s : cfg.stages) {
    if (s->type() == "histogram") out += 256 * 8;
    if (s->type() == "stats") out += 64;
    if (s->type() == "threshold") out += 8;
    if (s->type() == "detect") out += 16 + 12 * 1000;  // max_detections at most the default
  }
  return out;
}

}  // namespace jetpipe::cli
#endif  // JETPIPE_HAVE_CUDA
