// SPDX-License-Identifier: MIT
// Jetson NVMM surfaces as device frames. A GStreamer buffer in video/x-raw(memory:NVMM) maps (for
// reading) to an NvBufSurface; a SurfaceMapper makes its pixels a CUDA device view, and the frame's
// owner keeps the mapping and the buffer until the frame's GPU work has completed
// (source.h, DeviceFrame). The real mapper (nvmm_egl.cpp) is built with the Jetson Multimedia API
// (CMake JETPIPE_NVMM); tests drive the same code with a fake (tests/fake_surface.h). This header
// names neither GStreamer nor CUDA nor NVIDIA's headers.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "core/image.h"
#include "pipeline/io/source.h"

namespace jetpipe {

// What a surface says about itself, filled by a mapper (from NvBufSurfaceParams and the CUDA
// mapping on a Jetson) and checked by surface_view().
struct SurfaceDesc {
  int width = 0, height = 0;
  std::string format;                           // the surface's colour format, as its API names it
  std::optional<PixelFormat> pixels;            // the frame format it is, when a stage reads it
  bool block_linear = false;                    // a block-linear surface (or a CUDA array mapping)
  int planes = 0;                               // planes mapped
  std::uint8_t* plane[2] = {nullptr, nullptr};  // device pointers of the planes read
  std::size_t pitch[2] = {0, 0};                // their pitches in bytes
};

// The device view of `d`, or jetpipe::Error (kInput) naming what is wrong: a block-linear surface
// (the VIC converts those: nvvidconv before the appsink), a colour format no stage reads, too few
// planes, no pointer, a pitch under a row, a size other than the caps' (`caps_w` x `caps_h`; 0:
// unchecked).
ImageView surface_view(const SurfaceDesc& d, int caps_w, int caps_h);

// A mapped surface: its device view and the mapping, released (unmapped) when dropped.
struct MappedSurface {
  ImageView view;
  std::shared_ptr<void> mapping;
};

// Maps surfaces into CUDA for reading. Called from GStreamer's streaming thread; the mapping is
// dropped from whichever thread releases the frame (never a CUDA callback).
class SurfaceMapper {
 public:
  virtual ~SurfaceMapper() = default;
  // The route, e.g. "NvBufSurface → EGLImage → CUDA".
  virtual std::string name() const = 0;
  // Empty when surfaces can be mapped in this process, else why not (no EGL display, no CUDA
  // device). Asked once, when a source opens, before it asks for NVMM.
  virtual std::string probe() = 0;
  // Maps the surface whose buffer, mapped for reading, gave `data` (`size` bytes): an NvBufSurface
  // on a Jetson. Throws jetpipe::Error (kInput) saying why it cannot; surface_view() checks.
  virtual MappedSurface map(const void* data, std::size_t size, int caps_w, int caps_h) = 0;
};

// The NVMM mapper of this build (nvmm_egl.cpp), or null when built without the Jetson Multimedia
// API.
std::shared_ptr<SurfaceMapper> make_nvmm_mapper();
// Whether this build maps NVMM surfaces (JETPIPE_NVMM found nvbufsurface.h and its library).
bool nvmm_built();

// Fills *frame (index and source are the caller's) from one surface: on success frame->device
// holds the view and an owner that drops the mapping, then `buffer` (the GstBuffer reference and
// its map), once; on failure frame->error says why and `buffer` is dropped before this returns.
void surface_frame(SurfaceMapper& mapper, const void* data, std::size_t size, int caps_w,
                   int caps_h, std::shared_ptr<void> buffer, Frame* frame);

}  // namespace jetpipe
