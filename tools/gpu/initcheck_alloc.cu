// SPDX-License-Identifier: MIT
// Whether compute-sanitizer initcheck keeps a kernel's writes, and runs without a fault, when the
// host allocates memory while that kernel runs. The executor does that when a frame of a new size
// arrives with frames in flight: the source takes a new pool buffer (cudaHostAlloc) and the
// executor new images (cudaMallocPitch) while the previous frame's strips run on their streams.
// Each round: a fresh buffer x of STREAMS strips; on each strip's stream a kernel writes the strip
// in 8 steps over ~1 ms, the host allocates (MODE), and a second kernel on the same stream sums
// the strip. The sums are checked on the host. Standalone (not built by CMake):
//   nvcc -O2 -arch=sm_90 -o /tmp/initcheck_alloc tools/gpu/initcheck_alloc.cu
//   compute-sanitizer --tool initcheck /tmp/initcheck_alloc MODE [ROUNDS STREAMS SYNC NONBLOCKING
//                                                                 KEEP_MB]
// MODE: none (no allocation), device (four cudaMallocPitch, or cudaMalloc of KEEP_MB), host (four
// cudaHostAlloc), hostcopy (host, with an 8 MiB pinned H2D copy in flight on each stream), both
// (device and host), idle (KEEP_MB device allocations after the round's synchronize, while no
// kernel runs). SYNC 0: the writers are queued right after x's cudaMallocPitch, with no device
// synchronization between; 1 (default): after one. NONBLOCKING 0: blocking streams (default 1:
// cudaStreamNonBlocking, as the executor's). KEEP_MB > 0: the allocations take that many MiB each
// and are kept to the end, so the process's memory grows every round.
// H100, 2026-11-24 (commit 71b9741), 3 streams, KEEP_MB 4: every sum right in every run, but
// initcheck reported uninitialized reads by sum_strip of x's rows, all in one round of a process
// (rounds 50, 58, 96, 98 and 164 where recorded), in 6 of 42 processes that allocated device
// memory while the writers ran (100 rounds; 60 in one, 200 in eight; non-blocking or blocking
// streams, with or without SYNC): a false report of a correct program. None in 9 processes of
// `idle`, 9 with one stream, 10 of `host`; `hostcopy` reported in 2 of 8 (round 0, not examined).
// No illegal address in any run (docs/PERFORMANCE.md, sanitizer section). Later the same day
// (commit 188ae7f), `device 100 3 1 1 4`: no report in 55 processes one after another, with the
// GPU to themselves, nor in 10 side by side. The executor's reports turned out to need other
// processes on the GPU (tools/gpu/sanitize.sh), which this program's runs may have had; that was
// not recorded.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Writes rows [y0, y1) of x, one eighth of them every ~125 us, the first at once.
__global__ void write_strip(unsigned char* x, size_t pitch, int w, int y0, int y1, int salt) {
  const int rows = y1 - y0;
  for (int step = 0; step < 8; ++step) {
    const int a = y0 + rows * step / 8, b = y0 + rows * (step + 1) / 8;
    for (int y = a + blockIdx.x; y < b; y += gridDim.x) {
      for (int c = threadIdx.x; c < w; c += blockDim.x) {
        x[y * pitch + c] = static_cast<unsigned char>(y * 7 + c * 3 + salt);
      }
    }
    const unsigned long long until = now_ns() + 125000;
    while (now_ns() < until) {
    }
  }
}

__global__ void sum_strip(const unsigned char* x, size_t pitch, int w, int y0, int y1,
                          unsigned long long* out) {
  unsigned long long s = 0;
  for (int y = y0 + blockIdx.x; y < y1; y += gridDim.x) {
    for (int c = threadIdx.x; c < w; c += blockDim.x) s += x[y * pitch + c];
  }
  atomicAdd(out, s);
}

bool ok(cudaError_t e, const char* what, int round) {
  if (e != cudaSuccess) std::printf("round %d: %s: %s\n", round, what, cudaGetErrorString(e));
  return e == cudaSuccess;
}
#define CK(x) \
  if (!ok((x), #x, round)) return 1

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "both";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  const int nstreams = argc > 3 ? std::atoi(argv[3]) : 3;
  const bool sync_new = argc > 4 ? std::atoi(argv[4]) != 0 : true;     // sync after x's allocation
  const bool nonblocking = argc > 5 ? std::atoi(argv[5]) != 0 : true;  // cudaStreamNonBlocking
  const size_t keep_mb = argc > 6 ? std::atoi(argv[6]) : 0;  // > 0: allocations of that size, kept
  std::vector<void*> kept_d, kept_h;
  // idle: the same allocations as device, made after the round's synchronize (no kernel running).
  const bool idle = !std::strcmp(mode, "idle");
  const bool dev = !std::strcmp(mode, "device") || !std::strcmp(mode, "both");
  // hostcopy: host, with an 8 MiB pinned H2D copy in flight on every stream as well.
  const bool copies = !std::strcmp(mode, "hostcopy");
  const bool host = copies || !std::strcmp(mode, "host") || !std::strcmp(mode, "both");
  int round = -1;
  std::vector<cudaStream_t> streams(nstreams);
  for (auto& s : streams) {
    CK(cudaStreamCreateWithFlags(&s, nonblocking ? cudaStreamNonBlocking : cudaStreamDefault));
  }
  unsigned long long* out;
  CK(cudaMallocManaged(&out, nstreams * sizeof(unsigned long long)));
  const size_t copy_bytes = 8u << 20;
  unsigned char *pinned = nullptr, *scratch = nullptr;
  if (copies) {
    CK(cudaHostAlloc(&pinned, copy_bytes, 0));
    std::memset(pinned, 1, copy_bytes);
    CK(cudaMalloc(&scratch, copy_bytes * nstreams));
  }
  int bad = 0;
  for (round = 0; round < rounds; ++round) {
    const int w = 301 + 16 * round, h = 203 + 8 * round;  // a new size every round
    std::printf("round %d\n", round);
    std::fflush(stdout);
    for (int i = 0; i < nstreams; ++i) out[i] = 0;
    unsigned char* x;
    size_t pitch;
    CK(cudaMallocPitch(reinterpret_cast<void**>(&x), &pitch, w, h));
    if (sync_new) CK(cudaDeviceSynchronize());
    for (int i = 0; i < nstreams; ++i) {
      write_strip<<<8, 128, 0, streams[i]>>>(x, pitch, w, h * i / nstreams, h * (i + 1) / nstreams,
                                             round);
      CK(cudaGetLastError());
      if (copies) {
        CK(cudaMemcpyAsync(scratch + i * copy_bytes, pinned, copy_bytes, cudaMemcpyHostToDevice,
                           streams[i]));
      }
    }
    std::vector<void*> dallocs, hallocs;  // allocated while the writers run
    for (int j = 0; j < 4; ++j) {
      void* p = nullptr;
      size_t ppitch = 0;
      if (dev) {
        if (keep_mb) {
          CK(cudaMalloc(&p, (keep_mb << 20) + 4096 * j));
          kept_d.push_back(p);
        } else {
          CK(cudaMallocPitch(&p, &ppitch, w + 64 * j, h));
          dallocs.push_back(p);
        }
      }
      if (host) {
        const size_t bytes = keep_mb ? (keep_mb << 20) + 4096 * j : size_t(w) * h * 3 + 4096 * j;
        CK(cudaHostAlloc(&p, bytes, 0));
        (keep_mb ? kept_h : hallocs).push_back(p);
      }
    }
    for (int i = 0; i < nstreams; ++i) {
      sum_strip<<<8, 128, 0, streams[i]>>>(x, pitch, w, h * i / nstreams, h * (i + 1) / nstreams,
                                           out + i);
      CK(cudaGetLastError());
    }
    CK(cudaDeviceSynchronize());
    for (int j = 0; idle && j < 4; ++j) {
      void* p = nullptr;
      CK(cudaMalloc(&p, (keep_mb << 20) + 4096 * j));
      kept_d.push_back(p);
    }
    for (int i = 0; i < nstreams; ++i) {
      unsigned long long want = 0;
      for (int y = h * i / nstreams; y < h * (i + 1) / nstreams; ++y) {
        for (int c = 0; c < w; ++c) want += static_cast<unsigned char>(y * 7 + c * 3 + round);
      }
      if (out[i] != want) {
        std::printf("round %d strip %d: sum %llu, expected %llu\n", round, i, out[i], want);
        ++bad;
      }
    }
    for (void* p : dallocs) CK(cudaFree(p));
    for (void* p : hallocs) CK(cudaFreeHost(p));
    CK(cudaFree(x));
  }
  if (copies) {
    CK(cudaFreeHost(pinned));
    CK(cudaFree(scratch));
  }
  for (void* p : kept_d) CK(cudaFree(p));
  for (void* p : kept_h) CK(cudaFreeHost(p));
  std::printf("%s: %d rounds, %d %s streams, %s, %d strips wrong\n", mode, rounds, nstreams,
              nonblocking ? "non-blocking" : "blocking",
              sync_new ? "synchronized after x's allocation" : "x written at once", bad);
  return bad ? 2 : 0;
}
