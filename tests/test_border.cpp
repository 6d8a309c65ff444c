// SPDX-License-Identifier: MIT
// border_remap (core/border.h) against OpenCV's borderInterpolate and against the modes'
// definitions written out as sequences (the latter runs without OpenCV too).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/border.h"

#if JETPIPE_HAVE_OPENCV
#include <opencv2/core.hpp>
#endif

namespace jetpipe {
namespace {

constexpr BorderMode kModes[] = {BorderMode::kConstant, BorderMode::kReplicate,
                                 BorderMode::kReflect, BorderMode::kReflect101, BorderMode::kWrap};

TEST(BorderRemap, MatchesOpenCVBorderInterpolate) {
#if JETPIPE_HAVE_OPENCV
  for (BorderMode m : kModes) {
    int cv_mode = cv::BORDER_CONSTANT;
    switch (m) {
      case BorderMode::kConstant:
        cv_mode = cv::BORDER_CONSTANT;
        break;
      case BorderMode::kReplicate:
        cv_mode = cv::BORDER_REPLICATE;
        break;
      case BorderMode::kReflect:
        cv_mode = cv::BORDER_REFLECT;
        break;
      case BorderMode::kReflect101:
        cv_mode = cv::BORDER_REFLECT_101;
        break;
      case BorderMode::kWrap:
        cv_mode = cv::BORDER_WRAP;
        break;
    }
    for (int len = 1; len <= 9; ++len) {
      for (int p = -25; p <= 35; ++p) {
        EXPECT_EQ(border_remap(p, len, m), cv::borderInterpolate(p, len, cv_mode))
            << to_string(m) << " p=" << p << " len=" << len;
      }
    }
  }
#else
  GTEST_SKIP() << "built without OpenCV";
#endif
}

// The extended sequence of each mode built literally from the header's pictures, e.g. reflect101
// of abc: ...cbabcbabc|abc|bacbabcba..., then compared index by index.
TEST(BorderRemap, MatchesTheModesDefinitions) {
  for (int len = 1; len <= 9; ++len) {
    const int reach = 40;  // how far outside to check, on each side
    for (BorderMode m : kModes) {
      std::vector<int> right, left;  // index of position len + i, and of position −1 − i
      switch (m) {
        case BorderMode::kConstant:
          right.assign(reach, -1);
          left.assign(reach, -1);
          break;
        case BorderMode::kReplicate:
          right.assign(reach, len - 1);
          left.assign(reach, 0);
          break;
        case BorderMode::kWrap:
          for (int i = 0; i < reach; ++i) right.push_back(i % len);
          for (int i = 0; i < reach; ++i) left.push_back(len - 1 - i % len);
          break;
        case BorderMode::kReflect:
        case BorderMode::kReflect101: {
          // Walk a bouncing pointer: it moves one step per position and turns at the ends; reflect
          // repeats the end element (…ba|ab…), reflect101 does not (…b|ab…), len 1 stays at 0.
          const bool repeat = m == BorderMode::kReflect;
          for (int side = 0; side < 2; ++side) {
            std::vector<int>& out = side == 0 ? right : left;
            int pos = side == 0 ? len - 1 : 0;
            int dir = side == 0 ? 1 : -1;
            for (int i = 0; i < reach; ++i) {
              if (len == 1) {
                out.push_back(0);
                continue;
              }
              int next = pos + dir;
              if (next < 0 || next >= len) {
                dir = -dir;
                next = repeat ? pos : pos + dir;
              }
              pos = next;
              out.push_back(pos);
            }
          }
          break;
        }
      }
      for (int i = 0; i < len; ++i) EXPECT_EQ(border_remap(i, len, m), i);
      for (int i = 0; i < reach; ++i) {
        EXPECT_EQ(border_remap(len + i, len, m), right[i]) << to_string(m) << " len=" << len;
        EXPECT_EQ(border_remap(-1 - i, len, m), left[i]) << to_string(m) << " len=" << len;
      }
    }
  }
}

TEST(BorderRemap, NamesRoundTrip) {
  for (BorderMode m : kModes) {
    BorderMode parsed = BorderMode::kConstant;
    ASSERT_TRUE(parse_border_mode(to_string(m), &parsed)) << to_string(m);
    EXPECT_EQ(parsed, m);
  }
  BorderMode unchanged = BorderMode::kWrap;
  EXPECT_FALSE(parse_border_mode("mirror", &unchanged));
  EXPECT_FALSE(parse_border_mode("BORDER_REFLECT_101", &unchanged));
  EXPECT_EQ(unchanged, BorderMode::kWrap);
}

}  // namespace
}  // namespace jetpipe
