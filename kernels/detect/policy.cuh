// SPDX-License-Identifier: MIT
// The GPU detection's compile-time shapes (tiles, sort sizes, radix-select digit) and the names
// every part of it shares. Included by the other parts of kernels/detect/.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/block/compact.cuh"

namespace jetpipe {
namespace {  // kernels/detect/dispatch.cu is the one includer

namespace cg = cooperative_groups;
using u32 = std::uint32_t;
using u64 = unsigned long long;

// ---- Policy (launch shapes)
// ----------------------------------------------------------------------
// Compile-time shapes, chosen for sm_87 / sm_90; per-target values in tuning.h.
struct Policy {
  static constexpr int kThreads = 256;
  static constexpr int kTileW = 64;  // output tile of one block (and one finish chunk)
  static constexpr int kTileH = 32;
  static constexpr int kItems =
      kTileW * kTileH / kThreads;                   // outputs per thread: column x, kItems rows
  static constexpr int kRowMaxStride = kTileW + 1;  // odd: conflict-free columns and rows
  static constexpr int kMaxFixedRadius = 5;         // radii compiled with register windows
  static constexpr int kMaxSmemTileRadius = 16;     // above: row maxima read global memory directly
  static constexpr int kMaxRadius = 64;
  static constexpr int kSortCap = 4096;  // keys block 0 sorts (kThreads × 16) when K > kSmallSort
  static constexpr int kSmallSort = 1024;  // kThreads × 4: the cheaper sort, used when K ≤ 1024 ...
  static constexpr int kBlockKeys = 8192;  // ... after a block radix select over ≤ 8192 keys
  static constexpr int kRankKeys = 32;     // the finish by ranks: at most these keys a block ...
  static constexpr int kRankMax = 8192;    // ... for up to this many keys (all in shared memory)
  static constexpr int kLogBins = 10;      // radix-select digit
  static constexpr int kBins = 1 << kLogBins;
  static constexpr int kMaxRows = 8;  // detect_max: a block reads 8 rows × 1024 columns
  static constexpr int kMaxCols = kThreads * 4;
  static constexpr u64 kMinCapacity = 65536;
};
static_assert(Policy::kTileH == 4 * Policy::kItems && Policy::kItems % 8 == 0,
              "thread = column x, rows kItems·h .. kItems·h + kItems − 1");
static_assert(Policy::kThreads == 4 * Policy::kTileW, "four row groups of a 64-wide tile");

using Compact = BlockCompact<u64, Policy::kThreads, Policy::kItems>;

}  // namespace
}  // namespace jetpipe
