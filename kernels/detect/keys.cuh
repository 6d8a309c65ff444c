// SPDX-License-Identifier: MIT
// The detection's candidate keys (ascending = the contract's order), its workspace layout (header,
// feed bands, candidate buffer, kept keys, CUB's sort area) and the response loads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "kernels/block/max_key.cuh"
#include "kernels/detect.h"
#include "kernels/detect/policy.cuh"

namespace jetpipe {
namespace {  // kernels/detect/dispatch.cu is the one includer

// ---- Keys
// ------------------------------------------------------------------------------------------
using dev::from_order_key;
using dev::order_key;
// Ascending = the contract's order.
__device__ __forceinline__ u64 candidate_key(float s, u32 index) {
  return (static_cast<u64>(~order_key(s)) << 32) | index;
}
// The twin's threshold for quality: float(q · double(max)); no maximum (no rows, all NaN) = −inf.
__device__ __forceinline__ float quality_threshold(double quality, u32 max_key) {
  const float m = max_key ? from_order_key(max_key) : -INFINITY;
  return static_cast<float>(quality * static_cast<double>(m));
}
// Candidate keys of scores above `thresh` are exactly the keys below this bound (keys ascend as
// scores descend; the low 32 bits, the index, never reach the next score).
__device__ __forceinline__ u64 threshold_limit(float thresh) {
  return thresh != thresh ? 0ull : static_cast<u64>(~order_key(thresh)) << 32;
}

// ---- Workspace
// -------------------------------------------------------------------------------------
struct Header {
  u64 count;         // candidates reserved in the buffer, also beyond it (reset by the finish)
  u32 max_key;       // order_key of the maximum, 0 = none yet (reset by the finish)
  u32 done;          // finish blocks that have read the header; the last one resets it
  // Dense candidates (both reset by the finish): a dense tile's block, or a dense warp of the
  // rows kernel, holding at least max_detections candidates proposes the largest of them as a
  // bound (at least max_detections candidates are at or below it); dense blocks and warps then drop
  // their keys above the smallest bound so far, counted in `dropped` (N = count + dropped). 0 =
  // none (bound_c holds ~bound).
  u64 bound_c;
  u64 dropped;
  u64 out_count;     // points of this frame, for detect_write
  u64 valid;         // finish scratch from here on (initialized by the finish when it needs it)
  u64 compacted[2];
  u64 lo[2], hi[2];
  u32 hist[3][Policy::kBins];
};

constexpr std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

struct Layout {
  u64 pixels = 0, cap = 0, k = 0, kept_cap = 0;
  bool big = false;  // K > kSortCap: CUB sorts the kept keys
  std::size_t bands = 0, cand = 0, kept = 0, sorted = 0, cub = 0, cub_bytes = 0, total = 0;
  int band_pitch = 0, band_cols = 0;  // MaxFeed's bands (kernels/max_feed.h)
};

// The feed's bands: right after the header (their place depends on the size only, not on p).
struct BandLayout {
  int pitch, cols;
  std::size_t offset, bytes;
};
BandLayout band_layout(int width, int height) {
  BandLayout b;
  b.pitch = ((std::max(height, 1) + kFeedBandRows - 1) / kFeedBandRows + 3) / 4 * 4;
  b.cols = (std::max(width, 1) + kFeedBandCols - 1) / kFeedBandCols;
  b.offset = align_up(sizeof(Header), 256);
  b.bytes = static_cast<std::size_t>(b.pitch) * b.cols * sizeof(std::uint32_t);
  return b;
}

Layout make_layout(const DetectParams& p, int width, int height) {
  Layout l;
  l.pixels = static_cast<u64>(std::max(width, 0)) * static_cast<u64>(std::max(height, 0));
  l.k = static_cast<u64>(std::max(p.max_detections, 0));
  l.big = l.k > static_cast<u64>(Policy::kSortCap);
  l.cap = std::min(l.pixels, std::max({Policy::kMinCapacity, 4 * l.k, l.pixels / 8}));
  l.cap = std::max<u64>(l.cap, 1);
  l.kept_cap = l.big ? l.k : static_cast<u64>(Policy::kSortCap);
  const BandLayout b = band_layout(width, height);
  l.bands = b.offset;
  l.band_pitch = b.pitch;
  l.band_cols = b.cols;
  l.cand = align_up(l.bands + b.bytes, 256);
  l.kept = align_up(l.cand + l.cap * sizeof(u64), 256);
  std::size_t end = l.kept + l.kept_cap * sizeof(u64);
  if (l.big) {
    l.sorted = align_up(end, 256);
    l.cub = align_up(l.sorted + l.k * sizeof(u64), 256);
    cub::DeviceRadixSort::SortKeys(nullptr, l.cub_bytes, static_cast<const u64*>(nullptr),
                                   static_cast<u64*>(nullptr), static_cast<int>(l.k), 0, 64,
                                   static_cast<cudaStream_t>(nullptr));
    end = l.cub + l.cub_bytes;
  }
  l.total = align_up(end, 256);
  return l;
}

// ---- Loads
// -----------------------------------------------------------------------------------------
struct ResponseView {
  const unsigned char* data;
  std::size_t pitch;
  int width, height;
};

template <class T>
__device__ __forceinline__ float load_score(const ResponseView& v, int x, int y) {
  return static_cast<float>(
      __ldg(reinterpret_cast<const T*>(v.data + static_cast<std::size_t>(y) * v.pitch) + x));
}

}  // namespace
}  // namespace jetpipe
