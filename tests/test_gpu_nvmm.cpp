// SPDX-License-Identifier: MIT
// Device frames from GStreamer through the CUDA executor (run on the GPU machine):
//  - fake NVMM surfaces in device memory (jpfakenvmmsrc device=true and the fake mapper) for every
//    memory strategy: the records equal those of the same pixels given as host frames, bit for
//    bit; a surface that fails to map is that frame's error record and the rest go on; every
//    buffer is released exactly once, and since a released buffer's pixels are overwritten, a read
//    after its release would change the results.
//  - a clip decoded by GStreamer's CUDA decoder (nvh264dec, where the machine has NVDEC and
//    GStreamer's CUDA library is built): frames in CUDA memory read in place give the records of
//    the copying path (?cudamem=0).
// On a GPU machine without GStreamer, tools/gpu/gst-bundle.sh carries one (decision 035).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/api.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/io/gst_source.h"
#include "pipeline/io/source.h"
#include "pipeline/io/video_sink.h"
#include "pipeline/results_json.h"
#include "tests/fake_nvmm_src.h"
#include "tests/fake_surface.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

namespace jetpipe {
namespace {

#if JETPIPE_HAVE_CUDA

constexpr int kFrames = 8;

// Records (JSON) of `frames` frames through `cfg` under `p`, from `source` or, when null, from the
// fake element's pixels as host frames in `format`.
std::vector<std::string> run(const PipelineConfig& cfg, const PlatformProfile& p, Source* source,
                             PixelFormat format) {
  std::unique_ptr<Executor> ex = make_executor(cfg, p, {});
  std::vector<std::string> out;
  auto drain = [&](bool wait) {
    FrameRecord r;
    while (ex->take(&r, wait)) {
      r.latency_ms = 0;
      r.gpu_ms = r.gpu_start_ms = 0;
      r.stage_ms.clear();
      r.spans.clear();
      if (r.error.empty()) {
        out.push_back(record_to_json(r)["results"].dump());
      } else {
        out.push_back("error: " + r.error);
      }
    }
  };
  for (int i = 0; i < kFrames; ++i) {
    Frame f;
    if (source != nullptr) {
      if (!source->next(&f)) break;
    } else {
      f.index = i;
      f.image = test::fake_surface_pixels(i, 160, 90, format);
    }
    ex->submit(std::move(f));
    drain(false);
  }
  while (ex->in_flight() > 0) drain(true);
  return out;
}

std::vector<PlatformProfile> strategies() {
  return {strategy_profile(MemoryStrategy::kCopy, 1, 1, false),
          strategy_profile(MemoryStrategy::kPinnedChunked, 3, 2, true),
          strategy_profile(MemoryStrategy::kZeroCopy, 1, 2, true),
          strategy_profile(MemoryStrategy::kManaged, 2, 2, false)};
}

// Why GStreamer's nvcodec plugin registered no nvh264dec: its decoders need libcuda.so.1 and
// NVIDIA's video decoder library libnvcuvid.so.1 (installed with the driver, not with the toolkit),
// and a GPU with NVDEC.
std::string nvdec_missing_reason() {
  for (const char* lib : {"libcuda.so.1", "libnvcuvid.so.1"}) {
    void* h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      return std::string(lib) + " cannot be loaded (" + (e != nullptr ? e : "dlopen failed") + ")";
    }
    dlclose(h);
  }
  return "libcuda.so.1 and libnvcuvid.so.1 load, so GStreamer's nvcodec plugin is not in the "
         "plugin path or found no NVDEC on the GPU (gst-inspect-1.0 nvcodec)";
}

#endif  // JETPIPE_HAVE_CUDA

TEST(GpuNvmm, FakeDeviceSurfacesEqualHostFramesAndGoBackOnce) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  if (!have_gstreamer()) GTEST_SKIP() << "built without GStreamer";
  if (!test::register_fake_nvmm_src()) {
    GTEST_SKIP() << "jpfakenvmmsrc not registered: GStreamer does not initialise";
  }
  const PipelineConfig colour = parse_config(
      "stages:\n  - {type: to_gray, name: gray}\n  - {type: gaussian, ksize: 5, "
      "name: blur}\n  - {type: histogram, input: blur, bins: 32}\n  - {type: stats, "
      "input: blur}\n",
      "<test>", ".");
  const PipelineConfig gray = parse_config(
      "stages:\n  - {type: gaussian, ksize: 3, name: blur}\n  - {type: stats, input: blur}\n",
      "<test>", ".");
  for (const char* format : {"RGBA", "BGRx", "NV12", "GRAY8"}) {
    const PixelFormat pf = *test::fake_surface_format(format);
    const PipelineConfig& cfg =
        pf == PixelFormat::kNv12 || pf == PixelFormat::kGray8 ? gray : colour;
    std::vector<std::string> want =
        run(cfg, strategy_profile(MemoryStrategy::kCopy, 1, 1, false), nullptr, pf);
    want[3] = "fails";
    for (const PlatformProfile& p : strategies()) {
      SCOPED_TRACE(std::string(format) + " " + name(p.memory));
      auto mapper = std::make_shared<test::FakeSurfaceMapper>();
      test::fake_src_reset(mapper.get());
      SourceOptions o;
      o.device_frames = true;
      o.surface_mapper = mapper;
      auto src = open_source(
          "gst://jpfakenvmmsrc device=true width=160 height=90 fail-at=3 "
          "num-buffers=" +
              std::to_string(kFrames) + " format=" + format +
              " ! appsink caps=\"video/x-raw(memory:NVMM)\"",
          o);
      std::vector<std::string> got = run(cfg, p, src.get(), pf);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_NE(got[3].find("fake mapping failure of surface 3"), std::string::npos) << got[3];
      got[3] = "fails";
      for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "frame " << i;
      src.reset();
      std::vector<std::int64_t> released = test::fake_src_released();
      std::sort(released.begin(), released.end());
      std::vector<std::int64_t> all(kFrames);
      for (int i = 0; i < kFrames; ++i) all[i] = i;
      EXPECT_EQ(released, all) << "each buffer released exactly once";
      EXPECT_EQ(mapper->maps.load(), mapper->unmaps.load());
      test::fake_src_reset(nullptr);
      if (::testing::Test::HasFailure()) return;
    }
  }
#endif
}

TEST(GpuGstCuda, DecodedFramesInCudaMemoryEqualTheCopyingPath) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  if (!have_gstreamer()) GTEST_SKIP() << "built without GStreamer";
  const GstFeatures f = detect_gst_features();
  if (h264_encoder_chain(f, 30, 1000, false).empty()) {
    GTEST_SKIP() << "no H.264 encoder to make the clip (x264enc or openh264enc; the GPU has no "
                    "NVENC)";
  }
  for (const char* e : {"mp4mux", "h264parse", "decodebin"}) {  // qtdemux: mp4mux's plugin
    if (!f.has(e)) GTEST_SKIP() << "GStreamer element " << e << " missing";
  }
  const std::vector<std::string> report = device_memory_report();  // names the CUDA decoders
  if (report[1].find("built in;") == std::string::npos) GTEST_SKIP() << report[1];
  if (report[1].find("nvh264dec") == std::string::npos) {
    GTEST_SKIP() << report[1] << ": " << nvdec_missing_reason();
  }
  test::TempDir dir;
  {
    auto pattern = open_source("test://blobs?w=320&h=240&frames=20");
    VideoSink sink(dir / "clip.mp4");
    Frame fr;
    while (pattern->next(&fr)) sink.write(fr.image.view());
    sink.close();
  }
  Pipeline p = Pipeline::from_yaml(
      "stages:\n  - {type: gaussian, ksize: 3, name: blur}\n  - {type: histogram, input: blur}\n"
      "  - {type: stats, input: blur}\n",
      ".", "auto");
  ASSERT_EQ(p.platform().backend, Backend::kCuda);
  auto records = [&](const std::string& uri, std::string* memory) {
    auto src = p.open(uri);
    std::vector<std::string> out;
    p.run(*src, [&](const FrameRecord& r) {
      out.push_back(r.error.empty() ? record_to_json(r)["results"].dump() : r.error);
      return true;
    });
    *memory = gst_source_stats(*src)->memory + ": " + src->describe();
    return out;
  };
  std::string in_cuda, copied;
  const std::vector<std::string> got = records("file://" + dir / "clip.mp4", &in_cuda);
  const std::vector<std::string> want = records("file://" + dir / "clip.mp4?cudamem=0", &copied);
  EXPECT_EQ(in_cuda.rfind("cuda: ", 0), 0u) << in_cuda;
  EXPECT_EQ(copied.rfind("system: ", 0), 0u) << copied;
  ASSERT_EQ(got.size(), 20u);
  EXPECT_EQ(got, want);
#endif
}

}  // namespace
}  // namespace jetpipe
