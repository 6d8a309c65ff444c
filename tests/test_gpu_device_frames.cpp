// SPDX-License-Identifier: MIT
// Device frames (pipeline/io/source.h, DeviceFrame) through the CUDA executor: for every memory
// strategy (copy, pinned-chunked with 1 and 3 strips, zero-copy, managed), graphs on and off, one
// and two frames in flight, the records and images of a frame given in device memory equal those
// of the same frame given from host memory, bit for bit, for every frame format (BGR8, the 4-byte
// layouts, GRAY8, NV12). The executor waits for the frame's ready stream or event, releases each
// owner exactly once and only after the frame's record is taken or its slot reused, refuses
// pageable host memory with one frame error, and downloads a kept device frame.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/api.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/platform.h"
#include "pipeline/results_json.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda_check.h"
#endif

namespace jetpipe {
namespace {

#if JETPIPE_HAVE_CUDA

// A device copy of a host frame (both planes of NV12, each with rows padded by 40 bytes), written
// asynchronously on `stream` after `delay_ms` of host work queued there (so a reader that does not
// wait for the stream reads the poison first).
struct DeviceCopy {
  std::shared_ptr<std::uint8_t> memory;
  ImageView view;
};

DeviceCopy device_copy(const ImageView& host, cudaStream_t stream, int delay_ms = 0) {
  const std::size_t pitch = min_pitch(host.width, host.format) + 40;
  const std::size_t bytes = image_bytes(host.width, host.height, host.format, pitch);
  void* p = nullptr;
  JP_CUDA(cudaMalloc(&p, bytes));
  DeviceCopy d;
  d.memory.reset(static_cast<std::uint8_t*>(p), [](std::uint8_t* q) { cudaFree(q); });
  d.view = make_view(d.memory.get(), host.width, host.height, host.format, pitch);
  JP_CUDA(cudaMemsetAsync(p, 0xA5, bytes, stream));
  if (delay_ms > 0) {
    JP_CUDA(cudaLaunchHostFunc(
        stream,
        [](void* ms) {
          std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<int*>(ms)));
        },
        new int(delay_ms)));  // leaked once per test: a few bytes
  }
  JP_CUDA(cudaMemcpy2DAsync(d.view.data, d.view.pitch, host.data, host.pitch, host.row_bytes(),
                            static_cast<std::size_t>(host.height), cudaMemcpyHostToDevice, stream));
  if (host.format == PixelFormat::kNv12) {
    JP_CUDA(cudaMemcpy2DAsync(
        d.view.uv, d.view.uv_pitch, host.uv, host.uv_pitch, min_pitch(host.width, host.format),
        static_cast<std::size_t>(chroma_rows(host.height)), cudaMemcpyHostToDevice, stream));
  }
  return d;
}

// The test frames: two regression photos and a random odd size, in every frame format.
std::vector<HostImage> test_frames(std::mt19937& rng) {
  const std::string dir = std::string(JETPIPE_TEST_DATA) + "/regression/frames/";
  std::vector<HostImage> originals;
  std::unique_ptr<Source> src = open_source("frames://" + dir + "vtest_000*");
  Frame f;
  for (int i = 0; i < 2 && src->next(&f); ++i) originals.push_back(f.image);
  originals.push_back(test::random_image(333, 97, PixelFormat::kBgr8, rng, 3));
  std::vector<HostImage> out;
  for (const HostImage& o : originals) {
    for (PixelFormat fmt : {PixelFormat::kBgr8, PixelFormat::kBgrx8, PixelFormat::kRgba8,
                            PixelFormat::kGray8, PixelFormat::kNv12}) {
      out.push_back(o.format() == fmt ? o : test::as_format(o.view(), fmt, rng, 7));
    }
  }
  return out;
}

struct Output {
  std::vector<std::string> records;
  std::vector<std::string> images;  // every kept image, packed, per record
};

// Runs the frames through `cfg` under `p`: from host memory, or as device frames written on a
// stream of ours (ready_stream, or ready_event when `use_event`). *released counts the owners
// released; each release checks that the frame's record had been taken or its slot reused.
Output run_frames(const PipelineConfig& cfg, const PlatformProfile& p,
                  const std::vector<HostImage>& frames, bool device, bool use_event,
                  int* released) {
  std::vector<std::string> keep = cfg.image_names();
  keep.push_back(kFrameImage);
  std::unique_ptr<Executor> ex = make_executor(cfg, p, keep);
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  JP_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  JP_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  Output out;
  auto drain = [&](bool wait) {
    FrameRecord r;
    while (ex->take(&r, wait)) {
      out.records.push_back(record_to_json(r).dump());
      std::string imgs;
      for (const auto& [name, img] : r.images) imgs += name + "=" + test::pack_pixels(img.view()) + ";";
      out.images.push_back(imgs);
    }
  };
  std::vector<DeviceCopy> copies;  // alive until the end: an early release must not free them
  for (std::size_t i = 0; i < frames.size(); ++i) {
    Frame f;
    f.index = static_cast<std::int64_t>(i);
    f.source = "frame" + std::to_string(i);
    if (device) {
      copies.push_back(device_copy(frames[i].view(), stream, i == 0 ? 30 : 0));
      DeviceFrame d;
      d.view = copies.back().view;
      if (use_event) {
        JP_CUDA(cudaEventRecord(event, stream));
        d.ready_event = event;
      } else {
        d.ready_stream = stream;
      }
      d.owner = DeviceFrame::release_with([released] { ++*released; });
      f.device = std::make_shared<const DeviceFrame>(std::move(d));
    } else {
      f.image = frames[i];
    }
    ex->submit(std::move(f));
    drain(false);
  }
  while (ex->in_flight() > 0) drain(true);
  ex.reset();
  cudaEventDestroy(event);
  cudaStreamDestroy(stream);
  return out;
}

std::vector<PlatformProfile> strategies() {
  std::vector<PlatformProfile> out;
  for (bool graphs : {false, true}) {
    out.push_back(strategy_profile(MemoryStrategy::kCopy, 1, 1, false));
    out.push_back(strategy_profile(MemoryStrategy::kPinnedChunked, 1, 2, graphs));
    out.push_back(strategy_profile(MemoryStrategy::kPinnedChunked, 3, 2, graphs));
    out.push_back(strategy_profile(MemoryStrategy::kZeroCopy, 1, 1, graphs));
    out.push_back(strategy_profile(MemoryStrategy::kZeroCopy, 3, 2, graphs));
    out.push_back(strategy_profile(MemoryStrategy::kManaged, 2, 2, graphs));
  }
  return out;
}

std::string describe(const PlatformProfile& p) {
  return std::string(name(p.memory)) + " K=" + std::to_string(p.chunks) +
         " F=" + std::to_string(p.frames_in_flight) + " graphs " + (p.cuda_graphs ? "on" : "off");
}

// An image in device memory (any format, stage outputs included), downloaded.
HostImage download(const ImageView& d) {
  HostImage h(d.width, d.height, d.format);
  JP_CUDA(cudaMemcpy2D(h.view().data, h.view().pitch, d.data, d.pitch, d.row_bytes(),
                       static_cast<std::size_t>(d.height), cudaMemcpyDeviceToHost));
  return h;
}

// Every record's kept images as packed pixels: host images (the frame as the stages read it:
// NV12's luma plane), or with `on_device` the records' device images, downloaded. *hold keeps the
// device images with their pixels as first read (to read them again after the executor is gone).
using Held = std::vector<std::pair<KeptDeviceImage, std::string>>;
std::vector<std::string> kept_images(const PipelineConfig& cfg, const PlatformProfile& p,
                                     const std::vector<HostImage>& frames, bool on_device,
                                     Held* hold) {
  std::vector<std::string> keep = cfg.image_names();
  keep.push_back(kFrameImage);
  std::unique_ptr<Executor> ex =
      on_device ? make_executor(cfg, p, {}, keep) : make_executor(cfg, p, keep);
  std::vector<std::string> out;
  auto drain = [&](bool wait) {
    FrameRecord r;
    while (ex->take(&r, wait)) {
      EXPECT_TRUE(r.error.empty()) << r.error;
      EXPECT_EQ(r.images.empty(), on_device);
      EXPECT_EQ(r.device_images.empty(), !on_device);
      std::string s;
      for (const auto& [name, img] : r.images) {
        s += name + "=" + test::pack_pixels(luma_plane(img.view())) + ";";
      }
      for (const auto& [name, d] : r.device_images) {
        const std::string pixels = test::pack_pixels(download(d.view).view());
        s += name + "=" + pixels + ";";
        hold->emplace_back(d, pixels);
      }
      out.push_back(s);
    }
  };
  for (std::size_t i = 0; i < frames.size(); ++i) {
    Frame f;
    f.index = static_cast<std::int64_t>(i);
    f.image = frames[i];
    ex->submit(std::move(f));
    drain(false);
  }
  while (ex->in_flight() > 0) drain(true);
  return out;
}

#endif  // JETPIPE_HAVE_CUDA

// keep_images on the device: each record's images in device buffers of their own, equal to the
// host images of the same frames for every strategy, still readable after the executor is gone.
TEST(GpuDeviceFrames, DeviceImagesOutEqualHostImagesForEveryStrategy) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(test::fresh_seed());
  const std::vector<HostImage> frames = test_frames(rng);
  const PipelineConfig cfg =
      load_config(std::string(JETPIPE_TEST_DATA) + "/../config/default.yaml");
  Held none;
  const std::vector<std::string> want = kept_images(cfg, strategies()[1], frames, false, &none);
  for (const PlatformProfile& p : strategies()) {
    SCOPED_TRACE(describe(p));
    Held hold;
    const std::vector<std::string> got = kept_images(cfg, p, frames, true, &hold);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(got[i] == want[i]) << "frame " << i;
    // The executor is gone; the buffers are not.
    for (const auto& [d, pixels] : hold) {
      EXPECT_TRUE(test::pack_pixels(download(d.view).view()) == pixels)
          << "a device image changed after the executor was destroyed";
    }
    if (::testing::Test::HasFailure()) return;
  }
  // The CPU backend refuses them.
  std::string why;
  EXPECT_THROW(make_executor(cfg, resolve_platform("cpu", &why), {}, {"blur"}), Error);
#endif
}

TEST(GpuDeviceFrames, EqualHostFramesForEveryStrategyAndFormat) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(test::fresh_seed());
  const std::vector<HostImage> frames = test_frames(rng);
  for (const char* file : {"/../config/default.yaml", "/regression/configs/filters.yaml"}) {
    const std::string path = std::string(JETPIPE_TEST_DATA) + file;
    const PipelineConfig cfg = load_config(path);
    int released = 0;
    const Output want = run_frames(cfg, strategies()[1], frames, false, false, &released);
    for (const PlatformProfile& p : strategies()) {
      for (bool use_event : {false, true}) {
        SCOPED_TRACE(std::string(file) + " " + describe(p) +
                     (use_event ? " ready event" : " ready stream"));
        released = 0;
        const Output got = run_frames(cfg, p, frames, true, use_event, &released);
        EXPECT_EQ(released, static_cast<int>(frames.size())) << "each owner released once";
        ASSERT_EQ(got.records.size(), want.records.size());
        for (std::size_t i = 0; i < want.records.size(); ++i) {
          EXPECT_EQ(got.records[i], want.records[i]) << "frame " << i;
          EXPECT_TRUE(got.images[i] == want.images[i]) << "frame " << i << ": images differ";
        }
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
#endif
}

// The owner goes back when the frame's record is taken (or its slot taken by a later frame),
// never while its work may still run.
TEST(GpuDeviceFrames, OwnerReleasedOnlyOnceTheFrameIsDone) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(test::fresh_seed());
  const PipelineConfig cfg = load_config(std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml");
  std::unique_ptr<Executor> ex =
      make_executor(cfg, strategy_profile(MemoryStrategy::kPinnedChunked, 2, 2, true), {});
  const HostImage img = test::random_image(640, 360, PixelFormat::kBgrx8, rng);
  cudaStream_t stream = nullptr;
  JP_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceCopy a = device_copy(img.view(), stream, 50), b = device_copy(img.view(), stream);
  int released = 0;
  for (DeviceCopy* c : {&a, &b}) {
    DeviceFrame d;
    d.view = c->view;
    d.ready_stream = stream;
    d.owner = DeviceFrame::release_with([&released] { ++released; });
    Frame f;
    f.device = std::make_shared<const DeviceFrame>(std::move(d));
    ex->submit(std::move(f));
  }
  EXPECT_EQ(released, 0) << "two frames in flight, none taken";
  FrameRecord r;
  ASSERT_TRUE(ex->take(&r, true));
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(released, 1);
  ASSERT_TRUE(ex->take(&r, true));
  EXPECT_EQ(released, 2);
  cudaStreamDestroy(stream);
#endif
}

// Pageable host memory, a null view and a format no frame has: one frame error each, owners
// released, the frames around them processed.
TEST(GpuDeviceFrames, BadDeviceFramesAreFrameErrors) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(test::fresh_seed());
  const PipelineConfig cfg =
      parse_config("stages:\n  - {type: to_gray}\n  - {type: stats}\n", "<test>", ".");
  for (MemoryStrategy m : {MemoryStrategy::kPinnedChunked, MemoryStrategy::kZeroCopy,
                           MemoryStrategy::kManaged, MemoryStrategy::kCopy}) {
    SCOPED_TRACE(name(m));
    std::unique_ptr<Executor> ex = make_executor(cfg, strategy_profile(m, 2, 2, true), {});
    const HostImage good = test::random_image(64, 32, PixelFormat::kBgr8, rng);
    HostImage pageable = test::random_image(64, 32, PixelFormat::kBgr8, rng);
    int released = 0;
    auto device_frame = [&](ImageView v) {
      DeviceFrame d;
      d.view = v;
      d.owner = DeviceFrame::release_with([&released] { ++released; });
      Frame f;
      f.source = "bad";
      f.device = std::make_shared<const DeviceFrame>(std::move(d));
      return f;
    };
    Frame ok;
    ok.image = good;
    ex->submit(ok);
    ex->submit(device_frame(pageable.view()));
    ImageView s16 = pageable.view();
    s16.format = PixelFormat::kS16;
    ex->submit(device_frame(s16));
    ex->submit(device_frame(ImageView{}));
    ex->submit(ok);
    std::vector<FrameRecord> recs(5);
    for (FrameRecord& r : recs) ASSERT_TRUE(ex->take(&r, true));
    EXPECT_TRUE(recs[0].error.empty()) << recs[0].error;
    EXPECT_NE(recs[1].error.find("pageable host memory"), std::string::npos) << recs[1].error;
    EXPECT_NE(recs[2].error.find("not a frame format"), std::string::npos) << recs[2].error;
    EXPECT_NE(recs[3].error.find("no pixels"), std::string::npos) << recs[3].error;
    EXPECT_TRUE(recs[4].error.empty()) << recs[4].error;
    EXPECT_EQ(record_to_json(recs[0])["results"], record_to_json(recs[4])["results"]);
    EXPECT_EQ(released, 3);
  }
#endif
}

// Pipeline::process(DeviceFrame): the record of the host frame, the owner back on return; the CPU
// backend copies the frame to the host first.
TEST(GpuDeviceFrames, PipelineProcessTakesADeviceFrame) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(test::fresh_seed());
  const HostImage img = test::random_image(301, 203, PixelFormat::kRgba8, rng, 5);
  for (const char* platform : {"auto", "cpu"}) {
    SCOPED_TRACE(platform);
    Pipeline p =
        Pipeline::from_file(std::string(JETPIPE_SOURCE_DIR) + "/config/default.yaml", platform);
    const FrameRecord want = p.process(img, 7, "host");
    DeviceCopy c = device_copy(img.view(), nullptr);
    JP_CUDA(cudaStreamSynchronize(nullptr));  // no ready stream given: the pixels are there now
    int released = 0;
    DeviceFrame d;
    d.view = c.view;
    d.owner = DeviceFrame::release_with([&released] { ++released; });
    const FrameRecord got = p.process(std::move(d), 7, "host");
    EXPECT_EQ(released, 1);
    EXPECT_TRUE(got.error.empty()) << got.error;
    EXPECT_EQ(record_to_json(got).dump(), record_to_json(want).dump());
  }
#endif
}

}  // namespace
}  // namespace jetpipe
