// SPDX-License-Identifier: MIT
// jetpipe-bench --sms N: a CUDA green context of N SMs (CUDA >= 12.4, toolkit and driver) made
// current on the calling thread, so every stream, allocation and launch the runtime API makes
// there afterwards runs on its SMs; and a census of the SMs a wide grid actually ran on.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

namespace jetpipe::bench {

class GreenContext {
 public:
  // A green context of at least `sms` SMs of device 0 (the split rounds up to the device's
  // granularity: 8 on sm_90), current on this thread. Call it before any runtime API call. On
  // failure nullptr, *why says why, and *bad_request whether the request itself was wrong (more
  // SMs than the device has) rather than green contexts missing here.
  static std::unique_ptr<GreenContext> create(int sms, std::string* why, bool* bad_request);
  ~GreenContext();
  GreenContext(const GreenContext&) = delete;
  GreenContext& operator=(const GreenContext&) = delete;

  int sms() const { return sms_; }                // SMs of the resource obtained
  int device_sms() const { return device_sms_; }  // SMs of the whole device

 private:
  GreenContext() = default;
  void* green_ = nullptr;  // CUgreenCtx (cuda.h stays out of this header)
  int sms_ = 0, device_sms_ = 0;
};

// The distinct SMs that the blocks of a grid many waves wide ran on, launched on `stream` and
// waited for (each block records %smid): where the bench's kernels land, measured, not assumed.
int count_sms_used(cudaStream_t stream);

}  // namespace jetpipe::bench
