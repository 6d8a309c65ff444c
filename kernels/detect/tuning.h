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

// Jetson Orin (sm_87): one block an SM, as sm_90. On 16 / 8 SMs that grid is 16 / 8 blocks and a
// lone frame's finish gains from two, but with frames in flight two cost the chain more (they need
// an SM's whole register file: decision 005). In a green context of an H200 (decision 042), H200,
// 2026-11-28, µs, one block an SM / two, two runs each:
//   `jetpipe-bench --area detect --sms 16|8 --policy orin --reps 25`, rows "detect finish1|2"
//   (23:30 UTC): 16 SMs 1080p harris 67.0-67.1 / 67.2-67.6, noise 99.5-100.3 / 90.7-91.0, flat
//   160.4-160.5 / 130.1-130.4 (CUB DeviceSelect 38.9-43.3); 16 SMs 4K harris 202.1-202.6 /
//   201.8-202.2, noise 333.2-334.0 / 303.4-303.5, flat 291.5-291.8 / 280.0-280.4; 8 SMs 1080p
//   harris 109.3-110.8 / 108.7-110.9, noise 171.5-173.2 / 158.9-161.2, flat 182.8-185.3 /
//   171.4-173.9 (CUB 64.7-67.8);
//   the chain, `--area pipeline --sizes 1920x1080 --sms 16|8 --policy orin` (23:33 UTC, this
//   policy at 1 and at 2): 16 SMs one graph's GPU time 117.6 / 114.4-114.5, frames as 2 / 4 / 8
//   graphs in flight 100.0 / 104.8-104.9, 100.9 / 105.9-106.0, 101.3-101.6 / 106.3-106.9; 8 SMs
//   one graph 212.1-212.4 / 212.6, 4 in flight 198.7 / 201.3-201.4.
// The Orin profiles keep 2-3 frames in flight (platforms/jetson-*.yaml): one block an SM.
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
    // H200, 2026-11-28 23:30 UTC (rows "detect finish1|2", two runs), 1 / 2: 1080p harris
    // 23.3-23.9 / 22.8-22.9, noise 31.9-32.1 / 33.9-34.1, flat 51.3-51.9 / 50.8-51.0; 4K harris
    // 56.0-56.5 / 57.4-57.8, noise 66.7-67.0 / 66.6-66.8, flat 103.8-104.0 / 94.0-94.2: mixed.
    /*finish_blocks_per_sm=*/1,
};

inline const DetectPolicy& detect_policy(int cc_major, int cc_minor) {
  return (cc_major == 8 && cc_minor == 7) ? kDetectPolicyOrin : kDetectPolicyDiscrete;
}

}  // namespace jetpipe
