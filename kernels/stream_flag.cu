// SPDX-License-Identifier: MIT
#include "kernels/stream_flag.h"

#include <cuda_runtime.h>

namespace jetpipe {
namespace {

// CUresult cuStreamWriteValue32(CUstream, CUdeviceptr, cuuint32_t, unsigned int), CUDA 12 ABI.
using WriteValue32 = int (*)(cudaStream_t, unsigned long long, std::uint32_t, unsigned int);

WriteValue32 write_value32() {
  static const WriteValue32 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
#if CUDART_VERSION >= 12050
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &p, 12000, cudaEnableDefault, &q);
#else
    // Before 12.5: the symbol's version for this toolkit's CUDART_VERSION, which on any 12.x is the
    // same CUDA 12 ABI asked for above. Same function; looked up once, so no slower.
    const cudaError_t e =
        cudaGetDriverEntryPoint("cuStreamWriteValue32", &p, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      p = nullptr;
    }
    return reinterpret_cast<WriteValue32>(p);
  }();
  return fn;
}

__device__ __forceinline__ std::uint32_t load_acquire(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void wait_value_kernel(const std::uint32_t* flag, const std::uint32_t* expected) {
  const std::uint32_t want = load_acquire(expected);
  const unsigned long long t0 = global_ns();
  while (load_acquire(flag) != want) {
    if (global_ns() - t0 > 10'000'000'000ull) __trap();
  }
}

}  // namespace

bool stream_values_supported() { return write_value32() != nullptr; }

cudaError_t write_stream_value(std::uint32_t* word, std::uint32_t value, cudaStream_t stream) {
  const WriteValue32 fn = write_value32();
  if (fn == nullptr) return cudaErrorNotSupported;
  // CU_STREAM_WRITE_VALUE_DEFAULT (0): a memory barrier before the write. CUresult's codes are
  // cudaError_t's for the errors this call can return (invalid value, not supported, ...).
  return static_cast<cudaError_t>(fn(stream, reinterpret_cast<unsigned long long>(word), value, 0));
}

cudaError_t launch_wait_value(const std::uint32_t* flag, const std::uint32_t* expected,
                              cudaStream_t stream) {
  wait_value_kernel<<<1, 1, 0, stream>>>(flag, expected);
  return cudaGetLastError();
}

}  // namespace jetpipe
