// SPDX-License-Identifier: MIT
#if JETPIPE_HAVE_CUDA
#include "kernels/launch/device_info.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <mutex>

namespace jetpipe::dev {

namespace {

// Written once per device, under the mutex, before g_known says so; read only after.
DeviceInfo g_cache[kMaxDevices];
std::atomic<bool> g_known[kMaxDevices];
std::mutex g_write;

}  // namespace

cudaError_t current_device(DeviceInfo* out) {
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev)) return e;
  const bool slot = dev >= 0 && dev < kMaxDevices;
  if (slot && g_known[dev].load(std::memory_order_acquire)) {
    *out = g_cache[dev];
    return cudaSuccess;
  }
  DeviceInfo d;
  d.device = dev;
  cudaError_t e = cudaDeviceGetAttribute(&d.sm_count, cudaDevAttrMultiProcessorCount, dev);
  if (!e) e = cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, dev);
  if (!e) e = cudaDeviceGetAttribute(&d.cc_minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (!e) e = cudaDeviceGetAttribute(&d.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  if (e) return e;
  if (d.sm_count < 1) d.sm_count = 1;
  if (slot) {
    const std::lock_guard<std::mutex> lock(g_write);
    if (!g_known[dev].load(std::memory_order_relaxed)) {
      g_cache[dev] = d;
      g_known[dev].store(true, std::memory_order_release);
    }
  }
  *out = d;
  return cudaSuccess;
}

const DeviceInfo& device_info() {
  static const DeviceInfo fallback;
  DeviceInfo d;
  if (current_device(&d) != cudaSuccess || d.device < 0 || d.device >= kMaxDevices) {
    cudaGetLastError();
    return fallback;
  }
  return g_cache[d.device];
}

cudaError_t set_launch_target(int sm_count, int cc_major, int cc_minor) {
  DeviceInfo d;
  if (cudaError_t e = current_device(&d)) return e;
  if (d.device < 0 || d.device >= kMaxDevices || sm_count < 1) return cudaErrorInvalidValue;
  const std::lock_guard<std::mutex> lock(g_write);
  g_cache[d.device].sm_count = sm_count;
  g_cache[d.device].cc_major = cc_major;
  g_cache[d.device].cc_minor = cc_minor;
  return cudaSuccess;
}

}  // namespace jetpipe::dev
#endif  // JETPIPE_HAVE_CUDA
