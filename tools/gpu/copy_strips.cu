// SPDX-License-Identifier: MIT
// How much of the single-frame latency target (K = 4 strips ≤ 1.3 × the frame's H2D) the copies
// alone take: one BGR frame (1080p, 4K) from pinned memory, whole or in K strips on one stream,
// as plain stream work, as a CUDA graph, and as a graph with a small kernel per strip on K other
// streams (the executor's shape), device time between events and host time submit → synchronized;
// beside, one synchronous cudaMemcpy of the frame (what `jetpipe bench pipeline` divides by) and
// the host round trip of an empty kernel. Standalone (no jetpipe library):
//   nvcc -O2 -arch=sm_90 -o /tmp/copy_strips tools/gpu/copy_strips.cu && /tmp/copy_strips
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                \
  do {                                                                       \
    const cudaError_t e_ = (x);                                              \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

namespace {

using Clock = std::chrono::steady_clock;

// Reads one byte in 16 of a strip (a stand-in for the first stage on it).
__global__ void touch(const unsigned char* p, size_t n, unsigned* out) {
  const size_t i = (blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x) * 16;
  if (i < n && p[i] == 255 && out) atomicAdd(out, 1u);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

}  // namespace

int main() {
  constexpr int kReps = 40, kWarm = 5;
  for (const size_t bytes : {size_t(1920) * 1080 * 3, size_t(3840) * 2160 * 3}) {
    unsigned char *h = nullptr, *d = nullptr;
    unsigned* cnt = nullptr;
    CK(cudaHostAlloc(reinterpret_cast<void**>(&h), bytes, 0));
    CK(cudaMalloc(&d, bytes));
    CK(cudaMalloc(&cnt, 4));
    for (size_t i = 0; i < bytes; ++i) h[i] = static_cast<unsigned char>(i & 127);
    cudaStream_t s, ks[4];
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (auto& k : ks) CK(cudaStreamCreateWithFlags(&k, cudaStreamNonBlocking));
    cudaEvent_t e0, e1, ed[4];
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (auto& e : ed) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    // Times `work` (queued on s) kReps times: device µs between events, host µs to synchronized.
    auto measure = [&](auto&& work, double* dev_us, double* host_us) {
      std::vector<double> dv, hv;
      for (int it = 0; it < kReps; ++it) {
        const auto t0 = Clock::now();
        CK(cudaEventRecord(e0, s));
        work();
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        const double hu = us_since(t0);
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (it >= kWarm) dv.push_back(ms * 1000.0), hv.push_back(hu);
      }
      *dev_us = median(dv);
      *host_us = median(hv);
    };
    for (const int K : {1, 2, 4, 8}) {
      const size_t part = bytes / K;
      auto strip = [&](int k) { return k == K - 1 ? bytes - k * part : part; };
      double dev[3], host[3];
      measure(
          [&] {
            for (int k = 0; k < K; ++k) {
              CK(cudaMemcpyAsync(d + k * part, h + k * part, strip(k), cudaMemcpyHostToDevice, s));
            }
          },
          &dev[0], &host[0]);
      for (int with_kernels = 0; with_kernels < 2; ++with_kernels) {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        CK(cudaEventRecord(ed[0], s));
        if (with_kernels) {
          for (auto& k : ks) CK(cudaStreamWaitEvent(k, ed[0], 0));
        }
        for (int k = 0; k < K; ++k) {
          CK(cudaMemcpyAsync(d + k * part, h + k * part, strip(k), cudaMemcpyHostToDevice, s));
          if (with_kernels) {
            cudaStream_t ksk = ks[k % 4];
            CK(cudaEventRecord(ed[k % 4], s));
            CK(cudaStreamWaitEvent(ksk, ed[k % 4], 0));
            const unsigned blocks = static_cast<unsigned>((strip(k) / 16 + 255) / 256);
            touch<<<blocks, 256, 0, ksk>>>(d + k * part, strip(k), cnt);
            CK(cudaGetLastError());
          }
        }
        if (with_kernels) {
          for (int k = 0; k < 4; ++k) {
            CK(cudaEventRecord(ed[k], ks[k]));
            CK(cudaStreamWaitEvent(s, ed[k], 0));
          }
        }
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        measure([&] { CK(cudaGraphLaunch(ge, s)); }, &dev[1 + with_kernels],
                &host[1 + with_kernels]);
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
      }
      std::printf(
          "%zu bytes K=%d: stream dev %.1f host %.1f | graph dev %.1f host %.1f | graph + a kernel "
          "per strip dev %.1f host %.1f (us)\n",
          bytes, K, dev[0], host[0], dev[1], host[1], dev[2], host[2]);
    }
    std::vector<double> v;
    for (int it = 0; it < 25; ++it) {
      const auto t0 = Clock::now();
      CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
      if (it >= kWarm) v.push_back(us_since(t0));
    }
    std::printf("%zu bytes: one synchronous cudaMemcpy, host %.1f us\n", bytes, median(v));
    for (auto& k : ks) CK(cudaStreamDestroy(k));
    CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    CK(cudaFree(cnt));
  }
  std::vector<double> v;
  cudaStream_t s;
  cudaEvent_t e;
  CK(cudaStreamCreate(&s));
  CK(cudaEventCreate(&e));
  for (int it = 0; it < 50; ++it) {
    const auto t0 = Clock::now();
    touch<<<1, 32, 0, s>>>(nullptr, 0, nullptr);
    CK(cudaEventRecord(e, s));
    CK(cudaEventSynchronize(e));
    if (it > 5) v.push_back(us_since(t0));
  }
  std::printf("empty kernel, launch to synchronized on the host: %.1f us\n", median(v));
  return 0;
}
