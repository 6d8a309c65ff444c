// SPDX-License-Identifier: MIT
// Frame layouts written and shown (pipeline/io/convert.h, image_io, the runner's --save-images):
// NV12 → BGR exactly as OpenCV's cvtColor(COLOR_YUV2BGR_NV12), the 4-byte layouts as their BGR
// picture, and every layout written to .ppm / .png and read back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/io/convert.h"
#include "pipeline/io/image_io.h"
#include "pipeline/io/source.h"
#include "pipeline/runner.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace jetpipe {
namespace {

namespace fs = std::filesystem;

const PixelFormat kLayouts[] = {PixelFormat::kGray8, PixelFormat::kBgr8,  PixelFormat::kRgb8,
                                PixelFormat::kBgrx8, PixelFormat::kRgbx8, PixelFormat::kRgba8,
                                PixelFormat::kNv12};

// The BT.601 conversion written out in doubles, rounded: the fixed-point one stays within 1.
void nv12_pixel_float(int y, int u, int v, int bgr[3]) {
  const double c = 1.164 * std::max(0, y - 16);
  const double r = c + 1.596 * (v - 128), g = c - 0.813 * (v - 128) - 0.391 * (u - 128),
               b = c + 2.018 * (u - 128);
  const double ch[3] = {b, g, r};
  for (int k = 0; k < 3; ++k) bgr[k] = static_cast<int>(std::lround(std::clamp(ch[k], 0.0, 255.0)));
}

TEST(Nv12ToBgr, EveryLumaAndChromaExtremeNearTheFormula) {
  // One row of 256 luma values per chroma pair: width 512, pairs (u, v) from a grid of extremes.
  const int kChroma[] = {0, 16, 90, 128, 166, 240, 255};
  for (int u : kChroma) {
    for (int v : kChroma) {
      HostImage nv(512, 2, PixelFormat::kNv12);
      for (int x = 0; x < 512; ++x) {
        nv.view().row<std::uint8_t>(0)[x] = static_cast<std::uint8_t>(x / 2);
        nv.view().row<std::uint8_t>(1)[x] = static_cast<std::uint8_t>(255 - x / 2);
      }
      for (int x = 0; x < 512; x += 2) {
        nv.view().uv[x] = static_cast<std::uint8_t>(u);
        nv.view().uv[x + 1] = static_cast<std::uint8_t>(v);
      }
      HostImage bgr(512, 2, PixelFormat::kBgr8);
      nv12_to_bgr(nv.view(), bgr.view());
      for (int y = 0; y < 2; ++y) {
        for (int x = 0; x < 512; ++x) {
          int want[3];
          nv12_pixel_float(nv.view().row<std::uint8_t>(y)[x], u, v, want);
          for (int k = 0; k < 3; ++k) {
            ASSERT_NEAR(bgr.view().row<std::uint8_t>(y)[3 * x + k], want[k], 1)
                << "Y " << int(nv.view().row<std::uint8_t>(y)[x]) << " U " << u << " V " << v;
          }
        }
      }
    }
  }
}

#if JETPIPE_HAVE_OPENCV
// Bit for bit what cv::cvtColor(COLOR_YUV2BGR_NV12) gives (its SIMD paths and scalar tails):
// random planes, widths around vector lengths, padded pitches.
TEST(Nv12ToBgr, EqualsOpenCvCvtColor) {
  const std::uint32_t seed = test::fresh_seed();
  std::mt19937 rng(seed);
  for (int w : {2, 4, 14, 16, 30, 32, 34, 64, 66, 130, 334}) {
    for (int h : {2, 6, 16, 38}) {
      const HostImage nv = test::random_image(w, h, PixelFormat::kNv12, rng, 13);
      cv::Mat yuv(h + h / 2, w, CV_8UC1);  // OpenCV's layout: chroma rows after the luma rows
      for (int y = 0; y < h; ++y) std::memcpy(yuv.ptr(y), nv.view().row<std::uint8_t>(y), w);
      for (int y = 0; y < h / 2; ++y) {
        std::memcpy(yuv.ptr(h + y), nv.view().uv + y * nv.view().uv_pitch, w);
      }
      cv::Mat want;
      cv::cvtColor(yuv, want, cv::COLOR_YUV2BGR_NV12);
      HostImage got(w, h, PixelFormat::kBgr8, 3 * w + 5);
      test::poison(got.view());
      nv12_to_bgr(nv.view(), got.view());
      const ImageView ref{want.data, w, h, want.step[0], PixelFormat::kBgr8};
      EXPECT_EQ(test::rows_differ(got.view(), ref), 0) << w << "x" << h << " seed " << seed;
    }
  }
}
#endif

// Odd sizes: each pixel takes its 2x2 block's chroma pair, so an odd image converts as the top-left
// corner of the even image around it.
TEST(Nv12ToBgr, OddSizesAreTheCornerOfTheEvenImage) {
  std::mt19937 rng(test::fresh_seed());
  for (int w : {1, 3, 17}) {
    for (int h : {1, 5}) {
      const HostImage even = test::random_image(w + 1, h + 1, PixelFormat::kNv12, rng, 2);
      HostImage all(w + 1, h + 1, PixelFormat::kBgr8), corner(w, h, PixelFormat::kBgr8);
      nv12_to_bgr(even.view(), all.view());
      nv12_to_bgr(even.view().roi(0, 0, w, h), corner.view());
      EXPECT_EQ(test::rows_differ(corner.view(), all.view().roi(0, 0, w, h)), 0) << w << "x" << h;
    }
  }
}

// convert_8bit: each colour layout gives back the BGR8 picture it holds, and gray by the overlay's
// weights; NV12's gray is its luma plane, its BGR nv12_to_bgr; other formats are refused.
TEST(Convert8Bit, EveryLayoutToBgrAndGray) {
  std::mt19937 rng(test::fresh_seed());
  const HostImage bgr = test::random_image(37, 9, PixelFormat::kBgr8, rng, 3);
  const HostImage gray = convert_8bit(bgr.view(), PixelFormat::kGray8);
  for (PixelFormat f :
       {PixelFormat::kRgb8, PixelFormat::kBgrx8, PixelFormat::kRgbx8, PixelFormat::kRgba8}) {
    const HostImage in = test::as_format(bgr.view(), f, rng, 7);
    EXPECT_EQ(test::rows_differ(convert_8bit(in.view(), PixelFormat::kBgr8).view(), bgr.view()), 0)
        << to_string(f);
    EXPECT_EQ(test::rows_differ(convert_8bit(in.view(), PixelFormat::kGray8).view(), gray.view()),
              0)
        << to_string(f);
  }
  const HostImage nv = test::random_image(37, 9, PixelFormat::kNv12, rng, 1);
  EXPECT_EQ(
      test::rows_differ(convert_8bit(nv.view(), PixelFormat::kGray8).view(), luma_plane(nv.view())),
      0);
  HostImage want(37, 9, PixelFormat::kBgr8);
  nv12_to_bgr(nv.view(), want.view());
  EXPECT_EQ(test::rows_differ(convert_8bit(nv.view(), PixelFormat::kBgr8).view(), want.view()), 0);
  HostImage f32(2, 2, PixelFormat::kF32);
  EXPECT_THROW(convert_8bit(f32.view(), PixelFormat::kBgr8), Error);
  EXPECT_THROW(convert_8bit(bgr.view(), PixelFormat::kNv12), Error);
}

// The BGR8 (or GRAY8) picture a layout holds: what write_image writes and read_image gives back.
HostImage picture(const ImageView& v) {
  return convert_8bit(v,
                      v.format == PixelFormat::kGray8 ? PixelFormat::kGray8 : PixelFormat::kBgr8);
}

// Every layout is written (.ppm / .pgm built in; .png with OpenCV) and reads back as its picture.
TEST(WriteImage, EveryLayoutWritesItsPicture) {
  test::TempDir dir;
  std::mt19937 rng(test::fresh_seed());
  for (PixelFormat f : kLayouts) {
    const HostImage img = test::random_image(29, 11, f, rng, 5);
    std::vector<std::string> exts = {f == PixelFormat::kGray8 ? "pgm" : "ppm",
                                     preferred_extension(f)};
    for (const std::string& ext : exts) {
      const std::string path = dir / (std::string(to_string(f)) + "." + ext);
      write_image(path, img.view());
      const HostImage back = read_image(path);
      const HostImage want = picture(img.view());
      ASSERT_EQ(back.format(), want.format()) << path;
      EXPECT_EQ(test::rows_differ(back.view(), want.view()), 0) << path;
    }
  }
  const HostImage nv = test::random_image(4, 4, PixelFormat::kNv12, rng);
  try {
    write_image(dir / "n.pgm", nv.view());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_NE(std::string(e.what()).find("nv12 → .ppm"), std::string::npos) << e.what();
  }
}

// --save-images of the frame itself, whatever its layout: the files hold its picture.
TEST(WriteImage, SaveImagesOfTheFrameInEveryLayout) {
  test::TempDir dir;
  std::ofstream(dir / "c.yaml") << "platform: cpu\nstages:\n  - {type: to_gray, name: gray}\n"
                                   "outputs: {images: [frame, gray], save_images: true}\n";
  for (PixelFormat f : kLayouts) {
    const std::string uri = std::string("test://blobs?w=45&h=31&frames=2&format=") + to_string(f);
    RunOptions o;
    o.config = dir / "c.yaml";
    o.inputs = {uri};
    o.output_dir = dir / to_string(f);
    const RunSummary s = run_pipeline(o);
    EXPECT_EQ(s.processed, 2) << uri;
    auto src = open_source(uri);
    Frame frame;
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(src->next(&frame));
      const std::string name = "frame_00000" + std::to_string(i) + "." + preferred_extension(f);
      const fs::path file = fs::path(o.output_dir) / "images" / name;
      ASSERT_TRUE(fs::exists(file)) << file;
      const HostImage back = read_image(file.string());
      const HostImage want = picture(frame.image.view());
      ASSERT_EQ(back.format(), want.format()) << file;
      EXPECT_EQ(test::rows_differ(back.view(), want.view()), 0) << file;
    }
  }
}

}  // namespace
}  // namespace jetpipe
