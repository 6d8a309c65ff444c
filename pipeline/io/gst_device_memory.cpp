// SPDX-License-Identifier: MIT
// See gst_device_memory.h. GStreamer's CUDA memory (JETPIPE_HAVE_GST_CUDA: gst-plugins-bad >= 1.22)
// follows the library's documentation and source: caps feature memory:CUDAMemory
// (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY), gst_is_cuda_memory, a map with GST_MAP_CUDA giving the
// device pointer without a copy, the GstContext "gst.cuda.context" (gst_context_new_cuda_context)
// by which elements share a CUDA context, and from 1.24 gst_cuda_memory_sync for work a producer
// left queued on its own stream.
// https://gstreamer.freedesktop.org/documentation/cuda/index.html
#include "pipeline/io/gst_device_memory.h"

#include "pipeline/io/device_memory.h"
#include "pipeline/io/nvmm.h"

#if JETPIPE_HAVE_GSTREAMER

#include <cstdio>
#include <utility>
#include <vector>

#if JETPIPE_HAVE_GST_CUDA
#define GST_USE_UNSTABLE_API 1  // the CUDA library's headers say it may change
#include <cuda_runtime_api.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "pipeline/io/gst_runtime.h"

namespace jetpipe::gst_detail {

namespace {

constexpr const char* kNvmmFeature = "memory:NVMM";
constexpr const char* kCudaFeature = "memory:CUDAMemory";  // GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY
// GStreamer's NVDEC decoders (gst-plugins-bad's nvcodec): registered only where a GPU is.
constexpr const char* kCudaDecoders[] = {"nvh264dec", "nvh265dec", "nvvp8dec", "nvvp9dec",
                                         "nvav1dec"};

std::vector<std::string> cuda_decoders_present() {
  std::vector<std::string> out;
  for (const char* name : kCudaDecoders) {
    if (GstElementFactory* f = gst_element_factory_find(name)) {
      out.emplace_back(name);
      gst_object_unref(f);
    }
  }
  return out;
}

// decodebin should pick the CUDA decoders for the codecs they handle (as nvv4l2decoder on a
// Jetson).
void prefer_cuda_decoders() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* name : kCudaDecoders) {
      GstElementFactory* f = gst_element_factory_find(name);
      if (!f) continue;
      if (gst_plugin_feature_get_rank(GST_PLUGIN_FEATURE(f)) < GST_RANK_PRIMARY + 10) {
        gst_plugin_feature_set_rank(GST_PLUGIN_FEATURE(f), GST_RANK_PRIMARY + 10);
      }
      gst_object_unref(f);
    }
  });
}

// An NVMM buffer mapped for reading: its data is the NvBufSurface (the surface's description).
struct HeldBuffer {
  GstBuffer* buffer;
  GstMapInfo map;
};

#if JETPIPE_HAVE_GST_CUDA
// A GstCudaContext wrapping the CUDA context the executor's runtime uses on its device (the primary
// context), so that decoders allocate where the executor reads. "" or why not.
std::string wrap_cuda_context(void** out) {
  if (!gst_cuda_load_library()) return "GStreamer cannot load libcuda";
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaFree(nullptr);  // the runtime makes its context current here
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device (") + cudaGetErrorString(e) + ")";
  }
  CUcontext ctx = nullptr;
  if (CuCtxPopCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr) return "no current CUDA context";
  CuCtxPushCurrent(ctx);
  CUdevice dev = 0;
  if (CuDeviceGet(&dev, device) != CUDA_SUCCESS) return "cuDeviceGet failed";
  GstCudaContext* c = gst_cuda_context_new_wrapped(ctx, dev);
  if (c == nullptr) return "gst_cuda_context_new_wrapped failed";
  *out = c;
  return "";
}
#endif

}  // namespace

DeviceMemoryPath::DeviceMemoryPath(SourceSpec* spec, const SourceOptions& options,
                                   const GstFeatures& features, std::string name)
    : name_(std::move(name)), device_frames_(options.device_frames) {
  if (device_frames_)
    mapper_ = options.surface_mapper ? options.surface_mapper : make_nvmm_mapper();
  const GstSourceKind k = spec->kind;
  DeviceMemoryInputs in;
  in.device_frames = device_frames_;
  in.nvmm_source = k == GstSourceKind::kFile || k == GstSourceKind::kV4l2 ||
                   k == GstSourceKind::kCsi || k == GstSourceKind::kRtp;
  in.cuda_source = k == GstSourceKind::kFile;
  in.nvvidconv = features.has("nvvidconv");
  in.cuda_decoder = in.cuda_source && !cuda_decoders_present().empty();
  in.format = spec->format;
  // The probes touch the GPU: asked only where the answer decides something.
  if (in.nvvidconv && in.nvmm_source && spec->device.nvmm && device_frames_) {
    in.nvmm_unavailable = mapper_ ? mapper_->probe()
                                  : "this build has no NVMM support (JETPIPE_NVMM found no Jetson "
                                    "Multimedia API)";
  }
  if (!in.nvvidconv && in.cuda_decoder && spec->device.cudamem && device_frames_) {
#if JETPIPE_HAVE_GST_CUDA
    in.cuda_unavailable = wrap_cuda_context(&cuda_context_);
#else
    in.cuda_unavailable =
        "this build has no GStreamer CUDA library (GStreamer >= 1.22's "
        "libgstcuda; Debian: libgstreamer-plugins-bad1.0-dev)";
#endif
  }
  const MemoryChoice c = choose_frame_memory(spec->device, in);
  memory_ = spec->device.memory = c.memory;
  why_ = c.why;
  if (c.note) note(c.why);
  if (memory_ == FrameMemory::kCuda) prefer_cuda_decoders();
}

DeviceMemoryPath::~DeviceMemoryPath() {
  if (cuda_context_ != nullptr) gst_object_unref(cuda_context_);
}

void DeviceMemoryPath::prepare(GstElement* pipeline) {
#if JETPIPE_HAVE_GST_CUDA
  // A bin keeps the context and hands it to the elements decodebin adds later.
  if (memory_ == FrameMemory::kCuda && cuda_context_ != nullptr) {
    GstContext* c = gst_context_new_cuda_context(static_cast<GstCudaContext*>(cuda_context_));
    gst_element_set_context(pipeline, c);
    gst_context_unref(c);
  }
#else
  (void)pipeline;
#endif
}

void DeviceMemoryPath::note(const std::string& text) {
  {
    std::lock_guard<std::mutex> lk(m_);
    if (!notes_.insert(text).second) return;
    note_text_ += (note_text_.empty() ? "" : "; ") + text;
  }
  std::fprintf(stderr, "jetpipe: note: %s: %s\n", name_.c_str(), text.c_str());
}

std::string DeviceMemoryPath::describe() const {
  std::lock_guard<std::mutex> lk(m_);
  if (memory_ == FrameMemory::kSystem && why_ == "system memory" && note_text_.empty()) return "";
  std::string d = "frames in " + why_;
  if (memory_ == FrameMemory::kNvmm && mapper_) d += " (" + mapper_->name() + ")";
  if (!note_text_.empty()) d += "; note: " + note_text_;
  return d;
}

DeviceMemoryPath::Take DeviceMemoryPath::take(GstSample* sample, const GstVideoInfo& info,
                                              Frame* frame, std::string* why) {
  GstCaps* caps = gst_sample_get_caps(sample);
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  GstCapsFeatures* features =
      caps != nullptr && gst_caps_get_size(caps) > 0 ? gst_caps_get_features(caps, 0) : nullptr;
  if (features != nullptr && gst_caps_features_contains(features, kNvmmFeature)) {
    // Mapped for reading, an NVMM buffer gives its surface's description, not pixels: never copy.
    if (!device_frames_ || !mapper_) {
      *why = std::string("NVMM frames reached the appsink, but ") +
             (!device_frames_ ? "this run reads host frames (platform cpu)"
                              : "this build cannot map NVMM surfaces (no Jetson Multimedia API)") +
             ": convert them before the appsink (nvvidconv ! video/x-raw,format=BGRx)";
      return Take::kStop;
    }
    auto* held = new HeldBuffer{gst_buffer_ref(buffer), GstMapInfo{}};
    if (!gst_buffer_map(buffer, &held->map, GST_MAP_READ)) {
      gst_buffer_unref(held->buffer);
      delete held;
      frame->error = "NVMM surface not read: the buffer cannot be mapped";
      return Take::kFrame;
    }
    ++counters_->held;
    std::shared_ptr<void> keep(held, [c = counters_](HeldBuffer* h) {
      gst_buffer_unmap(h->buffer, &h->map);
      gst_buffer_unref(h->buffer);
      delete h;
      --c->held;
      ++c->released;
    });
    surface_frame(*mapper_, held->map.data, held->map.size, GST_VIDEO_INFO_WIDTH(&info),
                  GST_VIDEO_INFO_HEIGHT(&info), std::move(keep), frame);
    return Take::kFrame;
  }
  if (features != nullptr && gst_caps_features_contains(features, kCudaFeature)) {
    if (device_frames_) {
      const Take t = take_cuda(buffer, info, frame);
      if (t != Take::kCopy) return t;
    }
    return Take::kCopy;  // mapped for reading, GStreamer downloads CUDA memory into system memory
  }
  if (memory_ != FrameMemory::kSystem) {
    note(std::string("the decoder hands frames in system memory, not ") +
         (memory_ == FrameMemory::kNvmm ? "NVMM" : "CUDA memory") + ": they take the copying path");
  }
  return Take::kCopy;
}

DeviceMemoryPath::Take DeviceMemoryPath::take_cuda(GstBuffer* buffer, const GstVideoInfo& info,
                                                   Frame* frame) {
#if JETPIPE_HAVE_GST_CUDA
  GstMemory* mem = gst_buffer_n_memory(buffer) > 0 ? gst_buffer_peek_memory(buffer, 0) : nullptr;
  if (mem == nullptr || !gst_is_cuda_memory(mem)) {
    note("CUDAMemory caps on a buffer that is not CUDA memory: frames are copied");
    return Take::kCopy;
  }
  auto* cmem = GST_CUDA_MEMORY_CAST(mem);
  auto* ours = static_cast<GstCudaContext*>(cuda_context_);
  if (ours == nullptr ||
      gst_cuda_context_get_handle(cmem->context) != gst_cuda_context_get_handle(ours)) {
    note(
        "the decoder's CUDA context is not the executor's: frames are copied through system "
        "memory");
    return Take::kCopy;
  }
#if GST_CHECK_VERSION(1, 24, 0)
  gst_cuda_memory_sync(cmem);  // work its producer queued on its own stream, if any
#endif
  auto* vf = new GstVideoFrame;
  if (!gst_video_frame_map(vf, &info, buffer,
                           static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_CUDA))) {
    delete vf;
    frame->error = "CUDA memory not read: the buffer cannot be mapped with GST_MAP_CUDA";
    return Take::kFrame;
  }
  ImageView v;
  v.width = GST_VIDEO_FRAME_WIDTH(vf);
  v.height = GST_VIDEO_FRAME_HEIGHT(vf);
  v.data = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(vf, 0));
  v.pitch = static_cast<std::size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(vf, 0));
  bool known = true;
  switch (GST_VIDEO_FRAME_FORMAT(vf)) {
    case GST_VIDEO_FORMAT_NV12:
      v.format = PixelFormat::kNv12;
      v.uv = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(vf, 1));
      v.uv_pitch = static_cast<std::size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(vf, 1));
      break;
    case GST_VIDEO_FORMAT_RGBA:
      v.format = PixelFormat::kRgba8;
      break;
    case GST_VIDEO_FORMAT_RGBx:
      v.format = PixelFormat::kRgbx8;
      break;
    case GST_VIDEO_FORMAT_BGRx:
    case GST_VIDEO_FORMAT_BGRA:
      v.format = PixelFormat::kBgrx8;
      break;
    case GST_VIDEO_FORMAT_GRAY8:
      v.format = PixelFormat::kGray8;
      break;
    default:
      known = false;
  }
  if (!known) {
    frame->error = std::string("CUDA memory in format ") +
                   gst_video_format_to_string(GST_VIDEO_FRAME_FORMAT(vf)) +
                   ": no stage reads it (NV12, RGBA, RGBx, BGRx, GRAY8 are read)";
    gst_video_frame_unmap(vf);
    delete vf;
    return Take::kFrame;
  }
  ++counters_->held;
  DeviceFrame d;
  d.view = v;  // ready: the decoder finished (1.22 synchronizes before pushing; 1.24: synced above)
  d.owner = DeviceFrame::release_with([vf, c = counters_] {
    gst_video_frame_unmap(vf);  // drops the frame's reference to the buffer
    delete vf;
    --c->held;
    ++c->released;
  });
  frame->device = std::make_shared<const DeviceFrame>(std::move(d));
  return Take::kFrame;
#else
  (void)buffer;
  (void)info;
  (void)frame;
  return Take::kCopy;
#endif
}

}  // namespace jetpipe::gst_detail

#endif  // JETPIPE_HAVE_GSTREAMER

namespace jetpipe {

std::vector<std::string> device_memory_report() {
  std::vector<std::string> out;
  if (nvmm_built()) {
    const std::shared_ptr<SurfaceMapper> m = make_nvmm_mapper();
    const std::string why = m->probe();
    out.push_back("NVMM frames (Jetson Multimedia API): built in, " + m->name() +
                  (why.empty() ? ": maps here" : ": does not map here (" + why + ")"));
  } else {
    out.push_back(
        "NVMM frames (Jetson Multimedia API): not built in (JETPIPE_NVMM: needs CUDA, "
        "GStreamer, nvbufsurface.h and libnvbufsurface from JetPack)");
  }
#if JETPIPE_HAVE_GSTREAMER && JETPIPE_HAVE_GST_CUDA
  gst_detail::ensure_init();
  std::string decoders;
  for (const std::string& d : gst_detail::cuda_decoders_present()) {
    decoders += (decoders.empty() ? "" : ", ") + d;
  }
  out.push_back(std::string("GStreamer CUDA memory (libgstcuda ") + JETPIPE_GST_CUDA_VERSION +
                "): built in; CUDA decoders here: " + (decoders.empty() ? "none" : decoders));
#else
  out.push_back(
      "GStreamer CUDA memory: not built in (needs a CUDA build and GStreamer >= 1.22's CUDA "
      "library, gstreamer-cuda-1.0: Debian's libgstreamer-plugins-bad1.0-dev)");
#endif
  return out;
}

}  // namespace jetpipe
