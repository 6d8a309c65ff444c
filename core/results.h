// SPDX-License-Identifier: MIT
// The small per-frame results that stages return to the host (the results contract in README).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace jetpipe {

struct HistogramResult {
  std::vector<std::uint64_t> bins;
  double lo = 0, hi = 256;
};

struct StatsResult {
  double min = 0, max = 0, mean = 0, stddev = 0;  // population standard deviation
  std::uint64_t count = 0;
  bool integral = false;  // min and max are integers (GRAY8, S16 images): written as integers
};

struct ThresholdResult {
  double value = 0;  // the threshold used (Otsu's when asked)
};

struct Detection {
  int x = 0, y = 0;
  float score = 0;
};

struct DetectResult {
  std::uint64_t count = 0;     // points reported
  std::uint64_t overflow = 0;  // candidates beyond max_detections, not reported
  std::vector<Detection> points;  // score descending, then y, then x
};

using StageResult =
    std::variant<std::monostate, HistogramResult, StatsResult, ThresholdResult, DetectResult>;

// The contract's order of detections: score descending, then y, then x ascending.
inline bool detection_before(const Detection& a, const Detection& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.y != b.y) return a.y < b.y;
  return a.x < b.x;
}

}  // namespace jetpipe
