// SPDX-License-Identifier: MIT
// The GStreamer source: a pipeline ending in an appsink; each sample is copied once into a frame in
// the streaming thread and queued (bounded: live sources drop the oldest, others wait). The bus is
// watched synchronously: an ERROR before the first frame fails the open, a later one ends the
// stream after the frames already queued.
#include "pipeline/io/gst_source.h"

#include "core/error.h"
#include "pipeline/io/io_internal.h"

#if JETPIPE_HAVE_GSTREAMER
#include <gst/app/gstappsink.h>
#include <gst/base/gstbasesrc.h>
#include <gst/video/video.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>

#include "pipeline/io/gst_device_memory.h"
#include "pipeline/io/gst_runtime.h"
#include "pipeline/io/reconnect.h"
#endif

namespace jetpipe {

#if JETPIPE_HAVE_GSTREAMER

namespace gst_detail {

void ensure_init() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    GError* err = nullptr;
    if (!gst_init_check(nullptr, nullptr, &err)) {
      failure = err ? err->message : "gst_init failed";
      if (err) g_error_free(err);
    }
  });
  if (!failure.empty()) throw Error("GStreamer cannot start: " + failure);
}

std::string message_text(GstMessage* message) {
  GError* err = nullptr;
  gchar* debug = nullptr;
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    gst_message_parse_error(message, &err, &debug);
  } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_WARNING) {
    gst_message_parse_warning(message, &err, &debug);
  } else {
    return GST_MESSAGE_TYPE_NAME(message);
  }
  std::string text = err ? err->message : "unknown error";
  std::string detail = debug ? debug : "";
  if (err) g_error_free(err);
  g_free(debug);
  // The debug text is "file.c(123): function (): /GstPipeline:...[:\nDETAIL]": keep DETAIL only.
  if (detail.find("(): ") != std::string::npos) {
    const std::size_t cut = detail.find(":\n");
    detail = cut == std::string::npos ? std::string() : detail.substr(cut + 2);
  }
  std::replace(detail.begin(), detail.end(), '\n', ' ');
  if (detail.size() > 300) detail = detail.substr(0, 300) + "...";
  const char* src = GST_MESSAGE_SRC(message) ? GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) : nullptr;
  if (src || !detail.empty()) {
    text +=
        " (" + std::string(src ? src : "") + (src && !detail.empty() ? ": " : "") + detail + ")";
  }
  return text;
}

GstElement* parse_launch(const std::string& description, const std::string& where, bool input) {
  ensure_init();
  GError* err = nullptr;
  GstElement* e = gst_parse_launch(description.c_str(), &err);
  if (err) {
    const std::string why = err->message;
    g_error_free(err);
    if (e) gst_object_unref(e);
    const std::string m =
        where + "cannot build the GStreamer pipeline: " + why + " [" + description + "]";
    throw input ? input_error(m) : config_error(m);
  }
  if (!e) throw Error(where + "cannot build the GStreamer pipeline [" + description + "]");
  if (!GST_IS_PIPELINE(e)) {
    GstElement* p = gst_pipeline_new(nullptr);
    gst_bin_add(GST_BIN(p), e);
    e = p;
  }
  return e;
}

}  // namespace gst_detail

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kHiddenGrace = std::chrono::milliseconds(1500);
// How often a wait for a frame looks at SourceOptions::stop (a signal handler can only set a flag).
constexpr auto kStopPoll = std::chrono::milliseconds(50);

// Every element a pipeline of gst_pipeline.cpp may name.
constexpr const char* kKnownElements[] = {
    "appsink",       "appsrc",          "videoconvert",     "videotestsrc",  "decodebin",
    "filesrc",       "filesink",        "v4l2src",          "rtspsrc",       "udpsrc",
    "udpsink",       "rtpjitterbuffer", "rtph264depay",     "rtph265depay",  "rtph264pay",
    "h264parse",     "h265parse",       "avdec_h264",       "avdec_h265",    "openh264dec",
    "x264enc",       "openh264enc",     "mp4mux",           "matroskamux",   "autovideosink",
    "nvv4l2decoder", "nvvidconv",       "nvarguscamerasrc", "nvv4l2h264enc", "identity"};

// On a Jetson, decodebin should pick nvv4l2decoder for the codecs it handles.
void prefer_hardware_decoder() {
  static std::once_flag once;
  std::call_once(once, [] {
    GstElementFactory* f = gst_element_factory_find("nvv4l2decoder");
    if (!f) return;
    if (gst_plugin_feature_get_rank(GST_PLUGIN_FEATURE(f)) < GST_RANK_PRIMARY + 10) {
      gst_plugin_feature_set_rank(GST_PLUGIN_FEATURE(f), GST_RANK_PRIMARY + 10);
    }
    gst_object_unref(f);
  });
}

// Copies a mapped video frame into a new image from `alloc` (the source's allocator, called here in
// the streaming thread) in the layout it arrived in (frame_format_for): a memcpy per row and plane,
// honouring GStreamer's strides and plane offsets. Empty (and *why) for a layout no frame keeps.
HostImage copy_frame(GstVideoFrame* vf, bool colour, const ImageAllocator& alloc,
                     std::string* why) {
  const GstVideoFormat fmt = GST_VIDEO_FRAME_FORMAT(vf);
  PixelFormat format;
  if (!frame_format_for(gst_video_format_to_string(fmt), colour, &format)) {
    *why = std::string("raw format ") + gst_video_format_to_string(fmt) +
           " is no frame layout (the appsink's caps must ask for " + gst_frame_caps(colour) + ")";
    return {};
  }
  ImageView in{static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(vf, 0)),
               GST_VIDEO_FRAME_WIDTH(vf), GST_VIDEO_FRAME_HEIGHT(vf),
               static_cast<std::size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(vf, 0)), format};
  if (format == PixelFormat::kNv12) {
    in.uv = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(vf, 1));
    in.uv_pitch = static_cast<std::size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(vf, 1));
  }
  HostImage img = allocate_image(alloc, in.width, in.height, format);
  copy_image(in, img.view());
  return img;
}

std::string source_name(const SourceSpec& s) {
  switch (s.kind) {
    case GstSourceKind::kFile:
      return io_detail::file_name(s.location);
    case GstSourceKind::kV4l2:
      return s.location;
    case GstSourceKind::kCsi:
      return "csi" + std::to_string(s.sensor);
    case GstSourceKind::kRtsp:
      return s.location;
    case GstSourceKind::kRtp:
      return "rtp:" + std::to_string(s.port);
    case GstSourceKind::kTestSrc:
      return "videotestsrc:" + s.pattern;
    case GstSourceKind::kLaunch:
      return "gst";
  }
  return "gst";
}

class GstSource final : public Source {
 public:
  GstSource(SourceSpec spec, const SourceOptions& opt)
      : spec_(std::move(spec)),
        opt_(opt),
        name_(source_name(spec_)),
        capacity_(static_cast<std::size_t>(std::clamp(opt.queue, 1, 64))) {
    const bool is_file = spec_.kind == GstSourceKind::kFile;
    where_ = std::string(is_file ? "video source '" : "source '") + spec_.uri +
             "': " + (is_file ? spec_.location + ": " : "");
    if (is_file) {
      try {
        io_detail::regular_file_size(spec_.location);
      } catch (const Error& e) {
        throw input_error(where_ + e.what());
      }
    }
    set_allocator(opt.allocator);  // before the streaming thread exists
    gst_detail::ensure_init();
    const GstFeatures features = detect_gst_features();
    if (features.has("nvv4l2decoder")) prefer_hardware_decoder();
    device_ = std::make_unique<gst_detail::DeviceMemoryPath>(&spec_, opt, features, name_);
    description_ = gst_source_pipeline(spec_, features);
    pipeline_ = gst_detail::parse_launch(description_, where_, true);
    device_->prepare(pipeline_);
    try {
      start();
    } catch (...) {
      teardown();
      throw;
    }
  }

  ~GstSource() override { teardown(); }

  bool next(Frame* frame) override {
    if (ended_) return false;
    std::unique_lock<std::mutex> lk(m_);
    // In slices, so that a stop request ends the wait within kStopPoll.
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(opt_.timeout_s));
    const auto ready = [&] { return !queue_.empty() || eos_ || !error_.empty(); };
    while (!cv_.wait_for(lk, kStopPoll, ready)) {
      if (stop_requested()) return false;
      if (Clock::now() >= deadline) {
        ended_ = true;
        const std::int64_t held = device_->held();  // device frames keep their buffers
        throw input_error(where_ + "no frame for " + seconds(opt_.timeout_s) + " (stalled after " +
                          std::to_string(delivered_) + " frames" +
                          (held > 0 ? ", " + std::to_string(held) + " of its buffers held by frames"
                                    : std::string()) +
                          ")");
      }
    }
    if (!queue_.empty()) {
      *frame = std::move(queue_.front());
      queue_.pop_front();
      ++delivered_;
      cv_.notify_all();
      return true;
    }
    ended_ = true;
    if (!error_.empty()) {
      throw input_error(where_ + "stopped after " + std::to_string(delivered_) +
                        " frames: GStreamer: " + error_);
    }
    return false;
  }

  std::optional<std::int64_t> total() const override {
    std::lock_guard<std::mutex> lk(m_);
    if (spec_.kind == GstSourceKind::kTestSrc && !live_ && spec_.frames > 0) return spec_.frames;
    return std::nullopt;
  }

  std::string describe() const override {
    std::lock_guard<std::mutex> lk(m_);
    std::string d = "gstreamer: " + spec_.uri;
    if (width_ > 0) {
      char fps[32] = "";
      if (fps_ > 0) std::snprintf(fps, sizeof fps, ", %.3g fps", fps_);
      d += " (negotiated " + caps_format_ + " " + std::to_string(width_) + "x" +
           std::to_string(height_) + fps + " → " + to_string(out_format_) + " frames)";
    }
    if (live_) d += ", live: queue " + std::to_string(capacity_) + ", drop oldest";
    const std::string memory = device_->describe();
    if (!memory.empty()) d += ", " + memory;
    if (!warning_.empty()) d += ", warning: " + warning_;
    return d + " [" + description_ + "]";
  }

  bool live() const override {
    std::lock_guard<std::mutex> lk(m_);
    return live_;
  }

  std::int64_t dropped() const override {
    std::lock_guard<std::mutex> lk(m_);
    return dropped_;
  }

  double frame_rate() const override {
    std::lock_guard<std::mutex> lk(m_);
    return fps_;
  }

  GstSourceStats stats() const {
    std::lock_guard<std::mutex> lk(m_);
    GstSourceStats s;
    s.captured = captured_;
    s.delivered = delivered_;
    s.dropped = dropped_;
    s.queue_capacity = capacity_;
    s.peak_queue = peak_;
    s.live = live_;
    s.pipeline = description_;
    s.warning = warning_;
    s.memory = to_string(device_->memory());
    s.memory_note = device_->describe();
    return s;
  }

 private:
  bool stop_requested() const {
    return opt_.stop != nullptr && opt_.stop->load(std::memory_order_relaxed) != 0;
  }

  static std::string seconds(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%g s", s);
    return b;
  }

  void start() {
    appsink_ = gst_bin_get_by_name(GST_BIN(pipeline_), "jp_sink");
    if (!appsink_) appsink_ = find_appsink();
    if (!appsink_) throw input_error(where_ + "the pipeline has no appsink [" + description_ + "]");
    if (spec_.kind == GstSourceKind::kLaunch) {
      GstCaps* caps = gst_app_sink_get_caps(GST_APP_SINK(appsink_));
      if (!caps) {
        GstCaps* want = gst_caps_from_string(gst_frame_caps(spec_.colour).c_str());
        gst_app_sink_set_caps(GST_APP_SINK(appsink_), want);
        gst_caps_unref(want);
      } else {
        gst_caps_unref(caps);
      }
    } else {
      g_object_set(appsink_, "sync", FALSE, nullptr);
    }
    // No last-sample reference: a device frame's buffer goes back when the frame does.
    g_object_set(appsink_, "emit-signals", FALSE, "max-buffers", 1u, "drop", FALSE,
                 "enable-last-sample", FALSE, nullptr);
    GstAppSinkCallbacks cb;
    std::memset(&cb, 0, sizeof cb);
    cb.new_sample = &GstSource::on_new_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(appsink_), &cb, this, nullptr);
    GstBus* bus = gst_element_get_bus(pipeline_);
    gst_bus_set_sync_handler(bus, &GstSource::on_bus, this, nullptr);
    gst_object_unref(bus);
    g_signal_connect(pipeline_, "deep-element-added", G_CALLBACK(&GstSource::on_deep_added), this);

    live_ = spec_.live;
    const GstStateChangeReturn ret = gst_element_set_state(pipeline_, GST_STATE_PLAYING);
    std::unique_lock<std::mutex> lk(m_);
    if (ret == GST_STATE_CHANGE_NO_PREROLL) live_ = true;
    if (ret == GST_STATE_CHANGE_FAILURE) {
      throw input_error(where_ + "cannot open: GStreamer: " +
                        (error_.empty() ? std::string("the pipeline does not start") : error_));
    }
    if (spec_.kind == GstSourceKind::kRtp) return;  // a listener: the sender may start later
    // Wait for the first frame (or the end, or an error): errors of opening surface here. An error
    // that a decodebin swallowed (see on_deep_added) counts once it has had kHiddenGrace to be
    // followed by a frame.
    const auto t0 = Clock::now();
    const auto timeout = std::chrono::duration<double>(opt_.timeout_s);
    for (;;) {
      if (cv_.wait_for(lk, kStopPoll, [&] { return !queue_.empty() || eos_ || !error_.empty(); })) {
        break;
      }
      if (stop_requested()) return;  // opened, without a frame: the caller stops before reading
      const auto now = Clock::now();
      if (!hidden_error_.empty() && now - hidden_at_ > kHiddenGrace) {
        error_ = hidden_error_;
        break;
      }
      if (now - t0 > timeout) {
        throw input_error(where_ + "cannot open: no frame within " + seconds(opt_.timeout_s));
      }
    }
    if (queue_.empty() && !error_.empty()) {
      throw input_error(where_ +
                        (spec_.kind == GstSourceKind::kFile
                             ? "cannot open it as a video: GStreamer: "
                             : "cannot open: GStreamer: ") +
                        error_);
    }
    if (!live_ && spec_.kind == GstSourceKind::kLaunch) {
      // Setting a description with a live element (videotestsrc is-live=true, v4l2src) PLAYING
      // at once need not return NO_PREROLL: its source elements say so.
      lk.unlock();
      const bool live = has_live_source();
      lk.lock();
      live_ = live_ || live;
    }
  }

  // Whether an element of the pipeline (in a bin too) is a live GstBaseSrc.
  bool has_live_source() const {
    GstIterator* it = gst_bin_iterate_recurse(GST_BIN(pipeline_));
    GValue item = G_VALUE_INIT;
    bool live = false;
    while (!live && gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
      auto* e = GST_ELEMENT(g_value_get_object(&item));
      live = GST_IS_BASE_SRC(e) && gst_base_src_is_live(GST_BASE_SRC(e));
      g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(it);
    return live;
  }

  GstElement* find_appsink() {
    GstIterator* it = gst_bin_iterate_sinks(GST_BIN(pipeline_));
    GValue item = G_VALUE_INIT;
    GstElement* found = nullptr;
    while (!found && gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
      auto* e = GST_ELEMENT(g_value_get_object(&item));
      if (GST_IS_APP_SINK(e)) found = GST_ELEMENT(gst_object_ref(e));
      g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(it);
    return found;
  }

  void teardown() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (pipeline_) {
      gst_element_set_state(pipeline_, GST_STATE_NULL);
      GstBus* bus = gst_element_get_bus(pipeline_);
      gst_bus_set_sync_handler(bus, nullptr, nullptr, nullptr);
      gst_object_unref(bus);
    }
    if (appsink_) gst_object_unref(appsink_);
    if (pipeline_) gst_object_unref(pipeline_);
    appsink_ = nullptr;
    pipeline_ = nullptr;
  }

  // decodebin hides the errors of an element it is still plugging in (between setting it to
  // PAUSED and accepting it), expecting the state change to fail; a demuxer that fails in its own
  // thread in that window (qtdemux on an MP4 cut before its index) leaves the pipeline waiting
  // forever. So every element inside a sub-bin posts through a spy bus that notes its errors
  // (hidden_error_) and forwards every message to the sub-bin as before.
  struct Spy {
    GstSource* self;
    GstBus* bus;  // the sub-bin's own child bus
  };

  static void on_deep_added(GstBin*, GstBin* sub_bin, GstElement* element, gpointer self) {
    auto* me = static_cast<GstSource*>(self);
    if (GST_ELEMENT(sub_bin) == me->pipeline_) return;
    GstBus* orig = gst_element_get_bus(element);
    if (!orig) return;
    GstBus* spy = gst_bus_new();
    gst_bus_set_sync_handler(spy, &GstSource::on_spy, new Spy{me, orig}, [](gpointer p) {
      auto* s = static_cast<Spy*>(p);
      gst_object_unref(s->bus);
      delete s;
    });
    gst_element_set_bus(element, spy);
    gst_object_unref(spy);
  }

  static GstBusSyncReply on_spy(GstBus*, GstMessage* msg, gpointer p) {
    auto* s = static_cast<Spy*>(p);
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
      const std::string text = gst_detail::message_text(msg);
      std::lock_guard<std::mutex> lk(s->self->m_);
      if (s->self->hidden_error_.empty()) {
        s->self->hidden_error_ = text;
        s->self->hidden_at_ = Clock::now();
      }
    }
    gst_bus_post(s->bus, msg);  // a sync handler that drops a message owns it: passed on
    return GST_BUS_DROP;
  }

  static GstFlowReturn on_new_sample(GstAppSink* sink, gpointer self) {
    return static_cast<GstSource*>(self)->take_sample(sink);
  }

  static GstBusSyncReply on_bus(GstBus*, GstMessage* msg, gpointer self) {
    static_cast<GstSource*>(self)->on_message(msg);
    gst_message_unref(msg);  // dropped: ours to unref (GstBusSyncHandler)
    return GST_BUS_DROP;
  }

  void on_message(GstMessage* msg) {
    switch (GST_MESSAGE_TYPE(msg)) {
      case GST_MESSAGE_ERROR: {
        const std::string text = gst_detail::message_text(msg);
        std::lock_guard<std::mutex> lk(m_);
        if (error_.empty()) error_ = text;
        break;
      }
      case GST_MESSAGE_EOS: {
        std::lock_guard<std::mutex> lk(m_);
        eos_ = true;
        break;
      }
      case GST_MESSAGE_WARNING: {
        const std::string text = gst_detail::message_text(msg);
        std::lock_guard<std::mutex> lk(m_);
        if (warning_.empty()) warning_ = text;
        return;
      }
      default:
        return;
    }
    cv_.notify_all();
  }

  // When a buffer was captured, on the steady clock: its PTS as running time (the sample's
  // segment) plus the pipeline's base time is the pipeline clock's reading at capture, so the
  // capture was (clock now − that) ago. Meaningful for live sources only (a file's PTS is a
  // position, not a time); empty without a clock or a timestamp.
  std::optional<Clock::time_point> capture_time(GstSample* sample, GstClockTime pts) const {
    const GstSegment* seg = gst_sample_get_segment(sample);
    if (!GST_CLOCK_TIME_IS_VALID(pts) || seg == nullptr || seg->format != GST_FORMAT_TIME) {
      return std::nullopt;
    }
    const guint64 running = gst_segment_to_running_time(seg, GST_FORMAT_TIME, pts);
    GstClock* clock = gst_element_get_clock(pipeline_);
    if (clock == nullptr || !GST_CLOCK_TIME_IS_VALID(running)) {
      if (clock != nullptr) gst_object_unref(clock);
      return std::nullopt;
    }
    const GstClockTime now = gst_clock_get_time(clock);
    const Clock::time_point steady_now = Clock::now();
    gst_object_unref(clock);
    const GstClockTime at = gst_element_get_base_time(pipeline_) + running;
    // A timestamp ahead of the clock (a source's latency compensation) counts as now.
    return steady_now - std::chrono::nanoseconds(now > at ? now - at : 0);
  }

  // Streaming thread: one copy into a frame, then the bounded queue.
  GstFlowReturn take_sample(GstAppSink* sink) {
    GstSample* sample = gst_app_sink_pull_sample(sink);
    if (!sample) return GST_FLOW_EOS;
    GstCaps* caps = gst_sample_get_caps(sample);
    GstBuffer* buf = gst_sample_get_buffer(sample);
    GstVideoInfo info;
    std::string why;
    HostImage img;
    Frame dev;  // a frame left in device memory, or its error (gst_device_memory.h)
    GstClockTime pts = GST_CLOCK_TIME_NONE;
    if (!caps || !buf || !gst_video_info_from_caps(&info, caps)) {
      why = "a sample without raw video caps reached the appsink";
    } else if (device_->take(sample, info, &dev, &why) !=
               gst_detail::DeviceMemoryPath::Take::kCopy) {
      pts = GST_BUFFER_PTS(buf);
    } else {
      GstVideoFrame vf;
      if (!gst_video_frame_map(&vf, &info, buf, GST_MAP_READ)) {
        why = "cannot map a video buffer";
      } else {
        try {
          img = copy_frame(
              &vf, spec_.colour,
              [this](int fw, int fh, PixelFormat f) { return new_image(fw, fh, f); }, &why);
        } catch (const std::exception& e) {  // nothing may unwind into GStreamer's C code
          img = HostImage();
          why = std::string("cannot allocate a frame: ") + e.what();
        }
        gst_video_frame_unmap(&vf);
      }
      pts = GST_BUFFER_PTS(buf);
    }
    const std::optional<Clock::time_point> captured = capture_time(sample, pts);
    gst_sample_unref(sample);

    std::unique_lock<std::mutex> lk(m_);
    if (img.empty() && !dev.device && dev.error.empty()) {
      if (error_.empty()) error_ = why;
      cv_.notify_all();
      return GST_FLOW_ERROR;
    }
    if (width_ == 0 && (!img.empty() || dev.device)) {
      width_ = GST_VIDEO_INFO_WIDTH(&info);
      height_ = GST_VIDEO_INFO_HEIGHT(&info);
      caps_format_ = gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info));
      out_format_ = dev.device ? dev.device->view.format : img.format();
      if (GST_VIDEO_INFO_FPS_D(&info) > 0) {
        fps_ = static_cast<double>(GST_VIDEO_INFO_FPS_N(&info)) / GST_VIDEO_INFO_FPS_D(&info);
      }
    }
    Frame f = std::move(dev);
    f.index = captured_++;
    f.source = name_ + "#" + std::to_string(f.index);
    if (GST_CLOCK_TIME_IS_VALID(pts)) {
      f.source += " t=" + std::to_string((pts + GST_MSECOND / 2) / GST_MSECOND);
      f.pts_s = static_cast<double>(pts) / GST_SECOND;
    }
    f.image = std::move(img);
    if (live_) {
      f.capture = captured;
      while (queue_.size() >= capacity_) {
        queue_.pop_front();
        ++dropped_;
      }
    } else {
      cv_.wait(lk, [&] { return queue_.size() < capacity_ || stopping_; });
      if (stopping_) return GST_FLOW_FLUSHING;
    }
    queue_.push_back(std::move(f));
    peak_ = std::max(peak_, queue_.size());
    cv_.notify_all();
    return GST_FLOW_OK;
  }

  SourceSpec spec_;
  SourceOptions opt_;
  std::string name_, where_, description_;
  std::size_t capacity_;
  GstElement* pipeline_ = nullptr;
  GstElement* appsink_ = nullptr;
  // Declared before queue_, so it outlives the queued frames, which may hold its buffers.
  std::unique_ptr<gst_detail::DeviceMemoryPath> device_;
  bool ended_ = false;  // next() returned false or threw: the stream is over

  mutable std::mutex m_;  // guards everything below
  bool live_ = false;
  std::condition_variable cv_;
  std::deque<Frame> queue_;
  bool eos_ = false, stopping_ = false;
  std::string error_, warning_;
  std::string hidden_error_;  // an error a sub-bin may have swallowed (on_deep_added)
  Clock::time_point hidden_at_;
  std::int64_t captured_ = 0, delivered_ = 0, dropped_ = 0;
  std::size_t peak_ = 0;
  int width_ = 0, height_ = 0;
  double fps_ = 0;
  std::string caps_format_;
  PixelFormat out_format_ = PixelFormat::kBgr8;
};

}  // namespace

bool have_gstreamer() { return true; }

GstFeatures detect_gst_features() {
  static std::once_flag once;
  static GstFeatures features;
  gst_detail::ensure_init();
  std::call_once(once, [] {
    for (const char* name : kKnownElements) {
      if (GstElementFactory* f = gst_element_factory_find(name)) {
        features.elements.insert(name);
        gst_object_unref(f);
      }
    }
  });
  return features;
}

std::unique_ptr<Source> open_gst_source(const SourceSpec& spec, const SourceOptions& options) {
  return std::make_unique<GstSource>(spec, options);
}

std::optional<GstSourceStats> gst_source_stats(const Source& source) {
  if (const auto* g = dynamic_cast<const GstSource*>(&source)) return g->stats();
  return reconnect_detail::inner_gst_stats(source);  // counted over its reconnects
}

#else  // !JETPIPE_HAVE_GSTREAMER

bool have_gstreamer() { return false; }

GstFeatures detect_gst_features() { return {}; }

std::unique_ptr<Source> open_gst_source(const SourceSpec& spec, const SourceOptions&) {
  throw input_error("source '" + spec.uri +
                    "': needs GStreamer, which this build does not have (install "
                    "libgstreamer1.0-dev and libgstreamer-plugins-base1.0-dev, e.g. with "
                    "tools/install-deps.sh, and rebuild)");
}

std::optional<GstSourceStats> gst_source_stats(const Source&) { return std::nullopt; }

#endif

}  // namespace jetpipe
