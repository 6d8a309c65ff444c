// SPDX-License-Identifier: MIT
// GStreamer pipeline descriptions (pure: no GStreamer calls; see gst_pipeline.h).
#include "pipeline/io/gst_pipeline.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/error.h"
#include "pipeline/io/io_internal.h"

namespace jetpipe {

namespace {

constexpr const char* kBuiltinPatterns[] = {"gradient", "checker", "noise", "blobs"};
// videotestsrc's patterns (GStreamer 1.22).
constexpr const char* kVideoTestPatterns[] = {"smpte",
                                              "snow",
                                              "black",
                                              "white",
                                              "red",
                                              "green",
                                              "blue",
                                              "checkers-1",
                                              "checkers-2",
                                              "checkers-4",
                                              "checkers-8",
                                              "circular",
                                              "blink",
                                              "smpte75",
                                              "zone-plate",
                                              "gamut",
                                              "chroma-zone-plate",
                                              "solid-color",
                                              "ball",
                                              "smpte100",
                                              "bar",
                                              "pinwheel",
                                              "spokes",
                                              "gradient",
                                              "colors",
                                              "smpte-rp-219"};

// The frame formats a URI's ?format= may name.
constexpr const char* kFrameFormats = "gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8 or nv12";

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string videotest_pattern_list() {
  std::vector<std::string> v(std::begin(kVideoTestPatterns), std::end(kVideoTestPatterns));
  return join(v, ", ");
}

bool is_videotest_pattern(const std::string& name) {
  return std::find(std::begin(kVideoTestPatterns), std::end(kVideoTestPatterns), name) !=
         std::end(kVideoTestPatterns);
}

using Query = std::vector<std::pair<std::string, std::string>>;

// "a=1&b=2" → {{a, 1}, {b, 2}}; empty items are skipped.
Query parse_query(const std::string& q) {
  Query out;
  std::size_t p = 0;
  while (p <= q.size()) {
    const std::size_t amp = std::min(q.find('&', p), q.size());
    const std::string item = q.substr(p, amp - p);
    p = amp + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    out.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
  }
  return out;
}

// Splits "HOST:PORT" (HOST may be empty or [v6]); false when PORT is not 1..65535.
bool split_host_port(const std::string& s, std::string* host, int* port) {
  const std::size_t colon = s.rfind(':');
  if (colon == std::string::npos) return false;
  std::int64_t p = 0;
  if (!io_detail::parse_decimal(s.substr(colon + 1), 1, 65535, &p)) return false;
  *host = s.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  *port = static_cast<int>(p);
  return true;
}

// Reads the keys of a source URI's query into the spec; `allowed` lists the valid keys.
void apply_query(const std::string& uri, const Query& q, const std::vector<std::string>& allowed,
                 SourceSpec* spec) {
  const std::string where = "source '" + uri + "': ";
  for (const auto& [key, value] : q) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      throw input_error(where + "unknown key '" + key + "' (valid keys: " + join(allowed, ", ") +
                        ")");
    }
    if (apply_device_key(uri, key, value, &spec->device)) continue;
    auto bad = [&, k = key, v = value](const std::string& valid) {
      return input_error(where + "bad value " + k + "=" + v + " (" + valid + ")");
    };
    std::int64_t n = 0;
    if (key == "w" || key == "h") {
      if (!io_detail::parse_decimal(value, 1, 16384, &n)) throw bad("an integer 1..16384");
      (key == "w" ? spec->width : spec->height) = static_cast<int>(n);
    } else if (key == "fps") {
      if (!io_detail::parse_decimal(value, 1, 1000, &n)) throw bad("an integer 1..1000");
      spec->fps = static_cast<int>(n);
    } else if (key == "frames") {
      if (!io_detail::parse_decimal(value, 0, 1000000000, &n)) throw bad("an integer 0..1000000000; 0: endless");
      spec->frames = n == 0 ? -1 : n;
    } else if (key == "live") {
      if (value != "true" && value != "false" && value != "1" && value != "0") {
        throw bad("true or false");
      }
      spec->live = value == "true" || value == "1";
    } else if (key == "format") {
      PixelFormat f;
      if (!parse_pixel_format(value, &f) || gst_format_name(f)[0] == '\0') {
        throw bad(kFrameFormats);
      }
      spec->format = f;
      spec->colour = f != PixelFormat::kGray8;
    } else if (key == "pattern") {
      if (!is_videotest_pattern(value))
        throw bad("a videotestsrc pattern: " + videotest_pattern_list());
      spec->pattern = value;
    } else if (key == "codec") {
      if (value != "h264" && value != "h265") throw bad("h264 or h265");
      spec->codec = value;
    } else if (key == "latency") {
      if (!io_detail::parse_decimal(value, 0, 10000, &n)) throw bad("milliseconds 0..10000");
      spec->latency_ms = static_cast<int>(n);
    }
  }
}

// Raw caps of layouts a frame keeps as they are. Colour: every layout the stages read, BGRx first
// (the Jetson's, and the choice of a producer that offers several). videoconvert passes a listed
// layout through and turns any other into the nearest listed one: I420 / YV12 / NV21 from software
// decoders into NV12, which only interleaves the chroma rows (the luma plane is copied as is: no
// colour conversion, no rounding), where BGR or BGRx would cost a YUV→RGB conversion of every
// pixel (docs/decisions/030-decoder-layouts-as-frames.md). Gray: the layouts whose first plane is
// the luma, the gray image the stages read.
constexpr const char* kColourCaps = "video/x-raw,format={BGRx,BGRA,RGBx,RGBA,BGR,RGB,NV12,GRAY8}";
constexpr const char* kGrayCaps = "video/x-raw,format={GRAY8,I420,NV12}";

// The conversion into a layout the frame keeps, ending at the appsink.
std::string sink_tail(const SourceSpec& spec, bool hardware) {
  std::string s;
  if (spec.format && *spec.format != PixelFormat::kGray8) {
    // ?format=: exactly that layout. nvvidconv writes BGRx, RGBA and NV12 itself; BGR, RGB and
    // RGBx come from its BGRx through videoconvert.
    const std::string name = gst_format_name(*spec.format);
    if (hardware) {
      s = "nvvidconv ! video/x-raw,format=";
      s += name == "BGRx" || name == "RGBA" || name == "NV12"
               ? name
               : "BGRx ! videoconvert ! video/x-raw,format=" + name;
    } else {
      s = "videoconvert ! video/x-raw,format=" + name;
    }
  } else if (!spec.colour) {
    s = hardware ? "nvvidconv ! video/x-raw,format=NV12"
                 : std::string("videoconvert ! ") + kGrayCaps;
  } else {
    // The VIC converts into BGRx in hardware: the frame keeps it (to_gray reads it as today's BGR).
    s = hardware ? "nvvidconv ! video/x-raw,format=BGRx"
                 : std::string("videoconvert ! ") + kColourCaps;
  }
  return s + " ! appsink name=jp_sink";
}

// The tail for `s`: the copying path's, or the device-memory one chosen for it.
std::string source_tail(const SourceSpec& s, bool hardware) {
  if (s.device.memory != FrameMemory::kSystem) {
    return device_sink_tail(s.device.memory, s.colour, s.format);
  }
  return sink_tail(s, hardware);
}

std::string raw_caps(const SourceSpec& s, const char* media) {
  std::string c = media;
  if (s.width > 0) c += ",width=" + std::to_string(s.width);
  if (s.height > 0) c += ",height=" + std::to_string(s.height);
  if (s.fps > 0) c += ",framerate=" + std::to_string(s.fps) + "/1";
  return c;
}

}  // namespace

GstFeatures GstFeatures::software() {
  GstFeatures f;
  f.elements = {"appsink",   "appsrc",          "videoconvert", "videotestsrc", "decodebin",
                "filesrc",   "filesink",        "v4l2src",      "rtspsrc",      "udpsrc",
                "udpsink",   "rtpjitterbuffer", "rtph264depay", "rtph265depay", "rtph264pay",
                "h264parse", "h265parse",       "avdec_h264",   "avdec_h265",   "x264enc",
                "mp4mux",    "matroskamux",     "autovideosink"};
  return f;
}

GstFeatures GstFeatures::jetson_set() {
  GstFeatures f = software();
  f.elements.insert({"nvv4l2decoder", "nvvidconv", "nvarguscamerasrc", "nvv4l2h264enc"});
  return f;
}

bool is_builtin_test_pattern(const std::string& name) {
  return std::find(std::begin(kBuiltinPatterns), std::end(kBuiltinPatterns), name) !=
         std::end(kBuiltinPatterns);
}

bool is_gst_only_scheme(const std::string& scheme) {
  return scheme == "v4l2" || scheme == "csi" || scheme == "rtsp" || scheme == "rtp" ||
         scheme == "gst";
}

std::string gst_quote(const std::string& value) {
  if (!value.empty() && value.find_first_of(" \t\"\\!'=,;()[]{}") == std::string::npos) {
    return value;
  }
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const char* gst_format_name(PixelFormat format) {
  switch (format) {
    case PixelFormat::kGray8:
      return "GRAY8";
    case PixelFormat::kBgr8:
      return "BGR";
    case PixelFormat::kRgb8:
      return "RGB";
    case PixelFormat::kBgrx8:
      return "BGRx";
    case PixelFormat::kRgbx8:
      return "RGBx";
    case PixelFormat::kRgba8:
      return "RGBA";
    case PixelFormat::kNv12:
      return "NV12";
    case PixelFormat::kS16:
    case PixelFormat::kF32:
      return "";
  }
  return "";
}

bool frame_format_for(const std::string& name, bool colour, PixelFormat* format) {
  static const std::pair<const char*, PixelFormat> kSame[] = {
      {"BGR", PixelFormat::kBgr8},   {"RGB", PixelFormat::kRgb8},   {"BGRx", PixelFormat::kBgrx8},
      {"BGRA", PixelFormat::kBgrx8}, {"RGBx", PixelFormat::kRgbx8}, {"RGBA", PixelFormat::kRgba8},
      {"GRAY8", PixelFormat::kGray8}};
  for (const auto& [n, f] : kSame) {
    if (name == n) {
      *format = f;
      return true;
    }
  }
  if (name == "NV12") {
    *format = colour ? PixelFormat::kNv12 : PixelFormat::kGray8;
    return true;
  }
  if (name == "I420" || name == "YV12" || name == "NV21") {
    *format = PixelFormat::kGray8;  // the luma plane; their chroma would need a per-pixel repack
    return true;
  }
  return false;
}

std::string gst_frame_caps(bool colour) { return colour ? kColourCaps : kGrayCaps; }

SourceSpec parse_gst_source_uri(const std::string& uri, bool colour) {
  SourceSpec spec;
  spec.uri = uri;
  spec.colour = colour;
  const std::size_t sep = uri.find("://");
  if (sep == std::string::npos) {
    spec.kind = GstSourceKind::kFile;
    spec.location = uri;
    return spec;
  }
  const std::string scheme = uri.substr(0, sep);
  const std::string rest = uri.substr(sep + 3);
  const std::string where = "source '" + uri + "': ";
  const std::size_t q = rest.find('?');
  const std::string head = rest.substr(0, q);
  const Query query = q == std::string::npos ? Query() : parse_query(rest.substr(q + 1));

  if (scheme == "file") {
    if (rest.empty()) throw input_error(where + "no file given");
    spec.kind = GstSourceKind::kFile;
    spec.location = rest;
    split_device_keys(uri, &spec.location, &spec.device);
  } else if (scheme == "v4l2") {
    if (head.empty()) throw input_error(where + "no device given (v4l2:///dev/video0)");
    spec.kind = GstSourceKind::kV4l2;
    spec.location = head;
    spec.live = true;
    apply_query(uri, query, {"w", "h", "fps", "format", "nvmm"}, &spec);
  } else if (scheme == "csi") {
    std::int64_t n = 0;
    if (!io_detail::parse_decimal(head, 0, 15, &n)) {
      throw input_error(where + "bad sensor '" + head + "' (csi://N, N = sensor-id 0..15)");
    }
    spec.kind = GstSourceKind::kCsi;
    spec.sensor = static_cast<int>(n);
    spec.width = 1920;
    spec.height = 1080;
    spec.fps = 30;
    spec.live = true;
    apply_query(uri, query, {"w", "h", "fps", "format", "nvmm"}, &spec);
  } else if (scheme == "rtsp") {
    if (head.empty()) throw input_error(where + "no host given (rtsp://HOST[:PORT]/PATH)");
    spec.kind = GstSourceKind::kRtsp;
    spec.location = uri;  // the server's query string, if any, belongs to the URL
    spec.live = true;
  } else if (scheme == "rtp") {
    spec.kind = GstSourceKind::kRtp;
    if (!split_host_port(head, &spec.host, &spec.port)) {
      throw input_error(where + "expected rtp://[HOST]:PORT (PORT 1..65535), e.g. rtp://:5004");
    }
    if (spec.host == "@" || spec.host == "0.0.0.0") spec.host.clear();
    spec.live = true;
    spec.latency_ms = 50;
    apply_query(uri, query, {"codec", "latency", "format", "nvmm"}, &spec);
  } else if (scheme == "test") {
    spec.kind = GstSourceKind::kTestSrc;
    spec.pattern = head == "videotestsrc" ? "smpte" : head;
    if (head != "videotestsrc" && !is_videotest_pattern(head)) {
      throw input_error("test source '" + uri + "': unknown pattern '" + head +
                        "' (built in: gradient, checker, noise, blobs; through GStreamer's "
                        "videotestsrc: test://NAME or test://videotestsrc?pattern=NAME with NAME "
                        "one of " +
                        videotest_pattern_list() + ")");
    }
    spec.width = 640;
    spec.height = 480;
    spec.fps = 30;
    spec.frames = 30;
    std::vector<std::string> keys = {"w", "h", "frames", "fps", "live", "format"};
    if (head == "videotestsrc") keys.insert(keys.begin(), "pattern");
    apply_query(uri, query, keys, &spec);
  } else if (scheme == "gst") {
    spec.kind = GstSourceKind::kLaunch;
    spec.location = rest;
    std::size_t bang = rest.rfind('!');
    std::string last = rest.substr(bang == std::string::npos ? 0 : bang + 1);
    last.erase(0, last.find_first_not_of(" \t"));
    if (last.compare(0, 7, "appsink") != 0 || (last.size() > 7 && last[7] != ' ')) {
      throw input_error(where +
                        "the launch description must end in an appsink "
                        "(gst://videotestsrc ! videoconvert ! appsink)");
    }
  } else {
    throw input_error(where + "scheme '" + scheme + "://' is not a GStreamer source");
  }
  return spec;
}

std::string gst_source_pipeline(const SourceSpec& s, const GstFeatures& f) {
  const bool hw = f.jetson();
  const std::string where = "source '" + s.uri + "': ";
  switch (s.kind) {
    case GstSourceKind::kFile:
      // decodebin autoplugs the decoder; on a Jetson nvv4l2decoder's rank is raised (gst_source)
      // so that it wins for the codecs it handles, software decoders for the rest.
      return "filesrc location=" + gst_quote(s.location) + " ! decodebin ! " + source_tail(s, hw);
    case GstSourceKind::kV4l2: {
      std::string p = "v4l2src device=" + gst_quote(s.location);
      if (s.width || s.height || s.fps) {
        p += " ! " + raw_caps(s, "video/x-raw");
      } else {
        p += " ! decodebin";  // raw or MJPEG, whatever the camera offers first
      }
      return p + " ! " + source_tail(s, hw);
    }
    case GstSourceKind::kCsi:
      if (!f.has("nvarguscamerasrc") || !f.has("nvvidconv")) {
        throw input_error(where +
                          "csi:// needs JetPack's nvarguscamerasrc and nvvidconv, which "
                          "this machine does not have (a USB camera: v4l2:///dev/videoN)");
      }
      return "nvarguscamerasrc sensor-id=" + std::to_string(s.sensor) + " ! " +
             raw_caps(s, "video/x-raw(memory:NVMM)") + ",format=NV12 ! " + source_tail(s, true);
    case GstSourceKind::kRtsp:
      return "rtspsrc location=" + gst_quote(s.location) +
             " latency=" + std::to_string(s.latency_ms) +
             " ! application/x-rtp,media=video ! decodebin ! " + sink_tail(s, hw);
    case GstSourceKind::kRtp: {
      const bool h265 = s.codec == "h265";
      const std::string enc = h265 ? "H265" : "H264";
      const std::string n = h265 ? "h265" : "h264";
      std::string decoder;
      if (f.has("nvv4l2decoder")) {
        decoder = "nvv4l2decoder";
      } else if (f.has("avdec_" + n)) {
        decoder = "avdec_" + n;
      } else if (!h265 && f.has("openh264dec")) {
        decoder = "openh264dec";
      } else {
        throw input_error(where + "no " + enc + " decoder (install gstreamer1.0-libav)");
      }
      std::string p = "udpsrc";
      if (!s.host.empty()) p += " address=" + gst_quote(s.host);
      p += " port=" + std::to_string(s.port) +
           " caps=\"application/x-rtp,media=video,clock-rate=90000,encoding-name=" + enc +
           ",payload=96\" ! rtpjitterbuffer latency=" + std::to_string(s.latency_ms) + " ! rtp" +
           n + "depay ! " + n + "parse ! " + decoder + " ! " + source_tail(s, hw);
      return p;
    }
    case GstSourceKind::kTestSrc: {
      // Frames in system memory: the software converter, also on a Jetson.
      std::string p = "videotestsrc pattern=" + s.pattern;
      if (s.frames >= 0) p += " num-buffers=" + std::to_string(s.frames);
      p += std::string(" is-live=") + (s.live ? "true" : "false");
      return p + " ! " + raw_caps(s, "video/x-raw") + " ! " + sink_tail(s, false);
    }
    case GstSourceKind::kLaunch:
      return s.location;
  }
  return {};
}

// ---- Video outputs
// --------------------------------------------------------------------------------

VideoTarget parse_video_target(const std::string& text) {
  VideoTarget t;
  t.text = text;
  const std::string forms =
      "valid: FILE.mp4, FILE.mkv, file://FILE.mp4, display://, rtp://HOST:PORT, "
      "rtsp://[HOST]:PORT/PATH";
  const std::string where = "--output-video '" + text + "': ";
  if (text.empty()) throw config_error(where + "empty (" + forms + ")");
  const std::size_t sep = text.find("://");
  const std::string scheme = sep == std::string::npos ? "" : text.substr(0, sep);
  const std::string rest = sep == std::string::npos ? text : text.substr(sep + 3);
  if (scheme == "display") {
    t.kind = VideoTargetKind::kDisplay;
    return t;
  }
  if (scheme == "rtp") {
    t.kind = VideoTargetKind::kRtp;
    if (!split_host_port(rest, &t.host, &t.port) || t.host.empty()) {
      throw config_error(where +
                         "expected rtp://HOST:PORT (PORT 1..65535), e.g. "
                         "rtp://127.0.0.1:5004");
    }
    return t;
  }
  if (scheme == "rtsp") {
    t.kind = VideoTargetKind::kRtsp;
    const std::size_t slash = rest.find('/');
    const std::string hp = rest.substr(0, slash);
    if (!split_host_port(hp, &t.host, &t.port)) {
      throw config_error(where + "expected rtsp://[HOST]:PORT/PATH, e.g. rtsp://:8554/jetpipe");
    }
    if (slash != std::string::npos && slash + 1 < rest.size()) t.mount = rest.substr(slash);
    return t;
  }
  if (!scheme.empty() && scheme != "file") {
    throw config_error(where + "unknown scheme '" + scheme + "://' (" + forms + ")");
  }
  t.kind = VideoTargetKind::kFile;
  t.path = rest;
  const std::size_t dot = rest.rfind('.');
  const std::size_t slash = rest.rfind('/');
  std::string ext = dot == std::string::npos || (slash != std::string::npos && dot < slash)
                        ? ""
                        : rest.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  });
  if (ext == "mp4" || ext == "m4v" || ext == "mov") {
    t.container = "mp4";
  } else if (ext == "mkv") {
    t.container = "mkv";
  } else {
    throw config_error(where + "unsupported file type '" + (ext.empty() ? "" : "." + ext) +
                       "' (H.264 in .mp4 or .mkv; " + forms + ")");
  }
  return t;
}

std::string h264_encoder_chain(const GstFeatures& f, int fps, int bitrate_kbps, bool low_latency) {
  const int gop = std::max(1, low_latency ? fps : 2 * fps);
  if (f.has("nvv4l2h264enc") && f.has("nvvidconv")) {
    // VIC converts into NVMM NV12 for the hardware encoder (bitrate in bit/s).
    // The frame's own layout where nvvidconv takes it (a caps list: only what both sides offer is
    // negotiated), else videoconvert's nearest one.
    return "video/x-raw,format={NV12,BGRx,RGBA} ! nvvidconv ! "
           "video/x-raw(memory:NVMM),format=NV12 ! nvv4l2h264enc bitrate=" +
           std::to_string(bitrate_kbps * 1000) + " iframeinterval=" + std::to_string(gop) +
           " insert-sps-pps=true" + (low_latency ? " maxperf-enable=true" : "") + " ! h264parse";
  }
  if (f.has("x264enc")) {
    return std::string("video/x-raw,format=I420 ! x264enc ") +
           (low_latency ? "speed-preset=ultrafast tune=zerolatency" : "speed-preset=veryfast") +
           " bitrate=" + std::to_string(bitrate_kbps) + " key-int-max=" + std::to_string(gop) +
           " ! h264parse";
  }
  if (f.has("openh264enc")) {
    return "video/x-raw,format=I420 ! openh264enc bitrate=" + std::to_string(bitrate_kbps * 1000) +
           " gop-size=" + std::to_string(gop) + " ! h264parse";
  }
  return {};
}

std::string gst_sink_pipeline(const VideoTarget& t, const GstFeatures& f, int fps,
                              int bitrate_kbps) {
  const std::string where = "--output-video '" + t.text + "': ";
  auto need = [&](const char* element, const char* package) {
    if (!f.has(element)) {
      throw config_error(where + "needs the GStreamer element " + element + " (Debian package " +
                         package + ")");
    }
  };
  need("appsrc", "gstreamer1.0-plugins-base");
  need("videoconvert", "gstreamer1.0-plugins-base");
  if (t.kind == VideoTargetKind::kDisplay) {
    need("autovideosink", "gstreamer1.0-plugins-good");
    return "appsrc name=jp_src ! videoconvert ! autovideosink sync=false";
  }
  const std::string enc =
      h264_encoder_chain(f, fps, bitrate_kbps, t.kind != VideoTargetKind::kFile);
  if (enc.empty()) {
    throw config_error(where +
                       "no H.264 encoder (nvv4l2h264enc, x264enc or openh264enc; Debian: "
                       "gstreamer1.0-plugins-ugly for x264enc)");
  }
  need("h264parse", "gstreamer1.0-plugins-bad");
  const std::string head = "appsrc name=jp_src ! videoconvert ! " + enc;
  switch (t.kind) {
    case VideoTargetKind::kFile: {
      const char* mux = t.container == "mp4" ? "mp4mux" : "matroskamux";
      need(mux, "gstreamer1.0-plugins-good");
      need("filesink", "gstreamer1.0-plugins-base");
      return head + " ! " + mux + " ! filesink location=" + gst_quote(t.path);
    }
    case VideoTargetKind::kRtp:
      need("rtph264pay", "gstreamer1.0-plugins-good");
      need("udpsink", "gstreamer1.0-plugins-good");
      return head + " ! rtph264pay config-interval=-1 pt=96 ! udpsink host=" + gst_quote(t.host) +
             " port=" + std::to_string(t.port) + " sync=false async=false";
    case VideoTargetKind::kRtsp:
      need("rtph264pay", "gstreamer1.0-plugins-good");
      return "( " + head + " ! rtph264pay name=pay0 config-interval=-1 pt=96 )";
    case VideoTargetKind::kDisplay:
      break;
  }
  return {};
}

}  // namespace jetpipe
