// SPDX-License-Identifier: MIT
#include "pipeline/io/device_memory.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/error.h"
#include "pipeline/io/gst_pipeline.h"

namespace jetpipe {

const char* to_string(FrameMemory m) {
  switch (m) {
    case FrameMemory::kSystem:
      return "system";
    case FrameMemory::kNvmm:
      return "nvmm";
    case FrameMemory::kCuda:
      return "cuda";
  }
  return "system";
}

bool apply_device_key(const std::string& uri, const std::string& key, const std::string& value,
                      DeviceMemorySpec* spec) {
  if (key != "nvmm" && key != "cudamem") return false;
  bool on = false;
  if (value == "1" || value == "true") {
    on = true;
  } else if (value != "0" && value != "false") {
    throw input_error("source '" + uri + "': bad value " + key + "=" + value +
                      " (0 or 1; 0: frames through system memory, the copying path)");
  }
  (key == "nvmm" ? spec->nvmm : spec->cudamem) = on;
  return true;
}

void split_device_keys(const std::string& uri, std::string* path, DeviceMemorySpec* spec) {
  const std::size_t q = path->rfind('?');
  if (q == std::string::npos) return;
  std::vector<std::pair<std::string, std::string>> items;
  for (std::size_t p = q + 1; p <= path->size();) {
    const std::size_t amp = std::min(path->find('&', p), path->size());
    const std::string item = path->substr(p, amp - p);
    p = amp + 1;
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (eq == std::string::npos || (key != "nvmm" && key != "cudamem")) return;  // a file name
    items.emplace_back(key, item.substr(eq + 1));
  }
  for (const auto& [key, value] : items) apply_device_key(uri, key, value, spec);
  path->erase(q);
}

MemoryChoice choose_frame_memory(const DeviceMemorySpec& spec, const DeviceMemoryInputs& in) {
  MemoryChoice c;
  if (in.nvvidconv && in.nvmm_source) {
    // A Jetson: NVMM, unless something rules it out (then the copying path, with the reason).
    if (!spec.nvmm) {
      c.why = "system memory (nvmm=0 in the URI)";
    } else if (!device_memory_carries(FrameMemory::kNvmm, in.format)) {
      c.why = std::string("system memory (format=") + to_string(*in.format) +
              " is not an NVMM layout: rgba8, bgrx8, nv12 or gray8)";
    } else if (!in.device_frames) {
      c.why = "system memory (the executor reads host frames: platform cpu)";
    } else if (!in.nvmm_unavailable.empty()) {
      c.why = "system memory (NVMM frames cannot be mapped into CUDA here: " + in.nvmm_unavailable +
              ")";
      c.note = true;
    } else {
      c.memory = FrameMemory::kNvmm;
      c.why = "NVMM surfaces mapped into CUDA";
    }
    return c;
  }
  if (in.cuda_source && in.cuda_decoder) {
    if (!spec.cudamem) {
      c.why = "system memory (cudamem=0 in the URI)";
    } else if (!device_memory_carries(FrameMemory::kCuda, in.format)) {
      c.why = std::string("system memory (format=") + to_string(*in.format) +
              ": the decoder's CUDA memory is NV12, read as nv12 or gray8)";
    } else if (!in.device_frames) {
      c.why = "system memory (the executor reads host frames: platform cpu)";
    } else if (!in.cuda_unavailable.empty()) {
      c.why = "system memory (GStreamer CUDA memory unavailable: " + in.cuda_unavailable + ")";
      c.note = true;
    } else {
      c.memory = FrameMemory::kCuda;
      c.why = "CUDA memory from the decoder";
    }
    return c;
  }
  c.why = "system memory";
  return c;
}

bool device_memory_carries(FrameMemory memory, const std::optional<PixelFormat>& format) {
  if (!format || *format == PixelFormat::kGray8 || *format == PixelFormat::kNv12) return true;
  return memory == FrameMemory::kNvmm &&
         (*format == PixelFormat::kRgba8 || *format == PixelFormat::kBgrx8);
}

std::string device_sink_tail(FrameMemory memory, bool colour,
                             const std::optional<PixelFormat>& format) {
  const bool gray = format ? *format == PixelFormat::kGray8 : !colour;
  if (memory == FrameMemory::kNvmm) {
    // The VIC converts whatever comes (block-linear NV12 from the decoder or camera, system memory
    // from v4l2src) into a pitch-linear surface CUDA reads: RGBA for colour, NV12 (luma = gray).
    const char* layout = "RGBA";
    if (gray || format == PixelFormat::kNv12) {
      layout = "NV12";
    } else if (format == PixelFormat::kBgrx8) {
      layout = "BGRx";
    }
    return std::string("nvvidconv ! video/x-raw(memory:NVMM),format=") + layout +
           " ! appsink name=jp_sink";
  }
  // CUDA decoders give NV12 in CUDA memory (stages read its luma plane); a decoder that gives
  // system memory after all meets the copying path's caps (gst_frame_caps), videoconvert
  // converting into them (it passes other memory through untouched).
  const std::string fallback =
      format == PixelFormat::kNv12 ? "video/x-raw,format=NV12" : gst_frame_caps(!gray);
  return "videoconvert ! appsink name=jp_sink caps=\"video/x-raw(memory:CUDAMemory),format=NV12; " +
         fallback + "\"";
}

}  // namespace jetpipe
