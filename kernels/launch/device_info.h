// SPDX-License-Identifier: MIT
// The current device's attributes that launchers need, read once per device (launchers run per
// frame and must stay cheap): SM count, compute capability, opt-in shared memory. Host-only.
//
//   dev::DeviceInfo d;
//   if (cudaError_t e = dev::current_device(&d)) return e;
//   const ReductionPolicy& p = reduction_policy(d.cc_major, d.cc_minor);
#pragma once

#include <driver_types.h>

namespace jetpipe::dev {

struct DeviceInfo {
  int device = 0;
  int sm_count = 1;
  int cc_major = 9, cc_minor = 0;
  int smem_optin = 48 << 10;  // most dynamic shared memory a block may ask for
};

constexpr int kMaxDevices = 64;

// The current device's attributes, or the error of reading them (a failed read is retried next
// time).
cudaError_t current_device(DeviceInfo* out);

// The same where a launcher cannot fail on it: on an error (cleared) a fallback of one SM and
// compute capability 9.0.
const DeviceInfo& device_info();

// Makes launchers on the current device size their grids for `sm_count` SMs and pick the policies
// (and programmatic dependent launch) of compute capability cc_major.cc_minor, for a process whose
// work runs in a green context of fewer SMs (jetpipe-bench --sms, --policy). Process-wide; call it
// once, before any launch and while no other thread launches.
cudaError_t set_launch_target(int sm_count, int cc_major, int cc_minor);

}  // namespace jetpipe::dev
