// SPDX-License-Identifier: MIT
// open_source: picks the source from the URI's scheme (or, for a plain path, from what is there).
#include "pipeline/io/source.h"

#include <filesystem>
#include <string>

#include "pipeline/core/error.h"
#include "pipeline/io/io_internal.h"

namespace jetpipe {

namespace {

constexpr const char* kForms =
    "accepted: frames://DIR, frames://DIR/*.png, DIR, DIR/*.png, file://CLIP.y4m, "
    "file://CLIP.avi|mp4|... (OpenCV), test://gradient|checker|noise|blobs"
    "[?w=W&h=H&frames=N&format=gray8|bgr8]";

std::unique_ptr<Source> open_file_uri(const std::string& uri, const std::string& path) {
  if (path.empty()) throw input_error("source '" + uri + "': no file given (" + kForms + ")");
  if (io_detail::lower_extension(path) == "y4m") return io_detail::open_y4m_source(uri, path);
  return io_detail::open_video_source(uri, path);
}

}  // namespace

std::unique_ptr<Source> open_source(const std::string& uri) {
  if (uri.empty()) throw input_error(std::string("empty source (") + kForms + ")");
  const std::size_t sep = uri.find("://");
  if (sep != std::string::npos) {
    const std::string scheme = uri.substr(0, sep);
    const std::string rest = uri.substr(sep + 3);
    if (scheme == "frames") return io_detail::open_frames_source(uri, rest);
    if (scheme == "file") return open_file_uri(uri, rest);
    if (scheme == "test") return io_detail::open_test_source(uri, rest);
    if (scheme == "v4l2" || scheme == "csi" || scheme == "rtsp" || scheme == "rtp" ||
        scheme == "gst") {
      throw input_error("source '" + uri + "': " + scheme +
                        ":// (cameras and network streams) needs the GStreamer sources, which this "
                        "version does not have yet (" + kForms + ")");
    }
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
  return open_file_uri(uri, uri);
}

}  // namespace jetpipe
