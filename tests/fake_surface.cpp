// SPDX-License-Identifier: MIT
#include "tests/fake_surface.h"

#include <memory>

#include "core/error.h"

namespace jetpipe::test {

namespace {

std::uint8_t pattern(int x, int y, std::int64_t id, int c) {
  return static_cast<std::uint8_t>(x * 3 + y * 5 + id * 11 + c * 17);
}

}  // namespace

HostImage fake_surface_pixels(std::int64_t id, int width, int height, PixelFormat format) {
  HostImage img(width, height, format);
  const ImageView v = img.view();
  const int bpp = bytes_per_pixel(format);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width * bpp; ++x) v.row<std::uint8_t>(y)[x] = pattern(x, y, id, 0);
  }
  if (format == PixelFormat::kNv12) {
    for (int y = 0; y < chroma_rows(height); ++y) {
      for (std::size_t x = 0; x < min_pitch(width, format); ++x) {
        v.uv[y * v.uv_pitch + x] = pattern(static_cast<int>(x), y, id, 1);
      }
    }
  }
  return img;
}

std::optional<PixelFormat> fake_surface_format(const std::string& name) {
  if (name == "RGBA") return PixelFormat::kRgba8;
  if (name == "RGBx") return PixelFormat::kRgbx8;
  if (name == "BGRx") return PixelFormat::kBgrx8;
  if (name == "GRAY8") return PixelFormat::kGray8;
  if (name == "NV12") return PixelFormat::kNv12;
  return std::nullopt;
}

std::string FakeSurfaceMapper::probe() {
  ++probes;
  return probe_result;
}

MappedSurface FakeSurfaceMapper::map(const void* data, std::size_t size, int caps_w, int caps_h) {
  const auto* s = static_cast<const FakeSurface*>(data);
  if (size != sizeof(FakeSurface) || s->magic != FakeSurface::kMagic) {
    throw input_error("not a fake surface (" + std::to_string(size) + " bytes)");
  }
  if (s->fail_map) throw input_error("fake mapping failure of surface " + std::to_string(s->id));
  // Mapped from here (as the EGL route registers before it learns the frame type): a refused
  // surface is unmapped again by the MappedSurface going out of scope.
  ++maps;
  log("map " + std::to_string(s->id));
  MappedSurface m;
  const std::string id = std::to_string(s->id);
  m.mapping = std::shared_ptr<void>(this, [this, id](void*) {
    ++unmaps;
    log("unmap " + id);
  });
  SurfaceDesc d;
  d.width = s->width;
  d.height = s->height;
  d.format = s->format;
  d.pixels = fake_surface_format(s->format);
  d.block_linear = s->block_linear;
  d.planes = s->planes;
  for (int i = 0; i < 2; ++i) {
    d.plane[i] = s->plane[i];
    d.pitch[i] = s->pitch[i];
  }
  m.view = surface_view(d, caps_w, caps_h);
  return m;
}

void FakeSurfaceMapper::log(const std::string& event) {
  std::lock_guard<std::mutex> lk(m_);
  events_.push_back(event);
}

std::vector<std::string> FakeSurfaceMapper::events() const {
  std::lock_guard<std::mutex> lk(m_);
  return events_;
}

}  // namespace jetpipe::test
