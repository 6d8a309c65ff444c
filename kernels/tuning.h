// SPDX-License-Identifier: MIT
// Launch policies of the reduction and point kernels (histogram, stats, fused, to_gray, threshold),
// apart from the algorithms (CUB tuning_*.cuh, Halide schedules). One constexpr policy per target:
// Jetson Orin (sm_87, 16 SMs, LPDDR5 ~200 GB/s, 164 KB shared memory per SM) and discrete Hopper
// (sm_90, 132 SMs, HBM3/3e 3-4.8 TB/s, 228 KB shared memory per SM). The launchers pick by the
// device's compute capability (reduction_policy()); anything else gets the discrete policy.
// Host-only header: no CUDA includes.
#pragma once

#include <cstddef>

namespace jetpipe {

// 16-byte vectors each lane has in flight per work item (compile-time: register arrays). A warp's
// work item is a (row, chunk) piece of 32 lanes × kVectors × 16 bytes.
constexpr int kHistVectors = 8;   // 4 KB per warp item; double-buffered: 64 registers of pixels.
constexpr int kStatsVectors = 4;  // 2 KB per warp item; ~48 warps/SM resident hide latency anyway.

struct ReductionPolicy {
  // histogram, lane-striped counters (kernels/block/lane_histogram.cuh): warps per block and 32 KB
  // counter tables per block (the block's warps share them through atomics).
  int hist_warps;
  int hist_tables;
  // histogram, one 256-bin table per warp (the simple variant): warps per block.
  int hist_shared_warps;
  // stats (GRAY8, S16, F32): threads per block; blocks per SM from the occupancy calculator.
  int stats_threads;
  // to_gray, threshold: threads per block (each thread writes 16 output pixels).
  int map_threads;
};

// Jetson Orin (sm_87): the sm_90 shapes, confirmed on an H200 in a green context of 16 and 8 SMs,
// 1080p GRAY8 uniform, 2026-11-27, `jetpipe-bench --sizes 1920x1080 --sms 16|8 --policy orin`
// (decision 042; memory bandwidth not scaled: an upper bound for the compute-limited side only).
// The counting kernel needs 32 KB of the 164 KB of shared memory per SM, so the same shape fits.
inline constexpr ReductionPolicy kPolicyOrin{
    // histogram µs, 16 / 8 SMs: lane-striped 8 warps, one table 17.2 / 21.8; one table a warp
    // 21.4 / 28.4; private tables 22.4 / 30.6 (CUB 63.6 / 111.0)
    /*hist_warps=*/8,
    /*hist_tables=*/1,
    /*hist_shared_warps=*/8,
    /*stats_threads=*/256,  // GRAY8 stats 12.7 / 15.6 µs (not swept)
    /*map_threads=*/128,    // threshold 12.3 / 18.4 µs, to_gray BGR 13.8 / 20.3 (not swept)
};

// Discrete Hopper (sm_90). Times on an H100 SXM 80 GB (copy bandwidth 2.98 TB/s read + write),
// CUDA 13.0, 16384x16384 GRAY8 (uniform / 90%-skewed), tools/bench/bench_reductions.cu; CUB
// HistogramEven 137 / 107 µs there.
inline constexpr ReductionPolicy kPolicyDiscrete{
    /*hist_warps=*/8,          // 96 registers → 2 blocks/SM: 16 warps × 4 KB of loads in flight;
                               // 99-101 µs (90-92% of copy); 4 warps 101 µs, 6 warps 100 µs
    /*hist_tables=*/1,         // one 32 KB table per block; 2 tables: same; 7 private tables per
                               // block (224 KB, 7 warps/SM, ~28 KB of L1 left): 114-116 µs
    /*hist_shared_warps=*/8,   // warp-shared comparison variant: 129-132 / 98 µs (bank conflicts)
    /*stats_threads=*/256,     // GRAY8 stats 94 µs (96% of copy), S16 100%, F32 95%
    /*map_threads=*/128,       // threshold 185 µs for 2 × 268 MB (97%), to_gray BGR 350 µs (103%)
};

inline const ReductionPolicy& reduction_policy(int cc_major, int cc_minor) {
  return (cc_major == 8 && cc_minor == 7) ? kPolicyOrin : kPolicyDiscrete;
}

}  // namespace jetpipe
