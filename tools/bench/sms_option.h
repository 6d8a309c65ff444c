// SPDX-License-Identifier: MIT
// jetpipe-bench --sms N and --policy: the options' checks and the lines they print, host-only (no
// CUDA headers) so the CPU tests cover them. The green context itself: tools/bench/green_context.h.
#pragma once

#include <cstdio>
#include <string>

namespace jetpipe::tools {

// Exit status of jetpipe-bench when --sms cannot be honoured here (no green contexts in the
// toolkit or the driver, or the split failed): nothing was measured, which scripts can tell from
// a failure (1) or a bad argument (2).
constexpr int kSmsUnsupportedExit = 3;

// Orin's figures the --sms lines compare against (Jetson AGX Orin 64 GB: LPDDR5, 204.8 GB/s).
constexpr double kOrinBandwidthGbps = 205.0;

// The compute capability launchers are told to pick policies for: the device's own, Jetson
// Orin's (sm_87: the Orin policies, no programmatic dependent launch) or discrete Hopper's.
enum class PolicyTarget { kDevice, kOrin, kDiscrete };

inline bool parse_policy_target(const std::string& s, PolicyTarget* out) {
  if (s == "device")
    *out = PolicyTarget::kDevice;
  else if (s == "orin")
    *out = PolicyTarget::kOrin;
  else if (s == "discrete")
    *out = PolicyTarget::kDiscrete;
  else
    return false;
  return true;
}

// The compute capability a target stands for; the device's own for kDevice.
inline void policy_cc(PolicyTarget t, int device_major, int device_minor, int* major, int* minor) {
  *major = t == PolicyTarget::kOrin ? 8 : t == PolicyTarget::kDiscrete ? 9 : device_major;
  *minor = t == PolicyTarget::kOrin ? 7 : t == PolicyTarget::kDiscrete ? 0 : device_minor;
}

// An empty string when `requested` SMs can be asked of a device of `device_sms`, else why not.
inline std::string check_sms_request(int requested, int device_sms) {
  if (requested < 1) return "--sms wants a count of SMs >= 1 (0: the whole GPU, the default)";
  if (requested > device_sms) {
    return "--sms " + std::to_string(requested) + ": the device has " + std::to_string(device_sms) +
           " SMs";
  }
  return "";
}

// The one line printed where green contexts are missing or the split failed (then the bench exits
// with kSmsUnsupportedExit).
inline std::string sms_unsupported_message(int requested, const std::string& why) {
  return "jetpipe-bench: --sms " + std::to_string(requested) +
         " needs a CUDA green context (toolkit and driver >= 12.4): " + why + "; nothing measured";
}

// What the run is, printed before the first figure and again under the table: the SMs asked for
// and obtained (the split rounds up to the device's granularity: 8 on sm_90), the SMs the kernels
// ran on (counted from %smid), the grids' SM count, and that memory bandwidth is not scaled.
inline std::string sms_banner(int requested, int obtained, int ran_on, int device_sms,
                              double copy_gbps) {
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "green context: %d of %d SMs (asked for %d); kernels ran on %d distinct SMs; grids "
                "sized for %d SMs. Memory bandwidth is NOT scaled: copy %.0f GB/s here against "
                "Orin's ~%.0f GB/s (%.0fx), so these figures are an upper bound for "
                "compute-limited kernels only and say nothing of bandwidth-bound ones",
                obtained, device_sms, requested, ran_on, obtained, copy_gbps, kOrinBandwidthGbps,
                copy_gbps / kOrinBandwidthGbps);
  return buf;
}

}  // namespace jetpipe::tools
