// SPDX-License-Identifier: MIT
#include "pipeline/quantiles.h"

#include <algorithm>
#include <cmath>

#include "pipeline/executor.h"

namespace jetpipe {

namespace {

constexpr double kLow = 1e-6, kHigh = 1e7;  // ms
const double kStep = std::log(1.02);        // each bucket 2% wider than the one below
const std::size_t kBuckets =
    2 + static_cast<std::size_t>(std::ceil(std::log(kHigh / kLow) / kStep));

std::size_t bucket_of(double v) {
  if (!(v >= kLow)) return 0;  // also NaN
  const double i = std::floor(std::log(v / kLow) / kStep);
  return std::min(kBuckets - 1, 1 + static_cast<std::size_t>(i));
}

// The middle of bucket b (geometric): within 1% of any value in it.
double value_of(std::size_t b) {
  return b == 0 ? 0.0 : kLow * std::exp((static_cast<double>(b - 1) + 0.5) * kStep);
}

}  // namespace

void QuantileSketch::add(double v) {
  ++count_;
  if (buckets_.empty()) {
    samples_.push_back(v);
    if (samples_.size() > kExact) to_buckets();
    return;
  }
  ++buckets_[bucket_of(v)];
}

void QuantileSketch::to_buckets() {
  buckets_.assign(kBuckets, 0);
  for (const double v : samples_) ++buckets_[bucket_of(v)];
  samples_.clear();
  samples_.shrink_to_fit();
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) return 0;
  if (buckets_.empty()) return percentile(samples_, q);
  const auto rank = static_cast<std::uint64_t>(
      std::llround(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_ - 1)));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen > rank) return value_of(b);
  }
  return value_of(buckets_.size() - 1);
}

std::size_t QuantileSketch::bytes() const {
  return samples_.capacity() * sizeof(double) + buckets_.capacity() * sizeof(std::uint64_t);
}

}  // namespace jetpipe
