// SPDX-License-Identifier: MIT
// How much of the single-frame latency target (K = 4 strips ≤ 1.3 × the frame's H2D) the copies
// alone take: one BGR frame (1080p, 4K) from pinned memory, whole or in K strips on one stream,
// as plain stream work, as a CUDA graph, and as a graph with a small kernel per strip on K other
// streams (the executor's shape), device time between events and host time submit → synchronized;
// beside, one synchronous cudaMemcpy of the frame (what `jetpipe bench pipeline` divides by) and
// the host round trip of an empty kernel. `copy_strips sizes`: single copies of growing size, DMA
// against an SM copy kernel; `copy_strips mixed`: the frame's last rows by the SMs while the DMA
// engine copies the rest; `copy_strips handoff`: the three copies of `strip_copies: 3`, each copy's
// start-up hidden behind the tail of the one before on another stream (it is not: H100,
// 2026-11-24, commit c92c676, every split landed the frame later than the three copies on one
// stream).
// Standalone (no jetpipe library):
//   nvcc -O2 -arch=sm_90 -o /tmp/copy_strips tools/gpu/copy_strips.cu
//   /tmp/copy_strips [sizes|mixed|handoff]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// Copies n bytes (a multiple of 16, 16-byte aligned) with the SMs: from mapped pinned host memory
// over the bus, each thread 16-byte loads, `unroll` of them in flight.
template <int kUnroll>
__global__ void sm_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n16) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n16; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n16; i += stride) dst[i] = src[i];
}

}  // namespace

// Per-copy cost: single H2D copies of growing size (device time between events, median), the DMA
// engine against an SM copy kernel reading mapped memory (grid of `blocks` × 256 threads).
void copy_sizes() {
  const size_t max_bytes = size_t(3840) * 2160 * 3;
  unsigned char *h = nullptr, *d = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&h), max_bytes, cudaHostAllocMapped));
  CK(cudaMalloc(&d, max_bytes));
  for (size_t i = 0; i < max_bytes; ++i) h[i] = static_cast<unsigned char>(i & 127);
  unsigned char* hd = nullptr;
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hd), h, 0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  auto time = [&](auto&& work) {
    std::vector<double> v;
    for (int it = 0; it < 30; ++it) {
      CK(cudaEventRecord(a, s));
      work();
      CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, a, b));
      if (it >= 5) v.push_back(ms * 1000.0);
    }
    return median(v);
  };
  std::printf("H2D of one range, device us (GB/s): DMA | SM copy kernel, blocks x 256 threads, "
              "unroll 4\n");
  for (const size_t bytes : {size_t(1) << 18, size_t(1) << 19, size_t(1) << 20, size_t(1555200),
                             size_t(1) << 21, size_t(3110400), size_t(1) << 22, size_t(6220800),
                             max_bytes / 4, max_bytes}) {
    const double dma = time([&] { CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s)); });
    std::printf("  %9zu B: DMA %7.1f (%5.1f)", bytes, dma, bytes / (dma * 1e3));
    for (const int blocks : {132, 264, 528, 1056}) {
      const double k = time([&] {
        sm_copy<4><<<blocks, 256, 0, s>>>(reinterpret_cast<const uint4*>(hd),
                                          reinterpret_cast<uint4*>(d), bytes / 16);
        CK(cudaGetLastError());
      });
      std::printf(" | %4d: %7.1f (%5.1f)", blocks, k, bytes / (k * 1e3));
    }
    std::printf("\n");
  }
  CK(cudaStreamDestroy(s));
  CK(cudaFreeHost(h));
  CK(cudaFree(d));
}

// The frame's first rows by the DMA engine while an SM copy kernel reads its last rows from mapped
// memory, both queued at once on two streams: when each part lands (device µs from the start,
// median of 50), against one DMA copy of the frame. Whether the last strip could land sooner if the
// SMs fetched it (`copy_strips mixed`).
void mixed_copies() {
  const size_t W = 1920, H = 1080, pitch = W * 3, bytes = pitch * H;
  unsigned char *h = nullptr, *d = nullptr, *hd = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&h), bytes, cudaHostAllocMapped));
  CK(cudaMalloc(&d, bytes));
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hd), h, 0));
  for (size_t i = 0; i < bytes; ++i) h[i] = static_cast<unsigned char>(i * 7 + 3);
  cudaStream_t a, b;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t e0, ea, eb;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&ea));
  CK(cudaEventCreate(&eb));
  // rows_dma rows by the DMA engine (one copy), the rest by `blocks` × 256 SM threads (0: a
  // second DMA copy on the other stream).
  auto run = [&](size_t rows_dma, int blocks) {
    std::vector<double> va, vb;
    const size_t split = rows_dma * pitch;
    for (int it = 0; it < 60; ++it) {
      CK(cudaMemset(d, 0, bytes));
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(e0, a));
      CK(cudaStreamWaitEvent(b, e0, 0));
      if (split < bytes && blocks > 0) {
        sm_copy<4><<<blocks, 256, 0, b>>>(reinterpret_cast<const uint4*>(hd + split),
                                          reinterpret_cast<uint4*>(d + split),
                                          (bytes - split) / 16);
        CK(cudaGetLastError());
      } else if (split < bytes) {
        CK(cudaMemcpyAsync(d + split, h + split, bytes - split, cudaMemcpyHostToDevice, b));
      }
      if (split > 0) CK(cudaMemcpyAsync(d, h, split, cudaMemcpyHostToDevice, a));
      CK(cudaEventRecord(ea, a));
      CK(cudaEventRecord(eb, b));
      CK(cudaDeviceSynchronize());
      float ma = 0, mb = 0;
      CK(cudaEventElapsedTime(&ma, e0, ea));
      CK(cudaEventElapsedTime(&mb, e0, eb));
      if (it >= 10) va.push_back(ma * 1e3), vb.push_back(mb * 1e3);
    }
    std::vector<unsigned char> back(bytes);
    CK(cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost));
    const bool ok = std::equal(back.begin(), back.end(), h);
    std::printf("  DMA rows 0-%zu lands %6.1f", rows_dma, median(va));
    if (split < bytes) {
      std::printf(" | rows %zu-%zu by %s lands %6.1f", rows_dma, H,
                  blocks > 0 ? "SM copy" : "DMA, 2nd stream", median(vb));
    }
    std::printf(" us%s\n", ok ? "" : "  WRONG BYTES");
  };
  std::printf("1080p BGR frame (%zu bytes), device us from the start:\n", bytes);
  run(H, 0);
  run(810, 0);
  for (const size_t rows : {size_t(810), size_t(918), size_t(972)}) {
    for (const int blocks : {132, 528}) run(rows, blocks);
  }
  run(0, 264);
  for (cudaEvent_t e : {e0, ea, eb}) CK(cudaEventDestroy(e));
  CK(cudaStreamDestroy(a));
  CK(cudaStreamDestroy(b));
  CK(cudaFreeHost(h));
  CK(cudaFree(d));
}

// The frame in the copies of `strip_copies: 3` (rows 0-540, 540-810, 810-1080), and whether a
// copy's start-up can hide behind the one before it: each copy but the last split into its bulk
// and a tail of `tail` bytes, the next copy on another stream waiting only for the bulk, so it
// starts while the tail crosses. Device µs from the start when each copy has landed (median of
// 50), against the three copies on one stream and one copy of the frame (`copy_strips handoff`).
void handoff_copies() {
  const size_t W = 1920, H = 1080, pitch = W * 3, bytes = pitch * H;
  const size_t cut[4] = {0, 540 * pitch, 810 * pitch, bytes};
  unsigned char *h = nullptr, *d = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&h), bytes, 0));
  CK(cudaMalloc(&d, bytes));
  for (size_t i = 0; i < bytes; ++i) h[i] = static_cast<unsigned char>(i * 13 + 5);
  cudaStream_t st[3];
  for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, land[3], bulk[3];
  CK(cudaEventCreate(&e0));
  for (auto& e : land) CK(cudaEventCreate(&e));
  for (auto& e : bulk) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  // streams: how many streams the copies take in turn (1: all on one); tail: bytes of each copy
  // but the last left to cross after the next copy may start (0: none split).
  auto run = [&](int streams, size_t tail, bool whole) {
    std::vector<double> v[3];
    for (int it = 0; it < 60; ++it) {
      CK(cudaMemset(d, 0, bytes));
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(e0, st[0]));
      for (int i = 1; i < streams; ++i) CK(cudaStreamWaitEvent(st[i], e0, 0));
      if (whole) {
        CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, st[0]));
        CK(cudaEventRecord(land[2], st[0]));
      } else {
        for (int c = 0; c < 3; ++c) {
          cudaStream_t s = st[c % streams];
          if (c > 0 && streams > 1) CK(cudaStreamWaitEvent(s, bulk[c - 1], 0));
          const size_t n = cut[c + 1] - cut[c];
          const size_t t = c < 2 && streams > 1 ? std::min(tail, n) : 0;
          CK(cudaMemcpyAsync(d + cut[c], h + cut[c], n - t, cudaMemcpyHostToDevice, s));
          CK(cudaEventRecord(bulk[c], s));
          if (t > 0) {
            CK(cudaMemcpyAsync(d + cut[c + 1] - t, h + cut[c + 1] - t, t, cudaMemcpyHostToDevice,
                               s));
          }
          CK(cudaEventRecord(land[c], s));
        }
      }
      CK(cudaDeviceSynchronize());
      for (int c = whole ? 2 : 0; c < 3; ++c) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, land[c]));
        if (it >= 10) v[c].push_back(ms * 1e3);
      }
    }
    std::vector<unsigned char> back(bytes);
    CK(cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost));
    const bool ok = std::equal(back.begin(), back.end(), h);
    if (whole) {
      std::printf("  one copy of the frame                      lands %6.1f", median(v[2]));
    } else {
      std::printf("  3 copies, %d stream(s), tail %7zu bytes: lands %6.1f %6.1f %6.1f", streams,
                  streams > 1 ? tail : size_t(0), median(v[0]), median(v[1]), median(v[2]));
    }
    std::printf(" us%s\n", ok ? "" : "  WRONG BYTES");
  };
  std::printf("1080p BGR frame (%zu bytes), device us from the start:\n", bytes);
  for (int rep = 0; rep < 2; ++rep) {
    run(1, 0, true);
    run(1, 0, false);
    for (const int streams : {2, 3}) {
      for (const size_t tail :
           {size_t(0), size_t(64) << 10, size_t(256) << 10, size_t(512) << 10, size_t(1) << 20}) {
        run(streams, tail, false);
      }
    }
  }
  CK(cudaEventDestroy(e0));
  for (auto& e : land) CK(cudaEventDestroy(e));
  for (auto& e : bulk) CK(cudaEventDestroy(e));
  for (auto& s : st) CK(cudaStreamDestroy(s));
  CK(cudaFreeHost(h));
  CK(cudaFree(d));
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "handoff") == 0) {
    handoff_copies();
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "mixed") == 0) {
    mixed_copies();
    return 0;
  }
  if (argc > 1) copy_sizes();
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
    cudaEvent_t ex[8], eg;
    for (auto& e : ex) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&eg, cudaEventDisableTiming));
    cudaStream_t gs;
    CK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
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
      // The kernels per strip on K other streams as plain stream work (events), and as a graph
      // launched on its own stream whose nodes wait on the plain copies' events (external waits).
      auto touch_strip = [&](int k, cudaStream_t st) {
        const unsigned blocks = static_cast<unsigned>((strip(k) / 16 + 255) / 256);
        touch<<<blocks, 256, 0, st>>>(d + k * part, strip(k), cnt);
        CK(cudaGetLastError());
      };
      double sdev = 0, shost = 0, xdev = 0, xhost = 0;
      measure(
          [&] {
            for (int k = 0; k < K; ++k) {
              CK(cudaMemcpyAsync(d + k * part, h + k * part, strip(k), cudaMemcpyHostToDevice, s));
              CK(cudaEventRecord(ex[k], s));
              CK(cudaStreamWaitEvent(ks[k % 4], ex[k], 0));
              touch_strip(k, ks[k % 4]);
            }
            for (int k = 0; k < 4; ++k) {
              CK(cudaEventRecord(ed[k], ks[k]));
              CK(cudaStreamWaitEvent(s, ed[k], 0));
            }
          },
          &sdev, &shost);
      {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(gs, cudaStreamCaptureModeThreadLocal));
        CK(cudaEventRecord(ed[0], gs));
        for (auto& k : ks) CK(cudaStreamWaitEvent(k, ed[0], 0));
        for (int k = 0; k < K; ++k) {
          CK(cudaStreamWaitEvent(ks[k % 4], ex[k], cudaEventWaitExternal));
          touch_strip(k, ks[k % 4]);
        }
        for (int k = 0; k < 4; ++k) {
          CK(cudaEventRecord(ed[k], ks[k]));
          CK(cudaStreamWaitEvent(gs, ed[k], 0));
        }
        CK(cudaStreamEndCapture(gs, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        measure(
            [&] {
              for (int k = 0; k < K; ++k) {
                CK(cudaMemcpyAsync(d + k * part, h + k * part, strip(k), cudaMemcpyHostToDevice,
                                   s));
                CK(cudaEventRecord(ex[k], s));
              }
              CK(cudaGraphLaunch(ge, gs));
              CK(cudaEventRecord(eg, gs));
              CK(cudaStreamWaitEvent(s, eg, 0));
            },
            &xdev, &xhost);
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
      }
      std::printf(
          "%zu bytes K=%d: stream dev %.1f host %.1f | graph dev %.1f host %.1f | graph + a kernel "
          "per strip dev %.1f host %.1f | stream + a kernel per strip dev %.1f host %.1f | stream "
          "copies + a graph of the kernels waiting on their events dev %.1f host %.1f (us)\n",
          bytes, K, dev[0], host[0], dev[1], host[1], dev[2], host[2], sdev, shost, xdev, xhost);
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
