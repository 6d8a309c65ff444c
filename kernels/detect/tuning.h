// SPDX-License-Identifier: MIT
// Launch policies of the GPU detection, apart from the algorithm: one constexpr policy per target,
// Jetson Orin (sm_87) and discrete Hopper (sm_90); detect_policy() picks by the device's compute
// capability, anything else gets the discrete policy. Compile-time shapes: policy.cuh. Host-only.
#pragma once

namespace jetpipe {

struct DetectPolicy {
  // detect_finish's cooperative grid: blocks an SM (at most the resident blocks the occupancy
  // calculator allows).
  int finish_blocks_per_sm;
};

// Jetson Orin (sm_87): the sm_90 value, not swept (the bench has no option for it). In a green
// context of 16 / 8 SMs of an H200 (decision 042), 1080p detect: harris response 68.1 / 109.1 µs,
// noise 100.2 / 168.8, a flat response 693.9 / 1327.0 (CUB DeviceSelect 40.7 / 65.2).
inline constexpr DetectPolicy kDetectPolicyOrin{
    /*finish_blocks_per_sm=*/1,
};

// Discrete Hopper (sm_90).
inline constexpr DetectPolicy kDetectPolicyDiscrete{
    // One block an SM, not the two that fit (two take an SM's whole register file, so the grid
    // waits for every SM to drain). H100, CUPTI: in the executor a 1080p K = 4 frame's finish
    // started ~3 µs after the last candidates with 2, as they ended with 1. jetpipe-bench --area
    // detect, 1080p, 1 / 2: harris response 27.2 / 27.6 µs, noise 33.9 / 36.3, a flat response
    // (candidates overflow the buffer) 117 / 85 (docs/decisions/005-detect-finish-grid.md).
    /*finish_blocks_per_sm=*/1,
};

inline const DetectPolicy& detect_policy(int cc_major, int cc_minor) {
  return (cc_major == 8 && cc_minor == 7) ? kDetectPolicyOrin : kDetectPolicyDiscrete;
}

}  // namespace jetpipe
