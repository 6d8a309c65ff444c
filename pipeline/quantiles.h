// SPDX-License-Identifier: MIT
// p50 / p99 of an endless stream of samples (per-frame latencies and stage times, in ms) in
// bounded memory: the samples themselves up to kExact of them, quantiles exact (the nearest rank,
// as percentile() in pipeline/executor.h); past that, counts in log-spaced buckets 2% wide
// (1e-6 ms to 1e7 ms, ~1,500 buckets, 12 KiB), a quantile then within 1% of the exact one
// (relative; a sample below 1e-6 ms counts as 0). A run at 30 fps for a day keeps ~25 KiB per
// figure instead of ~20 MB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace jetpipe {

class QuantileSketch {
 public:
  static constexpr std::size_t kExact = 4096;

  void add(double v);
  // The q-quantile (0..1) by nearest rank; 0 when empty.
  double quantile(double q) const;
  std::uint64_t count() const { return count_; }
  bool exact() const { return buckets_.empty(); }
  // Bytes held (samples and buckets): bounded whatever the count.
  std::size_t bytes() const;

 private:
  void to_buckets();
  std::vector<double> samples_;         // while exact()
  std::vector<std::uint64_t> buckets_;  // after; [0] counts samples below kLow
  std::uint64_t count_ = 0;
};

}  // namespace jetpipe
