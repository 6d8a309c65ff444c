// SPDX-License-Identifier: MIT
// The size × border × variant cases and filter settings shared by the filter suites (CPU twins against OpenCV, GPU twins
// against the CPU twins), with gtest names like "113x113_reflect101_v2".
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/border.h"
#include "kernels/convolve.h"

namespace jetpipe::test {

struct NamedBorder {
  const char* name;
  Border border;
};
inline const NamedBorder kBorders[] = {
    {"constant0", {BorderMode::kConstant, 0}},    {"constant77", {BorderMode::kConstant, 77.3}},
    {"replicate", {BorderMode::kReplicate, 0}},   {"reflect", {BorderMode::kReflect, 0}},
    {"reflect101", {BorderMode::kReflect101, 0}}, {"wrap", {BorderMode::kWrap, 0}},
};
inline constexpr int kBorderCount = sizeof(kBorders) / sizeof(kBorders[0]);

struct Size2 {
  int w, h;
};
inline constexpr Size2 kBig = {1920, 1080};

struct Case {
  Size2 size;
  int border;   // index into kBorders
  int variant;  // index into the suite's table of settings
};

// Every size × border × variant, and 1920×1080 for three borders (constant77, reflect101, wrap) and
// the given variants only, so that the suites stay fast.
inline std::vector<Case> make_cases(const std::vector<Size2>& sizes, int variants,
                                    const std::vector<int>& big_variants) {
  std::vector<Case> cases;
  for (const Size2& s : sizes) {
    for (int b = 0; b < kBorderCount; ++b) {
      for (int v = 0; v < variants; ++v) cases.push_back({s, b, v});
    }
  }
  for (int b : {1, 4, 5}) {
    for (int v : big_variants) cases.push_back({kBig, b, v});
  }
  return cases;
}

inline std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::to_string(c.size.w) + "x" + std::to_string(c.size.h) + "_" + kBorders[c.border].name +
         "_v" + std::to_string(c.variant);
}

inline void PrintTo(const Case& c, std::ostream* os) {
  *os << c.size.w << "x" << c.size.h << " " << kBorders[c.border].name << " variant " << c.variant;
}

// The filters' settings; each suite lists the ones it runs.
struct GaussianVariant {
  int ksize;
  double sigma;
};
struct BoxVariant {
  int ksize;
  bool normalize;
};
struct SobelVariant {
  int dx, dy, ksize;
  double scale;
  bool abs8;
};
struct ConvolveVariant {
  int rows, cols;
};
struct HarrisVariant {
  int block_size, ksize;
};

// Random taps: mostly positive, some negative, summing to about 1, and a random delta.
inline ConvolveParams random_convolve(const ConvolveVariant& v, const Border& b, std::mt19937& rng) {
  ConvolveParams p;
  p.rows = v.rows;
  p.cols = v.cols;
  p.border = b;
  std::uniform_real_distribution<float> tap(-0.4f, 1.0f);
  float sum = 0;
  for (int i = 0; i < v.rows * v.cols; ++i) {
    p.taps.push_back(tap(rng));
    sum += p.taps.back();
  }
  if (std::fabs(sum) < 0.1f) sum = 0.1f;
  for (float& t : p.taps) t /= sum;
  p.delta = std::uniform_real_distribution<double>(-20, 20)(rng);
  return p;
}

}  // namespace jetpipe::test
