// SPDX-License-Identifier: MIT
// Video outputs through GStreamer (appsrc → encoder → muxer/payloader → file, display, UDP, RTSP),
// and the 8-bit images they take. The --annotate drawing is in overlay.cpp.
#include "pipeline/io/video_sink.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "pipeline/io/convert.h"
#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/gst_source.h"

#if JETPIPE_HAVE_GSTREAMER
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

#include "pipeline/io/gst_runtime.h"
#if JETPIPE_HAVE_GST_RTSP_SERVER
#include <gst/rtsp-server/rtsp-server.h>
#endif
#endif

namespace jetpipe {

// ---- 8-bit images
// ------------------------------------------------------------------

namespace {

// Copies `src` into `dst` (same format), cropping or padding with black where sizes differ (NV12:
// luma 0, chroma 128).
[[maybe_unused]] void fit_copy(const ImageView& src, const ImageView& dst) {
  auto plane = [](const std::uint8_t* s, std::size_t s_pitch, int s_rows, std::size_t s_bytes,
                  std::uint8_t* d, std::size_t d_pitch, int d_rows, std::size_t d_bytes, int pad) {
    const std::size_t n = std::min(s_bytes, d_bytes);
    for (int y = 0; y < d_rows; ++y, d += d_pitch) {
      if (y < s_rows) {
        std::memcpy(d, s + static_cast<std::size_t>(y) * s_pitch, n);
        std::memset(d + n, pad, d_bytes - n);
      } else {
        std::memset(d, pad, d_bytes);
      }
    }
  };
  plane(src.data, src.pitch, src.height, src.row_bytes(), dst.data, dst.pitch, dst.height,
        dst.row_bytes(), 0);
  if (dst.format == PixelFormat::kNv12) {
    plane(src.uv, src.uv_pitch, chroma_rows(src.height), min_pitch(src.width, src.format), dst.uv,
          dst.uv_pitch, chroma_rows(dst.height), min_pitch(dst.width, dst.format), 128);
  }
}

}  // namespace

HostImage to_video_image(const ImageView& src) {
  if (is_8bit_frame(src.format)) {  // as it is: the sink gives GStreamer its own layout
    HostImage out(src.width, src.height, src.format);
    copy_image(src, out.view());
    return out;
  }
  switch (src.format) {
    case PixelFormat::kS16: {
      HostImage out(src.width, src.height, PixelFormat::kGray8);
      for (int y = 0; y < src.height; ++y) {
        const std::int16_t* s = src.row<std::int16_t>(y);
        std::uint8_t* d = out.view().row<std::uint8_t>(y);
        for (int x = 0; x < src.width; ++x) {
          d[x] = static_cast<std::uint8_t>(std::min(255, std::abs(static_cast<int>(s[x]))));
        }
      }
      return out;
    }
    case PixelFormat::kF32: {
      float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
      for (int y = 0; y < src.height; ++y) {
        const float* s = src.row<float>(y);
        for (int x = 0; x < src.width; ++x) {
          if (std::isfinite(s[x])) {
            lo = std::min(lo, s[x]);
            hi = std::max(hi, s[x]);
          }
        }
      }
      const double scale = hi > lo ? 255.0 / (static_cast<double>(hi) - lo) : 0.0;
      HostImage out(src.width, src.height, PixelFormat::kGray8);
      for (int y = 0; y < src.height; ++y) {
        const float* s = src.row<float>(y);
        std::uint8_t* d = out.view().row<std::uint8_t>(y);
        for (int x = 0; x < src.width; ++x) {
          const double v = std::isfinite(s[x]) ? (s[x] - lo) * scale : 0.0;
          d[x] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
        }
      }
      return out;
    }
    default:
      return {};
  }
}

// ---- The sink
// ---------------------------------------------------------------------------------------

#if JETPIPE_HAVE_GSTREAMER

struct VideoSink::Impl {
  VideoTarget target;
  VideoSinkOptions opt;
  std::string description;
  GstElement* pipeline = nullptr;
  GstElement* appsrc = nullptr;
  GstVideoInfo info;
  int width = 0, height = 0;
  PixelFormat format = PixelFormat::kBgr8;
  std::int64_t written = 0, skipped = 0;
  bool closed = false;

#if JETPIPE_HAVE_GST_RTSP_SERVER
  GMainContext* ctx = nullptr;
  GMainLoop* loop = nullptr;
  std::thread loop_thread;
  GstRTSPServer* server = nullptr;
  guint server_source = 0;
  std::mutex rtsp_m;                 // guards client_src, base
  GstElement* client_src = nullptr;  // the appsrc of the media now served
  std::int64_t base = 0;             // frame count when that media started (its PTS 0)
#endif

  std::string where() const { return "--output-video '" + target.text + "': "; }

  GstCaps* caps() const {
    return gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, gst_format_name(format),
                               "width", G_TYPE_INT, width, "height", G_TYPE_INT, height,
                               "framerate", GST_TYPE_FRACTION, opt.fps, 1, nullptr);
  }

  // The frames' layout from now on: its caps (the appsrc sends them ahead of the next buffer, the
  // pipeline's videoconvert follows) and buffer size.
  void set_format(PixelFormat f) {
    format = f;
    gst_video_info_set_format(&info, gst_video_format_from_string(gst_format_name(f)),
                              static_cast<guint>(width), static_cast<guint>(height));
  }

  void change_format(PixelFormat f) {
    set_format(f);
    GstCaps* c = caps();
#if JETPIPE_HAVE_GST_RTSP_SERVER
    if (target.kind == VideoTargetKind::kRtsp) {
      std::lock_guard<std::mutex> lk(rtsp_m);
      if (client_src) {
        gst_app_src_set_caps(GST_APP_SRC(client_src), c);
        g_object_set(client_src, "max-bytes", static_cast<guint64>(4 * info.size), nullptr);
      }
      gst_caps_unref(c);
      return;
    }
#endif
    gst_app_src_set_caps(GST_APP_SRC(appsrc), c);
    g_object_set(appsrc, "max-bytes", static_cast<guint64>(4 * info.size), nullptr);
    gst_caps_unref(c);
  }

  void configure_appsrc(GstElement* src, bool live) const {
    GstCaps* c = caps();
    g_object_set(src, "caps", c, "format", GST_FORMAT_TIME, "block", TRUE, "is-live",
                 live ? TRUE : FALSE, "max-bytes", static_cast<guint64>(4 * info.size), nullptr);
    gst_caps_unref(c);
  }

  // The first error on the pipeline's bus, waiting up to `wait` (0: a look only).
  std::string bus_error(GstClockTime wait, bool want_eos, bool* eos = nullptr) const {
    GstBus* bus = gst_element_get_bus(pipeline);
    const auto types =
        static_cast<GstMessageType>(GST_MESSAGE_ERROR | (want_eos ? GST_MESSAGE_EOS : 0));
    GstMessage* m = gst_bus_timed_pop_filtered(bus, wait, types);
    gst_object_unref(bus);
    if (!m) return {};
    std::string text;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS) {
      if (eos) *eos = true;
    } else {
      text = gst_detail::message_text(m);
    }
    gst_message_unref(m);
    return text;
  }

  void start(const ImageView& first) {
    width = first.width;
    height = first.height;
    set_format(first.format);
#if JETPIPE_HAVE_GST_RTSP_SERVER
    if (target.kind == VideoTargetKind::kRtsp) {
      start_rtsp();
      return;
    }
#endif  // without the server, the constructor refused rtsp:// already
    pipeline = gst_detail::parse_launch(description, where(), false);
    appsrc = gst_bin_get_by_name(GST_BIN(pipeline), "jp_src");
    configure_appsrc(appsrc, target.kind != VideoTargetKind::kFile);
    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      const std::string e = bus_error(0, false);
      throw Error(where() + "cannot start: GStreamer: " + (e.empty() ? "state change failed" : e));
    }
  }

  // Copies one frame into a new GstBuffer, a memcpy per row and plane honouring GStreamer's
  // strides and plane offsets, with its timestamps.
  GstBuffer* make_buffer(const ImageView& img, std::int64_t n) const {
    GstBuffer* buf = gst_buffer_new_allocate(nullptr, info.size, nullptr);
    GstVideoFrame vf;
    gst_video_frame_map(&vf, const_cast<GstVideoInfo*>(&info), buf, GST_MAP_WRITE);
    ImageView out{static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&vf, 0)), img.width,
                  img.height, static_cast<std::size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 0)),
                  img.format};
    if (img.format == PixelFormat::kNv12) {
      out.uv = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&vf, 1));
      out.uv_pitch = static_cast<std::size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 1));
    }
    copy_image(img, out);
    gst_video_frame_unmap(&vf);
    GST_BUFFER_PTS(buf) = gst_util_uint64_scale(static_cast<guint64>(n), GST_SECOND, opt.fps);
    GST_BUFFER_DURATION(buf) = gst_util_uint64_scale(1, GST_SECOND, opt.fps);
    return buf;
  }

  void push(const ImageView& img) {
#if JETPIPE_HAVE_GST_RTSP_SERVER
    if (target.kind == VideoTargetKind::kRtsp) {
      std::lock_guard<std::mutex> lk(rtsp_m);
      if (!client_src) {
        ++skipped;
        return;
      }
      if (gst_app_src_push_buffer(GST_APP_SRC(client_src), make_buffer(img, written - base)) !=
          GST_FLOW_OK) {
        gst_object_unref(client_src);  // the client went away; wait for the next one
        client_src = nullptr;
        ++skipped;
        return;
      }
      ++written;
      return;
    }
#endif
    const std::string before = bus_error(0, false);
    if (!before.empty()) throw Error(where() + "GStreamer: " + before);
    const GstFlowReturn ret =
        gst_app_src_push_buffer(GST_APP_SRC(appsrc), make_buffer(img, written));
    if (ret != GST_FLOW_OK) {
      const std::string e = bus_error(GST_SECOND, false);
      throw Error(where() + "GStreamer: " +
                  (e.empty() ? std::string("push failed: ") + gst_flow_get_name(ret) : e));
    }
    ++written;
  }

  void finish() {
    if (closed) return;
    closed = true;
#if JETPIPE_HAVE_GST_RTSP_SERVER
    if (target.kind == VideoTargetKind::kRtsp) {
      stop_rtsp();
      return;
    }
#endif
    if (!pipeline) return;
    std::string err;
    gst_app_src_end_of_stream(GST_APP_SRC(appsrc));
    bool eos = false;
    err = bus_error(10 * GST_SECOND, true, &eos);
    if (err.empty() && !eos) err = "the stream did not finish within 10 s";
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(appsrc);
    gst_object_unref(pipeline);
    appsrc = nullptr;
    pipeline = nullptr;
    if (!err.empty()) throw Error(where() + "GStreamer: " + err);
  }

#if JETPIPE_HAVE_GST_RTSP_SERVER
  static void on_media_configure(GstRTSPMediaFactory*, GstRTSPMedia* media, gpointer self) {
    auto* impl = static_cast<Impl*>(self);
    GstElement* element = gst_rtsp_media_get_element(media);
    GstElement* src = gst_bin_get_by_name_recurse_up(GST_BIN(element), "jp_src");
    gst_object_unref(element);
    if (!src) return;
    impl->configure_appsrc(src, true);
    std::lock_guard<std::mutex> lk(impl->rtsp_m);
    if (impl->client_src) gst_object_unref(impl->client_src);
    impl->client_src = src;
    impl->base = impl->written;
  }

  void start_rtsp() {
    ctx = g_main_context_new();
    loop = g_main_loop_new(ctx, FALSE);
    server = gst_rtsp_server_new();
    const std::string port = std::to_string(target.port);
    g_object_set(server, "service", port.c_str(), nullptr);
    if (!target.host.empty()) gst_rtsp_server_set_address(server, target.host.c_str());
    GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server);
    GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
    gst_rtsp_media_factory_set_launch(factory, description.c_str());
    gst_rtsp_media_factory_set_shared(factory, TRUE);
    g_signal_connect(factory, "media-configure", G_CALLBACK(&Impl::on_media_configure), this);
    gst_rtsp_mount_points_add_factory(mounts, target.mount.c_str(), factory);
    g_object_unref(mounts);
    server_source = gst_rtsp_server_attach(server, ctx);
    if (server_source == 0) {
      g_object_unref(server);
      server = nullptr;
      throw Error(where() + "cannot serve RTSP on port " + port + " (in use?)");
    }
    loop_thread = std::thread([l = loop] { g_main_loop_run(l); });
  }

  void stop_rtsp() {
    {
      std::lock_guard<std::mutex> lk(rtsp_m);
      if (client_src) {
        gst_app_src_end_of_stream(GST_APP_SRC(client_src));
        gst_object_unref(client_src);
        client_src = nullptr;
      }
    }
    if (loop) {
      g_main_loop_quit(loop);
      if (loop_thread.joinable()) loop_thread.join();
    }
    if (server_source) {
      if (GSource* s = g_main_context_find_source_by_id(ctx, server_source)) g_source_destroy(s);
    }
    if (server) g_object_unref(server);
    if (loop) g_main_loop_unref(loop);
    if (ctx) g_main_context_unref(ctx);
    server = nullptr;
    loop = nullptr;
    ctx = nullptr;
  }
#endif
};

VideoSink::VideoSink(const std::string& target, const VideoSinkOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->target = parse_video_target(target);
  impl_->opt = options;
  impl_->opt.fps = std::clamp(options.fps, 1, 1000);
  impl_->opt.bitrate_kbps = std::clamp(options.bitrate_kbps, 64, 200000);
  const std::string where = impl_->where();
  try {
    gst_detail::ensure_init();
  } catch (const Error& e) {
    throw config_error(where + e.what());
  }
#if !JETPIPE_HAVE_GST_RTSP_SERVER
  if (impl_->target.kind == VideoTargetKind::kRtsp) {
    throw config_error(where +
                       "this build has no RTSP server (Debian: libgstrtspserver-1.0-dev, "
                       "then rebuild); rtp://HOST:PORT streams without one");
  }
#endif
  impl_->description = gst_sink_pipeline(impl_->target, detect_gst_features(), impl_->opt.fps,
                                         impl_->opt.bitrate_kbps);
  if (impl_->target.kind == VideoTargetKind::kFile) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(impl_->target.path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !fs::is_directory(dir, ec)) {
      throw config_error(where + "no folder " + dir.string());
    }
  }
}

VideoSink::~VideoSink() {
  try {
    impl_->finish();
  } catch (const Error&) {
  }
}

void VideoSink::write(const ImageView& image) {
  if (impl_->closed) throw Error(impl_->where() + "written after close()");
  if (!is_8bit_frame(image.format)) {
    throw Error(impl_->where() + "frames must be an 8-bit layout, not " + to_string(image.format) +
                " (to_video_image makes one)");
  }
  if (impl_->width == 0) impl_->start(image);
  if (image.format != impl_->format) impl_->change_format(image.format);
  if (image.width == impl_->width && image.height == impl_->height) {
    impl_->push(image);
    return;
  }
  HostImage fitted(impl_->width, impl_->height, image.format);
  fit_copy(image, fitted.view());
  impl_->push(fitted.view());
}

void VideoSink::close() { impl_->finish(); }

std::int64_t VideoSink::frames() const { return impl_->written; }

std::string VideoSink::describe() const {
  std::string d = impl_->target.text + " (" + std::to_string(impl_->written) + " frames";
  if (impl_->skipped) d += ", " + std::to_string(impl_->skipped) + " skipped without a client";
  return d + ") [" + impl_->description + "]";
}

#else  // !JETPIPE_HAVE_GSTREAMER

struct VideoSink::Impl {};

VideoSink::VideoSink(const std::string& target, const VideoSinkOptions&) {
  parse_video_target(target);  // a malformed target is named first
  throw config_error("--output-video '" + target +
                     "': needs GStreamer, which this build does not have (install "
                     "libgstreamer1.0-dev and libgstreamer-plugins-base1.0-dev, e.g. with "
                     "tools/install-deps.sh, and rebuild)");
}
VideoSink::~VideoSink() = default;
void VideoSink::write(const ImageView&) {}
void VideoSink::close() {}
std::int64_t VideoSink::frames() const { return 0; }
std::string VideoSink::describe() const { return {}; }

#endif

}  // namespace jetpipe
