// SPDX-License-Identifier: MIT
// NVMM surfaces without a Jetson (pipeline/io/nvmm.h): the checks every mapper's surfaces go
// through (block-linear, colour formats no stage reads, planes, pitches, sizes), and the frame
// built from one surface through the fake mapper (tests/fake_surface.h): its owner drops the
// mapping, then the buffer, exactly once; a failed or refused surface is the frame's error and
// its buffer goes back at once.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/io/nvmm.h"
#include "pipeline/io/source.h"
#include "tests/fake_surface.h"
#include "tests/test_util.h"

namespace jetpipe {
namespace {

using test::FakeSurface;
using test::FakeSurfaceMapper;

using test::error_of;
using test::has;

TEST(NvmmSurface, ViewChecksNameWhatIsWrong) {
  std::vector<std::uint8_t> pixels(4 * 64 * 48 * 2);
  SurfaceDesc d;
  d.width = 64;
  d.height = 48;
  d.format = "NV12";
  d.pixels = PixelFormat::kNv12;
  d.planes = 2;
  d.plane[0] = pixels.data();
  d.plane[1] = pixels.data() + 64 * 48;
  d.pitch[0] = d.pitch[1] = 64;
  const ImageView v = surface_view(d, 64, 48);
  EXPECT_EQ(v.format, PixelFormat::kNv12);
  EXPECT_EQ(v.uv, pixels.data() + 64 * 48);
  EXPECT_EQ(v.uv_pitch, 64u);

  auto fails = [&](SurfaceDesc bad, int w, int h) {
    return error_of([&] { surface_view(bad, w, h); });
  };
  SurfaceDesc bl = d;
  bl.block_linear = true;
  EXPECT_TRUE(has(fails(bl, 64, 48), "block-linear")) << fails(bl, 64, 48);
  EXPECT_TRUE(has(fails(bl, 64, 48), "nvvidconv"));
  SurfaceDesc yuv = d;
  yuv.format = "YUV444";
  yuv.pixels.reset();
  EXPECT_TRUE(has(fails(yuv, 64, 48), "YUV444: no stage reads this colour format"))
      << fails(yuv, 64, 48);
  SurfaceDesc one = d;
  one.planes = 1;
  EXPECT_TRUE(has(fails(one, 64, 48), "1 plane(s) mapped, 2 needed")) << fails(one, 64, 48);
  SurfaceDesc narrow = d;
  narrow.pitch[1] = 32;
  EXPECT_TRUE(has(fails(narrow, 64, 48), "plane 1 pitch 32")) << fails(narrow, 64, 48);
  SurfaceDesc null = d;
  null.plane[0] = nullptr;
  EXPECT_TRUE(has(fails(null, 64, 48), "no device pointer"));
  EXPECT_TRUE(has(fails(d, 640, 480), "the caps say 640x480")) << fails(d, 640, 480);
}

// A fake surface of `format` over host pixels, as the fake element makes them.
struct HostSurface {
  HostImage pixels;
  FakeSurface s;
};
HostSurface host_surface(std::int64_t id, const char* format, PixelFormat pf) {
  HostSurface h;
  h.pixels = test::fake_surface_pixels(id, 64, 48, pf);
  const ImageView v = h.pixels.view();
  h.s.id = id;
  h.s.width = 64;
  h.s.height = 48;
  std::strncpy(h.s.format, format, sizeof h.s.format - 1);
  h.s.planes = pf == PixelFormat::kNv12 ? 2 : 1;
  h.s.plane[0] = v.data;
  h.s.pitch[0] = v.pitch;
  h.s.plane[1] = v.uv;
  h.s.pitch[1] = v.uv_pitch;
  return h;
}

TEST(NvmmSurface, TheFrameOwnsTheMappingThenTheBufferOnce) {
  FakeSurfaceMapper mapper;
  HostSurface h = host_surface(7, "RGBA", PixelFormat::kRgba8);
  int released = 0;
  auto buffer = std::shared_ptr<void>(&h, [&](void*) {
    ++released;
    mapper.log("release 7");
  });
  Frame f;
  surface_frame(mapper, &h.s, sizeof h.s, 64, 48, std::move(buffer), &f);
  ASSERT_TRUE(f.device) << f.error;
  EXPECT_TRUE(f.error.empty());
  EXPECT_EQ(f.device->view.data, h.pixels.view().data);
  EXPECT_EQ(f.device->view.format, PixelFormat::kRgba8);
  EXPECT_EQ(f.device->ready_event, nullptr);
  EXPECT_EQ(released, 0);
  std::shared_ptr<const DeviceFrame> copy = f.device;  // the executor holds it too
  f = Frame{};
  EXPECT_EQ(released, 0);
  copy.reset();
  EXPECT_EQ(released, 1);
  EXPECT_EQ(mapper.maps.load(), 1);
  EXPECT_EQ(mapper.unmaps.load(), 1);
  EXPECT_EQ(mapper.events(), (std::vector<std::string>{"map 7", "unmap 7", "release 7"}));
}

TEST(NvmmSurface, AFailedOrRefusedSurfaceIsAnErrorAndItsBufferGoesAtOnce) {
  for (const char* what : {"fail", "block-linear", "unreadable"}) {
    SCOPED_TRACE(what);
    FakeSurfaceMapper mapper;
    HostSurface h = host_surface(3, "RGBA", PixelFormat::kRgba8);
    h.s.fail_map = std::strcmp(what, "fail") == 0;
    h.s.block_linear = std::strcmp(what, "block-linear") == 0;
    if (std::strcmp(what, "unreadable") == 0) std::strcpy(h.s.format, "YUV444");
    int released = 0;
    Frame f;
    surface_frame(mapper, &h.s, sizeof h.s, 64, 48,
                  std::shared_ptr<void>(&h, [&](void*) { ++released; }), &f);
    EXPECT_FALSE(f.device);
    EXPECT_EQ(released, 1);
    EXPECT_EQ(mapper.maps.load(), mapper.unmaps.load());  // a refused mapping is undone
    EXPECT_TRUE(has(f.error, "NVMM surface not read (fake mapper)")) << f.error;
    const char* why = h.s.fail_map       ? "fake mapping failure of surface 3"
                      : h.s.block_linear ? "block-linear"
                                         : "no stage reads this colour format";
    EXPECT_TRUE(has(f.error, why)) << f.error;
  }
  FakeSurfaceMapper mapper;
  Frame f;
  int released = 0;
  surface_frame(mapper, nullptr, 0, 64, 48, std::shared_ptr<void>(&f, [&](void*) { ++released; }),
                &f);
  EXPECT_TRUE(has(f.error, "maps to no surface")) << f.error;
  EXPECT_EQ(released, 1);
}

}  // namespace
}  // namespace jetpipe
