// SPDX-License-Identifier: MIT
// The blocking kernel of Bench::time_gpu_us: one thread spins on a host-mapped flag, so the stream
// holds the start event, the timed work and the stop event queued behind it until the host has
// submitted all of them (NVBench's blocking kernel). A timeout (about a second) keeps a host that
// never sets the flag from hanging the device; the timeout is reported.
#include <cuda_runtime.h>

#include "tools/bench/blocking.h"

namespace jetpipe::bench {
namespace {

__global__ void block_stream_kernel(const volatile int* release, int* timed_out) {
  const long long start = clock64();
  while (*release == 0) {
    if (clock64() - start > 2000000000ll) {  // ~1 s at 2 GHz
      *timed_out = 1;
      return;
    }
    __nanosleep(200);
  }
}

}  // namespace

cudaError_t launch_stream_blocker(const volatile int* release, int* timed_out,
                                  cudaStream_t stream) {
  block_stream_kernel<<<1, 1, 0, stream>>>(release, timed_out);
  return cudaPeekAtLastError();
}

}  // namespace jetpipe::bench
