// SPDX-License-Identifier: MIT
// Frame sources, opened by URI:
//   frames://DIR            every frame file in DIR (natural sort order)
//   frames://DIR/*.png      a glob (the pattern's directory, '*' and '?' in the file name)
//   DIR or a glob           the same, without the scheme
//   file://clip.y4m         YUV4MPEG2 (built in; 4:2:0 / 4:2:2 / 4:4:4 / 4:1:1 / mono, 8-bit)
//   file://clip.mp4         any container and codec GStreamer decodes (decodebin); without
//                           GStreamer, OpenCV's VideoCapture (when built with OpenCV)
//   FILE                    a plain path to a file: the same as file://FILE
//   test://NAME[?w=W&h=H&frames=N&format=F]   synthetic moving patterns, deterministic, in any
//                           frame format F: gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8, nv12
// With GStreamer (gst_pipeline.h has every query key and the pipelines built):
//   v4l2:///dev/videoN      a V4L2 camera
//   csi://N                 a Jetson CSI camera (nvarguscamerasrc)
//   rtsp://HOST[:PORT]/PATH an RTSP stream
//   rtp://[HOST]:PORT       H.264 RTP received on PORT
//   test://NAME             NAME not one of the four built-in patterns: GStreamer's videotestsrc
//                           (test://smpte, test://ball, test://videotestsrc?pattern=snow&live=true)
//   gst://LAUNCH            any gst-launch description ending in an appsink
// The rule for test://: gradient, checker, noise and blobs are always the built-in patterns (also
// when videotestsrc has a pattern of that name: reach it as test://videotestsrc?pattern=gradient);
// every other name is videotestsrc's.
// Frame files: PGM / PPM (P2, P3, P5, P6; 8-bit) built in; PNG / JPEG / BMP / TIFF through OpenCV.
// Folders list files by extension (case-insensitive), skip hidden files, sort with natural_less;
// glob wildcards are case-sensitive. Frame.source is the file name.
// y4m frames are GRAY8, read from the luma plane (chroma skipped; the stages work on gray);
// Frame.source "clip.y4m#3". A truncated last frame comes with .error set, then the end.
// Video (VideoCapture) frames are BGR8, Frame.source "clip.avi#3 t=120" (ms); a read failure ends.
// test:// patterns: gradient (scrolling ramps), checker (moving checkerboard), noise (seeded by the
// frame index), blobs (four Gaussian spots, sigma min(w,h)/32, bouncing); defaults 640x480, 30
// frames, bgr8 (gray8 with SourceOptions::colour false, as for a pipeline that reads gray only;
// ?format= wins); Frame.source "test:blobs#3". Every format holds the same picture: the colour
// layouts the bgr8 frame's colours (byte 3 of the 4-byte ones 255), nv12 the gray8 frame as its
// luma plane and chroma derived from the colours.
// GStreamer sources: frames keep the layout the decoder or converter hands over, with no per-pixel
// work on our side (gst_pipeline.h has the caps): with SourceOptions::colour, BGRx (Jetson's
// nvvidconv, in hardware), BGRx / RGBx / RGBA / BGR / RGB / GRAY8 as they come, NV12 (also from
// software decoders' I420, whose chroma videoconvert interleaves); without, GRAY8 from the luma
// plane of I420 / NV12 without a colour conversion. Frame.source "clip.mp4#3 t=100" (t: the
// buffer's timestamp in ms). Each GstBuffer is copied once, a memcpy per row and plane honouring
// its strides, into the frame, in GStreamer's streaming thread (so decoder and camera buffers go
// back at once). gst:// descriptions end in `videoconvert ! appsink` unless they produce one of
// those layouts themselves. Zero-copy
// comes with the executor's frame pool: the pool's (pinned / mapped) buffers offered to GStreamer
// through an allocation proposal, so the converter writes straight into them.
// With SourceOptions::device_frames, frames in NVMM surfaces (Jetson) or a decoder's CUDA memory
// are not copied at all: Frame::device holds them, with their buffer, until released
// (device_memory.h says which sources, and what keeps them on the copying path).
// Live sources (cameras, network, videotestsrc live=true) keep a bounded queue
// (SourceOptions::queue frames) and drop the oldest frame when the consumer falls behind; dropped()
// counts them and Frame.index keeps counting captured frames (gaps show drops). Other sources never
// drop: GStreamer waits for the consumer. At the end of the stream every frame decoded is returned.
// An error while opening (missing file, no decoder, absent camera) throws jetpipe::Error kInput;
// one later (corrupt data, camera unplugged) ends the stream: next() returns the frames already
// decoded, then throws jetpipe::Error kInput saying what happened.
// Except for live sources with SourceOptions::reconnect.attempts > 0 (the default; reconnect.h):
// cameras, rtsp://, rtp://, test://...live=true and gst:// descriptions that turn out live come
// wrapped in a source that, on a stall or an error, closes the stream and opens it again with
// backoff; it throws only once it gives up. Files, frame folders and built-in patterns never do.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/image.h"

// cudaStream_t and cudaEvent_t are pointers to these: DeviceFrame names them without the CUDA
// headers.
struct CUstream_st;
struct CUevent_st;

namespace jetpipe {

class SurfaceMapper;  // pipeline/io/nvmm.h

// A frame that is already in device memory: a Jetson NVMM surface mapped into CUDA, a GPU decoder's
// buffer, a caller's device array. The CUDA executor reads it in place (no copy, no staging, for
// every memory strategy); the other executor copies it to the host first (CUDA builds).
//
//   DeviceFrame d;
//   d.view = {dev_ptr, 1920, 1080, pitch, PixelFormat::kBgr8};   // NV12: also .uv, .uv_pitch
//   d.ready_stream = my_stream;                     // the frame is written by work on my_stream
//   d.owner = DeviceFrame::release_with([=] { give_back(dev_ptr); });
//   Frame f;  f.device = std::make_shared<DeviceFrame>(std::move(d));
//   executor.submit(std::move(f));                  // or Pipeline::process(d)
//
// Device memory here: cudaMalloc'd, cudaMallocManaged, mapped host memory (the device pointer) or
// an EGL / NVMM mapping; pageable host memory is refused with a frame error. The pixels must not
// change until the owner is released.
struct DeviceFrame {
  ImageView view;                       // device pointers: planes, pitches, format
  CUevent_st* ready_event = nullptr;    // ready once this event has completed (wins over stream)
  CUstream_st* ready_stream = nullptr;  // else: once the work queued on this stream so far is done
                                        // (both null: ready now)
  // Released (the last reference dropped, its deleter run) once the frame's GPU work has
  // completed, or once the frame fails; never from a CUDA callback. May be null.
  std::shared_ptr<void> owner;

  // An owner that calls `release` once, when dropped.
  static std::shared_ptr<void> release_with(std::function<void()> release);
};

struct Frame {
  std::int64_t index = 0;  // 0-based position in the input
  std::string source;      // the frame file's name, or a timestamp / position for video and tests
  std::string input;       // the name of the input it came from (several inputs); may be empty
  // Where the frame sits in its stream, in seconds, when the source knows it: a video's buffer
  // timestamp (GStreamer PTS, OpenCV's position), a y4m frame's index / its frame rate.
  std::optional<double> pts_s;
  // When it was captured, on the steady clock, for live sources that know it (a GStreamer live
  // source: the buffer's PTS + the pipeline's base time on the pipeline's clock): the start of
  // the capture → record latency.
  std::optional<std::chrono::steady_clock::time_point> capture;
  HostImage image;         // empty when error is set or the frame is in device memory
  std::shared_ptr<const DeviceFrame> device;  // set: the frame is in device memory (image empty)
  std::string error;       // why this frame could not be read (the run goes on)

  // The frame's pixels, wherever they are (device->view or image.view()).
  ImageView view() const { return device ? device->view : image.view(); }
};

class Source {
 public:
  virtual ~Source() = default;
  // Reads the next frame into *frame. Returns false at the end of the input, or when a stop is
  // requested (SourceOptions::stop) while it waits for a frame. A frame that cannot be
  // decoded is returned with frame->error set (never skipped); a source that cannot go on at all
  // throws jetpipe::Error.
  virtual bool next(Frame* frame) = 0;
  // Frames in the input when known beforehand (frame folders, y4m files), else nullopt.
  virtual std::optional<std::int64_t> total() const { return std::nullopt; }
  // One line saying what this source is ("frames: tests/regression/frames (3 files)").
  virtual std::string describe() const = 0;
  // Whether the source produces frames in real time (camera, network): may drop when behind.
  virtual bool live() const { return false; }
  // Frames dropped so far because the consumer fell behind (live sources only).
  virtual std::int64_t dropped() const { return 0; }
  // Frames a second that the stream declares (a GStreamer source's negotiated caps), 0 when
  // unknown or variable. A reconnecting source estimates the frames it lost while away with it.
  virtual double frame_rate() const { return 0; }
  // Frames produced from now on are allocated by `alloc` (the executor's frame pool), so decoders
  // write straight into memory the GPU reads. Empty: ordinary host memory.
  // Not thread-safe against a running source: open_source passes SourceOptions::allocator before a
  // source's threads start.
  void set_allocator(ImageAllocator alloc) { alloc_ = std::move(alloc); }
  bool has_allocator() const { return static_cast<bool>(alloc_); }
  // Frames larger than this many bytes are refused before anything is allocated for them
  // (SourceOptions::max_frame_bytes). Set before the source's threads start, as the allocator.
  void set_max_frame_bytes(std::uint64_t bytes) { max_frame_bytes_ = bytes; }

 protected:
  // A frame buffer of this shape from the allocator (sources call this, never HostImage(w, h, f));
  // throws an input error for a frame over the size limit.
  HostImage new_image(int width, int height, PixelFormat format) const;

 private:
  ImageAllocator alloc_;
  std::uint64_t max_frame_bytes_ = kDefaultMaxFrameBytes;

 public:
  // 1 GiB: a 16384 x 16384 BGR frame fits (768 MiB), a lying or hostile header's 10 GB does not.
  static constexpr std::uint64_t kDefaultMaxFrameBytes = std::uint64_t{1} << 30;
};

// What a live source (camera, network stream, live=true; never a file) does when it stalls
// (SourceOptions::timeout_s without a frame) or fails: reopen, waiting delay_s before the first
// try, doubling the wait after each failed one up to max_delay_s; after `attempts` failed tries in
// a row it gives up (its error ends it). attempts 0: never reopen (the error ends it at once).
struct ReconnectPolicy {
  int attempts = 10;
  double delay_s = 0.5;
  double max_delay_s = 8.0;
};

// How GStreamer sources deliver frames (the other sources ignore it but for stop, max_frame_bytes
// and reconnect).
struct SourceOptions {
  // Whether a stage reads the frame's colour (source_options_for: a stage reading the frame accepts
  // colour, as to_gray does). true: frames in the decoder's own layout (BGRx, RGBx, RGBA, BGR, RGB,
  // NV12 or GRAY8, whichever arrives); false: GRAY8, the luma plane alone. A URI's ?format= wins.
  bool colour = true;
  int queue = 4;          // live sources: frames held before the oldest is dropped (1..64)
  double timeout_s = 10;  // open: no first frame (or error) within this → error; later: a
                          // stall this long → error (rtp:// listens: no first-frame wait)
  ImageAllocator allocator;  // where frames go (the executor's frame pool); empty: host memory
  // A stop request (RunOptions::stop, set by a signal handler or another thread; nullptr: never).
  // A source waiting for a frame (a live stream between frames, any GStreamer source before its
  // first one) looks at it every 50 ms: once it is non-zero, next() returns false instead of
  // waiting on to the next frame or the stall limit, and opening returns without a frame.
  const std::atomic<int>* stop = nullptr;
  // Every source: a frame of more bytes is refused (an input error naming its size) before any
  // memory is allocated for it; the config's max_frame_mb.
  std::uint64_t max_frame_bytes = Source::kDefaultMaxFrameBytes;
  // The consumer reads device frames in place (a CUDA executor: run_pipeline and Pipeline::open
  // set it from the profile). Then GStreamer sources may hand frames still in device memory: a
  // Jetson's NVMM surfaces mapped into CUDA, a GPU decoder's CUDA memory (device_memory.h; the
  // URI keys nvmm=0 / cudamem=0 keep a source on the copying path). Off: host frames only.
  bool device_frames = false;
  // Maps NVMM surfaces into CUDA; empty: this build's mapper, if any (nvmm.h). Tests pass a fake.
  std::shared_ptr<SurfaceMapper> surface_mapper;
  ReconnectPolicy reconnect;  // live sources only; files never reopen
};

// Opens a source; throws jetpipe::Error (kind kInput) naming the URI when it cannot be opened.
std::unique_ptr<Source> open_source(const std::string& uri);
std::unique_ptr<Source> open_source(const std::string& uri, const SourceOptions& options);

}  // namespace jetpipe
