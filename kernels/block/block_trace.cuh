// SPDX-License-Identifier: MIT
// Per-block timeline of a kernel (an experiment build only: -DJP_BLOCK_TRACE=1 in the CUDA flags).
// Thread 0 of each block notes %globaltimer at its start, after its wait for the kernel before
// (pdl_wait) and at its exit, and appends {kernel, block, SM, the three times} to a buffer that
// the host hands each translation unit (JP_BLOCK_TRACE_EXPORT). Without the flag it compiles to
// nothing.
//
//   dev::BlockTrace trace(kTraceId);   // first statement of the kernel
//   pdl_wait(); trace.waited();
#pragma once

#include <cstdint>

#ifndef JP_BLOCK_TRACE
#define JP_BLOCK_TRACE 0
#endif

namespace jetpipe {
struct BlockTraceRec {
  std::uint64_t t0, t1, t2;  // ns: start, after the wait, exit
  std::uint32_t kernel, block, smid, pad;
};
}  // namespace jetpipe

namespace jetpipe::dev {
#if JP_BLOCK_TRACE && defined(__CUDACC__)
namespace {
__device__ BlockTraceRec* jp_trace_buf;  // one per translation unit (set by its export below)
__device__ unsigned* jp_trace_n;
__device__ unsigned jp_trace_cap;
}  // namespace

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The times wait in shared memory, not in registers that would stay live across the kernel (the
// tiled harris went from 48 registers to 54, 4 blocks an SM instead of 5).
struct BlockTrace {
  unsigned id;
  __device__ explicit BlockTrace(unsigned kernel) : id(kernel) {
    if (threadIdx.x == 0 && threadIdx.y == 0) times()[0] = times()[1] = global_ns();
  }
  __device__ void waited() {
    if (threadIdx.x == 0 && threadIdx.y == 0) times()[1] = global_ns();
  }
  __device__ ~BlockTrace() {
    if (threadIdx.x == 0 && threadIdx.y == 0 && jp_trace_buf != nullptr) {
      const std::uint64_t t2 = global_ns();
      const unsigned i = atomicAdd(jp_trace_n, 1u);
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      if (i < jp_trace_cap) {
        jp_trace_buf[i] = {times()[0], times()[1], t2, id, blockIdx.x + blockIdx.y * gridDim.x,
                           sm,         0};
      }
    }
  }
  __device__ static std::uint64_t* times() {
    __shared__ std::uint64_t t[2];
    return t;
  }
};

#define JP_BLOCK_TRACE_EXPORT(name)                                              \
  namespace jetpipe {                                                            \
  void block_trace_setup_##name(BlockTraceRec* buf, unsigned* n, unsigned cap) { \
    cudaMemcpyToSymbol(dev::jp_trace_buf, &buf, sizeof buf);                     \
    cudaMemcpyToSymbol(dev::jp_trace_n, &n, sizeof n);                           \
    cudaMemcpyToSymbol(dev::jp_trace_cap, &cap, sizeof cap);                     \
  }                                                                              \
  }
#else
struct BlockTrace {
  __device__ explicit BlockTrace(unsigned) {}
  __device__ void waited() {}
};
#define JP_BLOCK_TRACE_EXPORT(name)
#endif
}  // namespace jetpipe::dev
