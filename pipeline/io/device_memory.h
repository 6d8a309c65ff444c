// SPDX-License-Identifier: MIT
// Where a GStreamer source's frames live when they reach the appsink, as pure functions (tested
// without GStreamer, a Jetson or a GPU): the URI keys that turn device memory off, the choice for a
// source, and the end of its pipeline.
//
//   memory     when                                                    the appsink gets
//   system     default; device memory off, unavailable or not wanted    host frames (copied once)
//   nvmm       Jetson: csi://, v4l2://, file://, rtp:// with the NVMM   video/x-raw(memory:NVMM),
//              mapper built and working, a CUDA executor reading         RGBA (colour) or NV12
//              device frames, nvvidconv present, no ?nvmm=0              (gray), via nvvidconv
//              (VIC)
//   cuda       discrete GPU: file:// with GStreamer's CUDA library built video/x-raw(memory:
//              (gst-plugins-bad >= 1.22), a CUDA decoder (nvh264dec...)  CUDAMemory),format=NV12,
//              or present, a CUDA executor, no ?cudamem=0                   system memory when the
//                                                                        decoder gives that
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/image.h"

namespace jetpipe {

enum class FrameMemory { kSystem, kNvmm, kCuda };
const char* to_string(FrameMemory m);

// The URI's wishes and the memory chosen (SourceSpec::device).
struct DeviceMemorySpec {
  bool nvmm = true;     // ?nvmm=0: no NVMM frames (the copying path through system memory)
  bool cudamem = true;  // ?cudamem=0: no CUDA-memory frames from GStreamer's decoders
  FrameMemory memory = FrameMemory::kSystem;  // set by choose_frame_memory
};

// Whether `key` is one of the device-memory keys (nvmm, cudamem); if so, reads `value` (0 / 1 /
// false / true) into *spec, or throws jetpipe::Error (kInput) naming `uri` and the valid values.
bool apply_device_key(const std::string& uri, const std::string& key, const std::string& value,
                      DeviceMemorySpec* spec);

// file://PATH?nvmm=0&cudamem=0: a file path may hold '?', so a trailing query is taken only when
// every key in it is a device-memory key; it is then removed from *path.
void split_device_keys(const std::string& uri, std::string* path, DeviceMemorySpec* spec);

// What decides the memory of one source.
struct DeviceMemoryInputs {
  bool device_frames = false;    // the consumer reads device frames (a CUDA executor)
  bool nvmm_source = false;      // csi, v4l2, file, rtp: pipelines ending in the Jetson converter
  bool cuda_source = false;      // file: decodebin's decoder hands CUDA memory
  bool nvvidconv = false;        // the element is present (a Jetson)
  bool cuda_decoder = false;     // one of GStreamer's CUDA decoders (nvh264dec, ...) is present
  std::string nvmm_unavailable;  // "" when the NVMM mapper is built and its probe passed
  std::string cuda_unavailable;  // "" when GStreamer's CUDA library is built and loads
  std::optional<PixelFormat> format;  // ?format=: device memory only where it carries this layout
};

struct MemoryChoice {
  FrameMemory memory = FrameMemory::kSystem;
  std::string why;    // one line: why this memory (for describe() and the note)
  bool note = false;  // device memory was possible here but is not used: say so on stderr
};

MemoryChoice choose_frame_memory(const DeviceMemorySpec& spec, const DeviceMemoryInputs& in);

// Whether `memory` frames can come in `format` (?format=; nullopt: any). NVMM surfaces from
// nvvidconv: rgba8, bgrx8, nv12 and gray8 (NV12's luma plane); a CUDA decoder's memory: nv12 and
// gray8. Other formats keep the source on the copying path.
bool device_memory_carries(FrameMemory memory, const std::optional<PixelFormat>& format);

// The end of a source pipeline that delivers `memory` (kNvmm or kCuda) frames, ending in
// `appsink name=jp_sink`: colour (RGBA surfaces) or gray (NV12, its luma plane read), or exactly
// `format` when given (device_memory_carries).
std::string device_sink_tail(FrameMemory memory, bool colour,
                             const std::optional<PixelFormat>& format);

// Lines for `jetpipe info`: whether this build reads NVMM surfaces and GStreamer CUDA memory in
// place, and whether that works on this machine (gst_device_memory.cpp).
std::vector<std::string> device_memory_report();

}  // namespace jetpipe
