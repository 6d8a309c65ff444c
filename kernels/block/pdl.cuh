// SPDX-License-Identifier: MIT
// Programmatic dependent launch (compute capability 9.0+). A kernel launched with launch_pdl() is
// launched by the GPU while the kernel before it in the stream is still completing, instead of
// after; it calls pdl_wait() first, before touching global memory, which returns once that kernel
// has completed and its writes are visible. So the launch behaves exactly as a plain one apart from
// when its grid is set up. The kernels never trigger their dependents early
// (griddepcontrol.launch_dependents): measured on an H100, the 1080p chain of config/default.yaml
// (tools/bench/bench_pipeline.cu, three runs each): plain launches 60.5-60.9 µs with this against
// 63.5-66.1 without; as a CUDA graph 55.5-57.1 against 56.4 (no change); with an early trigger at
// each kernel's start the graph got slower (59.7-59.9 against 56.4-58.0). pdl_wait() is a no-op for
// a kernel launched without the attribute, and on older devices (no attribute, no instruction).
//
//   __global__ void k(Args a) { dev::pdl_wait(); ... }
//   return dev::launch_pdl(k, grid, threads, smem, stream, a);   // cudaLaunchKernelEx's error
//
// JETPIPE_PDL=0 in the environment (or set_pdl_enabled(false), for side-by-side benchmarks) makes
// every launch a plain one.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace jetpipe::dev {

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// −1: not decided yet (JETPIPE_PDL read at the first launch), 0: off, 1: on.
inline std::atomic<int>& pdl_switch() {
  static std::atomic<int> on{-1};
  return on;
}
inline void set_pdl_enabled(bool on) { pdl_switch().store(on ? 1 : 0); }

// Whether launches on the current device carry the attribute: switched on and compute capability ≥
// 9.0 (cached per device).
inline bool pdl_enabled() {
  int on = pdl_switch().load(std::memory_order_relaxed);
  if (on < 0) {
    const char* env = std::getenv("JETPIPE_PDL");
    on = env != nullptr && std::strcmp(env, "0") == 0 ? 0 : 1;
    pdl_switch().store(on);
  }
  if (on == 0) return false;
  constexpr int kDevices = 64;
  static std::atomic<signed char> major[kDevices] = {};  // 0: unknown
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kDevices) {
    cudaGetLastError();
    return false;
  }
  int cc = major[dev].load(std::memory_order_relaxed);
  if (cc == 0) {
    if (cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    major[dev].store(static_cast<signed char>(cc), std::memory_order_relaxed);
  }
  return cc >= 9;
}

// kernel<<<grid, block, smem, stream>>>(args...) through cudaLaunchKernelEx, with one launch
// attribute (none where attr is null). Returns the launch's error (as cudaPeekAtLastError would).
template <class... Params, class... Args>
cudaError_t launch_ex(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                      cudaStream_t stream, const cudaLaunchAttribute* attr, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute a{};
  if (attr != nullptr) a = *attr;
  cfg.attrs = &a;
  cfg.numAttrs = attr != nullptr ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// launch_ex with programmatic stream serialization where pdl_enabled().
template <class... Params, class... Args>
cudaError_t launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                       cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  return launch_ex(kernel, grid, block, smem, stream, pdl_enabled() ? &attr : nullptr,
                   std::forward<Args>(args)...);
}

}  // namespace jetpipe::dev
