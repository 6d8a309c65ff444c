// SPDX-License-Identifier: MIT
// Private to pipeline/io, GStreamer builds only: the device-memory side of one GStreamer source
// (gst_source.cpp calls it at three points: open, start, each sample). It chooses the memory the
// frames come in (device_memory.h), gives GStreamer's CUDA decoders the executor's CUDA context,
// and turns each sample into a frame: an NVMM surface through the SurfaceMapper (nvmm.h), GStreamer
// CUDA memory read in place, or, for system memory, back to the source's copying path. Frames keep
// their GstBuffer (and mapping) until their owner is released (source.h, DeviceFrame).
#pragma once

#if JETPIPE_HAVE_GSTREAMER

#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/nvmm.h"
#include "pipeline/io/source.h"

namespace jetpipe::gst_detail {

class DeviceMemoryPath {
 public:
  // Chooses spec->device.memory from the URI's keys, `options.device_frames`, the elements present
  // and what this build and process can map (the NVMM mapper's probe runs here, on a Jetson, when
  // NVMM could be used). `name` prefixes the notes printed on stderr.
  DeviceMemoryPath(SourceSpec* spec, const SourceOptions& options, const GstFeatures& features,
                   std::string name);
  ~DeviceMemoryPath();
  DeviceMemoryPath(const DeviceMemoryPath&) = delete;
  DeviceMemoryPath& operator=(const DeviceMemoryPath&) = delete;

  FrameMemory memory() const { return memory_; }

  // Before the pipeline starts (CUDA memory): the executor's CUDA context for the decoders.
  void prepare(GstElement* pipeline);

  enum class Take {
    kCopy,   // system memory (or CUDA memory to download): the source copies it as before
    kFrame,  // *frame has .device, or .error for this frame alone
    kStop,   // *why: no frame of this stream can be read (NVMM that cannot be mapped here)
  };
  // Streaming thread: what to do with `sample`, whose caps gave `info`.
  Take take(GstSample* sample, const GstVideoInfo& info, Frame* frame, std::string* why);

  // "frames in NVMM surfaces mapped into CUDA (...)", or why not, with the notes so far; "" for a
  // source that never had a choice (videotestsrc, rtsp, no device frames wanted).
  std::string describe() const;
  // Frames taken in device memory whose buffers are not yet released.
  std::int64_t held() const { return counters_->held.load(); }

 private:
  struct Counters {
    std::atomic<std::int64_t> held{0}, released{0};
  };
  void note(const std::string& text);  // once per text: stderr and describe()
  Take take_cuda(GstBuffer* buffer, const GstVideoInfo& info, Frame* frame);

  FrameMemory memory_ = FrameMemory::kSystem;
  std::string why_;  // the choice, for describe()
  std::string name_;
  bool device_frames_ = false;
  std::shared_ptr<SurfaceMapper> mapper_;  // NVMM: null when not built / not given
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
  mutable std::mutex m_;
  std::set<std::string> notes_;
  std::string note_text_;
  void* cuda_context_ = nullptr;  // GstCudaContext* wrapping the executor's context (kCuda)
};

}  // namespace jetpipe::gst_detail

#endif  // JETPIPE_HAVE_GSTREAMER
