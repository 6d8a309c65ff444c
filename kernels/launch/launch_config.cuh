// SPDX-License-Identifier: MIT
// Host-side launch helpers shared by the reduction launchers: per-kernel settings done once per
// device (dynamic shared-memory limit, occupancy), for the device of kernels/launch/device_info.h.
//
//   dev::DeviceInfo d;
//   if (cudaError_t e = dev::current_device(&d)) return e;
//   const ReductionPolicy& p = reduction_policy(d.cc_major, d.cc_minor);
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>

#include "kernels/launch/device_info.h"

namespace jetpipe::dev {

// Per-kernel, per-device state: the dynamic shared-memory limit raised to the most this kernel has
// asked for, its resident blocks per SM for that size, whether its carveout prefers shared memory.
struct KernelSlot {
  std::atomic<int> smem_limit[kMaxDevices] = {};
  std::atomic<unsigned long long> occupancy[kMaxDevices] = {};  // (threads, smem) << 8 | blocks
  std::atomic<bool> max_shared[kMaxDevices] = {};
};

// Raises the kernel's dynamic shared-memory limit to at least `bytes` on the current device.
template <class Kernel>
cudaError_t allow_dynamic_smem(Kernel* kernel, KernelSlot& slot, const DeviceInfo& d, int bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  std::atomic<int>& cur = slot.smem_limit[d.device % kMaxDevices];
  if (cur.load(std::memory_order_acquire) >= bytes) return cudaSuccess;
  cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e) return e;
  int prev = cur.load();
  while (prev < bytes && !cur.compare_exchange_weak(prev, bytes)) {
  }
  return cudaSuccess;
}

// All of the SM's unified L1/shared memory to shared memory for this kernel, once a device.
template <class Kernel>
cudaError_t prefer_max_shared(Kernel* kernel, KernelSlot& slot, const DeviceInfo& d) {
  std::atomic<bool>& done = slot.max_shared[d.device % kMaxDevices];
  if (done.load(std::memory_order_acquire)) return cudaSuccess;
  if (cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                           cudaFuncAttributePreferredSharedMemoryCarveout,
                                           cudaSharedmemCarveoutMaxShared)) {
    return e;
  }
  done.store(true, std::memory_order_release);
  return cudaSuccess;
}

// Resident blocks per SM of the kernel (at least 1), remembered for the last (threads, smem).
template <class Kernel>
cudaError_t blocks_per_sm(Kernel* kernel, KernelSlot& slot, const DeviceInfo& d, int threads,
                          int smem, int* out) {
  const unsigned long long key =
      (static_cast<unsigned long long>(threads) << 32) | static_cast<unsigned>(smem);
  std::atomic<unsigned long long>& cached = slot.occupancy[d.device % kMaxDevices];
  const unsigned long long c = cached.load(std::memory_order_relaxed);
  if (c && (c >> 8) == key) {
    *out = static_cast<int>(c & 0xffu);
    return cudaSuccess;
  }
  int n = 0;
  cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &n, reinterpret_cast<const void*>(kernel), threads, static_cast<std::size_t>(smem));
  if (e) return e;
  n = n < 1 ? 1 : (n > 255 ? 255 : n);
  cached.store((key << 8) | static_cast<unsigned>(n), std::memory_order_relaxed);
  *out = n;
  return cudaSuccess;
}

inline unsigned div_up(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned>((a + b - 1) / b);
}

}  // namespace jetpipe::dev
