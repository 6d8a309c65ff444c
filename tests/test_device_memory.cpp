// SPDX-License-Identifier: MIT
// Frames left in device memory, without a Jetson or a GPU: the URI keys, the memory chosen and the
// pipeline ends (device_memory.h); and, with GStreamer, the source's NVMM path end to end through
// the fake element jpfakenvmmsrc and the fake mapper (tests/fake_nvmm_src.h): frames in order,
// each buffer released exactly once and only when its frame is (the mapping first), a failed
// mapping or a block-linear or unreadable surface as that frame's error (the others go on), NVMM
// that this run cannot map as one clear error, system memory where device memory was asked for as
// the copying path with a note, and the CUDA-memory caps falling back to system memory without a
// CUDA decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/io/device_memory.h"
#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/gst_source.h"
#include "pipeline/io/nvmm.h"
#include "pipeline/io/source.h"
#include "tests/fake_nvmm_src.h"
#include "tests/fake_surface.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_GSTREAMER
#include <gst/gst.h>

#include "pipeline/io/gst_device_memory.h"
#endif

namespace jetpipe {
namespace {

using test::FakeSurface;
using test::FakeSurfaceMapper;

using test::error_of;
using test::has;

// ---- URI keys, the choice, the pipeline ends (pure) -------------------------------------------

TEST(DeviceMemoryKeys, ReadPerSchemeAndFilePathsKeepTheirQuestionMarks) {
  SourceSpec s = parse_gst_source_uri("csi://0?nvmm=0&w=1280&h=720", true);
  EXPECT_FALSE(s.device.nvmm);
  EXPECT_EQ(s.width, 1280);
  EXPECT_TRUE(parse_gst_source_uri("csi://0", true).device.nvmm);
  EXPECT_FALSE(parse_gst_source_uri("v4l2:///dev/video1?nvmm=false", true).device.nvmm);
  EXPECT_FALSE(parse_gst_source_uri("rtp://:5004?nvmm=0", true).device.nvmm);

  s = parse_gst_source_uri("file:///clips/a.mp4?nvmm=0&cudamem=0", true);
  EXPECT_EQ(s.location, "/clips/a.mp4");
  EXPECT_FALSE(s.device.nvmm);
  EXPECT_FALSE(s.device.cudamem);
  s = parse_gst_source_uri("file:///clips/what?.mp4", true);  // a name, not keys
  EXPECT_EQ(s.location, "/clips/what?.mp4");
  EXPECT_TRUE(s.device.nvmm);
  s = parse_gst_source_uri("file://b.mp4?cudamem=1", true);
  EXPECT_EQ(s.location, "b.mp4");
  EXPECT_TRUE(s.device.cudamem);

  const std::string bad = error_of([] { parse_gst_source_uri("v4l2:///dev/video0?nvmm=2", true); });
  EXPECT_TRUE(has(bad, "nvmm=2")) << bad;
  EXPECT_TRUE(has(bad, "0 or 1")) << bad;
  const std::string unknown = error_of([] { parse_gst_source_uri("test://smpte?nvmm=0", true); });
  EXPECT_TRUE(has(unknown, "unknown key 'nvmm'")) << unknown;  // videotestsrc: system memory
}

TEST(DeviceMemoryChoice, JetsonAndDiscreteCasesWithTheirReasons) {
  DeviceMemoryInputs jetson;
  jetson.device_frames = true;
  jetson.nvmm_source = jetson.cuda_source = true;
  jetson.nvvidconv = true;
  DeviceMemorySpec on;
  MemoryChoice c = choose_frame_memory(on, jetson);
  EXPECT_EQ(c.memory, FrameMemory::kNvmm);
  EXPECT_FALSE(c.note);

  DeviceMemorySpec off;
  off.nvmm = false;
  c = choose_frame_memory(off, jetson);
  EXPECT_EQ(c.memory, FrameMemory::kSystem);
  EXPECT_TRUE(has(c.why, "nvmm=0")) << c.why;
  EXPECT_FALSE(c.note);

  DeviceMemoryInputs cpu = jetson;
  cpu.device_frames = false;
  c = choose_frame_memory(on, cpu);
  EXPECT_EQ(c.memory, FrameMemory::kSystem);
  EXPECT_TRUE(has(c.why, "platform cpu")) << c.why;

  DeviceMemoryInputs headless = jetson;
  headless.nvmm_unavailable = "NvBufSurfaceMapEglImage failed";
  c = choose_frame_memory(on, headless);
  EXPECT_EQ(c.memory, FrameMemory::kSystem);
  EXPECT_TRUE(c.note);  // the fallback is said on stderr
  EXPECT_TRUE(has(c.why, "NvBufSurfaceMapEglImage failed")) << c.why;

  DeviceMemoryInputs test_src = jetson;  // videotestsrc, rtsp, gst://: not an NVMM source
  test_src.nvmm_source = test_src.cuda_source = false;
  EXPECT_EQ(choose_frame_memory(on, test_src).memory, FrameMemory::kSystem);

  DeviceMemoryInputs discrete;
  discrete.device_frames = true;
  discrete.nvmm_source = discrete.cuda_source = true;
  discrete.cuda_decoder = true;
  EXPECT_EQ(choose_frame_memory(on, discrete).memory, FrameMemory::kCuda);
  DeviceMemorySpec nocuda;
  nocuda.cudamem = false;
  c = choose_frame_memory(nocuda, discrete);
  EXPECT_EQ(c.memory, FrameMemory::kSystem);
  EXPECT_TRUE(has(c.why, "cudamem=0")) << c.why;
  discrete.cuda_unavailable = "no GStreamer CUDA library";
  c = choose_frame_memory(on, discrete);
  EXPECT_EQ(c.memory, FrameMemory::kSystem);
  EXPECT_TRUE(c.note);
  discrete.cuda_decoder = false;  // no NVDEC here: nothing to say
  c = choose_frame_memory(on, discrete);
  EXPECT_EQ(c.memory, FrameMemory::kSystem);
  EXPECT_FALSE(c.note);
}

std::string pipeline_for(const std::string& uri, FrameMemory memory, PixelFormat format,
                         const GstFeatures& f) {
  SourceSpec s = parse_gst_source_uri(uri, format != PixelFormat::kGray8);
  s.device.memory = memory;
  return gst_source_pipeline(s, f);
}

TEST(DeviceMemoryPipelines, NvmmEndsInTheVicAndCudaMemoryFallsBackToTheCopyingCaps) {
  const GstFeatures j = GstFeatures::jetson_set();
  const std::string rgba =
      "nvvidconv ! video/x-raw(memory:NVMM),format=RGBA ! appsink name=jp_sink";
  const std::string nv12 =
      "nvvidconv ! video/x-raw(memory:NVMM),format=NV12 ! appsink name=jp_sink";
  EXPECT_EQ(pipeline_for("csi://1", FrameMemory::kNvmm, PixelFormat::kBgr8, j),
            "nvarguscamerasrc sensor-id=1 ! video/x-raw(memory:NVMM),width=1920,height=1080,"
            "framerate=30/1,format=NV12 ! " +
                rgba);
  EXPECT_EQ(pipeline_for("file://a.mp4", FrameMemory::kNvmm, PixelFormat::kGray8, j),
            "filesrc location=a.mp4 ! decodebin ! " + nv12);
  EXPECT_EQ(
      pipeline_for("v4l2:///dev/video0?w=640&h=480", FrameMemory::kNvmm, PixelFormat::kBgr8, j),
      "v4l2src device=/dev/video0 ! video/x-raw,width=640,height=480 ! " + rgba);
  EXPECT_TRUE(has(pipeline_for("rtp://:5004", FrameMemory::kNvmm, PixelFormat::kBgr8, j),
                  "nvv4l2decoder ! " + rgba));
  // The copying path is unchanged when device memory is not chosen.
  EXPECT_FALSE(has(pipeline_for("csi://0?nvmm=0", FrameMemory::kSystem, PixelFormat::kBgr8, j),
                   "appsink name=jp_sink caps"));
  EXPECT_EQ(pipeline_for("file://a.mp4?cudamem=1", FrameMemory::kCuda, PixelFormat::kBgr8,
                         GstFeatures::software()),
            "filesrc location=a.mp4 ! decodebin ! videoconvert ! appsink name=jp_sink "
            "caps=\"video/x-raw(memory:CUDAMemory),format=NV12; " +
                gst_frame_caps(true) + "\"");
  EXPECT_TRUE(has(device_sink_tail(FrameMemory::kCuda, false, std::nullopt),
                  "video/x-raw,format={GRAY8,I420,NV12}"));
  // ?format=: the NVMM layouts nvvidconv writes; NV12 only from a CUDA decoder.
  EXPECT_EQ(device_sink_tail(FrameMemory::kNvmm, true, PixelFormat::kBgrx8),
            "nvvidconv ! video/x-raw(memory:NVMM),format=BGRx ! appsink name=jp_sink");
  EXPECT_EQ(device_sink_tail(FrameMemory::kNvmm, true, PixelFormat::kGray8), nv12);
  EXPECT_TRUE(has(device_sink_tail(FrameMemory::kCuda, true, PixelFormat::kNv12),
                  "; video/x-raw,format=NV12\""));
}

TEST(DeviceMemoryChoice, AFormatTheMemoryCannotCarryTakesTheCopyingPath) {
  EXPECT_TRUE(device_memory_carries(FrameMemory::kNvmm, std::nullopt));
  for (PixelFormat f :
       {PixelFormat::kRgba8, PixelFormat::kBgrx8, PixelFormat::kNv12, PixelFormat::kGray8}) {
    EXPECT_TRUE(device_memory_carries(FrameMemory::kNvmm, f)) << to_string(f);
  }
  EXPECT_FALSE(device_memory_carries(FrameMemory::kNvmm, PixelFormat::kBgr8));
  EXPECT_FALSE(device_memory_carries(FrameMemory::kCuda, PixelFormat::kRgba8));
  EXPECT_TRUE(device_memory_carries(FrameMemory::kCuda, PixelFormat::kNv12));
  DeviceMemorySpec on;
  DeviceMemoryInputs jetson;
  jetson.device_frames = jetson.nvmm_source = jetson.nvvidconv = true;
  jetson.format = PixelFormat::kBgr8;
  MemoryChoice c = choose_frame_memory(on, jetson);
  EXPECT_EQ(c.memory, FrameMemory::kSystem);
  EXPECT_TRUE(has(c.why, "format=bgr8 is not an NVMM layout")) << c.why;
  jetson.format = PixelFormat::kBgrx8;
  EXPECT_EQ(choose_frame_memory(on, jetson).memory, FrameMemory::kNvmm);
  DeviceMemoryInputs discrete;
  discrete.device_frames = discrete.cuda_source = discrete.cuda_decoder = true;
  discrete.format = PixelFormat::kRgb8;
  c = choose_frame_memory(on, discrete);
  EXPECT_EQ(c.memory, FrameMemory::kSystem);
  EXPECT_TRUE(has(c.why, "format=rgb8: the decoder's CUDA memory is NV12")) << c.why;
}

TEST(DeviceMemoryInfo, ReportSaysWhatIsBuiltIn) {
  const std::vector<std::string> lines = device_memory_report();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(has(lines[0], "NVMM frames (Jetson Multimedia API): ")) << lines[0];
  EXPECT_TRUE(has(lines[1], "GStreamer CUDA memory")) << lines[1];
  if (!nvmm_built()) {
    EXPECT_TRUE(has(lines[0], "not built in")) << lines[0];
  }
  EXPECT_EQ(make_nvmm_mapper() != nullptr, nvmm_built());
}

// ---- The GStreamer source with fake NVMM buffers ----------------------------------------------

#define REQUIRE_FAKE_NVMM_SRC()                                                           \
  do {                                                                                    \
    if (!have_gstreamer()) GTEST_SKIP() << "built without GStreamer";                     \
    if (!test::register_fake_nvmm_src()) GTEST_SKIP() << "cannot register jpfakenvmmsrc"; \
  } while (0)

class NvmmGst : public ::testing::Test {
 protected:
  void SetUp() override { test::fake_src_reset(mapper_.get()); }
  void TearDown() override { test::fake_src_reset(nullptr); }

  // A GStreamer source of fake NVMM frames, device frames on and the fake mapper given.
  std::unique_ptr<Source> open(const std::string& props, int frames = 6, bool device = true) {
    SourceOptions o;
    o.device_frames = device;
    o.surface_mapper = mapper_;
    return open_source("gst://jpfakenvmmsrc num-buffers=" + std::to_string(frames) + " " + props +
                           " ! appsink caps=\"video/x-raw(memory:NVMM)\"",
                       o);
  }
  static std::vector<Frame> read_all(Source& src) {
    std::vector<Frame> out;
    Frame f;
    while (src.next(&f)) out.push_back(std::move(f));
    return out;
  }
  std::ptrdiff_t at(const std::string& event) const {
    const std::vector<std::string> e = mapper_->events();
    return std::find(e.begin(), e.end(), event) - e.begin();
  }

  std::shared_ptr<FakeSurfaceMapper> mapper_ = std::make_shared<FakeSurfaceMapper>();
};

TEST_F(NvmmGst, FramesInOrderEachBufferReleasedOnceWhenItsFrameGoes) {
  REQUIRE_FAKE_NVMM_SRC();
  for (const char* format : {"RGBA", "NV12", "BGRx", "GRAY8"}) {
    SCOPED_TRACE(format);
    mapper_ = std::make_shared<FakeSurfaceMapper>();
    test::fake_src_reset(mapper_.get());
    auto src = open(std::string("format=") + format);
    std::vector<Frame> frames = read_all(*src);
    ASSERT_EQ(frames.size(), 6u);
    const PixelFormat pf = *test::fake_surface_format(format);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const Frame& f = frames[i];
      EXPECT_EQ(f.index, static_cast<std::int64_t>(i));
      EXPECT_TRUE(f.error.empty()) << f.error;
      EXPECT_TRUE(f.image.empty());
      ASSERT_TRUE(f.device);
      const ImageView v = f.device->view;
      EXPECT_EQ(v.format, pf);
      const HostImage want = test::fake_surface_pixels(static_cast<std::int64_t>(i), 64, 48, pf);
      for (int y = 0; y < 48; ++y) {  // host memory here: the view is the surface's pixels
        ASSERT_EQ(std::memcmp(v.row<std::uint8_t>(y), want.view().row<std::uint8_t>(y),
                              want.view().row_bytes()),
                  0)
            << "frame " << i << " row " << y;
      }
    }
    // Every buffer is still held by its frame, mapped once.
    EXPECT_TRUE(test::fake_src_released().empty());
    EXPECT_EQ(mapper_->maps.load(), 6);
    EXPECT_EQ(mapper_->unmaps.load(), 0);
    const std::optional<GstSourceStats> st = gst_source_stats(*src);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->memory, "system");  // gst:// chooses nothing; NVMM came and was mapped
    // Each buffer goes back when its frame goes, but for the last: appsink keeps its last sample
    // (and so that buffer) until the next one or the end of the source.
    for (std::size_t i = 0; i < frames.size(); ++i) {
      frames[i] = Frame{};
      EXPECT_EQ(mapper_->unmaps.load(), static_cast<int>(i) + 1);
      const std::vector<std::int64_t> released = test::fake_src_released();
      const std::size_t want = std::min<std::size_t>(i + 1, frames.size() - 1);
      ASSERT_EQ(released.size(), want) << ::testing::PrintToString(released);
      EXPECT_EQ(released.back(), static_cast<std::int64_t>(want - 1));
    }
    src.reset();
    EXPECT_EQ(test::fake_src_released().size(), 6u)
        << ::testing::PrintToString(test::fake_src_released());  // once each
    for (int i = 0; i < 6; ++i) {
      const std::string id = std::to_string(i);
      EXPECT_LT(at("map " + id), at("unmap " + id));
      EXPECT_LT(at("unmap " + id), at("release " + id));  // the surface outlives its mapping
    }
  }
}

TEST_F(NvmmGst, AFailedMappingIsThatFramesErrorAndTheOthersGoOn) {
  REQUIRE_FAKE_NVMM_SRC();
  auto src = open("fail-at=2 block-linear-at=3 unreadable-at=4");
  std::vector<Frame> frames = read_all(*src);
  ASSERT_EQ(frames.size(), 6u);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i].index, static_cast<std::int64_t>(i));
    EXPECT_EQ(frames[i].error.empty(), i < 2 || i > 4) << i << ": " << frames[i].error;
    EXPECT_EQ(static_cast<bool>(frames[i].device), i < 2 || i > 4);
  }
  EXPECT_TRUE(has(frames[2].error, "fake mapping failure of surface 2")) << frames[2].error;
  EXPECT_TRUE(has(frames[3].error, "block-linear")) << frames[3].error;
  EXPECT_TRUE(has(frames[4].error, "YUV444: no stage reads this colour format")) << frames[4].error;
  // The failed frames' buffers went back at once; the others are held by their frames.
  std::vector<std::int64_t> released = test::fake_src_released();
  std::sort(released.begin(), released.end());
  EXPECT_EQ(released, (std::vector<std::int64_t>{2, 3, 4}));
  frames.clear();
  EXPECT_EQ(mapper_->maps.load(), mapper_->unmaps.load());
  src.reset();  // appsink's last sample
  EXPECT_EQ(test::fake_src_released().size(), 6u);
}

TEST_F(NvmmGst, NvmmThatThisRunCannotMapIsOneClearError) {
  REQUIRE_FAKE_NVMM_SRC();
  // A run on the CPU executor: NVMM buffers would read as their surface descriptions, not pixels.
  std::string e = error_of([&] { open("", 3, /*device=*/false); });
  EXPECT_TRUE(has(e, "NVMM frames reached the appsink, but this run reads host frames")) << e;
  EXPECT_TRUE(has(e, "nvvidconv ! video/x-raw,format=BGRx")) << e;
  if (!nvmm_built()) {  // no mapper given and none built in
    SourceOptions o;
    o.device_frames = true;
    e = error_of([&] {
      open_source("gst://jpfakenvmmsrc num-buffers=3 ! appsink caps=\"video/x-raw(memory:NVMM)\"",
                  o);
    });
    EXPECT_TRUE(has(e, "this build cannot map NVMM surfaces")) << e;
  }
  EXPECT_EQ(mapper_->maps.load(), 0);
}

TEST_F(NvmmGst, SystemMemoryFromTheSameSourceTakesTheCopyingPath) {
  REQUIRE_FAKE_NVMM_SRC();
  SourceOptions o;
  o.device_frames = true;
  o.surface_mapper = mapper_;
  auto src = open_source("gst://jpfakenvmmsrc num-buffers=4 memory=system ! appsink", o);
  std::vector<Frame> frames = read_all(*src);
  ASSERT_EQ(frames.size(), 4u);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_FALSE(frames[i].device);
    ASSERT_FALSE(frames[i].image.empty());
    const HostImage want =
        test::fake_surface_pixels(static_cast<std::int64_t>(i), 64, 48, PixelFormat::kBgr8);
    EXPECT_EQ(frames[i].image.format(), PixelFormat::kBgr8);
    EXPECT_EQ(std::memcmp(frames[i].image.view().row<std::uint8_t>(47),
                          want.view().row<std::uint8_t>(47), 64 * 3),
              0);
  }
  EXPECT_EQ(mapper_->maps.load(), 0);
  // Copied: the buffers went back at once (but for appsink's last sample, until the end).
  EXPECT_EQ(test::fake_src_released().size(), 3u);
  src.reset();
  EXPECT_EQ(test::fake_src_released().size(), 4u);
}

TEST_F(NvmmGst, CudaMemoryCapsNegotiateSystemMemoryWithoutACudaDecoder) {
  REQUIRE_FAKE_NVMM_SRC();  // GStreamer
  for (PixelFormat f : {PixelFormat::kBgr8, PixelFormat::kGray8}) {
    SourceOptions o;
    o.device_frames = true;
    o.colour = f != PixelFormat::kGray8;
    // videotestsrc gives system memory, as a software decoder would: the copying path's caps win.
    auto src = open_source("gst://videotestsrc num-buffers=3 ! video/x-raw,width=64,height=48 ! " +
                               device_sink_tail(FrameMemory::kCuda, o.colour, std::nullopt),
                           o);
    std::vector<Frame> frames = read_all(*src);
    ASSERT_EQ(frames.size(), 3u);
    for (const Frame& fr : frames) {
      EXPECT_FALSE(fr.device);
      ASSERT_FALSE(fr.image.empty());
      EXPECT_EQ(fr.image.format() == PixelFormat::kGray8, f == PixelFormat::kGray8)
          << to_string(fr.image.format());
    }
  }
}

#if JETPIPE_HAVE_GSTREAMER

// A sample of one fake buffer (the first the element makes) with the element's caps.
GstSample* fake_sample(const std::string& props) {
  const std::string d = "jpfakenvmmsrc num-buffers=1 " + props + " ! appsink name=s";
  GstElement* p = gst_parse_launch(d.c_str(), nullptr);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "s");
  gst_element_set_state(p, GST_STATE_PLAYING);
  GstSample* sample = nullptr;
  g_signal_emit_by_name(sink, "pull-sample", &sample);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(p);
  return sample;
}

TEST_F(NvmmGst, AJetsonSourceNotesADecoderThatGaveSystemMemory) {
  REQUIRE_FAKE_NVMM_SRC();
  SourceSpec spec = parse_gst_source_uri("file://clip.mp4", true);
  SourceOptions o;
  o.device_frames = true;
  o.surface_mapper = mapper_;
  gst_detail::DeviceMemoryPath path(&spec, o, GstFeatures::jetson_set(), "clip.mp4");
  EXPECT_EQ(mapper_->probes.load(), 1);
  ASSERT_EQ(path.memory(), FrameMemory::kNvmm);
  EXPECT_EQ(spec.device.memory, FrameMemory::kNvmm);
  EXPECT_TRUE(
      has(gst_source_pipeline(spec, GstFeatures::jetson_set()), "memory:NVMM),format=RGBA"));

  GstSample* nvmm = fake_sample("format=RGBA");
  ASSERT_NE(nvmm, nullptr);
  GstVideoInfo info;
  ASSERT_TRUE(gst_video_info_from_caps(&info, gst_sample_get_caps(nvmm)));
  Frame f;
  std::string why;
  EXPECT_EQ(path.take(nvmm, info, &f, &why), gst_detail::DeviceMemoryPath::Take::kFrame);
  gst_sample_unref(nvmm);
  ASSERT_TRUE(f.device) << f.error;
  EXPECT_EQ(path.held(), 1);
  f = Frame{};
  EXPECT_EQ(path.held(), 0);
  EXPECT_FALSE(has(path.describe(), "note"));

  GstSample* sys = fake_sample("memory=system");
  ASSERT_NE(sys, nullptr);
  ASSERT_TRUE(gst_video_info_from_caps(&info, gst_sample_get_caps(sys)));
  EXPECT_EQ(path.take(sys, info, &f, &why), gst_detail::DeviceMemoryPath::Take::kCopy);
  EXPECT_EQ(path.take(sys, info, &f, &why), gst_detail::DeviceMemoryPath::Take::kCopy);
  gst_sample_unref(sys);
  const std::string d = path.describe();
  EXPECT_TRUE(has(d,
                  "note: the decoder hands frames in system memory, not NVMM: they take the "
                  "copying path"))
      << d;
  EXPECT_EQ(d.find("system memory, not NVMM"), d.rfind("system memory, not NVMM"));  // once
}

TEST_F(NvmmGst, AFailedProbeKeepsAJetsonSourceOnTheCopyingPathWithANote) {
  REQUIRE_FAKE_NVMM_SRC();
  mapper_->probe_result = "NvBufSurfaceMapEglImage failed (no EGL display)";
  for (const char* uri : {"csi://0", "v4l2:///dev/video0", "file://clip.mp4", "rtp://:5004"}) {
    SCOPED_TRACE(uri);
    SourceSpec spec = parse_gst_source_uri(uri, true);
    SourceOptions o;
    o.device_frames = true;
    o.surface_mapper = mapper_;
    gst_detail::DeviceMemoryPath path(&spec, o, GstFeatures::jetson_set(), uri);
    EXPECT_EQ(path.memory(), FrameMemory::kSystem);
    EXPECT_TRUE(has(path.describe(), "no EGL display")) << path.describe();
    EXPECT_FALSE(
        has(gst_source_pipeline(spec, GstFeatures::jetson_set()), "memory:NVMM),format=RGBA"));
  }
  // ?nvmm=0 and a CPU run do not even probe.
  const int probes = mapper_->probes.load();
  SourceSpec spec = parse_gst_source_uri("csi://0?nvmm=0", true);
  SourceOptions o;
  o.device_frames = true;
  o.surface_mapper = mapper_;
  gst_detail::DeviceMemoryPath off(&spec, o, GstFeatures::jetson_set(), "csi0");
  EXPECT_TRUE(has(off.describe(), "nvmm=0")) << off.describe();
  o.device_frames = false;
  gst_detail::DeviceMemoryPath cpu(&spec, o, GstFeatures::jetson_set(), "csi0");
  EXPECT_EQ(mapper_->probes.load(), probes);
}

#endif  // JETPIPE_HAVE_GSTREAMER

}  // namespace
}  // namespace jetpipe
