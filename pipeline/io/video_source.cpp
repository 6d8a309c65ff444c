// SPDX-License-Identifier: MIT
// Video files through OpenCV's VideoCapture (file://clip.avi). Frames come out as BGR8; a read
// failure, at the end or mid-file, ends the stream. GStreamer pipelines will be a separate source.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "pipeline/io/io_internal.h"

#if JETPIPE_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

namespace jetpipe::io_detail {

#if JETPIPE_HAVE_OPENCV
namespace {

class VideoCaptureSource : public Source {
 public:
  VideoCaptureSource(const std::string& uri, const std::string& path)
      : path_(path), name_(file_name(path)) {
    try {
      regular_file_size(path);
    } catch (const Error& e) {
      throw input_error("video source '" + uri + "': " + path + ": " + e.what());
    }
    bool opened = false;
    try {
      opened = cap_.open(path, cv::CAP_ANY);
    } catch (const cv::Exception& e) {
      throw input_error("video source '" + uri + "': " + path + ": " + e.msg);
    }
    if (!opened || !cap_.isOpened()) {
      throw input_error("video source '" + uri + "': " + path +
                        ": OpenCV cannot open it as a video (unknown container or codec)");
    }
    width_ = static_cast<int>(cap_.get(cv::CAP_PROP_FRAME_WIDTH));
    height_ = static_cast<int>(cap_.get(cv::CAP_PROP_FRAME_HEIGHT));
    fps_ = cap_.get(cv::CAP_PROP_FPS);
    frames_ = static_cast<std::int64_t>(cap_.get(cv::CAP_PROP_FRAME_COUNT));
    backend_ = cap_.getBackendName();
  }

  bool next(Frame* frame) override {
    if (done_) return false;
    cv::Mat m;
    bool ok = false;
    try {
      ok = cap_.read(m);
    } catch (const cv::Exception&) {
      ok = false;
    }
    if (!ok || m.empty() || m.depth() != CV_8U) {
      done_ = true;
      cap_.release();
      return false;
    }
    const std::int64_t i = index_++;
    const double ms = cap_.get(cv::CAP_PROP_POS_MSEC);
    frame->index = i;
    frame->source = name_ + "#" + std::to_string(i) + " t=" + std::to_string(std::llround(ms));
    frame->pts_s = ms / 1000.0;
    frame->error.clear();
    // VideoCapture decodes into a Mat of its own: one copy (or the colour conversion) into the
    // allocator's image, through a Mat header honouring its pitch.
    HostImage img = new_image(m.cols, m.rows, PixelFormat::kBgr8);
    const ImageView v = img.view();
    cv::Mat dst(v.height, v.width, CV_8UC3, v.data, v.pitch);
    if (m.channels() == 3) {
      m.copyTo(dst);
    } else if (m.channels() == 1) {
      cv::cvtColor(m, dst, cv::COLOR_GRAY2BGR);
    } else {
      cv::cvtColor(m, dst, cv::COLOR_BGRA2BGR);
    }
    if (dst.data != v.data) dst.copyTo(cv::Mat(v.height, v.width, CV_8UC3, v.data, v.pitch));
    frame->image = std::move(img);
    return true;
  }

  // The container's frame count is an estimate for many formats: not reported as known.
  std::optional<std::int64_t> total() const override { return std::nullopt; }

  std::string describe() const override {
    char fps[32];
    std::snprintf(fps, sizeof fps, "%.3g", fps_);
    return "video: " + path_ + " (" + std::to_string(width_) + "x" + std::to_string(height_) +
           ", " + fps + " fps, ~" + std::to_string(frames_) + " frames, OpenCV " + backend_ +
           ") → bgr8";
  }

 private:
  std::string path_, name_;
  cv::VideoCapture cap_;
  int width_ = 0, height_ = 0;
  double fps_ = 0;
  std::int64_t frames_ = 0;
  std::string backend_;
  std::int64_t index_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<Source> open_video_source(const std::string& uri, const std::string& path) {
  return std::make_unique<VideoCaptureSource>(uri, path);
}

#else  // !JETPIPE_HAVE_OPENCV

std::unique_ptr<Source> open_video_source(const std::string& uri, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw input_error("video source '" + uri + "': " + path + ": no such file");
  }
  throw input_error("video source '" + uri +
                    "': built without OpenCV: only .y4m videos can be read (convert with "
                    "ffmpeg -i IN -pix_fmt gray OUT.y4m)");
}

#endif

}  // namespace jetpipe::io_detail
