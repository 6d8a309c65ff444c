// SPDX-License-Identifier: MIT
// Video outputs (GStreamer): one image per frame, in input order, encoded to H.264 in an .mp4 or
// .mkv file, shown on the display, or streamed over RTP/UDP or served over RTSP. Targets and the
// pipelines built for them: gst_pipeline.h (parse_video_target, gst_sink_pipeline); the encoder is
// nvv4l2h264enc on a Jetson, else x264enc, else openh264enc.
//
//   VideoSink sink("out.mp4");                   // checks the target now (kConfig errors)
//   for (...) sink.write(to_video_image(img));   // any 8-bit layout; the first frame fixes the
//   size sink.close();                                // the file is complete when this returns
//
// Annotation (crosses at detections, an overlay of the results): overlay.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/image.h"

namespace jetpipe {

struct VideoSinkOptions {
  int fps = 30;             // frame rate written into the stream's timestamps
  int bitrate_kbps = 4000;  // H.264 target bitrate
};

class VideoSink {
 public:
  // Parses and checks the target (form, file type, the file's folder, GStreamer elements present):
  // throws jetpipe::Error kConfig naming what is valid. Nothing is written before the first frame.
  explicit VideoSink(const std::string& target, const VideoSinkOptions& options = {});
  ~VideoSink();  // close(), errors ignored
  VideoSink(const VideoSink&) = delete;
  VideoSink& operator=(const VideoSink&) = delete;

  // Adds one frame in any 8-bit frame layout (gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8, nv12;
  // to_video_image() makes one of any image), handed to GStreamer as it is with caps of its own
  // layout: the pipeline's videoconvert (or a Jetson's nvvidconv) converts for the encoder. The
  // first frame fixes the size; later frames of another size are cropped or padded (black), of
  // another layout change the caps. Throws jetpipe::Error (kRuntime) with GStreamer's message on a
  // failure.
  // RTSP: frames written while no client is connected are skipped.
  void write(const ImageView& image);
  // Ends the stream and waits (at most 10 s) until the file is finished. Throws on a failure.
  void close();

  std::int64_t frames() const;   // frames written
  std::string describe() const;  // the target and the GStreamer pipeline

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// An 8-bit copy of any image for video: the frame layouts as they are (gray8, bgr8, rgb8, bgrx8,
// rgbx8, rgba8, nv12), S16 as |v| saturated to 255, F32 scaled from its [min, max] to [0, 255]
// (GRAY8).
HostImage to_video_image(const ImageView& image);

}  // namespace jetpipe
