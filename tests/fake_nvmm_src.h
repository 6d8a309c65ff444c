// SPDX-License-Identifier: MIT
// "jpfakenvmmsrc", a GStreamer source element for tests: num-buffers frames of a pattern as fake
// NVMM buffers (caps video/x-raw(memory:NVMM), each buffer's data a FakeSurface, as a Jetson's is
// an NvBufSurface), or with memory=system as plain BGR buffers, so the GStreamer source's NVMM path
// runs end to end (caps, mapping, buffer lifetime, errors) on any machine:
//   gst://jpfakenvmmsrc num-buffers=6 format=NV12 fail-at=2 ! appsink caps=video/x-raw(memory:NVMM)
// Properties: width, height (64x48), format (RGBA, RGBx, BGRx, GRAY8, NV12, or a format no stage
// reads, e.g. Y444), memory (nvmm | system), fail-at / block-linear-at / unreadable-at (the frame
// whose surface fails to map / is block-linear / calls itself YUV444; -1: none), device (the pixels
// in device memory, CUDA builds: GPU tests; poisoned when the buffer is released).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/fake_surface.h"

namespace jetpipe::test {

// Registers the element once per process (initialising GStreamer); false in builds without it.
bool register_fake_nvmm_src();

// Forgets the buffers released so far; from now on releases are also logged in `mapper`'s events
// ("release N", beside its "map N" / "unmap N"), when given.
void fake_src_reset(FakeSurfaceMapper* mapper);
// Frame ids of the buffers released (freed by GStreamer) since the reset, in order.
std::vector<std::int64_t> fake_src_released();

}  // namespace jetpipe::test
