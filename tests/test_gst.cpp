// SPDX-License-Identifier: MIT
// GStreamer sources and video outputs at run time (no camera, no display): videotestsrc frames, a
// clip encoded during the test and read back as video and as the same frames dumped to files
// (identical results), corrupt and truncated streams, end-of-stream accounting, a live source
// feeding a slow consumer (drops counted, memory bounded), RTP over 127.0.0.1, exit codes.
// Every test skips, saying why, without GStreamer or without an element it needs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "kernels/to_gray.h"
#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/gst_source.h"
#include "pipeline/io/image_io.h"
#include "pipeline/io/overlay.h"
#include "pipeline/io/source.h"
#include "pipeline/io/video_sink.h"
#include "pipeline/runner.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace jetpipe {
namespace {

using Clock = std::chrono::steady_clock;

// Skips the test unless GStreamer and every named element are present.
#define REQUIRE_GST(...)                                                         \
  do {                                                                           \
    if (!have_gstreamer()) GTEST_SKIP() << "built without GStreamer";            \
    const GstFeatures f_ = detect_gst_features();                                \
    for (const char* e_ : std::vector<const char*>{__VA_ARGS__}) {               \
      if (!f_.has(e_)) GTEST_SKIP() << "GStreamer element " << e_ << " missing"; \
    }                                                                            \
  } while (0)

// x264enc or openh264enc (or the Jetson encoder).
#define REQUIRE_ENCODER()                                                         \
  do {                                                                            \
    if (h264_encoder_chain(detect_gst_features(), 30, 1000, false).empty()) {     \
      GTEST_SKIP() << "no H.264 encoder (gstreamer1.0-plugins-ugly for x264enc)"; \
    }                                                                             \
  } while (0)

class Gst : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string config(const std::string& name, const std::string& yaml) const {
    std::ofstream(dir_ / name) << yaml;
    return path(name);
  }
  static std::vector<json> read_jsonl(const fs::path& p) {
    std::vector<json> out;
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) out.push_back(json::parse(line));  // throws if not JSON
    return out;
  }
  static json read_json(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
  }
  // Runs the jetpipe CLI; returns its exit code.
  static int cli(const std::string& args) {
    const std::string cmd = test::cli_shell() + " " + args + " > /dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  // Encodes `frames` frames of a built-in test pattern into a clip with the video sink.
  void encode_clip(const std::string& file, int frames, const std::string& pattern = "blobs") {
    auto src = open_source("test://" + pattern + "?w=160&h=120&frames=" + std::to_string(frames));
    VideoSink sink(file);
    Frame f;
    while (src->next(&f)) sink.write(f.image.view());
    sink.close();
    ASSERT_EQ(sink.frames(), frames);
  }

  test::TempDir tmp_;
  const fs::path dir_ = tmp_.path();
};

constexpr const char* kLight = R"(
stages:
  - {type: to_gray, name: gray}
  - {type: histogram, bins: 16}
  - {type: stats}
)";

constexpr const char* kFull = R"(
platform: cpu
stages:
  - {type: to_gray, name: gray}
  - {type: gaussian, name: blur, ksize: 5}
  - {type: histogram, name: hist, bins: 64}
  - {type: stats, name: stats}
  - {type: harris, name: response, input: blur}
  - {type: detect, name: corners, quality: 0.01, nms_radius: 4, max_detections: 100}
)";

// Starts gray: the frames are the luma plane (GRAY8 caps), no colour conversion.
constexpr const char* kGray = R"(
platform: cpu
stages:
  - {type: gaussian, name: blur, ksize: 3}
  - {type: stats, name: stats}
  - {type: threshold, name: bin, value: otsu}
)";

// ---- Sources
// ------------------------------------------------------------------------------------------

// The first frame of a source.
Frame first_frame(const std::string& uri, const SourceOptions& options = {}) {
  auto src = open_source(uri, options);
  Frame f;
  EXPECT_TRUE(src->next(&f)) << uri;
  return f;
}

// to_gray's CPU twin of a frame: the gray image the stages read.
HostImage gray_of(const ImageView& v) {
  HostImage g(v.width, v.height, PixelFormat::kGray8);
  to_gray_ref(v, g.view(), 0, v.height);
  return g;
}

// Frames allocated with rows 13 bytes longer than needed (a pool's padded pitch): the copy must
// honour both strides.
SourceOptions padded_frames(bool colour = true) {
  SourceOptions o;
  o.colour = colour;
  o.allocator = [](int w, int h, PixelFormat f) {
    return HostImage(w, h, f, min_pitch(w, f) + 13);
  };
  return o;
}

TEST_F(Gst, VideoTestSrcFramesColourAndGray) {
  REQUIRE_GST("videotestsrc", "videoconvert", "appsink");
  auto src = open_source("test://smpte?w=64&h=48&frames=7&format=bgr8");
  EXPECT_EQ(src->describe().rfind("gstreamer: test://smpte", 0), 0u) << src->describe();
  EXPECT_EQ(src->total().value_or(-1), 7);
  EXPECT_FALSE(src->live());
  Frame f;
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(src->next(&f)) << i;
    EXPECT_EQ(f.index, i);
    EXPECT_EQ(f.source.rfind("videotestsrc:smpte#" + std::to_string(i) + " t=", 0), 0u) << f.source;
    EXPECT_EQ(f.image.format(), PixelFormat::kBgr8);
    EXPECT_EQ(f.image.width(), 64);
    EXPECT_EQ(f.image.height(), 48);
  }
  // SMPTE bars: the top-left bar is white or light grey, the second yellow (blue ≈ 0).
  EXPECT_GT(f.image.view().row<std::uint8_t>(0)[0], 180);
  EXPECT_LT(f.image.view().row<std::uint8_t>(0)[3 * 12], 20);
  EXPECT_FALSE(src->next(&f));
  EXPECT_FALSE(src->next(&f));

  SourceOptions gray;
  gray.colour = false;
  auto g = open_source("test://videotestsrc?pattern=white&w=33&h=17&frames=2", gray);
  ASSERT_TRUE(g->next(&f));
  EXPECT_EQ(f.image.format(), PixelFormat::kGray8);
  EXPECT_EQ(f.image.width(), 33);                            // odd width: strides honoured
  EXPECT_GE(f.image.view().row<std::uint8_t>(16)[32], 235);  // white
  auto uri_gray = open_source("test://ball?w=32&h=16&frames=1&format=gray8");
  ASSERT_TRUE(uri_gray->next(&f));
  EXPECT_EQ(f.image.format(), PixelFormat::kGray8);
}

// Every layout arrives as it is, its rows memcpy'd: the frame's format is the layout asked for, its
// colours are those of the BGR frame today's conversion (videoconvert to BGR) gives for the same
// picture, and to_gray of it equals to_gray of that BGR frame bit for bit. Odd sizes: GStreamer
// pads its rows to 4 bytes, the frames' rows are padded by 13.
TEST_F(Gst, VideoTestSrcLayoutsArriveAsTheyAre) {
  REQUIRE_GST("videotestsrc", "videoconvert", "appsink");
  const std::string base = "test://smpte?w=67&h=45&frames=1&format=";
  const Frame bgr = first_frame(base + "bgr8", padded_frames());
  ASSERT_EQ(bgr.image.format(), PixelFormat::kBgr8);
  const HostImage want = gray_of(bgr.image.view());
  for (PixelFormat p :
       {PixelFormat::kBgrx8, PixelFormat::kRgbx8, PixelFormat::kRgba8, PixelFormat::kRgb8}) {
    const Frame f = first_frame(base + to_string(p), padded_frames());
    ASSERT_EQ(f.image.format(), p);
    const ImageView v = f.image.view();
    const int bpp = bytes_per_pixel(p);
    int differ = 0;
    for (int y = 0; y < v.height; ++y) {
      for (int x = 0; x < v.width; ++x) {
        const std::uint8_t* a = v.row<std::uint8_t>(y) + bpp * x;
        const std::uint8_t* b = bgr.image.view().row<std::uint8_t>(y) + 3 * x;
        const bool rgb = red_first(p);
        differ += a[rgb ? 2 : 0] != b[0] || a[1] != b[1] || a[rgb ? 0 : 2] != b[2];
      }
    }
    EXPECT_EQ(differ, 0) << to_string(p);
    EXPECT_EQ(test::rows_differ(gray_of(v).view(), want.view()), 0) << to_string(p);
  }
  // NV12: its luma plane is the GRAY8 frame of the gray path, the gray image the stages read.
  const Frame nv = first_frame(base + "nv12", padded_frames());
  const Frame gray = first_frame(base + "gray8", padded_frames());
  ASSERT_EQ(nv.image.format(), PixelFormat::kNv12);
  ASSERT_EQ(gray.image.format(), PixelFormat::kGray8);
  EXPECT_EQ(test::rows_differ(luma_plane(nv.image.view()), gray.image.view()), 0);
  EXPECT_EQ(test::rows_differ(gray_of(nv.image.view()).view(), gray.image.view()), 0);
  // No ?format=: the producer's own layout (GStreamer 1.22's videotestsrc offers BGRA: bgrx8).
  auto src = open_source("test://smpte?w=67&h=45&frames=1", padded_frames());
  Frame f;
  ASSERT_TRUE(src->next(&f));
  EXPECT_TRUE(is_colour(f.image.format())) << to_string(f.image.format());
  EXPECT_EQ(test::rows_differ(gray_of(f.image.view()).view(), want.view()), 0);
  const std::string d = src->describe();
  EXPECT_NE(d.find("67x45, 30 fps → " + std::string(to_string(f.image.format())) + " frames"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("(negotiated "), std::string::npos) << d;
}

// I420 (what software decoders give) becomes NV12: videoconvert interleaves the chroma rows, the
// luma plane is the gray path's frame, the chroma that of videotestsrc's own NV12. A launch
// description without a converter gets the layouts of the caps the appsink is given.
TEST_F(Gst, I420BecomesNv12WithItsLumaAsIs) {
  REQUIRE_GST("videotestsrc", "videoconvert", "appsink");
  const std::string caps = "video/x-raw,width=67,height=45,framerate=30/1";
  const std::string i420 = "gst://videotestsrc num-buffers=1 pattern=smpte ! " + caps +
                           ",format=I420 ! videoconvert ! appsink";
  auto src = open_source(i420, padded_frames());
  Frame nv;
  ASSERT_TRUE(src->next(&nv));
  ASSERT_EQ(nv.image.format(), PixelFormat::kNv12);
  EXPECT_NE(src->describe().find("negotiated NV12"), std::string::npos) << src->describe();
  const Frame gray = first_frame("test://smpte?w=67&h=45&frames=1", padded_frames(false));
  ASSERT_EQ(gray.image.format(), PixelFormat::kGray8);
  EXPECT_EQ(test::rows_differ(luma_plane(nv.image.view()), gray.image.view()), 0);
  const Frame native = first_frame("test://smpte?w=67&h=45&frames=1&format=nv12");
  const ImageView a = nv.image.view(), b = native.image.view();
  for (int y = 0; y < chroma_rows(a.height); ++y) {
    EXPECT_EQ(std::memcmp(a.uv + y * a.uv_pitch, b.uv + y * b.uv_pitch, min_pitch(67, a.format)), 0)
        << "chroma row " << y;
  }
  // The same I420 in a gray pipeline: its luma plane, no conversion at all.
  const Frame luma = first_frame(i420, padded_frames(false));
  ASSERT_EQ(luma.image.format(), PixelFormat::kGray8);
  EXPECT_EQ(test::rows_differ(luma.image.view(), gray.image.view()), 0);
  // No converter: the appsink takes a listed layout as it comes (RGBA), refuses the others.
  const Frame rgba =
      first_frame("gst://videotestsrc num-buffers=1 ! " + caps + ",format=RGBA ! appsink");
  EXPECT_EQ(rgba.image.format(), PixelFormat::kRgba8);
  try {
    open_source("gst://videotestsrc num-buffers=1 ! " + caps + ",format=YUY2 ! appsink");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
  }
}

TEST_F(Gst, BuiltinPatternNamesStayBuiltin) {
  auto src = open_source("test://gradient?w=8&h=8&frames=1");
  EXPECT_EQ(src->describe().rfind("test: gradient", 0), 0u) << src->describe();
  EXPECT_FALSE(gst_source_stats(*src).has_value());
  if (!have_gstreamer()) {
    try {
      open_source("test://smpte");
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("needs GStreamer"), std::string::npos) << e.what();
    }
  }
}

TEST_F(Gst, LaunchDescriptionWithAppsink) {
  REQUIRE_GST("videotestsrc", "videoconvert", "appsink");
  auto src = open_source(
      "gst://videotestsrc num-buffers=3 ! video/x-raw,width=40,height=30 ! "
      "videoconvert ! appsink");
  Frame f;
  int n = 0;
  while (src->next(&f)) {
    EXPECT_EQ(f.image.width(), 40);
    ++n;
  }
  EXPECT_EQ(n, 3);
}

// A launch description with a live element is live (its queue drops the oldest frame when the
// consumer is behind), also when setting it PLAYING did not say NO_PREROLL; the frame rate is its
// caps'.
TEST_F(Gst, LaunchDescriptionWithALiveElementIsLive) {
  REQUIRE_GST("videotestsrc", "videoconvert", "appsink");
  SourceOptions once;
  once.reconnect.attempts = 0;
  auto live = open_source(
      "gst://videotestsrc is-live=true num-buffers=2 ! "
      "video/x-raw,width=32,height=24,framerate=25/1 ! videoconvert ! appsink",
      once);
  EXPECT_TRUE(live->live());
  EXPECT_EQ(live->frame_rate(), 25);
  auto not_live = open_source(
      "gst://videotestsrc num-buffers=2 ! video/x-raw,width=32,height=24 ! videoconvert ! appsink",
      once);
  EXPECT_FALSE(not_live->live());
}

// With reconnect off: a live source would otherwise retry its first open (test_reconnect.cpp).
TEST_F(Gst, OpenErrorsNameTheUriAndGStreamersReason) {
  REQUIRE_GST("decodebin", "filesrc", "v4l2src", "rtspsrc");
  auto expect_input_error = [](const std::string& uri, const std::vector<std::string>& parts) {
    const auto t0 = Clock::now();
    SourceOptions once;
    once.reconnect.attempts = 0;
    try {
      open_source(uri, once);
      ADD_FAILURE() << uri << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
      for (const auto& p : parts) {
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << p << " in " << e.what();
      }
    }
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0) << uri;
  };
  std::ofstream(dir_ / "junk.mp4") << "definitely not a video";
  expect_input_error("file://" + path("none.mp4"), {"none.mp4", "no such file"});
  expect_input_error("file://" + path("junk.mp4"), {"junk.mp4", "cannot open", "GStreamer"});
  expect_input_error("v4l2:///dev/video99", {"v4l2:///dev/video99", "cannot open", "video99"});
  expect_input_error("rtsp://127.0.0.1:1/none", {"rtsp://127.0.0.1:1/none", "cannot open"});
}

// A clip cut in half (an MP4 loses its index, an MKV its second half); bytes overwritten in the
// middle. Each gives one clear error at open or a clean (shorter) end, never a hang.
TEST_F(Gst, CorruptAndTruncatedClips) {
  REQUIRE_GST("decodebin", "filesrc", "mp4mux", "matroskamux", "h264parse");
  REQUIRE_ENCODER();
  for (const char* ext : {"mp4", "mkv"}) {
    const std::string clean = path(std::string("clean.") + ext);
    encode_clip(clean, 30);
    std::ifstream in(clean, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(path(std::string("cut.") + ext), std::ios::binary)
        << bytes.substr(0, bytes.size() / 2);
    for (std::size_t i = bytes.size() * 2 / 5; i < bytes.size() * 3 / 5; ++i) {
      bytes[i] = static_cast<char>(i * 2654435761u >> 13);
    }
    std::ofstream(path(std::string("noise.") + ext), std::ios::binary) << bytes;
    for (const std::string stem : {"cut.", "noise."}) {
      const std::string uri = "file://" + path(stem + ext);
      const auto t0 = Clock::now();
      std::int64_t n = 0;
      try {
        auto src = open_source(uri);
        Frame f;
        while (src->next(&f)) ++n;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find(stem + ext), std::string::npos) << e.what();
      }
      EXPECT_LT(n, 31) << uri;
      EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0) << uri;
    }
  }
}

// ---- Video in and out
// ------------------------------------------------------------------------------

// The clip read as video, and the same decoded frames dumped to files and read as a frame folder:
// identical results (BGR pipeline and a gray one, which reads the luma plane).
TEST_F(Gst, ClipAsVideoEqualsItsFramesAsFiles) {
  REQUIRE_GST("decodebin", "filesrc", "matroskamux", "h264parse", "videoconvert");
  REQUIRE_ENCODER();
  const std::string clip = path("clip.mkv");
  encode_clip(clip, 12);
  for (const char* yaml : {kFull, kGray}) {
    const std::string cfg = config("c.yaml", yaml);
    const std::string frames = path("frames");
    fs::remove_all(frames);
    fs::create_directories(frames);
    // Decode once with GStreamer into files (PGM: lossless, built in). The decoder's I420 arrives
    // as NV12 in colour pipelines (its chroma interleaved), as GRAY8 in gray ones: either way the
    // stages read its luma plane, which is what the files keep.
    SourceOptions opt;
    opt.colour = std::string(yaml) != kGray;
    auto src = open_source("file://" + clip, opt);
    Frame f;
    int n = 0;
    while (src->next(&f)) {
      EXPECT_EQ(f.image.format(), opt.colour ? PixelFormat::kNv12 : PixelFormat::kGray8);
      char name[32];
      std::snprintf(name, sizeof name, "f%03d.pgm", n++);
      write_image(frames + "/" + name, luma_plane(f.image.view()));
    }
    ASSERT_EQ(n, 12);

    RunOptions video;
    video.config = cfg;
    video.inputs = {"file://" + clip};
    video.output_dir = path("out_video");
    RunOptions files = video;
    files.inputs = {"frames://" + frames};
    files.output_dir = path("out_files");
    const RunSummary a = run_pipeline(video);
    const RunSummary b = run_pipeline(files);
    EXPECT_EQ(a.read, 12);
    EXPECT_EQ(b.read, 12);
    std::vector<json> ra = read_jsonl(fs::path(video.output_dir) / "results.jsonl");
    std::vector<json> rb = read_jsonl(fs::path(files.output_dir) / "results.jsonl");
    ASSERT_EQ(ra.size(), 12u);
    ASSERT_EQ(rb.size(), 12u);
    for (std::size_t i = 0; i < ra.size(); ++i) {
      EXPECT_EQ(ra[i]["source"].get<std::string>().rfind("clip.mkv#" + std::to_string(i), 0), 0u);
      // The buffer's timestamp: the frame's position in the 30 fps clip (files have none).
      EXPECT_NEAR(ra[i].value("pts_s", -1.0), static_cast<double>(i) / 30, 1e-3) << "frame " << i;
      EXPECT_FALSE(rb[i].contains("pts_s"));
      ra[i].erase("pts_s");
      ra[i].erase("source");
      rb[i].erase("source");
      EXPECT_EQ(ra[i], rb[i]) << "frame " << i;
    }
  }
}

TEST_F(Gst, OutputVideoIsPlayableWithEveryFrame) {
  REQUIRE_GST("decodebin", "filesrc", "mp4mux", "matroskamux", "h264parse", "videoconvert");
  REQUIRE_ENCODER();
  for (const char* name : {"out.mp4", "out.mkv"}) {
    RunOptions o;
    o.config = config("c.yaml", kFull);
    o.inputs = {"test://blobs?w=160&h=120&frames=9"};
    o.output_dir = path("run");
    o.output_video = path(name);
    o.output_image = "blur";  // a stage's image (GRAY8)
    o.annotate = true;
    o.output_fps = 15;
    const RunSummary s = run_pipeline(o);
    EXPECT_EQ(s.video_frames, 9);
    EXPECT_TRUE(s.output_error.empty()) << s.output_error;
    const json sum = read_json(fs::path(o.output_dir) / "summary.json");
    EXPECT_EQ(sum["output_video"]["frames"], 9);
    EXPECT_EQ(sum["output_video"]["image"], "blur");
    // Read it back: every frame, the size written, annotated in colour.
    auto back = open_source("file://" + path(name));
    Frame f;
    int n = 0;
    while (back->next(&f)) {
      EXPECT_EQ(f.image.width(), 160);
      EXPECT_EQ(f.image.height(), 120);
      ++n;
    }
    EXPECT_EQ(n, 9) << name;
    EXPECT_NE(back->describe().find("15 fps"), std::string::npos) << back->describe();
  }
}

// The video sink takes every frame layout as it is (caps of its own layout; the pipeline's
// videoconvert converts for the encoder), also when the layout changes from frame to frame, and a
// frame of another size is cropped: the clip has every frame, each close to the picture written.
TEST_F(Gst, OutputVideoTakesEveryLayout) {
  REQUIRE_GST("decodebin", "filesrc", "matroskamux", "h264parse", "videoconvert");
  REQUIRE_ENCODER();
  const char* kLayouts[] = {"bgrx8", "nv12", "rgba8", "gray8", "rgbx8", "rgb8", "bgr8"};
  std::vector<HostImage> written;
  {
    VideoSink sink(path("mixed.mkv"));
    for (int i = 0; i < 14; ++i) {
      const char* layout = kLayouts[i % 7];
      const bool big = i == 9;  // cropped to the first frame's size
      auto src = open_source(std::string("test://checker?frames=1&w=") + (big ? "200" : "160") +
                             "&h=" + (big ? "150" : "120") + "&format=" + layout);
      Frame f;
      ASSERT_TRUE(src->next(&f));
      sink.write(f.image.view());
      const ImageView v = f.image.view().roi(0, 0, 160, 120);
      if (v.format != PixelFormat::kGray8) {
        written.push_back(convert_8bit(v, PixelFormat::kBgr8));
        continue;
      }
      // GStreamer takes GRAY8 as video-range luma (Y 16..235): NV12 with that luma, no chroma.
      HostImage luma(160, 120, PixelFormat::kNv12);
      copy_image(v, luma_plane(luma.view()));
      for (int y = 0; y < chroma_rows(120); ++y)
        std::memset(luma.view().uv + y * luma.view().uv_pitch, 128, 160);
      written.push_back(convert_8bit(luma.view(), PixelFormat::kBgr8));
    }
    sink.close();
    EXPECT_EQ(sink.frames(), 14);
  }
  auto back = open_source("file://" + path("mixed.mkv"));
  Frame f;
  std::size_t n = 0;
  while (back->next(&f)) {
    ASSERT_LT(n, written.size());
    ASSERT_EQ(f.image.width(), 160);
    ASSERT_EQ(f.image.height(), 120);
    const HostImage got = convert_8bit(f.image.view(), PixelFormat::kBgr8);
    double sum = 0;
    for (int y = 0; y < 120; ++y) {
      for (int i = 0; i < 160 * 3; ++i) {
        sum += std::abs(got.view().row<std::uint8_t>(y)[i] -
                        written[n].view().row<std::uint8_t>(y)[i]);
      }
    }
    EXPECT_LT(sum / (160 * 120 * 3), 6.0) << "frame " << n << " (" << kLayouts[n % 7] << ")";
    ++n;
  }
  EXPECT_EQ(n, written.size());
}

TEST_F(Gst, OutputVideoTargetsCheckedBeforeAnythingIsWritten) {
  const std::string cfg = config("c.yaml", kLight);
  const std::string out = path("never");
  RunOptions o;
  o.config = cfg;
  o.inputs = {"test://noise?frames=2"};
  o.output_dir = out;
  o.output_video = path("x.avi");
  EXPECT_THROW(run_pipeline(o), Error);
  o.output_video = path("x.mp4");
  o.output_image = "nope";
  try {
    run_pipeline(o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_NE(std::string(e.what()).find("frame, gray"), std::string::npos) << e.what();
  }
  o.output_video.clear();
  o.output_image = "frame";
  o.annotate = true;
  EXPECT_THROW(run_pipeline(o), Error);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(cli("run --config " + cfg + " --input 'test://noise?frames=2' --output-dir " + out +
                " --output-video " + path("x.avi")),
            2);
  EXPECT_FALSE(fs::exists(out));
}

TEST(GstAnnotate, MarksAndOverlayOnABgrCopy) {
  HostImage gray(200, 120, PixelFormat::kGray8);
  for (int y = 0; y < 120; ++y) {
    for (int x = 0; x < 200; ++x) gray.view().row<std::uint8_t>(y)[x] = 100;
  }
  DetectResult d;
  d.count = 1;
  d.points = {{150, 80, 1.0f}};
  HistogramResult h;
  h.bins = {1, 5, 2, 9};
  StatsResult st;
  st.mean = 100;
  const HostImage a = annotate(gray.view(), {{"hist", h}, {"stats", st}, {"corners", d}}, 7);
  ASSERT_EQ(a.format(), PixelFormat::kBgr8);
  const std::uint8_t* mark = a.view().row<std::uint8_t>(80) + 3 * 150;
  EXPECT_EQ(mark[1], 255);  // green cross at the detection
  EXPECT_LT(mark[0], 100);
  const std::uint8_t* far = a.view().row<std::uint8_t>(110) + 3 * 10;
  EXPECT_EQ(far[0], 100);                                // untouched outside the overlay and marks
  EXPECT_LT(a.view().row<std::uint8_t>(6)[3 * 6], 100);  // the overlay's shaded panel
  EXPECT_EQ(gray.view().row<std::uint8_t>(80)[150], 100);  // the input is not changed
  // Non-8-bit images become 8-bit for video.
  HostImage f32(4, 1, PixelFormat::kF32);
  for (int x = 0; x < 4; ++x) f32.view().row<float>(0)[x] = static_cast<float>(x) - 1.5f;
  const HostImage v = to_video_image(f32.view());
  EXPECT_EQ(v.format(), PixelFormat::kGray8);
  EXPECT_EQ(v.view().row<std::uint8_t>(0)[0], 0);
  EXPECT_EQ(v.view().row<std::uint8_t>(0)[3], 255);
}

// ---- Accounting
// ------------------------------------------------------------------------------------

TEST_F(Gst, EndOfStreamFlushesEveryFrame) {
  REQUIRE_GST("videotestsrc", "videoconvert", "appsink");
  RunOptions o;
  o.config = config("c.yaml", kFull);
  o.inputs = {"test://ball?w=96&h=64&frames=17"};
  o.output_dir = path("run");
  const RunSummary s = run_pipeline(o);
  EXPECT_EQ(s.read, 17);
  EXPECT_EQ(s.processed, 17);
  EXPECT_EQ(s.dropped, 0);
  const std::vector<json> r = read_jsonl(fs::path(o.output_dir) / "results.jsonl");
  ASSERT_EQ(r.size(), 17u);
  for (int i = 0; i < 17; ++i) EXPECT_EQ(r[i]["frame"], i);
  const json sum = read_json(fs::path(o.output_dir) / "summary.json");
  EXPECT_EQ(sum["frames"]["read"], 17);
  EXPECT_EQ(sum["frames"]["dropped"], 0);
}

// An error mid-stream (a camera unplugged; here identity error-after): every frame that got
// through has its record, the summary says why the input stopped, the exit code is 3.
TEST_F(Gst, MidStreamErrorEndsCleanlyWithExitCode3) {
  REQUIRE_GST("videotestsrc", "videoconvert", "appsink", "identity");
  const std::string cfg = config("c.yaml", kLight);
  const std::string out = path("run");
  const std::string uri =
      "'gst://videotestsrc num-buffers=20 ! video/x-raw,width=64,height=48 ! identity "
      "error-after=6 ! videoconvert ! appsink'";
  EXPECT_EQ(cli("run --config " + cfg + " --input " + uri + " --output-dir " + out), 3);
  const std::vector<json> r = read_jsonl(fs::path(out) / "results.jsonl");
  const json sum = read_json(fs::path(out) / "summary.json");
  EXPECT_EQ(r.size(), 5u);
  EXPECT_EQ(sum["frames"]["read"], 5);
  EXPECT_EQ(sum["frames"]["processed"], 5);
  const std::string why = sum["source_error"];
  EXPECT_NE(why.find("stopped after 5 frames"), std::string::npos) << why;
  EXPECT_NE(why.find("GStreamer"), std::string::npos) << why;
}

// Debian's opencv-doc ships a damaged clip: one clear outcome, valid JSON Lines, a record per
// frame read, and the exit code saying which (0: the decoder concealed the damage; 3: stopped).
TEST_F(Gst, MegamindBugyEndsCleanly) {
  REQUIRE_GST("decodebin", "filesrc", "videoconvert");
  for (const char* e : {"avidemux", "avdec_mpeg4"}) {  // the clip: MPEG-4 video in AVI
    if (!test::gst_has_element(e)) GTEST_SKIP() << "GStreamer element " << e << " missing";
  }
  const std::string clip = "/usr/share/doc/opencv-doc/examples/data/Megamind_bugy.avi";
  if (!fs::exists(clip)) GTEST_SKIP() << clip << " is not installed (Debian package opencv-doc)";
  const std::string cfg = config("c.yaml", kLight);
  const std::string out = path("run");
  const int rc = cli("run --config " + cfg + " --input file://" + clip + " --output-dir " + out);
  const std::vector<json> r = read_jsonl(fs::path(out) / "results.jsonl");
  const json sum = read_json(fs::path(out) / "summary.json");
  EXPECT_EQ(static_cast<std::int64_t>(r.size()), sum["frames"]["read"].get<std::int64_t>());
  EXPECT_GT(r.size(), 100u);
  if (sum.contains("source_error")) {
    EXPECT_EQ(rc, 3);
  } else {
    EXPECT_TRUE(rc == 0 || rc == 3) << rc;  // 3 when some frame failed
  }
}

// A live source at 1000 fps feeding a slow consumer: the bounded queue drops the oldest frames,
// captured = read + dropped, the queue never grows past its bound, memory stays flat. After the
// first frame the consumer waits until the queue has overflowed, so frames are dropped however
// few the source makes a second (a loaded machine, a sanitizer build: 5 a second was seen).
TEST_F(Gst, LiveSourceDropsOldestWhenBehind) {
  REQUIRE_GST("videotestsrc", "videoconvert", "appsink");
  auto rss_kb = [](const char* key) {
    std::ifstream in("/proc/self/status");
    std::string k;
    long v = 0;
    while (in >> k) {
      if (k == key) {
        in >> v;
        return v;
      }
    }
    return 0L;
  };
  const long before = rss_kb("VmRSS:");
  SourceOptions opt;
  opt.queue = 4;
  const int total = 300;  // 640x480 BGR: 276 MB if nothing were dropped
  auto src = open_source(
      "test://smpte?w=640&h=480&fps=1000&live=true&frames=" + std::to_string(total), opt);
  EXPECT_TRUE(src->live());
  Frame f;
  std::int64_t read = 0, last = -1;
  bool gaps = false;
  while (src->next(&f)) {
    ++read;
    gaps = gaps || f.index != last + 1;
    EXPECT_GT(f.index, last);
    last = f.index;
    const auto t0 = Clock::now();
    while (read == 1 && gst_source_stats(*src)->captured < 1 + opt.queue + 2 &&
           Clock::now() - t0 < std::chrono::seconds(30)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const GstSourceStats st = *gst_source_stats(*src);
  EXPECT_EQ(read + src->dropped(), total);
  EXPECT_EQ(st.captured, total);
  EXPECT_GT(src->dropped(), 0);
  EXPECT_TRUE(gaps);
  EXPECT_LE(st.peak_queue, 4u);
  if (!test::kAddressSanitizer) EXPECT_LT(rss_kb("VmHWM:") - before, 100 * 1024) << "kB";

  // Through the runner: drops reach summary.json.
  RunOptions o;
  o.config = config("c.yaml", kFull);
  o.inputs = {"test://smpte?w=640&h=480&fps=1000&live=true&frames=200"};
  o.output_dir = path("run");
  const RunSummary s = run_pipeline(o);
  EXPECT_GT(s.dropped, 0);
  EXPECT_EQ(s.read + s.dropped, 200);
  const json sum = read_json(fs::path(o.output_dir) / "summary.json");
  EXPECT_EQ(sum["frames"]["dropped"], s.dropped);
  EXPECT_EQ(static_cast<std::int64_t>(read_jsonl(fs::path(o.output_dir) / "results.jsonl").size()),
            s.read);
}

// RTP out and in over 127.0.0.1 (bounded: 30 frames, a few seconds at most).
TEST_F(Gst, RtpLoopback) {
  REQUIRE_GST("udpsrc", "udpsink", "rtph264pay", "rtph264depay", "h264parse", "rtpjitterbuffer");
  REQUIRE_ENCODER();
  const GstFeatures features = detect_gst_features();
  if (!features.has("avdec_h264") && !features.has("openh264dec") &&
      !features.has("nvv4l2decoder")) {  // the decoders rtp:// takes (gst_source_pipeline)
    GTEST_SKIP() << "no H.264 decoder (avdec_h264, openh264dec or nvv4l2decoder)";
  }
  const int port = test::free_udp_port();
  ASSERT_NE(port, 0);
  const std::string where = "127.0.0.1:" + std::to_string(port);
  SourceOptions opt;
  opt.timeout_s = 1;
  // No reopening after the stream ends: reconnect's default tries (10, backing off to 8 s) kept
  // this test waiting 67 s for a sender that had gone (Reconnect.* tests the reopening).
  opt.reconnect.attempts = 0;
  auto rx = open_source("rtp://" + where, opt);
  EXPECT_TRUE(rx->live());
  auto pattern = open_source("test://blobs?w=64&h=48&frames=30");
  VideoSink tx("rtp://" + where);
  Frame f;
  while (pattern->next(&f)) {
    tx.write(f.image.view());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  tx.close();
  EXPECT_EQ(tx.frames(), 30);
  int got = 0;
  try {
    while (rx->next(&f)) {
      EXPECT_EQ(f.image.width(), 64);
      if (++got == 10) break;
    }
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no frame for"), std::string::npos) << e.what();
  }
  EXPECT_GE(got, 1);
}

}  // namespace
}  // namespace jetpipe
