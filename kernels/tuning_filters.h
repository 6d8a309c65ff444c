// SPDX-License-Identifier: MIT
// Launch policies of the neighbourhood filters (gaussian, box, sobel, convolve, harris), apart from
// the algorithms. One constexpr policy per target: Jetson Orin (sm_87, 16 SMs, LPDDR5 ~200 GB/s,
// zero-copy frames) and discrete Hopper (sm_90, 132 SMs, HBM3/3e 3-4.8 TB/s). The launchers pick by
// the device's compute capability (filter_policy()); anything else gets the discrete policy.
// Compile-time shapes (template arguments, register arrays) are shared by both targets.
#pragma once

#if JETPIPE_HAVE_CUDA
#include "kernels/texture.h"

namespace jetpipe {

// ---- Compile-time shapes -------------------------------------------------------------------------
// Fast separable kernel (gaussian and box up to 9 taps, sobel): a warp owns a strip of 32 lanes ×
// 16 columns (lanes 0 and 31 only load halo) and slides down rows_per_warp output rows, keeping the
// last ksize input rows in registers.
constexpr int kFastThreads = 128;  // 4 warps per block (warps are independent)
// Rows in flight. Global sources: each lane cp.async's its rows' chunks into a ring of kFastRing
// 16-byte slots in shared memory (512 bytes a warp and slot: 16 KB a block), kFastAhead rows ahead
// of the row in use. Texture and staged sources keep one row ahead in a register (that register
// ring, H100, 16384² 5×5, 8 rows a warp: 1 → 218 µs, 2 → 228, 3 → 257; its unrolled period grew
// with it). kFastAhead, H200, 16384² gaussian 5×5 at 16 rows (µs): 2 → 167.9-169.4, 4 → 158.0-
// 159.9, 6 → 156.3-158.2, 7 → 158.1-158.8; a 16-slot ring with 8 / 12 ahead 158.7-159.3
// (docs/decisions/045-gaussian-rows-in-flight.md).
constexpr int kFastRing = 8;
constexpr int kFastRingWarpBytes = kFastRing * 512;
constexpr int kFastAhead = 6;
constexpr int kFastMaxRadius = 4;  // ksize ≤ 9; larger kernels use the separable tile engine
// Separable tile engine (gaussian and box above 9 taps; the fast kernel's edge columns and the
// views it does not take): output tile, threads per block.
constexpr int kSepTileW = 64, kSepTileH = 16, kSepThreads = 256;
constexpr int kSepMaxRadius = 32;  // ksize ≤ 65 (shared memory: 30 KB at the largest)
// Running-sum box kernel (kernels/filters/running_box.cuh, ksize 3..31): a warp owns 32 lanes × 16
// columns (lanes 0 and 31 only supply halo: radius ≤ 15) and slides down the policy's rows; each
// lane's rows come through a ring of ksize + kRunBoxAhead 16-byte slots in shared memory (cp.async,
// kRunBoxAhead rows in flight), at most kRunBoxMaxSlots (72 KB a block: 3 blocks an SM at 31 × 31,
// which keeps 5 rows in flight); lanes at the image's edges or over unaligned views load through
// the source kRunBoxEdgeAhead rows ahead in registers. Not swept (decision 046): 150-152 registers
// leave 3 blocks an SM whatever the ring's size.
constexpr int kRunBoxThreads = 128, kRunBoxAhead = 8, kRunBoxMaxSlots = 36, kRunBoxEdgeAhead = 4;
constexpr int kRunBoxWarpOut = 480;
// Launches of more than kRunBoxSplitPx output pixels run the running kernel's interior strips as a
// kernel of their own (51-56 registers against 150-152, more blocks an SM) and then the edge strips
// (the image's first and last strips, every strip of an unaligned view) with the fewest output rows
// a warp, at least kRunBoxEdgeRowsMin, that fit its warps in one wave of its resident blocks
// (run_box_edge_rows; 150-152 registers: 3 blocks of 4 warps an SM, 1,584 warps on 132 SMs);
// smaller launches one kernel for every strip. Split against one kernel (H200, 2026-11-28 10:37
// UTC, replicate, µs, two runs): 1080p 9: 38.0-38.9 / 28.0-28.2, 15: 43.5-44.8 / 32.9-33.4,
// 31: 53.8-54.8 / 39.5-41.5 (a second kernel after a one-wave first adds its whole duration); 4K
// 9: 46.8-48.6 / 49.7-51.5, 15: 51.8-53.5 / 58.3-58.6, 31: 70.5 / 73.2-73.6; 16384² within 1% (the
// policy split there: 9 245 against 263-267 µs, 15 258 against 281, 31 309 against 329 before the
// split, 10:23 UTC). So above 1080p's 2^21 and below 4K's 2^23: 2^22 (not measured between).
constexpr long long kRunBoxSplitPx = 1LL << 22;
// The edge kernel's rows a warp (H200, 2026-11-28 16:16 UTC, replicate, split launches, µs, two
// runs; 16 was the fixed value before): 16384² 9: 4 → 268-271, 8 → 245-247, 16 → 243-247,
// 24 → 229-230, 32 → 234-236; 15: 4 → 301-304, 8 → 262-264, 16 → 257-259, 24 → 239-241,
// 32 → 243-245; 31: 4 → 393, 8 → 325, 16 → 306-311, 24 → 281-283, 32 → 288-289 (one wave: 21);
// 4K 9: 4 → 35.3, 8 → 37.9, 16 → 45.7, 24 → 54.2, 32 → 61.1; 15: 41.1 / 43.8 / 52.5 / 60.0 /
// 67.9; 31: 62.0 / 64.5 / 71.5 / 81.1 / 86.3 (one wave: 3, so 4).
constexpr int kRunBoxEdgeRowsMin = 4;
// 16-byte aligned views ≥ 512 wide take neither split (unless FilterLaunchOptions::box_edge_rows
// asks for the edge kernel): the interior kernel takes every strip, from column 16 (the last moved
// left onto a 16-byte boundary), and the tile engine the 16 columns left of them and those right
// of the last, in tiles as tall as their width allows (TileBoxPart: 256 rows × 16 columns on the
// left). Against the edge kernel at one wave's rows and the former full-width edge tiles (H200,
// 2026-11-28 19:39 UTC, replicate, µs, two runs each): 16384² 9: 183.2-183.9 / 218.9-219.0 (the
// full tiles), 15: 190.2-191.7 / 233.7-234.4 (the edge kernel), 21: 203.7-205.3 / 251.5-251.7, 31:
// 234.5-236.6 / 275.8-276.8; 8192² 9: 69.0-69.2 / 89.0-90.0, 15: 78.1-80.4 / 98.0-99.8, 31:
// 95.3-95.9 / 124.4-125.0; 4K 15: 34.0-34.8 / 36.2-37.2, 31: 48.0-48.5 / 49.7-50.2. So always.
constexpr int kRunBoxMaxRadius = 15;
// Box tile engine (kernels/filters/tile_box.cuh, any ksize ≤ 2·kSepMaxRadius + 1): a block of
// kTileBoxThreads threads sums a tile of kTileBoxH output rows × kTileBoxW columns from shared
// memory (22 KB at 31 × 31, 36 KB at 65 × 65). Not swept. Issue-bound (ncu, H200, 4K 15 × 15:
// 55.0 µs, issue slots 66% busy, DRAM 3%): the halo's per-byte loads, 3.2 input bytes an output.
constexpr int kTileBoxW = 256, kTileBoxH = 16, kTileBoxThreads = 256;
// convolve tile engine (kernel shapes and views the strip kernel does not take, its edge columns):
// output tile (each thread 4 pixels of a row). The strip kernel (3, 5, 7 square) runs kFastThreads.
constexpr int kConvTileW = 64, kConvTileH = 16, kConvThreads = 256;
// The strip kernel's rows in flight, global sources: a ring of kConvRing rows a warp in shared
// memory, each row the warp's 34 16-byte chunks (544 bytes; 17 KB a block), filled by cp.async
// kConvAhead rows ahead of the row in use (texture sources: one row ahead in registers). H200,
// 16384² 5 × 5 integer, the policy's 32 rows (µs): one row ahead in registers 271.6-274.8
// (46.3-46.7% of copy: ~16 warps an SM with one 544-byte row each in flight), this ring 240.3-241.0
// (52.6-53.2%); not swept (decision 043).
constexpr int kConvRing = 8;
constexpr int kConvRingRowBytes = 34 * 16;
constexpr int kConvRingWarpBytes = kConvRing * kConvRingRowBytes;
constexpr int kConvAhead = 6;
// harris tile engine (any ksize / block_size; the fast kernel's edge columns): output tile;
// block_size ≤ 31 (shared memory ≤ 28 KB).
constexpr int kHarrisTileW = 32, kHarrisTileH = 16, kHarrisThreads = 256;
constexpr int kHarrisMaxBlock = 31;
// harris fast kernel (ksize 3, block_size 3..7): a warp owns a strip of 32 lanes × 8 or 4 columns
// (lanes 0 and 31 only supply halo) and slides down rows_per_warp output rows; 4 warps a block.
constexpr int kHarrisFastThreads = 128;
constexpr int kHarrisFastMinBlock = 3, kHarrisFastMaxBlock = 7;

// ---- Per-target policy -------------------------------------------------------------------------
struct FilterPolicy {
  // What FilterPath::kAuto reads through, per filter (kTexture only applies when the source carries
  // a valid texture; otherwise kTiled).
  FilterPath gaussian, box, sobel, convolve, harris;
  // Fast separable kernel: output rows per warp for radius 1..4 on large images (short strips keep
  // many warps in flight and the tail short; each strip re-reads 2R halo rows, from L2), lowered to
  // fast_rows_min where a launch would otherwise have fewer than fast_warps_per_sm warps per SM.
  int fast_rows[kFastMaxRadius];
  int fast_rows_min, fast_warps_per_sm;
  // Staged kernel (gaussian over a colour source, kernels/filters/staged_kernel.cuh): output rows
  // per warp, 1..kStagedMaxRows (a block of 8 warps converts 8 · rows + 2R gray rows once).
  int staged_rows;
  // harris fast kernel: output rows per warp on large images, lowered to harris_rows_min where a
  // launch would otherwise have fewer than harris_warps_per_sm warps per SM; launches of at most
  // harris_narrow_px output pixels use 4 columns a lane (twice the warps), larger ones 8 (images
  // under 272 columns use 4 whatever this says).
  int harris_rows, harris_rows_min, harris_warps_per_sm;
  long long harris_narrow_px;
  // harris ksize 3, block 3: launches of at most harris_tiled_px output pixels run the tiled kernel
  // (kernels/harris/tiled_kernel.cuh; 0: never), larger ones the fast kernel.
  long long harris_tiled_px;
  // box: ksize ≥ box_running_min_ksize (and ≤ 2·kRunBoxMaxRadius + 1) runs the running-sum kernel,
  // smaller the fast kernel; the running kernel's output rows a warp (run_box_rows, from
  // run_box_wide_ksize on run_box_rows_wide), lowered to run_box_rows_min where a launch would
  // otherwise have fewer than run_box_warps_per_sm warps per SM.
  int box_running_min_ksize;
  // Launches of at most box_window_px output pixels keep the fast kernel for every ksize it takes
  // (≤ 2·kFastMaxRadius + 1), whatever box_running_min_ksize says.
  long long box_window_px;
  // Launches of at most box_tile_px output pixels run the box's tile engine where the running
  // kernel would take them (ksize > 2·kFastMaxRadius + 1 or ≥ box_running_min_ksize); ksize above
  // 2·kRunBoxMaxRadius + 1 runs it at every size (the separable engine: for benchmarks).
  long long box_tile_px;
  int run_box_rows, run_box_rows_min, run_box_warps_per_sm;
  int run_box_wide_ksize, run_box_rows_wide;
  // convolve strip kernel (kernels/filters/conv_strip.cuh): output rows a warp on large images,
  // lowered to conv_rows_min where a launch would otherwise have fewer than conv_warps_per_sm warps
  // an SM.
  int conv_rows, conv_rows_min, conv_warps_per_sm;
};

// Jetson Orin (sm_87), chosen on an H200 in a green context of 16 and 8 SMs (AGX Orin has 16, Orin
// NX / Nano 8), 1080p GRAY8, 2026-11-27, `jetpipe-bench --sizes 1920x1080 --sms 16|8 --policy orin`
// (decision 042). Memory bandwidth is not scaled (H200 ~4.2 TB/s, Orin ~205 GB/s): these times
// bound the compute-limited side only. Values not swept there are the sm_90 ones, said so below.
inline constexpr FilterPolicy kFilterPolicyOrin{
    // 1080p, 16 / 8 SMs, µs: gaussian 5×5 tiled 24.4 / 38.3, texture 24.1 / 37.3 (within the
    // spread: the tiled path, as on sm_90); sobel 22.2 / 33.2 against 23.9 / 35.7; convolve 77.2 /
    // 143.6 against 76.7 / 142.0; harris tiled kernel 54.6 / 99.8 against the texture path 82.2 /
    // 137.4.
    /*gaussian=*/FilterPath::kTiled,
    /*box=*/FilterPath::kTiled,
    /*sobel=*/FilterPath::kTiled,
    /*convolve=*/FilterPath::kTiled,
    /*harris=*/FilterPath::kTiled,
    // Swept at 16 / 8 SMs (H200 green contexts, 2026-11-28 23:52 UTC, `jetpipe-bench --area
    // filters --filter gaussian --sizes 1920x1080,1280x720 --sms 16|8 --policy orin --reps 25`,
    // rows "gaussianK rN" / "boxK rN", two runs, µs; at 1080p the warp floor never binds, 8 rows
    // of 5×5 are 540 warps ≥ 16 · 24, so N rows there is what the policy runs at N; at 720p the
    // floor lowers every radius to 5 rows, whatever this says). 6 / 8 / 12 / 16 rows, 1080p:
    // gaussian 3×3 16 SMs 19.8-20.2 / 18.6-18.8 / 19.2-20.0 / 19.2-20.2, 8 SMs 30.7-31.1 /
    // 28.7-29.5 / 28.7-29.3 / 29.3; box 3×3 16 SMs 22.5-23.3 / 22.0-22.1 / ..., 8 SMs 35.6-36.5 /
    // 33.9-34.3 / ...: radius 1 takes 8 (was 6). Gaussian 7×7 16 SMs 26.5-27.0 / 25.5-26.2 /
    // 26.5-26.7 / 26.8-27.4, 8 SMs 44.0-44.3 / 41.2-41.6 / 42.0 / 41.6-41.9; box 7×7 16 SMs
    // 30.1-30.5 / 28.6 / 29.5-30.0 / 31.4-31.7: radius 3 takes 8 (was 12). Gaussian 5×5 keeps 8
    // (16 SMs 21.7-22.1, the best); 9×9 keeps 16 (16 SMs 29.0-29.8 at 8 against 30.4-30.5, 8 SMs
    // 48.4-48.9 against 47.8-47.9: within 5% either way, and 4K not measured).
    /*fast_rows=*/{8, 8, 8, 16},
    /*fast_rows_min=*/4,
    /*fast_warps_per_sm=*/24,
    /*staged_rows=*/2,  // not swept: the sm_90 value; chain prefix gray + gaussian 25.8 / 46.2 µs
    // harris fast kernel (above harris_tiled_px only), 1080p, 8 columns a lane, rows a warp (µs,
    // 16 / 8 SMs): 4 → 72.8 / 134.5, 8 → 65.0 / 118.8, 16 → 64.3 / 113.7, 32 → 67.4 / 114.4;
    // 4 columns a lane 5-16% slower at every rows. The best sits at ~34 warps an SM on both
    // (16 rows at 16 SMs, 32 at 8), which 32 warps an SM picks; 4 rows lose 12-18%: floor 8.
    // (The former 8 warps an SM kept 32 rows at 16 SMs: 67.4 against 64.3.)
    /*harris_rows=*/32,
    /*harris_rows_min=*/8,
    /*harris_warps_per_sm=*/32,
    /*harris_narrow_px=*/0,
    // harris 3 / 3, 1080p, the tiled kernel against the fast kernel's best (µs, 16 / 8 SMs): 54.6
    // / 99.8 against 64.3 / 113.7; the 1080p chain as a graph (GPU time) 137.8 / 240.0 with the
    // fast kernel (the former 0 here) against 119.1 / 212.3 with the tiled one (sm_90 policy,
    // same run). So the tiled kernel up to 2^24 pixels, as on sm_90.
    /*harris_tiled_px=*/1LL << 24,
    // box, 1080p, sliding windows (the fast kernel to 9, the separable engine above) against
    // running sums (µs, 16 / 8 SMs): 7: 31.9 / 52.0 against 56.4 / 84.6, 9: 37.2 / 60.9 against
    // 41.8 / 63.9, 11: 160.4 / 311.5 against 44.0 / 66.6, 15: 207.0 / 404.2 against 70.6 / 109.3,
    // 31: 407.6 / 796.6 against 98.4 / 139.3. So running sums from 11 (7 on sm_90).
    /*box_running_min_ksize=*/11,
    // sm_90's (no ksize takes both kernels here: 9 is the fast one's).
    /*box_window_px=*/1LL << 24,
    // Off (ksize > 31 only): the tile engine is issue-bound (~145 thread instructions an output,
    // ncu on the H200), which 8 / 16 SMs feel more than the running kernel; not measured there.
    /*box_tile_px=*/0,
    // The running kernel's rows a warp at 16 / 8 SMs (H200 green contexts, 2026-11-28 23:38 UTC,
    // `jetpipe-bench --area filters --filter box --sms 16|8 --policy orin --reps 25`, rows " rN",
    // two runs, µs): the best rows sit at ~8.5 warps an SM at every size measured. 15 × 15, 8 / 16
    // /
    // 32 / 64 / 96 rows: 16 SMs 720p 41.2-43.1 / 33.6-35.5 / 40.8-42.9 / 60.6-62.7 / 82.7-85.1,
    // 1080p 63.5-65.0 / 57.5-59.1 / 48.5-50.9 / 71.2-73.1 / 96.3-98.5; 8 SMs 720p 64.8-65.1 /
    // 58.9 / 45.8-46.1 / 64.6-64.7 / 84.4-85.0, 1080p 117.7-119.4 / 86.4-88.9 / 84.9-87.6 /
    // 76.4-79.1 / 101.9-103.5; 31 × 31 alike (16 SMs 1080p 32 rows 59.6-60.8 against 16 rows,
    // the former policy's, 76.4-78.8). 8 warps an SM picks 16 / 33 rows at 16 SMs (720p / 1080p),
    // 33 / 64 at 8; 16 picked 8 / 16 and 16 / 33. 4K at 16 SMs keeps 64 either way (96: 31 × 31
    // 78.5-80.7 against 88.0-91.0; not taken: one size, one ksize). The policy's box, 8 against
    // 16 warps an SM (23:41 UTC, tools/gpu/ab.sh, two runs each): 1080p 15 × 15 58.0-59.7 →
    // 49.8-51.7 (16 SMs), 88.2-88.5 → 77.6 (8); 31 × 31 77.4-79.9 → 60.1-60.4, 108.2-109.5 →
    // 89.8-90.8; 720p 31 × 31 61.0-61.1 → 46.6-46.8, 77.7-78.0 → 53.2-53.3: 9-32% off 11..31.
    /*run_box_rows=*/64,
    /*run_box_rows_min=*/8,
    /*run_box_warps_per_sm=*/8,
    // Not swept at 16 / 8 SMs: every ksize the same rows.
    /*run_box_wide_ksize=*/2 * kRunBoxMaxRadius + 1,
    /*run_box_rows_wide=*/64,
    // The sm_90 values, swept at 16 / 8 SMs (H200 green contexts, 2026-11-28 23:45 UTC,
    // `jetpipe-bench --area filters --filter convolve --sms 16|8 --policy orin --reps 25`, two
    // runs, µs): convolve 5 × 5 at the policy's rows (12 / 25 at 1080p) against 4 / 8 / 16 / 32 /
    // 64 rows a warp: 16 SMs 1080p 37.5-38.9 against 35.8-37.2 / 36.1-36.3 / 37.4-38.0 /
    // 42.4-43.2 / 45.6-45.7, 720p 25.0-27.1 against 24.5-26.1 / 24.6-26.1 / 26.5-28.2 / ...;
    // 8 SMs 1080p 58.8-59.6 against 60.5-62.2 / 55.4-57.5 / 56.6-56.8 / 59.3-60.7 / 65.3-67.1,
    // 720p 38.7-41.1 against 40.1-40.7 / 37.3-38.9 / 39.2-40.7 / .... Within 0-6% of the best
    // fixed rows everywhere: kept. With the cp.async ring (2026-11-29 02:54 UTC, the same bench,
    // µs): 16 SMs 1080p 34.6-35.4 against 4 / 8 / 16 / 32 / 64 rows 34.1-35.8 / 33.1-34.1 /
    // 34.0-35.4 / 38.7-39.3 / 41.7-43.1; 8 SMs 1080p 56.3-56.4 against 57.3-60.0 / 53.6-54.6 /
    // 53.5-53.7 / 54.9-57.7 / 62.4-63.7: still within 0-5%, kept.
    /*conv_rows=*/32,
    /*conv_rows_min=*/8,
    /*conv_warps_per_sm=*/16,
};

// Discrete Hopper (sm_90). Times: H100 SXM 80 GB (D2D copy 2.97 TB/s read + write), CUDA 13.0,
// 16384² GRAY8, replicate border, tiled / texture (jetpipe-bench --area filters; NPP beside:
// gaussian 5×5 2017 µs, box 5×5 445 µs, sobel 3×3 421 µs).
inline constexpr FilterPolicy kFilterPolicyDiscrete{
    // gaussian 5×5: tiled 222.7 µs (81% of copy), texture 229.6 µs; 3×3: 195 / 217; 7×7: 250 / 256;
    // 9×9: 320 / 304 (the texture path wins only there).
    /*gaussian=*/FilterPath::kTiled,
    /*box=*/FilterPath::kTiled,    // 5×5: 239.7 / 243.4 µs
    /*sobel=*/FilterPath::kTiled,  // 3×3 dx → S16: 292.3 / 306.9 µs (92% of copy at 3 B/pixel)
    /*convolve=*/FilterPath::kTiled,  // 5×5 k/16 (strip kernel): 294.0 / 294.1 µs (2026-11-28)
    // harris 3 / 3 (fast kernel, 8-column lanes, 32 rows a warp): 700 / 916 µs; 1080p (8 rows):
    // 20.3 / 21.7 µs, event-timed single launches (to_gray's 1080p launch reads 7 µs that way).
    /*harris=*/FilterPath::kTiled,
    // rows per warp with the row ring (decision 045), H100, 16384², gaussian / box (µs): 3×3:
    // 6 → 191.7-192.1 / 191.8-192.2, 8 → 191.6-193.2 / 191.9-194.8, 12 → 201; 5×5: 8 → 194.2-194.7
    // / 210.2-216.0, 12 → 195.4-196.1 / 202.8-203.8, 16 → 203.4-203.8 / 205.9; 7×7: 12 → 209.9-
    // 210.4 / 260.7-261.9, 16 → 206.0-206.5 / 255.9-257.1, 32 → 220.2-220.4 / 248.6-250.3; 9×9
    // (gaussian): 12 → 267-270, 16 → 265-268, 32 → 257-259. 5×5 takes 16, not the H100's 12: on
    // the H200 (6 ahead) 12 → 160.2-163.7, 16 → 157.3-160.8 (80%); the H100 at 16 stays at 88%.
    /*fast_rows=*/{6, 16, 16, 16},
    /*fast_rows_min=*/4,
    /*fast_warps_per_sm=*/24,  // the resident warps at 6 blocks of 4 warps (80 registers, 5×5)
                               // H200, the 1080p chain as a graph: 1 → 30.0 µs, 2 → 29.8
                               // (docs/decisions/002-gaussian-staged-colour.md).
    /*staged_rows=*/2,
    // harris fast kernel, block 3 / ksize 3, tiled, rows a warp × columns a lane (µs, H100), with
    // the edge tiles compiled for ksize 3:
    // 16384²: 8 cols: 8 → 764, 16 → 709, 32 → 689; 4 cols: 16 → 824. 3840×2160: 8 cols: 8 → 37.2,
    // 16 → 39.7, 32 → 47.5. 1080p: 8 cols: 8 → 18.9, 16 → 20.8, 32 → 27.2; 4 cols: 16 → 21.4.
    // So 8 columns everywhere, 32 rows at 16384², 8 rows at 1080p and 4K (up to 32 warps/SM).
    /*harris_rows=*/32,
    /*harris_rows_min=*/8,
    /*harris_warps_per_sm=*/32,
    /*harris_narrow_px=*/0,
    // harris 3 / 3, tiled kernel against the fast kernel (H100, event-timed single launches, µs;
    // the fast kernel at 8 rows a warp, 32 at 16384²): 640×480 9.7 / 11.1, 1080p 14.0 / 17.1,
    // 4K 34.7 / 35.5, 16384² 814 / 689; the 1080p chain as a graph 33.8 / 37.2. So up to 4K and
    // a bit beyond: 2^24 pixels (docs/decisions/003-harris-tiled.md).
    /*harris_tiled_px=*/1LL << 24,
    // box, running sums (the cp.async ring, decision 046) against the sliding windows (H200,
    // 16384², replicate, 128 rows a warp, µs, 2026-11-28): 3: 290 / 169, 5: 293 / 197,
    // 7: 303 / 254, 9: 305 / 333, 11: 307 / 2354, 15: 317 / 3077, 31: 346 / 6135. With the
    // narrow edge tiles (19:39 UTC, µs, two runs): 16384² 5: 182.2-182.6 / 195.6-196.4, 7:
    // 182.3-182.5 / 254.2-254.5; 8192² 5: 64.7-65.4 / 60.7-61.6, 7: 66.5-67.1 / 78.2-78.8. So 7
    // (box_window_px keeps the fast kernel to 9 in launches up to 2^24 pixels).
    /*box_running_min_ksize=*/7,
    // 9 × 9 (the one ksize both kernels take), same runs: the fast kernel 10.7-11.3 µs against
    // 28.5-28.7 at 1080p (2^21 pixels), 332.5-334.4 against 265.2-266.3 at 16384² (2^28). The
    // crossover between is not measured: 2^24, harris_tiled_px's bound (up to 4K and a bit more).
    /*box_window_px=*/1LL << 24,
    // The tile engine against the running kernel (H200, 2026-11-28 10:48 UTC, replicate, µs, two
    // runs): 1080p 11: 24.2-24.9 / 30.2-30.6, 15: 25.2-26.0 / 32.2-32.7, 21: 29.7-30.2 /
    // 35.8-36.8, 31: 34.5-34.9 / 38.7-39.4; 4K 11: 54.3-54.5 / 47.7-48.9, 15: 58.8-59.3 /
    // 52.5-52.8 (split), 31: 82.6-82.9 / 69.9; 16384² 15: 1,380 / 256. So up to 1080p (2^21; not
    // measured between 1080p and 4K). Above 31 against the separable engine: 1080p 33: 35.0-35.4
    // / 60.7-62.0, 65: 53.2-53.7 / 143.9-144.8; 4K 65: 129.3-129.6 / 523.2-524.0; 16384² 65:
    // 3,266-3,271 / 16,287-16,289.
    /*box_tile_px=*/1LL << 21,
    // Rows a warp at 16384² (1080p and 4K get run_box_rows_min, 8, anyway), with today's
    // interior kernel and tile-engine edges (H200, 2026-11-29 14:42 UTC, `jetpipe-bench --area
    // filters --filter box --sizes 16384x16384 --reps 25`, rows "boxK rN", µs, the two trees of
    // one tools/gpu/ab.sh call): 9: 16 → 178.0 / 178.0, 32 → 181.4 / 182.9, 64 → 184.9 / 184.7,
    // 96 → 188.9 / 188.3, 128 → 193.2, 192 → 206.6 / 208.1; 15: 32 → 192.1 / 192.1, 64 → 190.3 /
    // 190.3, 96 → 187.5 / 188.4, 128 → 202.3, 192 → 211.0 / 210.8; 21: 64 → 205.4, 96 → 196.3,
    // 128 → 200.5, 192 → 196.2; 25: 64 → 214.4, 96 → 204.8, 128 → 209.5, 192 → 204.5; 31: 64 →
    // 235.0 / 234.6, 96 → 221.0 / 220.9, 128 → 223.8, 192 → 216.2 / 216.6, 256 → 243.4 / 243.2.
    // Not monotonic (the last wave's fill: 128 lost at every ksize), so 64 below 15 (16 is not
    // taken: one ksize, and 4K and 8K not measured) and 96 from 15 on, where it won at each
    // ksize measured (docs/decisions/047-box-rows-and-two-slides.md).
    /*run_box_rows=*/64,
    /*run_box_rows_min=*/8,
    /*run_box_warps_per_sm=*/16,
    /*run_box_wide_ksize=*/15,
    /*run_box_rows_wide=*/96,
    // convolve 5×5 (integer path), rows a warp, 2026-11-28 (H100, register row, µs): 16384²: 4 →
    // 373.6, 8 → 316.3, 16 → 294.6, 32 → 293.8, 64 → 293.5; 1080p: 4 → 14.6, 8 → 14.3, 16 → 18.6,
    // 32 → 24.6. With the cp.async ring (H200, 2026-11-29, two runs): 16384² 4 → 295.8-299.0, 8 →
    // 259.6-263.6, 16 → 242.5-246.9, 32 → 238.8-239.9, 64 → 242.4-247.9; 1080p 4 → 14.4-14.7, 8 →
    // 13.9-15.4, 16 → 18.9-19.3 (docs/decisions/043-convolve-strips-exact-arithmetic.md).
    /*conv_rows=*/32,
    /*conv_rows_min=*/8,
    /*conv_warps_per_sm=*/16,  // the resident warps at 4 blocks of 4 warps (5×5: 121-128 registers)
};

inline const FilterPolicy& filter_policy(int cc_major, int cc_minor) {
  return (cc_major == 8 && cc_minor == 7) ? kFilterPolicyOrin : kFilterPolicyDiscrete;
}

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
