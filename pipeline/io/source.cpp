// SPDX-License-Identifier: MIT
// open_source: picks the source from the URI's scheme (or, for a plain path, from what is there).
// Video files go to GStreamer when built with it (else OpenCV's VideoCapture); cameras, network
// streams, videotestsrc patterns and launch descriptions only to GStreamer.
#include "pipeline/io/source.h"

#include <filesystem>
#include <string>

#include "core/error.h"
#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/gst_source.h"
#include "pipeline/io/io_internal.h"
#include "pipeline/io/reconnect.h"

namespace jetpipe {

namespace {

constexpr const char* kForms =
    "accepted: frames://DIR, frames://DIR/*.png, DIR, DIR/*.png, file://CLIP.y4m, "
    "file://CLIP.mp4|mkv|avi|... (GStreamer, else OpenCV), "
    "test://gradient|checker|noise|blobs[?w=W&h=H&frames=N&format=gray8|bgr8|rgb8|bgrx8|rgbx8|"
    "rgba8|nv12]; with GStreamer: "
    "v4l2:///dev/videoN, csi://N, rtsp://HOST/PATH, rtp://[HOST]:PORT, test://smpte|ball|... "
    "(videotestsrc), gst://LAUNCH ! appsink";

std::unique_ptr<Source> open_file_uri(const std::string& uri, const std::string& path,
                                      const SourceOptions& options) {
  if (path.empty()) throw input_error("source '" + uri + "': no file given (" + kForms + ")");
  std::string file = path;  // without ?nvmm= / ?cudamem=, which only GStreamer sources read
  DeviceMemorySpec keys;
  split_device_keys(uri, &file, &keys);
  if (io_detail::lower_extension(file) == "y4m") return io_detail::open_y4m_source(uri, file);
  if (have_gstreamer()) {
    SourceSpec spec = parse_gst_source_uri("file://" + path, options.colour);
    spec.uri = uri;
    return open_gst_source(spec, options);
  }
  return io_detail::open_video_source(uri, file);
}

// Cameras, network streams, videotestsrc, launch descriptions: GStreamer only.
std::unique_ptr<Source> open_gst_uri(const std::string& uri, const SourceOptions& options) {
  const SourceSpec spec = parse_gst_source_uri(uri, options.colour);  // names what is valid
  try {
    return open_gst_source(spec, options);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInput) throw;
    throw input_error(std::string(e.what()) + " (" + kForms + ")");
  }
}

}  // namespace

std::unique_ptr<Source> open_source(const std::string& uri) {
  return open_source(uri, SourceOptions());
}

namespace {

std::unique_ptr<Source> open_any(const std::string& uri, const SourceOptions& options) {
  if (uri.empty()) throw input_error(std::string("empty source (") + kForms + ")");
  const std::size_t sep = uri.find("://");
  if (sep != std::string::npos) {
    const std::string scheme = uri.substr(0, sep);
    const std::string rest = uri.substr(sep + 3);
    if (scheme == "frames") return io_detail::open_frames_source(uri, rest);
    if (scheme == "file") return open_file_uri(uri, rest, options);
    if (scheme == "test") {
      // The four built-in patterns stay ours; every other name is videotestsrc's.
      if (is_builtin_test_pattern(rest.substr(0, rest.find('?')))) {
        return io_detail::open_test_source(uri, rest, options.colour);
      }
      return open_gst_uri(uri, options);
    }
    if (is_gst_only_scheme(scheme)) return open_gst_uri(uri, options);
    throw input_error("source '" + uri + "': unknown scheme '" + scheme + "://' (" + kForms + ")");
  }
  // A plain path: a folder or a glob is a frame folder, a file is opened as file://.
  const std::string name = io_detail::file_name(uri);
  if (name.find_first_of("*?") != std::string::npos) return io_detail::open_frames_source(uri, uri);
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(uri, ec);
  if (st.type() == fs::file_type::directory) return io_detail::open_frames_source(uri, uri);
  if (st.type() == fs::file_type::not_found) {
    throw input_error("source '" + uri + "': no such file or directory (" + kForms + ")");
  }
  return open_file_uri(uri, uri, options);
}

}  // namespace

std::shared_ptr<void> DeviceFrame::release_with(std::function<void()> release) {
  if (!release) return nullptr;
  // A non-null dummy pointer: shared_ptr runs a deleter only for a non-null pointer.
  static char token;
  return std::shared_ptr<void>(&token, [f = std::move(release)](void*) { f(); });
}

HostImage Source::new_image(int width, int height, PixelFormat format) const {
  const std::uint64_t bytes =
      width > 0 && height > 0 ? image_bytes(width, height, format, min_pitch(width, format)) : 0;
  if (bytes > max_frame_bytes_) {
    throw input_error("a frame of " + std::to_string(width) + "x" + std::to_string(height) + " " +
                      to_string(format) + " (" + std::to_string(bytes >> 20) +
                      " MiB) is over the frame size limit of " +
                      std::to_string(max_frame_bytes_ >> 20) + " MiB (the config's max_frame_mb)");
  }
  return allocate_image(alloc_, width, height, format);
}

namespace {

std::string scheme_of(const std::string& uri) {
  const std::size_t sep = uri.find("://");
  return sep == std::string::npos ? std::string() : uri.substr(0, sep);
}

// Whether the URI names a live source before it is opened: a camera, a network stream, a
// videotestsrc with live=true (gst:// descriptions say so once running). Throws for a bad URI.
bool live_by_uri(const std::string& uri, const SourceOptions& options) {
  const std::string scheme = scheme_of(uri);
  if (scheme == "test") {
    const std::string rest = uri.substr(7);
    if (is_builtin_test_pattern(rest.substr(0, rest.find('?')))) return false;
  } else if (scheme == "gst" || !is_gst_only_scheme(scheme)) {
    return false;
  }
  return parse_gst_source_uri(uri, options.colour).live;
}

}  // namespace

std::unique_ptr<Source> open_source(const std::string& uri, const SourceOptions& options) {
  // The frame size limit and the allocator, set before a source's threads start (GStreamer
  // sources take the allocator from the options themselves).
  auto configured = [options](std::unique_ptr<Source> src) {
    src->set_max_frame_bytes(options.max_frame_bytes);
    if (options.allocator && !src->has_allocator()) src->set_allocator(options.allocator);
    return src;
  };
  if (options.reconnect.attempts <= 0 || !have_gstreamer()) {
    return configured(open_any(uri, options));
  }
  if (live_by_uri(uri, options)) {
    // What no retry mends (a missing element, no decoder) fails now; the rest is retried, this
    // first open too (a camera that comes up late).
    const SourceSpec spec = parse_gst_source_uri(uri, options.colour);
    gst_source_pipeline(spec, detect_gst_features());
    return reconnecting_source(
        uri, [=] { return configured(open_gst_source(spec, options)); }, options);
  }
  std::unique_ptr<Source> src = configured(open_any(uri, options));
  if (scheme_of(uri) != "gst" || !src->live()) return src;  // files never reopen
  const SourceSpec spec = parse_gst_source_uri(uri, options.colour);
  return reconnecting_source(
      uri, [=] { return configured(open_gst_source(spec, options)); }, options, std::move(src));
}

}  // namespace jetpipe
