// SPDX-License-Identifier: MIT
// Programmatic dependent launch (compute capability 9.0+). A kernel launched with launch_pdl() is
// launched by the GPU while the kernel before it in the stream is still completing, instead of
// after; it calls pdl_wait() first, before touching global memory, which returns once every kernel
// it depends on has completed and its writes are visible. So the launch behaves exactly as a plain
// one apart from when its grid is set up. Measured on an H100, the 1080p chain of
// config/default.yaml (tools/bench/bench_pipeline.cu, three runs each): plain launches 60.5-60.9 µs
// with this against 63.5-66.1 without; as a CUDA graph 55.5-57.1 against 56.4 (no change).
//
// The chain's kernels (the fast filters, harris, the detection's candidates) also let their
// dependents launch at their own start (pdl_trigger(), where pdl_early() says so at launch), so the
// next grid's blocks are resident and waiting in pdl_wait() when this one ends, rather than being
// launched as its blocks exit. The dependents still wait for the whole grid and its writes.
// Measured on an H100 (twentieth session, docs/PERFORMANCE.md), with the detection's finish a
// programmatic launch too (launch_cooperative_pdl): the 1080p chain as a CUDA graph, histogram and
// stats beside, 37.2-37.4 µs against 39.3 without the trigger; all on one stream 44.4 either way.
// The fifth session's chain, with the histogram in line and the detection's own maximum kernel,
// had been slower with it (59.7-59.9 against 56.4-58.0).
//
//   __global__ void k(Args a) { if (a.early) dev::pdl_trigger(); dev::pdl_wait(); ... }
//   a.early = dev::pdl_early();
//   return dev::launch_pdl(k, grid, threads, smem, stream, a);   // cudaLaunchKernelEx's error
//
// pdl_wait() and pdl_trigger() are no-ops for a kernel launched without the attribute, and on older
// devices (no attribute, no instruction). JETPIPE_PDL=0 in the environment (or
// set_pdl_enabled(false), for side-by-side benchmarks) makes every launch a plain one;
// JETPIPE_PDL_EARLY=0 keeps the programmatic launches but without the early trigger.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "kernels/block/block_trace.cuh"
#include "kernels/launch_scope.h"

namespace jetpipe::dev {

// The wait orders plain loads, not every load: one made with __ldg (ld.global.nc) or a texture
// fetch promises the compiler that the data does not change while the kernel runs, so it may place
// it above this wait, where under PDL the kernel before may still be writing that data. Seen in the
// twenty-ninth session: harris' tiled kernel with a simpler load condition issued its first blur
// loads before ACQBULK (the wait in SASS), and the executor's equality tests failed in strips
// (K = 4) on every run. tools/gpu/pdl-order.sh lists such loads from the SASS of every kernel
// (tools/gpu/device-test.sh runs it; none on main). The fix where it flags one: make the source's
// pointer an output of the wait's asm ("+l"), so every load through it depends on the wait; done in
// every reader of the chain, that cost the 1080p chain 0.4-0.6 µs (H100), so it is not done ahead.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the kernels launched after this one with launch_pdl() start now (their blocks become
// resident and wait in pdl_wait()), instead of as this grid's blocks exit.
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Whether a kernel of the chain triggers its dependents at its start (pdl_trigger()): yes, unless
// JETPIPE_PDL_EARLY=0 (for side-by-side benchmarks) or the launching thread holds
// EarlyTriggerScope(false) (kernels/launch_scope.h). Only a launch with pdl_enabled() has
// dependents that the trigger could start.
inline bool pdl_early() {
  static const bool off = [] {
    const char* env = std::getenv("JETPIPE_PDL_EARLY");
    return env != nullptr && std::strcmp(env, "0") == 0;
  }();
  return !off && early_trigger_here() != 0;  // EarlyTriggerScope(false) on this thread: off
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

// kernel<<<grid, block, smem, stream>>>(args...) through cudaLaunchKernelEx, with n launch
// attributes. Returns the launch's error (as cudaPeekAtLastError would).
template <class... Params, class... Args>
cudaError_t launch_attrs(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                         cudaStream_t stream, cudaLaunchAttribute* attrs, unsigned n,
                         Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attrs;
  cfg.numAttrs = n;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

inline cudaLaunchAttribute pdl_attribute() {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  return attr;
}

// kernel<<<grid, block, smem, stream>>>(args...) with programmatic stream serialization where
// pdl_enabled().
template <class... Params, class... Args>
cudaError_t launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                       cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr = pdl_attribute();
  return launch_attrs(kernel, grid, block, smem, stream, &attr, pdl_enabled() ? 1 : 0,
                      std::forward<Args>(args)...);
}

// A cooperative launch (co-resident blocks, grid barriers), with programmatic stream serialization
// too where pdl_enabled(); the kernel calls pdl_wait() first, as for launch_pdl(). Where the driver
// refuses the pair (cudaErrorInvalidValue, cudaErrorNotSupported), the error is cleared and the
// launch is a plain cooperative one; only when that one is accepted does every later launch skip
// the pair (a launch invalid either way returns its error and changes nothing).
template <class... Params, class... Args>
cudaError_t launch_cooperative_pdl(void (*kernel)(Params...), dim3 grid, dim3 block,
                                   std::size_t smem, cudaStream_t stream, Args&&... args) {
  static std::atomic<bool> refused{false};
  cudaLaunchAttribute attrs[2] = {{}, pdl_attribute()};
  attrs[0].id = cudaLaunchAttributeCooperative;
  attrs[0].val.cooperative = 1;
  const bool pair = pdl_enabled() && !refused.load(std::memory_order_relaxed);
  if (pair) {
    const cudaError_t e = launch_attrs(kernel, grid, block, smem, stream, attrs, 2, args...);
    if (e != cudaErrorInvalidValue && e != cudaErrorNotSupported) return e;
    cudaGetLastError();
  }
  const cudaError_t e =
      launch_attrs(kernel, grid, block, smem, stream, attrs, 1, std::forward<Args>(args)...);
  if (pair && e == cudaSuccess) refused.store(true, std::memory_order_relaxed);
  return e;
}

}  // namespace jetpipe::dev
