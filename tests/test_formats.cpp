// SPDX-License-Identifier: MIT
// The decoders' frame layouts (BGRx / RGBx / RGBA, NV12) on the host: their views and buffers,
// to_gray's CPU twin, and the host executor over them: the same records as the BGR8 / GRAY8 frame
// of the same picture. Device frames where the build has no CUDA. The GPU side:
// tests/test_gpu_device_frames.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/to_gray.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/io/source.h"
#include "pipeline/results_json.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

namespace jetpipe {
namespace {

const PixelFormat kColour4[] = {PixelFormat::kBgrx8, PixelFormat::kRgbx8, PixelFormat::kRgba8};

TEST(PixelFormats, NamesRoundTrip) {
  for (PixelFormat f : {PixelFormat::kGray8, PixelFormat::kBgr8, PixelFormat::kRgb8,
                        PixelFormat::kS16, PixelFormat::kF32, PixelFormat::kBgrx8,
                        PixelFormat::kRgbx8, PixelFormat::kRgba8, PixelFormat::kNv12}) {
    PixelFormat back = PixelFormat::kF32;
    ASSERT_TRUE(parse_pixel_format(to_string(f), &back)) << to_string(f);
    EXPECT_EQ(back, f);
  }
  PixelFormat f;
  EXPECT_FALSE(parse_pixel_format("yuyv", &f));
  EXPECT_FALSE(parse_pixel_format("", &f));
}

TEST(PixelFormats, Nv12ImageHasBothPlanesInOneBuffer) {
  for (int w : {1, 2, 7, 64}) {
    for (int h : {1, 2, 5, 36}) {
      HostImage img(w, h, PixelFormat::kNv12);
      const ImageView v = img.view();
      ASSERT_GE(v.pitch, static_cast<std::size_t>((w + 1) / 2 * 2)) << w;
      EXPECT_EQ(v.uv, v.data + v.pitch * h);
      EXPECT_EQ(v.uv_pitch, v.pitch);
      EXPECT_EQ(image_bytes(w, h, PixelFormat::kNv12, v.pitch), v.pitch * (h + (h + 1) / 2));
      const ImageView y = luma_plane(v);
      EXPECT_EQ(y.format, PixelFormat::kGray8);
      EXPECT_EQ(y.data, v.data);
      EXPECT_EQ(y.uv, nullptr);
    }
  }
}

TEST(PixelFormats, CopyImageCopiesTheChromaPlane) {
  std::mt19937 rng(test::fresh_seed());
  const HostImage a = test::random_image(9, 7, PixelFormat::kNv12, rng, 3);
  HostImage b(9, 7, PixelFormat::kNv12, 32);
  copy_image(a.view(), b.view());
  EXPECT_EQ(test::rows_differ(b.view(), a.view()), 0);
  for (int y = 0; y < chroma_rows(7); ++y) {
    EXPECT_EQ(std::memcmp(b.view().chroma_row(y), a.view().chroma_row(y), 10), 0)
        << "chroma row " << y;
  }
}

// to_gray of a 4-byte layout equals to_gray of the BGR8 image with the same colours, whatever
// byte 3 holds; NV12's gray image is its luma plane.
TEST(ToGrayRef, FourByteLayoutsEqualBgr) {
  std::mt19937 rng(test::fresh_seed());
  for (int w : {1, 15, 16, 17, 333}) {
    const HostImage bgr = test::random_image(w, 5, PixelFormat::kBgr8, rng, 2);
    HostImage want(w, 5, PixelFormat::kGray8);
    to_gray_ref(bgr.view(), want.view(), 0, 5);
    for (PixelFormat f : kColour4) {
      const HostImage src = test::as_format(bgr.view(), f, rng, 8);
      HostImage got(w, 5, PixelFormat::kGray8);
      test::poison(got.view());
      to_gray_ref(src.view(), got.view(), 0, 5);
      EXPECT_EQ(test::rows_differ(got.view(), want.view()), 0) << to_string(f) << " w " << w;
    }
  }
}

TEST(ToGrayRef, Nv12IsItsLumaPlane) {
  std::mt19937 rng(test::fresh_seed());
  const HostImage nv = test::random_image(21, 11, PixelFormat::kNv12, rng, 5);
  HostImage got(21, 11, PixelFormat::kGray8);
  to_gray_ref(nv.view(), got.view(), 0, 11);
  EXPECT_EQ(test::rows_differ(got.view(), luma_plane(nv.view())), 0);
}

std::vector<std::string> run_records(const PipelineConfig& cfg, const std::vector<Frame>& frames,
                                     std::vector<std::string>* frame_images = nullptr) {
  std::unique_ptr<Executor> ex =
      make_executor(cfg, strategy_profile(MemoryStrategy::kHost, 3, 1, false), {kFrameImage});
  std::vector<std::string> out;
  for (const Frame& f : frames) {
    ex->submit(f);
    FrameRecord r;
    EXPECT_TRUE(ex->take(&r, true));
    out.push_back(record_to_json(r).dump());
    if (frame_images != nullptr) {
      auto it = r.images.find(kFrameImage);
      frame_images->push_back(it == r.images.end() ? "" : to_string(it->second.format()));
    }
  }
  return out;
}

Frame frame_of(HostImage img, std::int64_t index) {
  Frame f;
  f.index = index;
  f.source = "f" + std::to_string(index);
  f.image = std::move(img);
  return f;
}

// The default chain (to_gray, gaussian, sobel, harris, detection, histogram, stats) and a gray
// only config give the same records for a frame in any layout as for its BGR8 / GRAY8 original.
TEST(HostExecutorFormats, EveryLayoutGivesTheRecordsOfItsOriginal) {
  std::mt19937 rng(test::fresh_seed());
  const PipelineConfig cfg = load_config(std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml");
  const HostImage bgr = test::random_image(97, 61, PixelFormat::kBgr8, rng, 1);
  const std::vector<std::string> want = run_records(cfg, {frame_of(bgr, 0)});
  for (PixelFormat f :
       {PixelFormat::kRgb8, PixelFormat::kBgrx8, PixelFormat::kRgbx8, PixelFormat::kRgba8}) {
    std::vector<std::string> kept;
    const std::vector<std::string> got =
        run_records(cfg, {frame_of(test::as_format(bgr.view(), f, rng, 16), 0)}, &kept);
    EXPECT_EQ(got, want) << to_string(f);
    EXPECT_EQ(kept, std::vector<std::string>{to_string(f)}) << "the kept frame keeps its layout";
  }
  // NV12: the records of its luma plane as a GRAY8 frame; the kept frame keeps both planes.
  const HostImage nv = test::as_format(bgr.view(), PixelFormat::kNv12, rng, 4);
  HostImage gray(97, 61, PixelFormat::kGray8);
  copy_image(luma_plane(nv.view()), gray.view());
  std::vector<std::string> kept;
  EXPECT_EQ(run_records(cfg, {frame_of(nv, 0)}, &kept), run_records(cfg, {frame_of(gray, 0)}));
  EXPECT_EQ(kept, std::vector<std::string>{"nv12"});
  const PipelineConfig gray_only =
      parse_config("stages:\n  - {type: histogram, bins: 32}\n  - {type: stats}\n", "<test>", ".");
  EXPECT_EQ(run_records(gray_only, {frame_of(nv, 0)}), run_records(gray_only, {frame_of(gray, 0)}));
}

// test:// in every frame format through the default chain: the records of the bgr8 frames for
// the colour layouts, those of the gray8 frames for nv12 (its luma plane is the gray8 picture).
TEST(HostExecutorFormats, TestSourceFormatsGiveTheRecordsOfTheirOriginal) {
  const PipelineConfig cfg = load_config(std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml");
  auto records = [&](const std::string& pattern, const char* format) {
    auto src = open_source("test://" + pattern + "?w=97&h=61&frames=3&format=" + format);
    std::vector<Frame> frames;
    Frame f;
    while (src->next(&f)) frames.push_back(f);
    EXPECT_EQ(frames.size(), 3u);
    return run_records(cfg, frames);
  };
  for (const char* pattern : {"gradient", "checker", "noise", "blobs"}) {
    const std::vector<std::string> bgr = records(pattern, "bgr8");
    for (const char* f : {"rgb8", "bgrx8", "rgbx8", "rgba8"}) {
      EXPECT_EQ(records(pattern, f), bgr) << pattern << " " << f;
    }
    EXPECT_EQ(records(pattern, "nv12"), records(pattern, "gray8")) << pattern;
  }
}

TEST(HostExecutorFormats, AColourLayoutAGrayStageCannotReadIsAFrameError) {
  const PipelineConfig cfg = parse_config("stages:\n  - {type: histogram}\n", "<test>", ".");
  std::mt19937 rng(test::fresh_seed());
  const std::vector<std::string> got =
      run_records(cfg, {frame_of(test::random_image(8, 4, PixelFormat::kBgrx8, rng), 0),
                        frame_of(test::random_image(8, 4, PixelFormat::kGray8, rng), 1)});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[0].find("is bgrx8"), std::string::npos) << got[0];
  EXPECT_NE(got[0].find("to_gray"), std::string::npos) << got[0];
  EXPECT_EQ(got[1].find("error"), std::string::npos) << got[1];
}

TEST(DeviceFrameOwner, ReleaseRunsOnceWhenTheLastReferenceGoes) {
  int released = 0;
  {
    std::shared_ptr<void> a = DeviceFrame::release_with([&] { ++released; });
    ASSERT_TRUE(a);
    std::shared_ptr<void> b = a;
    a.reset();
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);
  EXPECT_FALSE(DeviceFrame::release_with(nullptr));
}

#if !JETPIPE_HAVE_CUDA
// Without CUDA a device frame is one frame error, its owner released, and the run goes on.
TEST(HostExecutorFormats, ADeviceFrameWithoutCudaIsAFrameError) {
  const PipelineConfig cfg = parse_config("stages:\n  - {type: stats}\n", "<test>", ".");
  std::unique_ptr<Executor> ex =
      make_executor(cfg, strategy_profile(MemoryStrategy::kHost, 1, 1, false), {});
  static std::uint8_t pixels[64];
  int released = 0;
  Frame f;
  f.index = 0;
  f.source = "dev";
  DeviceFrame d;
  d.view = ImageView{pixels, 8, 8, 8, PixelFormat::kGray8};
  d.owner = DeviceFrame::release_with([&] { ++released; });
  f.device = std::make_shared<const DeviceFrame>(std::move(d));
  ex->submit(std::move(f));
  FrameRecord r;
  ASSERT_TRUE(ex->take(&r, true));
  EXPECT_NE(r.error.find("this build has no CUDA"), std::string::npos) << r.error;
  EXPECT_EQ(released, 1);
}
#endif

}  // namespace
}  // namespace jetpipe
