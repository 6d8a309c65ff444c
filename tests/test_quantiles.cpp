// SPDX-License-Identifier: MIT
// Bounded quantiles (pipeline/quantiles.h): exact up to kExact samples, within 1% after, memory
// flat however many samples come.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "pipeline/executor.h"
#include "pipeline/quantiles.h"
#include "test_util.h"

namespace jetpipe {
namespace {

TEST(Quantiles, ExactUpToKExactSamples) {
  std::mt19937 rng(test::fresh_seed());
  std::lognormal_distribution<double> ms(0.0, 1.0);
  QuantileSketch q;
  std::vector<double> all;
  EXPECT_EQ(q.quantile(0.5), 0.0);
  for (std::size_t i = 0; i < QuantileSketch::kExact; ++i) {
    all.push_back(ms(rng));
    q.add(all.back());
  }
  ASSERT_TRUE(q.exact());
  for (double p : {0.0, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(q.quantile(p), percentile(all, p)) << p;
}

TEST(Quantiles, WithinOnePercentAndFlatBeyond) {
  std::mt19937 rng(test::fresh_seed());
  std::lognormal_distribution<double> ms(-1.0, 1.5);  // ~0.01 ms to ~100 ms
  QuantileSketch q;
  std::vector<double> all;
  std::size_t bytes_at_switch = 0;
  for (int i = 0; i < 200000; ++i) {
    all.push_back(i % 1000 == 0 ? 0.0 : ms(rng));  // zeros too
    q.add(all.back());
    if (i == 10000) bytes_at_switch = q.bytes();
  }
  EXPECT_FALSE(q.exact());
  EXPECT_EQ(q.count(), all.size());
  EXPECT_EQ(q.bytes(), bytes_at_switch) << "memory flat after the switch to buckets";
  EXPECT_LT(q.bytes(), 16u * 1024u);
  for (double p : {0.01, 0.5, 0.9, 0.99, 0.999}) {
    const double want = percentile(all, p), got = q.quantile(p);
    EXPECT_NEAR(got, want, 0.01 * want) << "q " << p;
  }
  EXPECT_EQ(q.quantile(0.0), 0.0);  // the zeros
}

}  // namespace
}  // namespace jetpipe
