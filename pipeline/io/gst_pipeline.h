// SPDX-License-Identifier: MIT
// GStreamer pipeline descriptions for sources and video outputs, as pure functions of a parsed URI
// and of the elements present (GstFeatures), so the Jetson strings (nvv4l2decoder, nvvidconv,
// nvarguscamerasrc, nvv4l2h264enc) are unit-tested on machines without those elements. This header
// and gst_pipeline.cpp build without GStreamer; detect_gst_features() is empty there.
//
// Sources end in `appsink name=jp_sink` behind a caps filter asking for a layout the frame keeps as
// it is (gst_frame_caps): each buffer is then copied into the frame with a memcpy per row (per
// plane for NV12), never converted pixel by pixel on our side.
//   colour: software `videoconvert ! video/x-raw,format={BGRx,BGRA,RGBx,RGBA,BGR,RGB,NV12,GRAY8}`
//           (a decoder's layout in the list passes through; I420 becomes NV12); Jetson `nvvidconv !
//           video/x-raw,format=BGRx` (the VIC converts, the frame is BGRx)
//   gray:   software `videoconvert ! video/x-raw,format={GRAY8,I420,NV12}` (the luma plane, no
//           colour conversion); Jetson `nvvidconv ! video/x-raw,format=NV12` (its luma plane)
// Sinks start with `appsrc name=jp_src` (caps set by the sink: the frame's own layout, size, rate).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "core/image.h"
#include "pipeline/io/device_memory.h"

namespace jetpipe {

// Which GStreamer elements exist. Hardware paths are taken when their elements are present.
struct GstFeatures {
  std::set<std::string> elements;

  bool has(const std::string& element) const { return elements.count(element) != 0; }
  // nvvidconv present: decoded frames are converted by the VIC into system memory.
  bool jetson() const { return has("nvvidconv"); }
  // A software desktop set (videoconvert, decodebin, avdec_h264, x264enc, muxers, ...), for tests.
  static GstFeatures software();
  // software() plus JetPack's nvv4l2decoder, nvvidconv, nvarguscamerasrc, nvv4l2h264enc.
  static GstFeatures jetson_set();
};

// The elements present in this process's GStreamer registry (initialises GStreamer); empty when
// built without GStreamer.
GstFeatures detect_gst_features();

// ---- Sources
// --------------------------------------------------------------------------------------

enum class GstSourceKind { kFile, kV4l2, kCsi, kRtsp, kRtp, kTestSrc, kLaunch };

// A GStreamer source URI, parsed (parse_gst_source_uri). Query keys per scheme:
//   file://PATH[?nvmm=0&cudamem=0]  the path is taken whole, but for a trailing query of
//                                   device-memory keys only (device_memory.h)
//   v4l2:///dev/videoN[?w=W&h=H&fps=F]          raw modes at that size/rate when given
//   csi://N[?w=W&h=H&fps=F]                     defaults 1920x1080 at 30
//   v4l2, csi, rtp, file: nvmm=0 keeps a Jetson's frames out of NVMM (the copying path), cudamem=0
//   a discrete GPU decoder's out of CUDA memory; both on by default (device_memory.h)
//   rtsp://...                      (none: the URL is passed to rtspsrc whole; latency 200 ms)
//   rtp://[HOST]:PORT[?codec=h264|h265&latency=MS]   H.264 RTP (payload 96) received on PORT
//   test://NAME[?w=W&h=H&frames=N&fps=F&live=true|false&format=F]   videotestsrc
//   (format=F on test, v4l2, csi and rtp: exactly this frame format, one of gray8, bgr8, rgb8,
//   bgrx8, rgbx8, rgba8, nv12; gray8 is the luma plane as in gray pipelines)
//   test://videotestsrc?pattern=NAME&...        the same; frames=0: endless
//   gst://LAUNCH                    a gst-launch description whose last element is an appsink
struct SourceSpec {
  GstSourceKind kind = GstSourceKind::kFile;
  std::string uri;                     // as written
  std::string location;                // file path, device, rtsp URL, launch text
  std::string host;                    // rtp: address to listen on ("" = any)
  int port = 0;                        // rtp
  int sensor = 0;                      // csi
  std::string pattern;                 // videotestsrc
  int width = 0, height = 0, fps = 0;  // 0: the source's own
  std::int64_t frames = -1;            // videotestsrc num-buffers; -1 endless
  bool live = false;                   // cameras, network, videotestsrc live=true
  std::string codec = "h264";
  int latency_ms = 200;
  // The frames keep their colour (the layouts of gst_frame_caps); false: GRAY8, the luma plane.
  bool colour = true;
  std::optional<PixelFormat> format;  // ?format=: exactly this frame format (colour follows it)
  DeviceMemorySpec device;            // ?nvmm=, ?cudamem= and the memory the frames come in
};

// The built-in synthetic patterns (test_source.cpp): test://gradient|checker|noise|blobs.
bool is_builtin_test_pattern(const std::string& name);
// Whether `scheme` (without "://") is one the GStreamer sources handle (file excepted).
bool is_gst_only_scheme(const std::string& scheme);

// Parses a source URI for GStreamer. `colour`: whether the stages read the frame's colour
// (SourceOptions::colour); a ?format= overrides it. Throws jetpipe::Error (kInput) naming the URI
// and what would be valid.
SourceSpec parse_gst_source_uri(const std::string& uri, bool colour);

// GStreamer's name of a frame format's layout ("BGRx" for bgrx8, "NV12", "GRAY8"); "" for S16/F32.
const char* gst_format_name(PixelFormat format);
// The frame format a raw buffer in GStreamer's format `name` becomes with a row memcpy at most: its
// own layout (BGRA as bgrx8: byte 3 is ignored), NV12 with both planes when `colour`; GRAY8, the
// luma plane, for GRAY8 and for I420 / YV12 / NV21 (and NV12 when not `colour`). False for any
// other format (it would need a per-pixel conversion).
bool frame_format_for(const std::string& name, bool colour, PixelFormat* format);
// The raw caps an appsink asks for: "video/x-raw,format={...}" with the layouts above that keep the
// colour (BGRx first), or those whose luma plane is the gray image.
std::string gst_frame_caps(bool colour);

// The gst-launch description of a source ending in `appsink name=jp_sink`. Throws kInput when an
// element it needs is absent (csi:// without nvarguscamerasrc, rtp:// without a decoder).
std::string gst_source_pipeline(const SourceSpec& spec, const GstFeatures& features);

// ---- Video outputs
// --------------------------------------------------------------------------------

enum class VideoTargetKind { kFile, kDisplay, kRtp, kRtsp };

// --output-video TARGET: FILE.mp4 | FILE.mkv (or file://...), display://, rtp://HOST:PORT,
// rtsp://[HOST]:PORT/PATH (served by gst-rtsp-server when built with it).
struct VideoTarget {
  VideoTargetKind kind = VideoTargetKind::kFile;
  std::string text;       // as written
  std::string path;       // file
  std::string container;  // "mp4" | "mkv"
  std::string host;       // rtp: destination; rtsp: address to serve on
  int port = 0;
  std::string mount = "/jetpipe";  // rtsp path
};

// Parses a video output target; throws jetpipe::Error (kConfig) naming the forms that are valid.
VideoTarget parse_video_target(const std::string& target);

// The H.264 encoder chain (from raw video to parsed H.264): nvv4l2h264enc on Jetson, else x264enc,
// else openh264enc; "" when none is present. low_latency for streaming (no B-frames, no lookahead).
std::string h264_encoder_chain(const GstFeatures& features, int fps, int bitrate_kbps,
                               bool low_latency);

// The description of an output starting at `appsrc name=jp_src` (RTSP: the media factory's
// description, in parentheses, with the payloader named pay0). Throws kConfig when an element it
// needs is absent (no H.264 encoder, no muxer).
std::string gst_sink_pipeline(const VideoTarget& target, const GstFeatures& features, int fps,
                              int bitrate_kbps);

// Quotes a property value for a gst-launch description ("a b" → "\"a b\"").
std::string gst_quote(const std::string& value);

}  // namespace jetpipe
