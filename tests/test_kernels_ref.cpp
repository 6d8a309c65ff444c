// SPDX-License-Identifier: MIT
// Accuracy of the CPU reference twins (kernels/*_ref.cpp) against OpenCV 4.6.
//
// Every filter runs on fresh random input in three layouts (tight rows, rows padded by 13 elements,
// an ROI view at x offset 1..3 inside a padded image) into a poisoned output that sits inside a
// larger poisoned image; the run must write nothing outside its view and rows, and three uneven row
// strips must give exactly the pixels of one call over all rows. The result is compared with
//  - OpenCV on the input extended by cv::copyMakeBorder (mode, constant value), then cropped: an
//    oracle for every mode, including wrap and a nonzero constant, which OpenCV's filters lack;
//  - OpenCV called directly, for the modes it supports (constant 0, replicate, reflect,
//  reflect101).
// Tolerances: exact where the twin does OpenCV's integer arithmetic (to_gray, gaussian, box, sobel
// with scale 1, histogram, stats, threshold, Otsu), ±1 for 8-bit outputs computed in floating point
// (convolve, sobel with a scale), 1e-4 of the largest |response| for harris.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/box.h"
#include "kernels/convolve.h"
#include "kernels/detect.h"
#include "kernels/gaussian.h"
#include "kernels/harris.h"
#include "kernels/histogram.h"
#include "kernels/ref_util.h"
#include "kernels/sobel.h"
#include "kernels/stats.h"
#include "kernels/threshold.h"
#include "kernels/to_gray.h"
#include "tests/filter_cases.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace jetpipe {
namespace {

using test::fresh_seed;
using test::max_diff;
using test::random_image;

// ---- Cases: size × border × filter variant
// ---------------------------------------------------------

using test::Case;
using test::case_name;
using test::kBorderCount;
using test::kBig;
using test::kBorders;
using test::NamedBorder;
using test::Size2;

// The sizes of the twin-against-OpenCV cases (and 1920×1080 for a few, see make_cases).
const std::vector<Size2> kSizes = {{1, 1}, {1, 7}, {7, 1}, {3, 129}, {129, 3}, {113, 113}, {640, 480}};

std::vector<Case> make_cases(int variants, const std::vector<int>& big_variants) {
  return test::make_cases(kSizes, variants, big_variants);
}

// For suites without a border.
std::string size_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::to_string(c.size.w) + "x" + std::to_string(c.size.h) + "_v" +
         std::to_string(c.variant);
}

// ---- Inputs and outputs
// ----------------------------------------------------------------------------

struct Input {
  HostImage owner;
  ImageView view;
  std::string layout;
};

// The three layouts of a fresh random w×h image.
std::vector<Input> make_inputs(int w, int h, PixelFormat f, std::mt19937& rng) {
  std::vector<Input> in;
  HostImage tight = random_image(w, h, f, rng, 0);
  in.push_back({tight, tight.view(), "tight rows"});
  HostImage padded = random_image(w, h, f, rng, 13);
  in.push_back({padded, padded.view(), "rows padded by 13"});
  const int ox = std::uniform_int_distribution<int>(1, 3)(rng);
  HostImage big = random_image(w + ox + 2, h + 2, f, rng, 13);
  in.push_back({big, big.view().roi(ox, 1, w, h), "ROI at x=" + std::to_string(ox) + " y=1"});
  return in;
}

constexpr std::uint8_t kPoison = 0xA5;

// An output view at (2, 1) inside a larger image with padded rows, all of it poisoned.
struct Output {
  HostImage parent;
  ImageView view;
};

Output make_output(int w, int h, PixelFormat f) {
  const std::size_t bpp = bytes_per_pixel(f);
  Output o{HostImage(w + 4, h + 2, f, (w + 9) * bpp), ImageView{}};
  o.view = o.parent.view().roi(2, 1, w, h);
  const ImageView p = o.parent.view();
  for (int y = 0; y < p.height; ++y) std::memset(p.row<std::uint8_t>(y), kPoison, p.pitch);
  return o;
}

// True when every byte of the output's parent outside rows [y0, y1) of its view is still poison.
bool poisoned_outside(const Output& o, int y0, int y1) {
  const ImageView p = o.parent.view();
  const std::size_t x0 = 2 * static_cast<std::size_t>(bytes_per_pixel(p.format));
  const std::size_t x1 = x0 + o.view.row_bytes();
  for (int y = 0; y < p.height; ++y) {
    const bool written = y >= 1 + y0 && y < 1 + y1;
    const std::uint8_t* r = p.row<std::uint8_t>(y);
    for (std::size_t i = 0; i < p.pitch; ++i) {
      if (written && i >= x0 && i < x1) continue;
      if (r[i] != kPoison) return false;
    }
  }
  return true;
}

bool same_pixels(const ImageView& a, const ImageView& b) {
  for (int y = 0; y < a.height; ++y) {
    if (std::memcmp(a.row<std::uint8_t>(y), b.row<std::uint8_t>(y), a.row_bytes()) != 0)
      return false;
  }
  return true;
}

using RowFn = std::function<void(const ImageView& src, const ImageView& dst, int y0, int y1)>;

// Runs fn over all rows, then again in three uneven strips; checks that neither wrote outside its
// rows and that both give the same pixels. Returns the one-call output.
Output run_rows(const RowFn& fn, const ImageView& src, PixelFormat out_format) {
  const int w = src.width, h = src.height;
  Output whole = make_output(w, h, out_format);
  fn(src, whole.view, 0, h);
  EXPECT_TRUE(poisoned_outside(whole, 0, h)) << "wrote outside the output view";

  const int a = h / 5, b = std::min(h, a + (h - a) / 2 + 1);
  Output strips = make_output(w, h, out_format);
  fn(src, strips.view, 0, a);
  EXPECT_TRUE(poisoned_outside(strips, 0, a)) << "strip [0, " << a << ") wrote other rows";
  fn(src, strips.view, a, b);
  EXPECT_TRUE(poisoned_outside(strips, 0, b))
      << "strip [" << a << ", " << b << ") wrote other rows";
  fn(src, strips.view, b, h);
  EXPECT_TRUE(same_pixels(whole.view, strips.view))
      << "strips [0," << a << ") [" << a << "," << b << ") [" << b << "," << h
      << ") differ from one call over all rows";
  return whole;
}

// ---- OpenCV oracles
// --------------------------------------------------------------------------------

#if JETPIPE_HAVE_OPENCV
int cv_type(PixelFormat f) {
  switch (f) {
    case PixelFormat::kBgr8:
    case PixelFormat::kRgb8:
      return CV_8UC3;
    case PixelFormat::kS16:
      return CV_16SC1;
    case PixelFormat::kF32:
      return CV_32FC1;
    default:
      return CV_8UC1;
  }
}

// A Mat sharing the view's pixels; OpenCV sees no parent, so it treats an ROI as a whole image.
cv::Mat to_mat(const ImageView& v) {
  return cv::Mat(v.height, v.width, cv_type(v.format), v.data, v.pitch);
}

ImageView to_view(const cv::Mat& m, PixelFormat f) {
  return ImageView{m.data, m.cols, m.rows, m.step, f};
}

int cv_border(BorderMode m) {
  switch (m) {
    case BorderMode::kConstant:
      return cv::BORDER_CONSTANT;
    case BorderMode::kReplicate:
      return cv::BORDER_REPLICATE;
    case BorderMode::kReflect:
      return cv::BORDER_REFLECT;
    case BorderMode::kReflect101:
      return cv::BORDER_REFLECT_101;
    case BorderMode::kWrap:
      return cv::BORDER_WRAP;
  }
  return cv::BORDER_DEFAULT;
}

// Whether OpenCV's filters take this border directly: their constant is always 0, and only
// GaussianBlur's bit-exact 8-bit path takes wrap (the others assert columnBorderType !=
// BORDER_WRAP).
bool direct_ok(const Border& b, bool takes_wrap = false) {
  if (b.mode == BorderMode::kWrap) return takes_wrap;
  return b.mode != BorderMode::kConstant || b.value == 0;
}

// f applied to src extended by r on every side with copyMakeBorder, cropped back to src's size.
cv::Mat via_padding(const cv::Mat& src, const Border& b, int r,
                    const std::function<cv::Mat(const cv::Mat&)>& f) {
  cv::Mat padded;
  cv::copyMakeBorder(src, padded, r, r, r, r, cv_border(b.mode), cv::Scalar::all(b.value));
  return f(padded)(cv::Rect(r, r, src.cols, src.rows)).clone();
}

void expect_near(const ImageView& ours, const cv::Mat& theirs, double tol,
                 const std::string& what) {
  const test::Diff d = max_diff(ours, to_view(theirs, ours.format));
  EXPECT_LE(d.max_abs, tol) << what << ": largest difference at (" << d.x << ", " << d.y << ")";
}

// Checks fn (a twin, 8-bit or S16 output) against `opencv` on the padded input (every border) and
// directly (the borders OpenCV supports).
void check_filter(const RowFn& fn, const ImageView& src, PixelFormat out_format, const Border& b,
                  int radius, double tol,
                  const std::function<cv::Mat(const cv::Mat&, int cv_border_mode)>& opencv,
                  bool takes_wrap = false) {
  const Output ours = run_rows(fn, src, out_format);
  const cv::Mat m = to_mat(src);
  const cv::Mat padded = via_padding(m, b, radius, [&](const cv::Mat& p) {
    return opencv(p, cv::BORDER_REPLICATE);  // the padding decides; this border is never reached
  });
  expect_near(ours.view, padded, tol, "against OpenCV on copyMakeBorder input");
  if (direct_ok(b, takes_wrap)) {
    expect_near(ours.view, opencv(m, cv_border(b.mode)), tol, "against OpenCV direct");
  }
}
#endif

// Runs check(view) for each layout of a fresh random image, tracing the layout.
void for_each_layout(const Case& c, PixelFormat f,
                     const std::function<void(const ImageView&)>& check) {
  std::mt19937 rng(fresh_seed());
  for (const Input& in : make_inputs(c.size.w, c.size.h, f, rng)) {
    SCOPED_TRACE(in.layout);
    check(in.view);
  }
}

#if JETPIPE_HAVE_OPENCV
#define REQUIRE_OPENCV()
#else
#define REQUIRE_OPENCV() GTEST_SKIP() << "built without OpenCV: nothing to compare with"
#endif

// ---- to_gray
// -----------------------------------------------------------------------------------------

#if JETPIPE_HAVE_OPENCV
void check_to_gray(const ImageView& src) {
  const Output ours = run_rows(to_gray_ref, src, PixelFormat::kGray8);
  cv::Mat expected;
  if (src.format == PixelFormat::kGray8) {
    expected = to_mat(src);
  } else {
    cv::cvtColor(to_mat(src), expected,
                 src.format == PixelFormat::kBgr8 ? cv::COLOR_BGR2GRAY : cv::COLOR_RGB2GRAY);
  }
  expect_near(ours.view, expected, 0, "to_gray against cvtColor");
}
#endif

const PixelFormat kGrayInputs[] = {PixelFormat::kBgr8, PixelFormat::kRgb8, PixelFormat::kGray8};

class ToGrayRef : public ::testing::TestWithParam<Case> {};
TEST_P(ToGrayRef, MatchesCvtColorExactly) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const PixelFormat f = kGrayInputs[GetParam().variant];
  SCOPED_TRACE(to_string(f));
  for_each_layout(GetParam(), f, check_to_gray);
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, ToGrayRef, ::testing::ValuesIn([] {
                           std::vector<Case> cases;  // borders do not apply: one each
                           for (const Size2& s : kSizes) {
                             for (int v = 0; v < 3; ++v) cases.push_back({s, 0, v});
                           }
                           for (int v = 0; v < 3; ++v) cases.push_back({kBig, 0, v});
                           return cases;
                         }()),
                         size_name);

// Every one of the 2^24 colours, both channel orders.
TEST(ToGrayRefAll, EveryColourMatchesCvtColor) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  HostImage img(4096, 4096, PixelFormat::kBgr8);
  const ImageView v = img.view();
  for (int y = 0; y < 4096; ++y) {
    for (int x = 0; x < 4096; ++x) {
      const int c = y * 4096 + x;
      std::uint8_t* p = v.row<std::uint8_t>(y) + 3 * x;
      p[0] = static_cast<std::uint8_t>(c & 255);
      p[1] = static_cast<std::uint8_t>((c >> 8) & 255);
      p[2] = static_cast<std::uint8_t>(c >> 16);
    }
  }
  for (PixelFormat f : {PixelFormat::kBgr8, PixelFormat::kRgb8}) {
    ImageView src = v;
    src.format = f;
    HostImage out(4096, 4096, PixelFormat::kGray8);
    to_gray_ref(src, out.view(), 0, 4096);
    cv::Mat expected;
    cv::cvtColor(to_mat(src), expected,
                 f == PixelFormat::kBgr8 ? cv::COLOR_BGR2GRAY : cv::COLOR_RGB2GRAY);
    expect_near(out.view(), expected, 0, to_string(f));
  }
#endif
}

// The GPU's conversion (kernels/block/gray16.cuh) on the host: t = 256·dp4a(v, hi) + dp4a(v, lo)
// + 2^15 must stay below 2^24 and have to_gray_y in its byte 2, for every colour and both orders.
TEST(ToGrayRefAll, Dp4aWeightsGiveToGrayYForEveryColour) {
  const auto dp4a = [](unsigned v, unsigned w, unsigned c) {
    for (int i = 0; i < 4; ++i) c += ((v >> 8 * i) & 255u) * ((w >> 8 * i) & 255u);
    return c;
  };
  for (bool rgb : {false, true}) {
    const GrayWeights k = gray_weights(rgb);
    ASSERT_EQ(k.hi >> 24, 0u);
    ASSERT_EQ(k.lo >> 24, 0u);
    long long wrong = 0;
    for (unsigned c = 0; c < (1u << 24); ++c) {
      const unsigned t = (dp4a(c, k.hi, 0) << 8) + dp4a(c, k.lo, 1u << 15);
      const unsigned b0 = c & 255, b1 = (c >> 8) & 255, b2 = c >> 16;
      const unsigned y = rgb ? to_gray_y(b0, b1, b2) : to_gray_y(b2, b1, b0);
      wrong += t >= (1u << 24) || ((t >> 16) & 255u) != y;
    }
    EXPECT_EQ(wrong, 0) << (rgb ? "RGB" : "BGR");
  }
}

// ---- gaussian
// ----------------------------------------------------------------------------------------

using test::GaussianVariant;
const GaussianVariant kGaussian[] = {{3, 0}, {5, 0}, {7, 0}, {9, 0}, {15, 0}, {5, 1.2}, {0, 1.7}};

#if JETPIPE_HAVE_OPENCV
void check_gaussian(const ImageView& src, const GaussianVariant& g, const Border& b) {
  const GaussianParams p = resolve_gaussian(g.ksize, g.sigma, b);
  check_filter([&](const ImageView& s, const ImageView& d, int y0,
                   int y1) { gaussian_ref(p, s, d, y0, y1); },
               src, PixelFormat::kGray8, b, gaussian_halo(p), 0,
               [&](const cv::Mat& m, int mode) {
                 cv::Mat out;
                 cv::GaussianBlur(m, out, cv::Size(g.ksize, g.ksize), g.sigma, g.sigma, mode);
                 return out;
               },
               /*takes_wrap=*/true);
}
#endif

class GaussianRef : public ::testing::TestWithParam<Case> {};
TEST_P(GaussianRef, MatchesGaussianBlurExactly) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const Case& c = GetParam();
  const GaussianVariant& g = kGaussian[c.variant];
  SCOPED_TRACE("ksize " + std::to_string(g.ksize) + " sigma " + std::to_string(g.sigma));
  for_each_layout(c, PixelFormat::kGray8,
                  [&](const ImageView& src) { check_gaussian(src, g, kBorders[c.border].border); });
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, GaussianRef,
                         ::testing::ValuesIn(make_cases(std::size(kGaussian), {1, 6})), case_name);

TEST(GaussianRefTaps, MatchGetGaussianKernelAndResolve) {
  for (int ksize : {1, 3, 5, 7, 9, 11, 15, 31}) {
    for (double sigma : {0.0, 0.5, 0.8, 1.1, 1.7, 3.0}) {
      const std::vector<int> q = gaussian_taps_q8(ksize, sigma);
      int sum = 0;
      for (int t : q) sum += t;
      EXPECT_EQ(sum, 256) << "ksize " << ksize << " sigma " << sigma;
#if JETPIPE_HAVE_OPENCV
      const std::vector<float> taps = gaussian_taps(ksize, sigma);
      const cv::Mat k = cv::getGaussianKernel(ksize, sigma, CV_32F);
      ASSERT_EQ(static_cast<int>(taps.size()), ksize);
      for (int i = 0; i < ksize; ++i) {
        EXPECT_EQ(taps[i], k.at<float>(i))
            << "ksize " << ksize << " sigma " << sigma << " tap " << i;
      }
#endif
    }
  }
  // ksize from sigma for 8-bit images: cvRound(sigma·6 + 1) | 1.
  EXPECT_EQ(resolve_gaussian(0, 1.7, Border{}).ksize, 11);
  EXPECT_EQ(resolve_gaussian(0, 0.5, Border{}).ksize, 5);   // round(4) | 1
  EXPECT_EQ(resolve_gaussian(0, 0.25, Border{}).ksize, 3);  // round(2.5) = 2 (half to even) | 1
  const GaussianParams d = resolve_gaussian(3, 0, Border{});
  EXPECT_TRUE(d.sigma_from_ksize);
  EXPECT_DOUBLE_EQ(d.sigma, 0.8);
  EXPECT_FALSE(resolve_gaussian(3, 0.8, Border{}).sigma_from_ksize);
  EXPECT_THROW(resolve_gaussian(0, 0, Border{}), std::exception);
  EXPECT_THROW(resolve_gaussian(4, 1, Border{}), std::exception);
}

// ---- box
// ---------------------------------------------------------------------------------------------

using test::BoxVariant;
// 17² > 256 takes OpenCV's 32-bit sum path, smaller ones its 16-bit path.
const BoxVariant kBox[] = {{1, true},   {3, true},  {3, false},  {5, true}, {15, true},
                           {15, false}, {17, true}, {31, false}, {65, true}};

#if JETPIPE_HAVE_OPENCV
void check_box(const ImageView& src, const BoxVariant& v, const Border& b) {
  BoxParams p;
  p.ksize = v.ksize;
  p.normalize = v.normalize;
  p.border = b;
  check_filter(
      [&](const ImageView& s, const ImageView& d, int y0, int y1) { box_ref(p, s, d, y0, y1); },
      src, PixelFormat::kGray8, b, box_halo(p), 0,
      [&](const cv::Mat& m, int mode) {
        cv::Mat out;
        cv::boxFilter(m, out, -1, cv::Size(v.ksize, v.ksize), cv::Point(-1, -1), v.normalize, mode);
        return out;
      });
}
#endif

class BoxRef : public ::testing::TestWithParam<Case> {};
TEST_P(BoxRef, MatchesBoxFilterExactly) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const Case& c = GetParam();
  const BoxVariant& v = kBox[c.variant];
  SCOPED_TRACE("ksize " + std::to_string(v.ksize) + (v.normalize ? " normalized" : " sum"));
  for_each_layout(c, PixelFormat::kGray8,
                  [&](const ImageView& src) { check_box(src, v, kBorders[c.border].border); });
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, BoxRef, ::testing::ValuesIn(make_cases(std::size(kBox), {3})),
                         case_name);

// ---- sobel
// -------------------------------------------------------------------------------------------

using test::SobelVariant;
const SobelVariant kSobel[] = {
    {1, 0, 3, 1, false}, {0, 1, 3, 1, false},   {1, 1, 3, 1, false},   {2, 0, 5, 1, false},
    {0, 2, 5, 1, false}, {1, 2, 5, 1, false},   {1, 0, 1, 1, false},   {0, 2, 1, 1, false},
    {1, 0, 3, 1, true},  {0, 1, 5, 0.25, true}, {1, 1, 5, 0.1, false}, {2, 0, 3, 3.3, false},
};

#if JETPIPE_HAVE_OPENCV
void check_sobel(const ImageView& src, const SobelVariant& v, const Border& b) {
  SobelParams p;
  p.dx = v.dx;
  p.dy = v.dy;
  p.ksize = v.ksize;
  p.scale = v.scale;
  p.abs8 = v.abs8;
  p.border = b;
  // Integer arithmetic when scale is 1 (exact); float otherwise, as OpenCV (±1).
  const double tol = v.scale == 1 ? 0 : 1;
  check_filter(
      [&](const ImageView& s, const ImageView& d, int y0, int y1) { sobel_ref(p, s, d, y0, y1); },
      src, v.abs8 ? PixelFormat::kGray8 : PixelFormat::kS16, b, sobel_halo(p), tol,
      [&](const cv::Mat& m, int mode) {
        cv::Mat out;
        cv::Sobel(m, out, CV_16S, v.dx, v.dy, v.ksize, v.scale, 0, mode);
        if (v.abs8) cv::convertScaleAbs(out, out);
        return out;
      });
}
#endif

class SobelRef : public ::testing::TestWithParam<Case> {};
TEST_P(SobelRef, MatchesSobel) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const Case& c = GetParam();
  const SobelVariant& v = kSobel[c.variant];
  SCOPED_TRACE("dx " + std::to_string(v.dx) + " dy " + std::to_string(v.dy) + " ksize " +
               std::to_string(v.ksize) + " scale " + std::to_string(v.scale) +
               (v.abs8 ? " abs8" : " s16"));
  for_each_layout(c, PixelFormat::kGray8,
                  [&](const ImageView& src) { check_sobel(src, v, kBorders[c.border].border); });
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, SobelRef,
                         ::testing::ValuesIn(make_cases(std::size(kSobel), {2, 9})), case_name);

TEST(SobelRefTaps, MatchGetDerivKernels) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  for (int ksize : {1, 3, 5, 7}) {
    for (int dx = 0; dx <= 2; ++dx) {
      for (int dy = 0; dy <= 2; ++dy) {
        if (dx + dy == 0 || (ksize > 1 && (dx >= ksize || dy >= ksize))) continue;
        SobelParams p;
        p.dx = dx;
        p.dy = dy;
        p.ksize = ksize;
        std::vector<float> kx, ky;
        sobel_taps(p, &kx, &ky);
        cv::Mat cx, cy;
        cv::getDerivKernels(cx, cy, dx, dy, ksize, false, CV_32F);
        ASSERT_EQ(static_cast<int>(kx.size()), cx.rows) << dx << dy << ksize;
        ASSERT_EQ(static_cast<int>(ky.size()), cy.rows) << dx << dy << ksize;
        for (int i = 0; i < cx.rows; ++i) EXPECT_EQ(kx[i], cx.at<float>(i)) << dx << dy << ksize;
        for (int i = 0; i < cy.rows; ++i) EXPECT_EQ(ky[i], cy.at<float>(i)) << dx << dy << ksize;
      }
    }
  }
#endif
}

// ---- convolve
// ----------------------------------------------------------------------------------------

using test::ConvolveVariant;
using test::random_convolve;
const ConvolveVariant kConvolve[] = {{3, 5}, {15, 15}, {1, 1}};

#if JETPIPE_HAVE_OPENCV
void check_convolve(const ImageView& src, const ConvolveParams& p) {
  const cv::Mat kernel(p.rows, p.cols, CV_32F, const_cast<float*>(p.taps.data()));
  check_filter([&](const ImageView& s, const ImageView& d, int y0,
                   int y1) { convolve_ref(p, s, d, y0, y1); },
               src, PixelFormat::kGray8, p.border, std::max(p.rows, p.cols) / 2, 1,
               [&](const cv::Mat& m, int mode) {
                 cv::Mat out;
                 cv::filter2D(m, out, -1, kernel, cv::Point(-1, -1), p.delta, mode);
                 return out;
               });
}
#endif

class ConvolveRef : public ::testing::TestWithParam<Case> {};
TEST_P(ConvolveRef, MatchesFilter2D) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const Case& c = GetParam();
  const ConvolveVariant& v = kConvolve[c.variant];
  SCOPED_TRACE(std::to_string(v.rows) + "x" + std::to_string(v.cols) + " kernel");
  std::mt19937 rng(fresh_seed());
  const ConvolveParams p = random_convolve(v, kBorders[c.border].border, rng);
  for (const Input& in : make_inputs(c.size.w, c.size.h, PixelFormat::kGray8, rng)) {
    SCOPED_TRACE(in.layout);
    check_convolve(in.view, p);
  }
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, ConvolveRef,
                         ::testing::ValuesIn(make_cases(std::size(kConvolve), {0, 1})), case_name);

// ---- harris
// ------------------------------------------------------------------------------------------

using test::HarrisVariant;
const HarrisVariant kHarris[] = {{3, 3}, {5, 3}, {3, 5}, {2, 1}, {4, 7}};

#if JETPIPE_HAVE_OPENCV
// cornerHarris step by step in OpenCV calls: Sobel on the image extended by its border, the
// structure tensor, boxFilter on the tensor extended by its border (constant: 0), then R in double.
cv::Mat harris_oracle(const cv::Mat& src, const HarrisParams& p) {
  const int r = p.ksize == 1 ? 1 : p.ksize / 2;
  const double scale = 1.0 / (static_cast<double>(1 << (p.ksize - 1)) * p.block_size * 255.0);
  cv::Mat dx, dy;
  cv::Mat padded;
  cv::copyMakeBorder(src, padded, r, r, r, r, cv_border(p.border.mode),
                     cv::Scalar::all(p.border.value));
  cv::Sobel(padded, dx, CV_32F, 1, 0, p.ksize, scale, 0, cv::BORDER_REPLICATE);
  cv::Sobel(padded, dy, CV_32F, 0, 1, p.ksize, scale, 0, cv::BORDER_REPLICATE);
  const cv::Rect inner(r, r, src.cols, src.rows);
  dx = dx(inner);
  dy = dy(inner);
  cv::Mat cov(src.rows, src.cols, CV_32FC3);
  for (int y = 0; y < src.rows; ++y) {
    for (int x = 0; x < src.cols; ++x) {
      const float gx = dx.at<float>(y, x), gy = dy.at<float>(y, x);
      cov.at<cv::Vec3f>(y, x) = cv::Vec3f(gx * gx, gx * gy, gy * gy);
    }
  }
  const int a = p.block_size / 2, b = p.block_size - 1 - a;
  cv::Mat cov_padded, sums;
  cv::copyMakeBorder(cov, cov_padded, a, b, a, b, cv_border(p.border.mode), cv::Scalar::all(0));
  cv::boxFilter(cov_padded, sums, CV_64F, cv::Size(p.block_size, p.block_size), cv::Point(a, a),
                false, cv::BORDER_REPLICATE);
  cv::Mat out(src.rows, src.cols, CV_32F);
  for (int y = 0; y < src.rows; ++y) {
    for (int x = 0; x < src.cols; ++x) {
      const cv::Vec3d s = sums.at<cv::Vec3d>(y + a, x + a);
      out.at<float>(y, x) =
          static_cast<float>(s[0] * s[2] - s[1] * s[1] - p.k * (s[0] + s[2]) * (s[0] + s[2]));
    }
  }
  return out;
}

void expect_harris_near(const ImageView& ours, const cv::Mat& theirs, const std::string& what) {
  double lo = 0, hi = 0;
  cv::minMaxLoc(theirs, &lo, &hi);
  const double tol = 1e-4 * std::max(std::fabs(lo), std::fabs(hi)) + 1e-30;
  const test::Diff d = max_diff(ours, to_view(theirs, PixelFormat::kF32));
  EXPECT_LE(d.max_abs, tol) << what << ": largest difference at (" << d.x << ", " << d.y
                            << "), max |R| " << std::max(std::fabs(lo), std::fabs(hi));
}

void check_harris(const ImageView& src, const HarrisParams& p) {
  const Output ours = run_rows(
      [&](const ImageView& s, const ImageView& d, int y0, int y1) { harris_ref(p, s, d, y0, y1); },
      src, PixelFormat::kF32);
  const cv::Mat m = to_mat(src);
  expect_harris_near(ours.view, harris_oracle(m, p), "against OpenCV step by step");
  if (direct_ok(p.border)) {
    cv::Mat direct;
    cv::cornerHarris(m, direct, p.block_size, p.ksize, p.k, cv_border(p.border.mode));
    expect_harris_near(ours.view, direct, "against cornerHarris");
  }
}
#endif

class HarrisRef : public ::testing::TestWithParam<Case> {};
TEST_P(HarrisRef, MatchesCornerHarris) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const Case& c = GetParam();
  HarrisParams p;
  p.block_size = kHarris[c.variant].block_size;
  p.ksize = kHarris[c.variant].ksize;
  p.k = 0.04;
  p.border = kBorders[c.border].border;
  SCOPED_TRACE("block " + std::to_string(p.block_size) + " ksize " + std::to_string(p.ksize));
  for_each_layout(c, PixelFormat::kGray8, [&](const ImageView& src) { check_harris(src, p); });
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, HarrisRef, ::testing::ValuesIn(make_cases(std::size(kHarris), {0})),
                         case_name);

// The twin's definition (harris.h) written out a second way, per output and without any
// separability: each box position's tensor cell remapped with the border (0 outside a constant
// border), its gradients from the image's pixels with the border, int64 sums, then the double
// operations. The twin must equal it bit for bit, in one call and in strips.
TEST(HarrisRef, EqualsItsDefinitionBitForBit) {
  std::mt19937 rng(fresh_seed());
  // Block 22 with ksize 3 is the largest whose sums the twin keeps in int32; 23 takes int64.
  const HarrisVariant variants[] = {{1, 1},  {2, 1},  {3, 3}, {4, 3}, {7, 3},
                                    {22, 3}, {23, 3}, {3, 5}, {5, 7}, {8, 5}};
  const Size2 sizes[] = {{1, 1}, {2, 5}, {6, 3}, {19, 11}, {40, 23}, {131, 7}};
  for (const HarrisVariant& v : variants) {
    for (const NamedBorder& nb : kBorders) {
      for (const Size2& sz : sizes) {
        SCOPED_TRACE("block " + std::to_string(v.block_size) + " ksize " + std::to_string(v.ksize) +
                     " " + nb.name + " " + std::to_string(sz.w) + "x" + std::to_string(sz.h));
        HarrisParams p;
        p.block_size = v.block_size;
        p.ksize = v.ksize;
        p.k = 0.04;
        p.border = nb.border;
        const HostImage img = random_image(sz.w, sz.h, PixelFormat::kGray8, rng);
        const ImageView src = img.view();
        const Output ours = run_rows([&](const ImageView& s, const ImageView& d, int y0,
                                         int y1) { harris_ref(p, s, d, y0, y1); },
                                     src, PixelFormat::kF32);

        SobelParams sx, sy;
        sx.ksize = sy.ksize = p.ksize;
        sy.dx = 0;
        sy.dy = 1;
        std::vector<float> dxx, dxy, dyx, dyy;  // d/dx along x, along y; d/dy along x, along y
        sobel_taps(sx, &dxx, &dxy);
        sobel_taps(sy, &dyx, &dyy);
        const std::uint8_t fill = ref::border_value_u8(p.border);
        const auto pixel = [&](int x, int y) -> std::int64_t {
          const int rx = border_remap(x, sz.w, p.border.mode);
          const int ry = border_remap(y, sz.h, p.border.mode);
          return rx < 0 || ry < 0 ? fill : src.row<std::uint8_t>(ry)[rx];
        };
        const auto grad = [&](const std::vector<float>& tx, const std::vector<float>& ty, int x,
                              int y) {
          const int hx = static_cast<int>(tx.size()) / 2, hy = static_cast<int>(ty.size()) / 2;
          std::int64_t g = 0;
          for (int a = 0; a < static_cast<int>(ty.size()); ++a) {
            for (int b = 0; b < static_cast<int>(tx.size()); ++b) {
              g += static_cast<std::int64_t>(ty[a]) * static_cast<std::int64_t>(tx[b]) *
                   pixel(x - hx + b, y - hy + a);
            }
          }
          return g;
        };
        // Each pixel's gradients once (the box below visits a pixel block² times).
        std::vector<std::int64_t> gxs(static_cast<std::size_t>(sz.w) * sz.h), gys(gxs.size());
        for (int y = 0; y < sz.h; ++y) {
          for (int x = 0; x < sz.w; ++x) {
            gxs[static_cast<std::size_t>(y) * sz.w + x] = grad(dxx, dxy, x, y);
            gys[static_cast<std::size_t>(y) * sz.w + x] = grad(dyx, dyy, x, y);
          }
        }
        const double scale = 1.0 / (static_cast<double>(1 << (p.ksize - 1)) * p.block_size * 255.0);
        const double s2 = scale * scale;
        const int anchor = p.block_size / 2;
        HostImage want(sz.w, sz.h, PixelFormat::kF32);
        for (int y = 0; y < sz.h; ++y) {
          for (int x = 0; x < sz.w; ++x) {
            std::int64_t sxx = 0, sxy = 0, syy = 0;
            for (int i = 0; i < p.block_size; ++i) {
              for (int j = 0; j < p.block_size; ++j) {
                const int cx = border_remap(x - anchor + j, sz.w, p.border.mode);
                const int cy = border_remap(y - anchor + i, sz.h, p.border.mode);
                if (cx < 0 || cy < 0) continue;  // constant: the tensor is 0 outside
                const std::size_t at = static_cast<std::size_t>(cy) * sz.w + cx;
                const std::int64_t gx = gxs[at], gy = gys[at];
                sxx += gx * gx;
                sxy += gx * gy;
                syy += gy * gy;
              }
            }
            const double a = static_cast<double>(sxx) * s2;
            const double b = static_cast<double>(sxy) * s2;
            const double c = static_cast<double>(syy) * s2;
            // volatile: each product rounded on its own, whatever this file's -ffp-contract.
            const volatile double ac = a * c, bb = b * b;
            const double det = ac - bb;
            const double tr = a + c;
            const volatile double ktt = p.k * tr * tr;
            want.view().row<float>(y)[x] = static_cast<float>(det - ktt);
          }
        }
        EXPECT_TRUE(same_pixels(ours.view, want.view()));
      }
    }
  }
}

// ---- histogram
// ---------------------------------------------------------------------------------------

const HistogramParams kHistogram[] = {
    {256, 0, 256},     {1, 0, 256},   {7, 10, 200}, {16, 0, 256},
    {100, 0.5, 255.5}, {3, 100, 101}, {5, 0, 300},
};

// Counts over all rows and over three strips added into one array must agree exactly.
std::vector<std::uint64_t> histogram_checked(const HistogramParams& p, const ImageView& src) {
  std::vector<std::uint64_t> whole(p.bins, 0), strips(p.bins, 0);
  histogram_ref(p, src, 0, src.height, whole.data());
  const int a = src.height / 3, b = src.height - src.height / 4;
  histogram_ref(p, src, 0, a, strips.data());
  histogram_ref(p, src, a, b, strips.data());
  histogram_ref(p, src, b, src.height, strips.data());
  EXPECT_EQ(whole, strips);
  return whole;
}

#if JETPIPE_HAVE_OPENCV
void check_histogram(const ImageView& src, const HistogramParams& p) {
  const std::vector<std::uint64_t> ours = histogram_checked(p, src);
  const cv::Mat m = to_mat(src);
  const float range[] = {static_cast<float>(p.lo), static_cast<float>(p.hi)};
  const float* ranges[] = {range};
  const int channels[] = {0}, bins[] = {p.bins};
  cv::Mat hist;
  cv::calcHist(&m, 1, channels, cv::Mat(), hist, 1, bins, ranges, true, false);
  std::uint64_t total = 0;
  for (int i = 0; i < p.bins; ++i) {
    EXPECT_EQ(ours[i], static_cast<std::uint64_t>(hist.at<float>(i))) << "bin " << i;
    total += ours[i];
  }
  int lut[256];
  histogram_lut(p, lut);
  std::uint64_t in_range = 0;
  for (int y = 0; y < src.height; ++y) {
    for (int x = 0; x < src.width; ++x) in_range += lut[src.row<std::uint8_t>(y)[x]] >= 0;
  }
  EXPECT_EQ(total, in_range);
}
#endif

class HistogramRef : public ::testing::TestWithParam<Case> {};
TEST_P(HistogramRef, MatchesCalcHistExactly) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const HistogramParams& p = kHistogram[GetParam().variant];
  SCOPED_TRACE(std::to_string(p.bins) + " bins over [" + std::to_string(p.lo) + ", " +
               std::to_string(p.hi) + ")");
  for_each_layout(GetParam(), PixelFormat::kGray8,
                  [&](const ImageView& src) { check_histogram(src, p); });
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, HistogramRef, ::testing::ValuesIn([] {
                           std::vector<Case> cases;
                           for (const Size2& s : kSizes) {
                             for (int v = 0; v < static_cast<int>(std::size(kHistogram)); ++v) {
                               cases.push_back({s, 0, v});
                             }
                           }
                           cases.push_back({kBig, 0, 0});
                           cases.push_back({kBig, 0, 2});
                           return cases;
                         }()),
                         size_name);

TEST(HistogramRefLut, FollowsTheBinFormula) {
  // bins = 7 over [10, 200): v in range goes to floor((v − 10) · 7 / 190).
  HistogramParams p{7, 10, 200};
  int lut[256];
  histogram_lut(p, lut);
  for (int v = 0; v < 256; ++v) {
    const int expected = (v < 10 || v >= 200) ? -1 : (v - 10) * 7 / 190;
    EXPECT_EQ(lut[v], expected) << v;
  }
  histogram_lut(HistogramParams{1, 0, 256}, lut);
  for (int v = 0; v < 256; ++v) EXPECT_EQ(lut[v], 0);
}

// ---- stats
// -------------------------------------------------------------------------------------------

// Merges the partials of three strips, in order.
StatsResult stats_in_strips(const ImageView& src, StatsAccum* merged) {
  const int a = src.height / 4, b = std::min(src.height, src.height / 2 + 1);
  StatsAccum parts[3];
  stats_ref(src, 0, a, &parts[0]);
  stats_ref(src, a, b, &parts[1]);
  stats_ref(src, b, src.height, &parts[2]);
  for (const StatsAccum& part : parts) stats_merge(merged, part);
  return stats_finish(*merged, src.format);
}

#if JETPIPE_HAVE_OPENCV
void check_stats(const ImageView& src) {
  StatsAccum whole;
  stats_ref(src, 0, src.height, &whole);
  const StatsResult r = stats_finish(whole, src.format);
  StatsAccum merged;
  const StatsResult rs = stats_in_strips(src, &merged);

  // Exact sums written plainly.
  std::int64_t sum = 0;
  std::uint64_t sumsq = 0;
  for (int y = 0; y < src.height; ++y) {
    for (int x = 0; x < src.width; ++x) {
      const std::int64_t v = src.format == PixelFormat::kS16 ? src.row<std::int16_t>(y)[x]
                                                             : src.row<std::uint8_t>(y)[x];
      sum += v;
      sumsq += static_cast<std::uint64_t>(v * v);
    }
  }
  const cv::Mat m = to_mat(src);
  double lo = 0, hi = 0;
  cv::minMaxLoc(m, &lo, &hi);
  cv::Scalar mean, sd;
  cv::meanStdDev(m, mean, sd);
  const std::uint64_t n = static_cast<std::uint64_t>(src.width) * src.height;
  EXPECT_EQ(r.count, n);
  EXPECT_EQ(r.min, lo);
  EXPECT_EQ(r.max, hi);
  if (src.format == PixelFormat::kF32) {
    EXPECT_NEAR(r.mean, mean[0], 1e-9);
    EXPECT_NEAR(r.stddev, sd[0], 1e-9);
    EXPECT_NEAR(rs.mean, r.mean, 1e-12);  // other summation order: not bit for bit
    EXPECT_NEAR(rs.stddev, r.stddev, 1e-12);
  } else {
    EXPECT_EQ(whole.isum, sum);
    EXPECT_EQ(whole.isumsq, sumsq);
    EXPECT_EQ(r.mean, static_cast<double>(sum) / static_cast<double>(n));  // correctly rounded
    // Population stddev from the exact sums in long double.
    const long double ln = static_cast<long double>(n);
    const long double var = (ln * static_cast<long double>(sumsq) -
                             static_cast<long double>(sum) * static_cast<long double>(sum)) /
                            (ln * ln);
    EXPECT_NEAR(r.stddev, std::sqrt(static_cast<double>(var)), 1e-12 * (1 + r.stddev));
    EXPECT_NEAR(r.mean, mean[0], 1e-9 * (1 + std::fabs(r.mean)));
    EXPECT_NEAR(r.stddev, sd[0], 1e-9 * (1 + r.stddev));
    // Integer partials merge exactly, in any split.
    EXPECT_EQ(merged.isum, whole.isum);
    EXPECT_EQ(merged.isumsq, whole.isumsq);
    EXPECT_EQ(rs.mean, r.mean);
    EXPECT_EQ(rs.stddev, r.stddev);
  }
  EXPECT_EQ(rs.min, r.min);
  EXPECT_EQ(rs.max, r.max);
  EXPECT_EQ(rs.count, r.count);
}
#endif

const PixelFormat kStatsFormats[] = {PixelFormat::kGray8, PixelFormat::kS16, PixelFormat::kF32};

class StatsRef : public ::testing::TestWithParam<Case> {};
TEST_P(StatsRef, MatchesMinMaxLocAndMeanStdDev) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const PixelFormat f = kStatsFormats[GetParam().variant];
  SCOPED_TRACE(to_string(f));
  for_each_layout(GetParam(), f, check_stats);
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, StatsRef, ::testing::ValuesIn([] {
                           std::vector<Case> cases;
                           for (const Size2& s : kSizes) {
                             for (int v = 0; v < 3; ++v) cases.push_back({s, 0, v});
                           }
                           for (int v = 0; v < 3; ++v) cases.push_back({kBig, 0, v});
                           return cases;
                         }()),
                         size_name);

TEST(StatsRefEdge, EmptyAndConstant) {
  StatsAccum empty;
  const StatsResult r0 = stats_finish(empty, PixelFormat::kGray8);
  EXPECT_EQ(r0.count, 0u);
  EXPECT_EQ(r0.mean, 0);
  HostImage img(5, 3, PixelFormat::kS16);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) img.view().row<std::int16_t>(y)[x] = -32768;
  }
  StatsAccum acc, merged;
  stats_ref(img.view(), 0, 3, &acc);
  stats_merge(&merged, empty);  // an empty partial changes nothing
  stats_merge(&merged, acc);
  const StatsResult r = stats_finish(merged, PixelFormat::kS16);
  EXPECT_EQ(r.min, -32768);
  EXPECT_EQ(r.max, -32768);
  EXPECT_EQ(r.mean, -32768);
  EXPECT_EQ(r.stddev, 0);
  EXPECT_EQ(r.count, 15u);
}

// ---- threshold and Otsu
// ------------------------------------------------------------------------------

struct ThresholdVariant {
  double thresh, max_value;
};
// Fractional thresholds floor, max values round half to even and saturate.
const ThresholdVariant kThreshold[] = {{127, 255},   {127.7, 200.5}, {-1, 255}, {-0.5, 255},
                                       {254.9, 255}, {255, 255},     {0, 1.5},  {100, 300},
                                       {50, -3},     {12, 2.5}};

#if JETPIPE_HAVE_OPENCV
void check_threshold(const ImageView& src, double thresh, double max_value) {
  const Output ours = run_rows([&](const ImageView& s, const ImageView& d, int y0,
                                   int y1) { threshold_ref(thresh, max_value, s, d, y0, y1); },
                               src, PixelFormat::kGray8);
  cv::Mat expected;
  cv::threshold(to_mat(src), expected, thresh, max_value, cv::THRESH_BINARY);
  expect_near(ours.view, expected, 0, "against cv::threshold");
}

void check_otsu(const ImageView& src) {
  std::vector<std::uint64_t> hist(256, 0);
  histogram_ref(HistogramParams{}, src, 0, src.height, hist.data());
  const int t = otsu_threshold(hist.data());
  cv::Mat expected;
  const double cv_t =
      cv::threshold(to_mat(src), expected, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
  EXPECT_EQ(t, cv_t);
  const Output ours = run_rows([&](const ImageView& s, const ImageView& d, int y0,
                                   int y1) { threshold_ref(t, 255, s, d, y0, y1); },
                               src, PixelFormat::kGray8);
  expect_near(ours.view, expected, 0, "Otsu-thresholded image");
}
#endif

class ThresholdRef : public ::testing::TestWithParam<Case> {};
TEST_P(ThresholdRef, MatchesThresholdBinaryExactly) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const ThresholdVariant& v = kThreshold[GetParam().variant];
  SCOPED_TRACE("thresh " + std::to_string(v.thresh) + " max " + std::to_string(v.max_value));
  for_each_layout(GetParam(), PixelFormat::kGray8,
                  [&](const ImageView& src) { check_threshold(src, v.thresh, v.max_value); });
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, ThresholdRef, ::testing::ValuesIn([] {
                           std::vector<Case> cases;
                           for (const Size2& s : kSizes) {
                             for (int v = 0; v < static_cast<int>(std::size(kThreshold)); ++v) {
                               cases.push_back({s, 0, v});
                             }
                           }
                           cases.push_back({kBig, 0, 1});
                           return cases;
                         }()),
                         size_name);

// Uniform noise, and bimodal images (two Gaussian lobes at random places and weights, clipped).
class OtsuRef : public ::testing::TestWithParam<Case> {};
TEST_P(OtsuRef, MatchesThreshOtsuExactly) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const Case& c = GetParam();
  std::mt19937 rng(fresh_seed());
  for (Input& in : make_inputs(c.size.w, c.size.h, PixelFormat::kGray8, rng)) {
    SCOPED_TRACE(in.layout);
    if (c.variant == 1) {  // bimodal
      std::normal_distribution<double> lobe_a(std::uniform_real_distribution<double>(20, 110)(rng),
                                              std::uniform_real_distribution<double>(3, 25)(rng));
      std::normal_distribution<double> lobe_b(std::uniform_real_distribution<double>(130, 240)(rng),
                                              std::uniform_real_distribution<double>(3, 25)(rng));
      std::bernoulli_distribution pick(std::uniform_real_distribution<double>(0.1, 0.9)(rng));
      for (int y = 0; y < in.view.height; ++y) {
        for (int x = 0; x < in.view.width; ++x) {
          const double v = pick(rng) ? lobe_a(rng) : lobe_b(rng);
          in.view.row<std::uint8_t>(y)[x] = static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
        }
      }
    }
    check_otsu(in.view);
  }
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, OtsuRef, ::testing::ValuesIn([] {
                           std::vector<Case> cases;
                           for (const Size2& s : kSizes) {
                             for (int v = 0; v < 2; ++v) cases.push_back({s, 0, v});
                           }
                           cases.push_back({kBig, 0, 1});
                           return cases;
                         }()),
                         size_name);

// More than 1/FLT_EPSILON pixels, so that single pixels in the tails weigh less than FLT_EPSILON:
// OpenCV then skips those levels but still runs `mu1 *= q1`, which the twin must copy.
TEST(OtsuRefEdge, TinyTailsOnAHugeImage) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  HostImage img(3000, 3000, PixelFormat::kGray8);
  const ImageView v = img.view();
  for (int y = 0; y < v.height; ++y) {
    for (int x = 0; x < v.width; ++x) {
      v.row<std::uint8_t>(y)[x] =
          static_cast<std::uint8_t>(((x * 7 + y * 13) % 97) * ((x ^ y) & 1) + 90);
    }
  }
  v.row<std::uint8_t>(0)[0] = 2;
  v.row<std::uint8_t>(0)[1] = 5;
  v.row<std::uint8_t>(0)[2] = 5;
  v.row<std::uint8_t>(2999)[2999] = 254;
  check_otsu(v);
#endif
}

TEST(OtsuRefEdge, DegenerateHistograms) {
  std::uint64_t hist[256] = {};
  EXPECT_EQ(otsu_threshold(hist), 0);  // empty
  hist[77] = 1000;
  EXPECT_EQ(otsu_threshold(hist), 0);  // one level: no split, like OpenCV
  hist[200] = 1000;
  EXPECT_EQ(otsu_threshold(hist), 77);  // two levels: the split between them
}

// ---- real photos
// -------------------------------------------------------------------------------------

class PhotoRef : public ::testing::TestWithParam<const char*> {};
TEST_P(PhotoRef, EveryTwinMatchesOpenCV) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const std::string path = test::opencv_sample(GetParam());
  if (path.empty()) GTEST_SKIP() << GetParam() << " not found (Debian's opencv-doc examples)";
  const cv::Mat bgr = cv::imread(path, cv::IMREAD_COLOR);
  ASSERT_FALSE(bgr.empty()) << path;
  const ImageView color{bgr.data, bgr.cols, bgr.rows, bgr.step, PixelFormat::kBgr8};
  check_to_gray(color);
  HostImage gray(bgr.cols, bgr.rows, PixelFormat::kGray8);
  to_gray_ref(color, gray.view(), 0, bgr.rows);
  const ImageView g = gray.view();

  std::mt19937 rng(fresh_seed());
  for (const NamedBorder& nb : kBorders) {
    SCOPED_TRACE(nb.name);
    const Border& b = nb.border;
    check_gaussian(g, {5, 0}, b);
    check_gaussian(g, {0, 2.0}, b);
    check_box(g, {5, true}, b);
    check_box(g, {3, false}, b);
    check_sobel(g, {1, 0, 3, 1, false}, b);
    check_sobel(g, {0, 1, 3, 0.5, true}, b);
    check_convolve(g, random_convolve({3, 5}, b, rng));
    HarrisParams hp;
    hp.border = b;
    check_harris(g, hp);
  }
  check_otsu(g);
  check_histogram(g, HistogramParams{});
  check_histogram(g, HistogramParams{7, 10, 200});
  check_stats(g);
#endif
}
INSTANTIATE_TEST_SUITE_P(Photos, PhotoRef,
                         ::testing::Values("baboon.jpg", "fruits.jpg", "building.jpg", "left01.jpg",
                                           "lena.jpg"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

// ---- detect
// ------------------------------------------------------------------------------------------

float score_of(const ImageView& v, int x, int y) {
  switch (v.format) {
    case PixelFormat::kF32:
      return v.row<float>(y)[x];
    case PixelFormat::kS16:
      return v.row<std::int16_t>(y)[x];
    default:
      return v.row<std::uint8_t>(y)[x];
  }
}

// Non-maximum suppression written plainly: above the threshold and no neighbour in the clipped
// window strictly larger. Raster order.
std::vector<Detection> brute_nms(const ImageView& v, float thresh, int r) {
  std::vector<Detection> out;
  for (int y = 0; y < v.height; ++y) {
    for (int x = 0; x < v.width; ++x) {
      const float s = score_of(v, x, y);
      if (!(s > thresh)) continue;
      bool keep = true;
      for (int dy = -r; dy <= r; ++dy) {
        for (int dx = -r; dx <= r; ++dx) {
          const int u = x + dx, w = y + dy;
          if (u < 0 || u >= v.width || w < 0 || w >= v.height) continue;
          if (score_of(v, u, w) > s) keep = false;
        }
      }
      if (keep) out.push_back({x, y, s});
    }
  }
  return out;
}

bool same_detections(const std::vector<Detection>& a, const std::vector<Detection>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].x != b[i].x || a[i].y != b[i].y || a[i].score != b[i].score) return false;
  }
  return true;
}

// Candidates over three strips, which must equal one call over all rows; and the finish against a
// plain sort.
std::vector<Detection> detect_checked(const DetectParams& p, float thresh, const ImageView& src) {
  std::vector<Detection> whole, strips;
  detect_candidates_ref(p, thresh, src, 0, src.height, &whole);
  const int a = src.height / 3, b = std::min(src.height, a + 1 + src.height / 2);
  detect_candidates_ref(p, thresh, src, 0, a, &strips);
  detect_candidates_ref(p, thresh, src, a, b, &strips);
  detect_candidates_ref(p, thresh, src, b, src.height, &strips);
  EXPECT_TRUE(same_detections(whole, strips)) << "strips differ from one call";
  EXPECT_TRUE(same_detections(whole, brute_nms(src, thresh, p.nms_radius)))
      << "differs from the brute-force NMS (" << whole.size() << " candidates)";

  std::vector<Detection> sorted = whole;
  std::sort(sorted.begin(), sorted.end(), [](const Detection& l, const Detection& r) {
    if (l.score != r.score) return l.score > r.score;
    return l.y != r.y ? l.y < r.y : l.x < r.x;
  });
  const DetectResult res = detect_finish(whole, p.max_detections);
  const std::size_t keep = std::min<std::size_t>(sorted.size(), p.max_detections);
  EXPECT_EQ(res.count, keep);
  EXPECT_EQ(res.overflow, sorted.size() - keep);
  sorted.resize(keep);
  EXPECT_TRUE(same_detections(res.points, sorted))
      << "finish is not the best max_detections in order";
  return whole;
}

TEST(DetectRef, RandomResponsesMatchBruteForce) {
  std::mt19937 rng(fresh_seed());
  for (PixelFormat f : {PixelFormat::kF32, PixelFormat::kS16, PixelFormat::kGray8}) {
    for (const Size2& s :
         {Size2{1, 1}, Size2{1, 7}, Size2{7, 1}, Size2{3, 129}, Size2{113, 113}, Size2{640, 480}}) {
      for (const Input& in : make_inputs(s.w, s.h, f, rng)) {
        for (int r : {1, 2, 3}) {
          SCOPED_TRACE(std::string(to_string(f)) + " " + std::to_string(s.w) + "x" +
                       std::to_string(s.h) + " " + in.layout + " r " + std::to_string(r));
          DetectParams p;
          p.nms_radius = r;
          p.max_detections = 500;
          // Thresholds well inside each format's range (GRAY8's coarse values make plateaus).
          const float t = f == PixelFormat::kF32 ? 0.2f : f == PixelFormat::kS16 ? 1000.f : 40.f;
          detect_checked(p, t, in.view);
        }
      }
    }
  }
}

// Plateaus: equal neighbours do not suppress each other; a strictly larger one does.
TEST(DetectRef, PlateausBehaveAsDocumented) {
  HostImage img(9, 6, PixelFormat::kF32);
  const ImageView v = img.view();
  for (int y = 0; y < 6; ++y) {
    for (int x = 0; x < 9; ++x) v.row<float>(y)[x] = 0;
  }
  auto set = [&](int x, int y, float s) { v.row<float>(y)[x] = s; };
  set(1, 1, 1);  // a 2×2 plateau of 1: all four survive
  set(2, 1, 1);
  set(1, 2, 1);
  set(2, 2, 1);
  set(5, 1, 2);  // a plateau of 2 beside a 3: suppressed; the 3 survives
  set(6, 1, 2);
  set(6, 2, 3);
  set(4, 4, 1);  // equal values two apart: both survive at r = 1, and at r = 2 (equal)
  set(6, 4, 1);
  set(8, 5, 0.5f);  // beside nothing larger but at or below the threshold: never a candidate
  DetectParams p;
  p.nms_radius = 1;
  std::vector<Detection> got;
  detect_candidates_ref(p, 0.5f, v, 0, 6, &got);
  const std::vector<Detection> expected = {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {2, 2, 1},
                                           {6, 2, 3}, {4, 4, 1}, {6, 4, 1}};
  EXPECT_TRUE(same_detections(got, expected));
  EXPECT_TRUE(same_detections(got, brute_nms(v, 0.5f, 1)));
  // At r = 2 the 3 at (6, 2) also reaches (4, 4) and (6, 4); the plateau still sees nothing larger
  // (the 2s are three columns away), and (2, 2) sees the equal (4, 4).
  p.nms_radius = 2;
  got.clear();
  detect_candidates_ref(p, 0.5f, v, 0, 6, &got);
  const std::vector<Detection> expected2 = {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {2, 2, 1}, {6, 2, 3}};
  EXPECT_TRUE(same_detections(got, expected2));
  EXPECT_TRUE(same_detections(got, brute_nms(v, 0.5f, 2)));
}

// Capacity exactly at, one below and one above max_detections; ties ordered by y, then x.
TEST(DetectRef, CapacityAndOverflow) {
  const std::vector<Detection> candidates = {{5, 0, 2}, {1, 3, 7}, {0, 3, 7}, {9, 1, 7},
                                             {2, 2, 1}, {4, 4, 9}, {3, 0, 2}};
  const std::vector<Detection> ordered = {{4, 4, 9}, {9, 1, 7}, {0, 3, 7}, {1, 3, 7},
                                          {3, 0, 2}, {5, 0, 2}, {2, 2, 1}};
  const int n = static_cast<int>(candidates.size());
  for (int max : {n - 1, n, n + 1, 0, 1}) {
    const DetectResult r = detect_finish(candidates, max);
    const std::size_t keep = std::min(n, max);
    EXPECT_EQ(r.count, keep) << max;
    EXPECT_EQ(r.overflow, n - keep) << max;
    EXPECT_TRUE(
        same_detections(r.points, std::vector<Detection>(ordered.begin(), ordered.begin() + keep)))
        << max;
  }
}

// Quality mode: threshold = quality · the frame's maximum (detect_max_ref merged over strips); the
// candidates equal goodFeaturesToTrack's rule (above the threshold and equal to the dilated image).
TEST(DetectRef, QualityModeOnARealPhoto) {
  REQUIRE_OPENCV();
#if JETPIPE_HAVE_OPENCV
  const std::string path = test::opencv_sample("building.jpg");
  if (path.empty()) GTEST_SKIP() << "building.jpg not found (Debian's opencv-doc examples)";
  const cv::Mat gray = cv::imread(path, cv::IMREAD_GRAYSCALE);
  ASSERT_FALSE(gray.empty());
  const ImageView g{gray.data, gray.cols, gray.rows, gray.step, PixelFormat::kGray8};
  HostImage response(gray.cols, gray.rows, PixelFormat::kF32);
  HarrisParams hp;
  harris_ref(hp, g, response.view(), 0, gray.rows);
  const ImageView r = response.view();

  const int a = r.height / 3, b = r.height / 2;
  const float max_whole = detect_max_ref(r, 0, r.height);
  const float max_strips =
      std::max({detect_max_ref(r, 0, a), detect_max_ref(r, a, b), detect_max_ref(r, b, r.height)});
  EXPECT_EQ(max_whole, max_strips);
  EXPECT_EQ(detect_max_ref(r, 5, 5), -std::numeric_limits<float>::infinity());
  double cv_max = 0;
  cv::minMaxLoc(to_mat(r), nullptr, &cv_max);
  EXPECT_EQ(max_whole, static_cast<float>(cv_max));

  for (int radius : {1, 2, 4}) {
    SCOPED_TRACE("r " + std::to_string(radius));
    DetectParams p;
    p.use_quality = true;
    p.quality = 0.01;
    p.nms_radius = radius;
    p.max_detections = 300;
    const float thresh = static_cast<float>(p.quality * max_whole);
    const std::vector<Detection> got = detect_checked(p, thresh, r);
    EXPECT_GT(got.size(), 300u) << "expected an overflow on this photo";

    cv::Mat dilated;
    cv::dilate(to_mat(r), dilated,
               cv::getStructuringElement(cv::MORPH_RECT, cv::Size(2 * radius + 1, 2 * radius + 1)));
    std::vector<Detection> expected;
    for (int y = 0; y < r.height; ++y) {
      for (int x = 0; x < r.width; ++x) {
        const float s = r.row<float>(y)[x];
        if (s > thresh && s == dilated.at<float>(y, x)) expected.push_back({x, y, s});
      }
    }
    EXPECT_TRUE(same_detections(got, expected)) << got.size() << " against " << expected.size();
  }
#endif
}

}  // namespace
}  // namespace jetpipe
