// SPDX-License-Identifier: MIT
// cp.async (sm_80 and later): global → shared copies in flight while the warp computes, counted in
// groups (one commit a group; wait<N> returns once at most N newer groups are pending). Used by the
// fast filter kernel's and the running box's row rings (kernels/filters/) and the detection's
// streamed rows (kernels/detect/row_candidates.cuh). `smem` is a shared-space address
// (__cvta_generic_to_shared). The copies are loads for pdl-order.sh (SASS LDGSTS): after pdl_wait.
#pragma once

#include <cstdint>

namespace jetpipe::dev {

// 16 bytes, global 16-byte aligned, bypassing L1 (.cg).
__device__ __forceinline__ void cp_async16(std::uint32_t smem, const void* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem), "l"(g) : "memory");
}
// 4 bytes, global 4-byte aligned, through L1 (.ca: .cg takes 16 only).
__device__ __forceinline__ void cp_async4(std::uint32_t smem, const void* g) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem), "l"(g) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace jetpipe::dev
