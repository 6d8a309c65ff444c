// SPDX-License-Identifier: MIT
// Programmatic dependent launch, device side (compute capability 9.0+). A kernel launched with
// dev::launch_pdl() (kernels/launch/pdl_launch.cuh) calls pdl_wait() first, before touching global
// memory: it returns once every kernel it depends on has completed and its writes are visible, so
// the launch behaves as a plain one apart from when its grid is set up. The chain's kernels may
// also call pdl_trigger() at their start (LaunchContext::early_trigger), so the next grid's blocks
// are resident and waiting when this one ends (docs/decisions/001-pdl-early-trigger.md).
//
//   __global__ void k(Args a) { if (a.early) dev::pdl_trigger(); dev::pdl_wait(); ... }
//
// Both are no-ops for a kernel launched without the attribute, and on older devices.
#pragma once

#include "kernels/block/block_trace.cuh"

namespace jetpipe::dev {

// The wait orders plain loads, not every load: one made with __ldg (ld.global.nc) or a texture
// fetch may be placed above it, where the kernel before may still be writing that data.
// tools/gpu/pdl-order.sh lists such loads from the SASS; the fix where it flags one: make the
// source's pointer an output of the wait's asm ("+l") (docs/decisions/001-pdl-early-trigger.md).
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

}  // namespace jetpipe::dev
