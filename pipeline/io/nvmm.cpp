// SPDX-License-Identifier: MIT
// The checks every mapper's surfaces go through and the frame built from one (see nvmm.h); pure
// C++, tested with the fake mapper on any machine.
#include "pipeline/io/nvmm.h"

#include <exception>
#include <string>
#include <utility>

#include "core/error.h"

namespace jetpipe {

namespace {

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

}  // namespace

ImageView surface_view(const SurfaceDesc& d, int caps_w, int caps_h) {
  const std::string what = "surface " + size_text(d.width, d.height) + " " + d.format;
  if (d.block_linear) {
    throw input_error(what +
                      " is block-linear: CUDA reads pitch-linear surfaces only (convert on the "
                      "VIC: nvvidconv ! video/x-raw(memory:NVMM),format=RGBA before the appsink)");
  }
  if (!d.pixels) {
    throw input_error(what +
                      ": no stage reads this colour format (NVMM frames are read as RGBA, BGRx, "
                      "RGBx, GRAY8 or NV12: nvvidconv ! video/x-raw(memory:NVMM),format=RGBA)");
  }
  if (d.width <= 0 || d.height <= 0) throw input_error(what + ": no pixels");
  if (caps_w > 0 && (d.width != caps_w || d.height != caps_h)) {
    throw input_error(what + ": the caps say " + size_text(caps_w, caps_h));
  }
  const PixelFormat f = *d.pixels;
  const int need = f == PixelFormat::kNv12 ? 2 : 1;
  if (d.planes < need) {
    throw input_error(what + ": " + std::to_string(d.planes) + " plane(s) mapped, " +
                      std::to_string(need) + " needed");
  }
  for (int p = 0; p < need; ++p) {
    if (d.plane[p] == nullptr) {
      throw input_error(what + ": plane " + std::to_string(p) + " has no device pointer");
    }
    if (d.pitch[p] < min_pitch(d.width, f)) {
      throw input_error(what + ": plane " + std::to_string(p) + " pitch " +
                        std::to_string(d.pitch[p]) + " is less than a row (" +
                        std::to_string(min_pitch(d.width, f)) + " bytes)");
    }
  }
  ImageView v;
  v.data = d.plane[0];
  v.width = d.width;
  v.height = d.height;
  v.pitch = d.pitch[0];
  v.format = f;
  if (f == PixelFormat::kNv12) {
    v.uv = d.plane[1];
    v.uv_pitch = d.pitch[1];
  }
  return v;
}

void surface_frame(SurfaceMapper& mapper, const void* data, std::size_t size, int caps_w,
                   int caps_h, std::shared_ptr<void> buffer, Frame* frame) {
  MappedSurface m;
  try {
    if (data == nullptr) throw input_error("the buffer maps to no surface");
    m = mapper.map(data, size, caps_w, caps_h);
  } catch (const std::exception& e) {  // called from GStreamer's C code: nothing may unwind
    frame->error = "NVMM surface not read (" + mapper.name() + "): " + e.what();
    return;  // `buffer` goes back now: nothing refers to it
  }
  DeviceFrame d;
  d.view = m.view;
  // Ready now: the producer (VIC, decoder, camera) finished the surface before pushing it.
  // The mapping goes before the buffer: the surface must outlive its CUDA mapping.
  d.owner = DeviceFrame::release_with(
      [mapping = std::move(m.mapping), buffer = std::move(buffer)]() mutable {
        mapping.reset();
        buffer.reset();
      });
  frame->device = std::make_shared<const DeviceFrame>(std::move(d));
}

#if !JETPIPE_HAVE_NVMM
std::shared_ptr<SurfaceMapper> make_nvmm_mapper() { return nullptr; }
bool nvmm_built() { return false; }
#endif

}  // namespace jetpipe
