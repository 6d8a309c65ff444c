// SPDX-License-Identifier: MIT
// GPU tests: skip with a reason when the build has no CUDA or the machine has no device; device
// images uploaded from / downloaded to host images; poisoned outputs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "core/image.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda_memory.h"
#endif

namespace jetpipe::test {

// Empty when a CUDA device can run kernels, else why not.
std::string gpu_unavailable_reason();

#define JP_REQUIRE_GPU()                                                     \
  do {                                                                       \
    const std::string jp_why = ::jetpipe::test::gpu_unavailable_reason();    \
    if (!jp_why.empty()) GTEST_SKIP() << "no GPU: " << jp_why;               \
  } while (0)

// Whether the tests run under this compute-sanitizer tool ("initcheck", ...), or under any tool
// when `tool` is null: tools/gpu/sanitize.sh names it in JETPIPE_SANITIZER.
bool under_sanitizer(const char* tool = nullptr);

#if JETPIPE_HAVE_CUDA
// A device copy of a host image, with rows `pad_bytes` longer than needed (0: cudaMallocPitch);
// complete on return (the device is synchronized).
DeviceImage upload(const ImageView& host, std::size_t pad_bytes = 0);
// A host copy of a device view.
HostImage download(const ImageView& device);
// Fills a device view with 0xA5 bytes (an unwritten pixel then fails the comparison); complete on
// return.
void poison_device(const ImageView& device);
#endif

// Rows of `got` whose bytes differ from `want`'s (same size and format; any pitches).
inline int rows_differ(const ImageView& got, const ImageView& want) {
  int n = 0;
  for (int y = 0; y < want.height; ++y) {
    n += std::memcmp(got.row<std::uint8_t>(y), want.row<std::uint8_t>(y), want.row_bytes()) != 0;
  }
  return n;
}

// kernels/block/max_key.cuh's order key of a float, on the host (the key a launch that gathers a
// maximum leaves).
inline std::uint32_t host_order_key(float s) {
  std::uint32_t b;
  std::memcpy(&b, &s, sizeof b);
  if (b == 0x80000000u) b = 0;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

}  // namespace jetpipe::test
