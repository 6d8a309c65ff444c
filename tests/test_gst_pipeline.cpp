// SPDX-License-Identifier: MIT
// GStreamer pipeline descriptions as pure functions: the software strings and the Jetson ones
// (nvv4l2decoder, nvvidconv, nvarguscamerasrc, nvv4l2h264enc), checked without those elements and
// without GStreamer itself.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "pipeline/io/gst_pipeline.h"
#include "tests/test_util.h"

namespace jetpipe {
namespace {

using test::has;

void expect_error(const std::function<void()>& f, ErrorKind kind,
                  const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    for (const auto& p : parts)
      EXPECT_TRUE(has(e.what(), p)) << "'" << p << "' not in: " << e.what();
  }
}

std::string src(const std::string& uri, const GstFeatures& f, bool colour = true) {
  return gst_source_pipeline(parse_gst_source_uri(uri, colour), f);
}

constexpr const char* kColour = "video/x-raw,format={BGRx,BGRA,RGBx,RGBA,BGR,RGB,NV12,GRAY8}";

TEST(GstPipelineStrings, SoftwareSources) {
  const GstFeatures sw = GstFeatures::software();
  const std::string tail = std::string("videoconvert ! ") + kColour + " ! appsink name=jp_sink";
  // Colour: the decoder's own layout when the frame keeps it (videoconvert passes it through),
  // else the nearest one (I420 → NV12).
  EXPECT_EQ(src("file:///data/my clip.mp4", sw),
            "filesrc location=\"/data/my clip.mp4\" ! decodebin ! " + tail);
  // Gray pipelines take the decoder's luma plane as it is (I420/NV12 pass through).
  EXPECT_EQ(src("file://a.mkv", sw, false),
            "filesrc location=a.mkv ! decodebin ! videoconvert ! "
            "video/x-raw,format={GRAY8,I420,NV12} ! appsink name=jp_sink");
  EXPECT_EQ(src("v4l2:///dev/video1", sw), "v4l2src device=/dev/video1 ! decodebin ! " + tail);
  EXPECT_EQ(
      src("v4l2:///dev/video0?w=640&h=480&fps=30", sw),
      "v4l2src device=/dev/video0 ! video/x-raw,width=640,height=480,framerate=30/1 ! " + tail);
  EXPECT_EQ(src("rtsp://cam.local:8554/stream?token=x", sw),
            "rtspsrc location=\"rtsp://cam.local:8554/stream?token=x\" latency=200 ! "
            "application/x-rtp,media=video ! decodebin ! " +
                tail);
  EXPECT_EQ(src("rtp://:5004", sw),
            "udpsrc port=5004 caps=\"application/x-rtp,media=video,clock-rate=90000,"
            "encoding-name=H264,payload=96\" ! rtpjitterbuffer latency=50 ! rtph264depay ! "
            "h264parse ! avdec_h264 ! " +
                tail);
  EXPECT_TRUE(has(src("rtp://239.0.0.1:5000?codec=h265&latency=100", sw),
                  "udpsrc address=239.0.0.1 port=5000"));
  EXPECT_TRUE(has(src("rtp://239.0.0.1:5000?codec=h265&latency=100", sw),
                  "latency=100 ! rtph265depay ! h265parse ! avdec_h265"));
  EXPECT_EQ(src("test://ball?w=64&h=48&frames=5&fps=60&live=true", sw),
            "videotestsrc pattern=ball num-buffers=5 is-live=true ! "
            "video/x-raw,width=64,height=48,framerate=60/1 ! " +
                tail);
  EXPECT_TRUE(has(src("test://videotestsrc?pattern=gradient&frames=0", sw),
                  "videotestsrc pattern=gradient is-live=false"));
  EXPECT_TRUE(has(src("test://smpte?format=gray8", sw), "format={GRAY8,I420,NV12}"));
  const std::string launch = "videotestsrc num-buffers=3 ! videoconvert ! appsink name=x";
  EXPECT_EQ(src("gst://" + launch, sw), launch);
}

// ?format= asks for exactly one layout, whatever the pipeline would choose; gray8 is the luma
// plane.
TEST(GstPipelineStrings, FormatKeyPinsOneLayout) {
  const GstFeatures sw = GstFeatures::software();
  const std::pair<const char*, const char*> kPins[] = {{"bgr8", "BGR"},   {"rgb8", "RGB"},
                                                       {"bgrx8", "BGRx"}, {"rgbx8", "RGBx"},
                                                       {"rgba8", "RGBA"}, {"nv12", "NV12"}};
  for (const auto& [name, gst] : kPins) {
    for (bool colour : {true, false}) {
      const SourceSpec spec =
          parse_gst_source_uri(std::string("test://ball?format=") + name, colour);
      ASSERT_TRUE(spec.format.has_value()) << name;
      EXPECT_EQ(to_string(*spec.format), std::string(name));
      EXPECT_TRUE(spec.colour) << name;
      EXPECT_TRUE(has(gst_source_pipeline(spec, sw),
                      std::string("videoconvert ! video/x-raw,format=") + gst + " ! appsink"))
          << name;
    }
  }
  const SourceSpec gray = parse_gst_source_uri("v4l2:///dev/video0?format=gray8", true);
  EXPECT_FALSE(gray.colour);
  EXPECT_TRUE(has(src("rtp://:5004?format=nv12", sw), "format=NV12 ! appsink"));
  EXPECT_TRUE(has(src("v4l2:///dev/video0?format=rgba8", sw), "format=RGBA ! appsink"));
  expect_error([] { parse_gst_source_uri("test://ball?format=yuyv", true); }, ErrorKind::kInput,
               {"format=yuyv", "gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8 or nv12"});
  expect_error([] { parse_gst_source_uri("test://ball?format=f32", true); }, ErrorKind::kInput,
               {"format=f32"});
}

// Which GStreamer layouts become which frame, with a row memcpy at most.
TEST(GstFrameFormats, EachRawLayoutAndItsFrame) {
  struct Case {
    const char* gst;
    bool colour;
    PixelFormat want;
  };
  const Case kCases[] = {{"BGRx", true, PixelFormat::kBgrx8},  {"BGRA", true, PixelFormat::kBgrx8},
                         {"RGBx", true, PixelFormat::kRgbx8},  {"RGBA", true, PixelFormat::kRgba8},
                         {"BGR", true, PixelFormat::kBgr8},    {"RGB", false, PixelFormat::kRgb8},
                         {"GRAY8", true, PixelFormat::kGray8}, {"NV12", true, PixelFormat::kNv12},
                         {"NV12", false, PixelFormat::kGray8}, {"I420", true, PixelFormat::kGray8},
                         {"I420", false, PixelFormat::kGray8}, {"YV12", false, PixelFormat::kGray8},
                         {"NV21", false, PixelFormat::kGray8}};
  for (const Case& c : kCases) {
    PixelFormat f = PixelFormat::kF32;
    ASSERT_TRUE(frame_format_for(c.gst, c.colour, &f)) << c.gst;
    EXPECT_EQ(f, c.want) << c.gst << " colour " << c.colour;
  }
  PixelFormat f;
  for (const char* other : {"YUY2", "UYVY", "xRGB", "ARGB", "Y444", "P010_10LE", "GRAY16_LE"}) {
    EXPECT_FALSE(frame_format_for(other, true, &f)) << other;
  }
  // Every layout the caps ask for is one the copy takes, and names round-trip.
  for (PixelFormat p :
       {PixelFormat::kGray8, PixelFormat::kBgr8, PixelFormat::kRgb8, PixelFormat::kBgrx8,
        PixelFormat::kRgbx8, PixelFormat::kRgba8, PixelFormat::kNv12}) {
    ASSERT_TRUE(frame_format_for(gst_format_name(p), true, &f)) << to_string(p);
    EXPECT_EQ(f, p);
  }
  EXPECT_STREQ(gst_format_name(PixelFormat::kF32), "");
  EXPECT_EQ(gst_frame_caps(true), kColour);
  EXPECT_EQ(gst_frame_caps(false), "video/x-raw,format={GRAY8,I420,NV12}");
}

TEST(GstPipelineStrings, JetsonSourcesUseTheHardwareDecoderAndConverter) {
  const GstFeatures jet = GstFeatures::jetson_set();
  ASSERT_TRUE(jet.jetson());
  // decodebin picks nvv4l2decoder (its rank is raised at run time); nvvidconv converts into
  // BGRx (the frame keeps it) or NV12 (the luma plane for gray pipelines).
  EXPECT_EQ(src("file://a.mp4", jet),
            "filesrc location=a.mp4 ! decodebin ! nvvidconv ! video/x-raw,format=BGRx ! "
            "appsink name=jp_sink");
  EXPECT_EQ(src("file://a.mp4", jet, false),
            "filesrc location=a.mp4 ! decodebin ! nvvidconv ! video/x-raw,format=NV12 ! "
            "appsink name=jp_sink");
  EXPECT_EQ(src("csi://1", jet),
            "nvarguscamerasrc sensor-id=1 ! video/x-raw(memory:NVMM),width=1920,height=1080,"
            "framerate=30/1,format=NV12 ! nvvidconv ! video/x-raw,format=BGRx ! "
            "appsink name=jp_sink");
  EXPECT_TRUE(has(src("csi://0?w=1280&h=720&fps=60", jet),
                  "video/x-raw(memory:NVMM),width=1280,height=720,framerate=60/1,format=NV12"));
  EXPECT_EQ(src("rtp://:5004", jet),
            "udpsrc port=5004 caps=\"application/x-rtp,media=video,clock-rate=90000,"
            "encoding-name=H264,payload=96\" ! rtpjitterbuffer latency=50 ! rtph264depay ! "
            "h264parse ! nvv4l2decoder ! nvvidconv ! video/x-raw,format=BGRx ! "
            "appsink name=jp_sink");
  EXPECT_TRUE(has(src("rtsp://cam/1", jet), "decodebin ! nvvidconv ! video/x-raw,format=BGRx"));
  EXPECT_TRUE(has(src("v4l2:///dev/video0", jet), "nvvidconv"));
  // ?format=: the layouts nvvidconv writes come from the VIC; BGR, RGB, RGBx from its BGRx.
  EXPECT_TRUE(
      has(src("csi://0?format=nv12", jet), "nvvidconv ! video/x-raw,format=NV12 ! appsink"));
  EXPECT_TRUE(
      has(src("csi://0?format=rgba8", jet), "nvvidconv ! video/x-raw,format=RGBA ! appsink"));
  EXPECT_TRUE(has(src("csi://0?format=bgr8", jet),
                  "nvvidconv ! video/x-raw,format=BGRx ! videoconvert ! video/x-raw,format=BGR ! "
                  "appsink"));
  EXPECT_TRUE(
      has(src("csi://0?format=gray8", jet), "nvvidconv ! video/x-raw,format=NV12 ! appsink"));
  // videotestsrc frames are in system memory: the software converter, also on a Jetson.
  EXPECT_TRUE(has(src("test://ball", jet), std::string("videoconvert ! ") + kColour));
}

TEST(GstPipelineStrings, MissingElementsAndBadUrisAreNamed) {
  const GstFeatures sw = GstFeatures::software();
  expect_error([&] { src("csi://0", sw); }, ErrorKind::kInput,
               {"csi://0", "nvarguscamerasrc", "v4l2:///dev/videoN"});
  GstFeatures bare;
  bare.elements = {"udpsrc"};
  expect_error([&] { src("rtp://:5004", bare); }, ErrorKind::kInput, {"H264 decoder"});
  expect_error([] { parse_gst_source_uri("rtp://host", true); }, ErrorKind::kInput,
               {"rtp://[HOST]:PORT"});
  expect_error([] { parse_gst_source_uri("rtp://:70000", true); }, ErrorKind::kInput,
               {"PORT 1..65535"});
  expect_error([] { parse_gst_source_uri("csi://x", true); }, ErrorKind::kInput, {"sensor"});
  expect_error([] { parse_gst_source_uri("v4l2://", true); }, ErrorKind::kInput, {"no device"});
  expect_error([] { parse_gst_source_uri("v4l2:///dev/video0?zoom=2", true); }, ErrorKind::kInput,
               {"zoom", "w, h, fps, format"});
  expect_error([] { parse_gst_source_uri("test://ball?fps=0", true); }, ErrorKind::kInput,
               {"fps=0", "1..1000"});
  expect_error([] { parse_gst_source_uri("test://plasma", true); }, ErrorKind::kInput,
               {"plasma", "gradient, checker, noise, blobs", "smpte", "ball"});
  expect_error([] { parse_gst_source_uri("test://videotestsrc?pattern=x", true); },
               ErrorKind::kInput, {"pattern=x", "smpte"});
  expect_error([] { parse_gst_source_uri("gst://videotestsrc ! fakesink", true); },
               ErrorKind::kInput, {"must end in an appsink"});
  EXPECT_TRUE(is_builtin_test_pattern("blobs"));
  EXPECT_FALSE(is_builtin_test_pattern("smpte"));
}

TEST(GstPipelineStrings, QuotingForLaunchDescriptions) {
  EXPECT_EQ(gst_quote("/a/b.mp4"), "/a/b.mp4");
  EXPECT_EQ(gst_quote("a b"), "\"a b\"");
  EXPECT_EQ(gst_quote("x\"y\\z"), "\"x\\\"y\\\\z\"");
  EXPECT_EQ(gst_quote("a!b"), "\"a!b\"");
}

TEST(GstVideoTarget, FormsAndErrors) {
  VideoTarget t = parse_video_target("out/run.MP4");
  EXPECT_EQ(t.kind, VideoTargetKind::kFile);
  EXPECT_EQ(t.container, "mp4");
  EXPECT_EQ(parse_video_target("file:///tmp/x.mkv").path, "/tmp/x.mkv");
  EXPECT_EQ(parse_video_target("display://").kind, VideoTargetKind::kDisplay);
  t = parse_video_target("rtp://127.0.0.1:5004");
  EXPECT_EQ(t.kind, VideoTargetKind::kRtp);
  EXPECT_EQ(t.host, "127.0.0.1");
  EXPECT_EQ(t.port, 5004);
  t = parse_video_target("rtsp://:8554/live");
  EXPECT_EQ(t.kind, VideoTargetKind::kRtsp);
  EXPECT_EQ(t.port, 8554);
  EXPECT_EQ(t.mount, "/live");
  expect_error([] { parse_video_target("out.avi"); }, ErrorKind::kConfig, {".avi", ".mp4", ".mkv"});
  expect_error([] { parse_video_target("rtp://:5004"); }, ErrorKind::kConfig, {"rtp://HOST:PORT"});
  expect_error([] { parse_video_target("srt://x:1"); }, ErrorKind::kConfig,
               {"srt://", "display://"});
}

TEST(GstVideoTarget, SinkPipelinesSoftwareAndJetson) {
  const GstFeatures sw = GstFeatures::software();
  EXPECT_EQ(gst_sink_pipeline(parse_video_target("o.mp4"), sw, 25, 4000),
            "appsrc name=jp_src ! videoconvert ! video/x-raw,format=I420 ! x264enc "
            "speed-preset=veryfast bitrate=4000 key-int-max=50 ! h264parse ! mp4mux ! "
            "filesink location=o.mp4");
  EXPECT_TRUE(has(gst_sink_pipeline(parse_video_target("o.mkv"), sw, 30, 4000),
                  "h264parse ! matroskamux ! filesink location=o.mkv"));
  EXPECT_EQ(gst_sink_pipeline(parse_video_target("display://"), sw, 30, 4000),
            "appsrc name=jp_src ! videoconvert ! autovideosink sync=false");
  const std::string rtp =
      gst_sink_pipeline(parse_video_target("rtp://127.0.0.1:5004"), sw, 30, 2000);
  EXPECT_TRUE(has(rtp, "x264enc speed-preset=ultrafast tune=zerolatency bitrate=2000"));
  EXPECT_TRUE(has(rtp, "rtph264pay config-interval=-1 pt=96 ! udpsink host=127.0.0.1 port=5004"));
  EXPECT_EQ(gst_sink_pipeline(parse_video_target("rtsp://:8554/x"), sw, 30, 2000).substr(0, 20),
            "( appsrc name=jp_src");

  const GstFeatures jet = GstFeatures::jetson_set();
  EXPECT_EQ(gst_sink_pipeline(parse_video_target("o.mp4"), jet, 30, 8000),
            "appsrc name=jp_src ! videoconvert ! video/x-raw,format={NV12,BGRx,RGBA} ! "
            "nvvidconv ! video/x-raw(memory:NVMM),format=NV12 ! nvv4l2h264enc bitrate=8000000 "
            "iframeinterval=60 insert-sps-pps=true ! h264parse ! mp4mux ! filesink location=o.mp4");
  EXPECT_TRUE(has(gst_sink_pipeline(parse_video_target("rtp://10.0.0.2:5000"), jet, 30, 4000),
                  "nvv4l2h264enc bitrate=4000000 iframeinterval=30 insert-sps-pps=true "
                  "maxperf-enable=true ! h264parse ! rtph264pay"));

  GstFeatures no_enc = sw;
  no_enc.elements.erase("x264enc");
  expect_error([&] { gst_sink_pipeline(parse_video_target("o.mp4"), no_enc, 30, 4000); },
               ErrorKind::kConfig, {"no H.264 encoder", "x264enc"});
  no_enc.elements.insert("openh264enc");
  EXPECT_TRUE(has(gst_sink_pipeline(parse_video_target("o.mp4"), no_enc, 30, 4000),
                  "openh264enc bitrate=4000000"));
  GstFeatures no_mux = sw;
  no_mux.elements.erase("mp4mux");
  expect_error([&] { gst_sink_pipeline(parse_video_target("o.mp4"), no_mux, 30, 4000); },
               ErrorKind::kConfig, {"mp4mux", "gstreamer1.0-plugins-good"});
}

}  // namespace
}  // namespace jetpipe
