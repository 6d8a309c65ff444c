// SPDX-License-Identifier: MIT
// launch_harris_tiled (kernels/harris/tiled_kernel.cuh) against harris_ref, bit for bit: fresh
// random GRAY8 images (seed printed; JETPIPE_SEED replays), every border it takes (not wrap), sizes
// from the smallest (16 × 16) through a tile's edges (63, 64, 65, 129) to 1920 × 1080; three source
// layouts (cudaMallocPitch: aligned words; rows of odd length and an ROI one pixel in: byte loads);
// one launch and three uneven strips; the output poisoned inside a larger poisoned image (nothing
// outside the view may change) and the response's maximum gathered into one key. Also a real
// frame's blur, and what it refuses. (launch_harris runs it by the policy: the harris suites cover
// it there too.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/gaussian.h"
#include "kernels/harris.h"
#include "kernels/to_gray.h"
#include "pipeline/io/image_io.h"
#include "tests/filter_cases.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

namespace jetpipe {
namespace {

using test::kBorderCount;
using test::kBorders;

using test::rows_differ;

struct HtCase {
  test::Size2 size;
  int harris_border;
};

class GpuHarrisTiled : public ::testing::TestWithParam<HtCase> {};
TEST_P(GpuHarrisTiled, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const HtCase& c = GetParam();
  const std::uint32_t seed = test::fresh_seed();
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  HarrisParams hp;
  hp.border = kBorders[c.harris_border].border;
  const int w = c.size.w, h = c.size.h;
  const HostImage src = test::random_image(w, h, PixelFormat::kGray8, rng);
  HostImage want(w, h, PixelFormat::kF32);
  harris_ref(hp, src.view(), want.view(), 0, h);
  float want_max = -INFINITY;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) want_max = std::fmax(want_max, want.view().at<float>(x, y));
  }
  std::vector<std::pair<DeviceImage, ImageView>> srcs;
  {
    DeviceImage d = test::upload(src.view(), 0);
    const ImageView v = d.view();
    srcs.emplace_back(std::move(d), v);
  }
  {
    DeviceImage d = test::upload(src.view(), 7);  // pitch not a multiple of 4
    const ImageView v = d.view();
    srcs.emplace_back(std::move(d), v);
  }
  {
    HostImage big = test::random_image(w + 3, h + 2, PixelFormat::kGray8, rng);
    copy_image(src.view(), big.view().roi(1, 1, w, h));
    DeviceImage d = test::upload(big.view(), 0);
    const ImageView v = d.view().roi(1, 1, w, h);
    srcs.emplace_back(std::move(d), v);
  }
  JP_CUDA(cudaDeviceSynchronize());
  CudaStream st;
  DeviceBuffer key(sizeof(std::uint32_t));
  DeviceImage resp_outer(w + 2, h + 2, PixelFormat::kF32);
  const ImageView resp = resp_outer.view().roi(1, 1, w, h);
  for (auto& [owner, dsrc] : srcs) {
    SCOPED_TRACE("pitch " + std::to_string(dsrc.pitch));
    ASSERT_TRUE(harris_tiled_fits(hp, dsrc, resp));
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    for (const bool strips : {false, true}) {
      SCOPED_TRACE(strips ? "three strips" : "one launch");
      test::poison_device(resp_outer.view());
      ASSERT_EQ(cudaMemset(key.get(), 0, sizeof(std::uint32_t)), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const std::vector<int> cut = strips ? std::vector<int>{0, h / 3, h / 3 + (h > 40 ? 37 : 1), h}
                                          : std::vector<int>{0, h};
      for (std::size_t k = 0; k + 1 < cut.size(); ++k) {
        ASSERT_EQ(launch_harris_tiled(hp, dsrc, resp, cut[k], cut[k + 1], key.get<std::uint32_t>(),
                                      LaunchContext{}, st.get()),
                  cudaSuccess);
      }
      std::uint32_t got_key = 0;
      ASSERT_EQ(
          cudaMemcpyAsync(&got_key, key.get(), sizeof got_key, cudaMemcpyDeviceToHost, st.get()),
          cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(st.get()), cudaSuccess);
      EXPECT_EQ(got_key, test::host_order_key(want_max)) << "maximum " << want_max;
      const HostImage gr = test::download(resp_outer.view());
      EXPECT_EQ(rows_differ(gr.view().roi(1, 1, w, h), want.view()), 0) << "response rows differ";
      int touched = 0;
      for (int y = 0; y < h + 2; ++y) {
        for (int x = 0; x < w + 2; ++x) {
          if (x >= 1 && x <= w && y >= 1 && y <= h) continue;
          std::uint32_t bits;
          std::memcpy(&bits, &gr.view().at<float>(x, y), sizeof bits);
          touched += bits != 0xA5A5A5A5u;
        }
      }
      EXPECT_EQ(touched, 0) << "pixels outside the view were written";
    }
  }
#endif
}

std::vector<HtCase> ht_cases() {
  std::vector<HtCase> out;
  const test::Size2 sizes[] = {{16, 16},   {17, 19},  {63, 65},  {64, 64},    {65, 129},
                               {113, 113}, {301, 97}, {131, 33}, {1920, 1080}};
  for (const test::Size2& s : sizes) {
    for (int hb = 0; hb < kBorderCount; ++hb) {
      if (kBorders[hb].border.mode != BorderMode::kWrap) out.push_back({s, hb});
    }
  }
  return out;
}

std::string ht_name(const ::testing::TestParamInfo<HtCase>& info) {
  return std::to_string(info.param.size.w) + "x" + std::to_string(info.param.size.h) + "_" +
         kBorders[info.param.harris_border].name;
}
INSTANTIATE_TEST_SUITE_P(Sizes, GpuHarrisTiled, ::testing::ValuesIn(ht_cases()), ht_name);

// A real frame's gray image blurred (long runs of similar values, the dark corners of a photo),
// through the tiled kernel (launch_harris_tiled), launch_harris by the policy, and launch_harris
// held to the fast kernel (HarrisLaunchOptions::tiled_px = 0), each with the early trigger on and
// off.
TEST(GpuHarrisTiledPhoto, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const std::string path = std::string(JETPIPE_TEST_DATA) + "/regression/frames/vtest_0000.ppm";
  const HostImage color = read_image(path);
  const int w = color.width(), h = color.height();
  HostImage gray(w, h, PixelFormat::kGray8), blur(w, h, PixelFormat::kGray8);
  to_gray_ref(color.view(), gray.view(), 0, h);
  gaussian_ref(resolve_gaussian(5, 0, Border{}), gray.view(), blur.view(), 0, h);
  const DeviceImage d = test::upload(blur.view());
  DeviceImage out(w, h, PixelFormat::kF32);
  CudaStream st;
  for (const int b : {0, 2, 4}) {
    HarrisParams hp;
    hp.border = kBorders[b].border;
    SCOPED_TRACE(kBorders[b].name);
    HostImage want(w, h, PixelFormat::kF32);
    harris_ref(hp, blur.view(), want.view(), 0, h);
    for (const int how : {0, 1, 2}) {
      for (const bool early : {true, false}) {
        SCOPED_TRACE(std::string(how == 0   ? "launch_harris_tiled"
                                 : how == 1 ? "launch_harris"
                                            : "launch_harris, the fast kernel") +
                     (early ? ", early trigger" : ", no early trigger"));
        LaunchContext ctx;
        ctx.early_trigger = early;
        HarrisLaunchOptions fast;
        fast.tiled_px = 0;
        test::poison_device(out.view());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        ASSERT_EQ(how == 0
                      ? launch_harris_tiled(hp, d.view(), out.view(), 0, h, nullptr, ctx, st.get())
                      : launch_harris(hp, FilterSource(d.view()), out.view(), 0, h, ctx, st.get(),
                                      FilterPath::kAuto, how == 2 ? fast : HarrisLaunchOptions{}),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(st.get()), cudaSuccess);
        EXPECT_EQ(rows_differ(test::download(out.view()).view(), want.view()), 0);
      }
    }
  }
#endif
}

TEST(GpuHarrisTiledArgs, RefusesWhatItDoesNotTake) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  DeviceImage src(64, 32, PixelFormat::kGray8), resp(64, 32, PixelFormat::kF32),
      small(15, 32, PixelFormat::kGray8), small_resp(15, 32, PixelFormat::kF32);
  const HarrisParams h;
  EXPECT_TRUE(harris_tiled_fits(h, src.view(), resp.view()));
  HarrisParams wrap = h;
  wrap.border.mode = BorderMode::kWrap;
  EXPECT_FALSE(harris_tiled_fits(wrap, src.view(), resp.view()));
  HarrisParams k5 = h;
  k5.ksize = 5;
  EXPECT_FALSE(harris_tiled_fits(k5, src.view(), resp.view()));
  HarrisParams b5 = h;
  b5.block_size = 5;
  EXPECT_FALSE(harris_tiled_fits(b5, src.view(), resp.view()));
  EXPECT_FALSE(harris_tiled_fits(h, small.view(), small_resp.view()));
  EXPECT_FALSE(harris_tiled_fits(h, src.view(), src.view())) << "a GRAY8 response";
  EXPECT_FALSE(harris_tiled_fits(h, src.view().roi(0, 0, 63, 32), resp.view())) << "sizes differ";
  const ImageView odd{resp.view().data + 2, 63, 32, resp.view().pitch, PixelFormat::kF32};
  EXPECT_FALSE(harris_tiled_fits(h, src.view().roi(0, 0, 63, 32), odd)) << "response off a word";
  CudaStream st;
  EXPECT_EQ(
      launch_harris_tiled(wrap, src.view(), resp.view(), 0, 32, nullptr, LaunchContext{}, st.get()),
      cudaErrorInvalidValue);
  EXPECT_EQ(
      launch_harris_tiled(h, src.view(), resp.view(), 0, 33, nullptr, LaunchContext{}, st.get()),
      cudaErrorInvalidValue);
  EXPECT_EQ(
      launch_harris_tiled(h, src.view(), resp.view(), 5, 5, nullptr, LaunchContext{}, st.get()),
      cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(st.get()), cudaSuccess);
#endif
}

}  // namespace
}  // namespace jetpipe
