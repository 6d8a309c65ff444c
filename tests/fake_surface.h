// SPDX-License-Identifier: MIT
// The fake side of pipeline/io/nvmm.h for tests on machines without a Jetson: a FakeSurface is what
// a fake NVMM buffer holds (where a Jetson's holds an NvBufSurface), with its pixels in host memory
// or, for GPU tests, device memory; FakeSurfaceMapper maps it, counting maps and unmaps, failing on
// demand, and runs the same checks as the real mapper (surface_view).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/image.h"
#include "pipeline/io/nvmm.h"

namespace jetpipe::test {

struct FakeSurface {
  static constexpr std::uint32_t kMagic = 0x4e564d4d;  // "NVMM"
  std::uint32_t magic = kMagic;
  std::int64_t id = 0;  // the frame it carries
  int width = 0, height = 0;
  char format[16] = "RGBA";  // RGBA, RGBx, BGRx, GRAY8, NV12 are read; others (YUV444) are not
  bool block_linear = false;
  bool fail_map = false;  // the mapper fails on this surface
  int planes = 1;
  std::uint8_t* plane[2] = {nullptr, nullptr};
  std::size_t pitch[2] = {0, 0};
};

// The pixels of frame `id` in a fake surface (and, as BGR8, in a fake system-memory buffer): a
// pattern of x, y, id and the plane, in a host image.
HostImage fake_surface_pixels(std::int64_t id, int width, int height, PixelFormat format);

// The frame format a fake surface's format name is read as (nullopt: none).
std::optional<PixelFormat> fake_surface_format(const std::string& name);

class FakeSurfaceMapper final : public SurfaceMapper {
 public:
  std::string name() const override { return "fake mapper"; }
  std::string probe() override;
  MappedSurface map(const void* data, std::size_t size, int caps_w, int caps_h) override;

  std::string probe_result;  // what probe() answers ("" : mapping works)
  std::atomic<int> probes{0}, maps{0}, unmaps{0};

  // "map 3", "unmap 3", and (from FakeNvmmSrc) "release 3", in the order they happened.
  void log(const std::string& event);
  std::vector<std::string> events() const;

 private:
  mutable std::mutex m_;
  std::vector<std::string> events_;
};

}  // namespace jetpipe::test
