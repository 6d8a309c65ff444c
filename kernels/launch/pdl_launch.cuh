// SPDX-License-Identifier: MIT
// Programmatic dependent launch, host side: launches whose grid the GPU sets up while the kernel
// before it in the stream is still completing (the kernel calls dev::pdl_wait() first,
// kernels/block/pdl.cuh). H100, the 1080p chain of config/default.yaml with plain launches:
// 60.5-60.9 µs against 63.5-66.1 without (docs/decisions/001-pdl-early-trigger.md).
//
//   a.early = ctx.early_trigger;   // LaunchContext (kernels/launch_context.h)
//   return dev::launch_pdl(k, grid, threads, smem, stream, a);   // cudaLaunchKernelEx's error
//
// JETPIPE_PDL=0 (jetpipe::debug_options().pdl, core/environment.h) or set_pdl_enabled(false), for
// side-by-side benchmarks, makes every launch a plain one.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <utility>

#include "core/environment.h"
#include "kernels/block/pdl.cuh"
#include "kernels/launch/device_info.h"

namespace jetpipe::dev {

// −1: not decided yet (debug_options().pdl read at the first launch), 0: off, 1: on.
inline std::atomic<int>& pdl_switch() {
  static std::atomic<int> on{-1};
  return on;
}
inline void set_pdl_enabled(bool on) { pdl_switch().store(on ? 1 : 0); }

// Whether launches on the current device carry the attribute: switched on and compute capability ≥
// 9.0.
inline bool pdl_enabled() {
  int on = pdl_switch().load(std::memory_order_relaxed);
  if (on < 0) {
    on = debug_options().pdl ? 1 : 0;
    pdl_switch().store(on);
  }
  if (on == 0) return false;
  DeviceInfo d;
  if (current_device(&d) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return d.cc_major >= 9;
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
