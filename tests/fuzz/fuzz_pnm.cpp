// SPDX-License-Identifier: MIT
// libFuzzer harness: the built-in PGM/PPM (P2, P3, P5, P6) and grey PFM readers
// (pipeline/io/pnm.cpp). The input is written to a scratch file and read with both; a refusal must
// be an input error. A decoded image must have the shape and format its header announced.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipeline/io/io_internal.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void check(const jetpipe::Error& e) {
  if (e.kind() != jetpipe::ErrorKind::kInput) {
    jetpipe::fuzz::fail(std::string("not an input error: ") + e.what());
  }
}

// Touches every byte of the image, so ASan sees a read past a short row.
unsigned sum_bytes(const jetpipe::HostImage& img) {
  const jetpipe::ImageView v = img.view();
  unsigned s = 0;
  for (int y = 0; y < v.height; ++y) {
    const std::uint8_t* r = v.row<std::uint8_t>(y);
    for (std::size_t i = 0; i < v.row_bytes(); ++i) s += r[i];
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static jetpipe::fuzz::ScratchFile file(".pnm");
  const std::string& path = file.write(data, size);
  volatile unsigned sink = 0;
  jetpipe::fuzz::expect_error_or_ok(
      [&] {
        const jetpipe::HostImage img = jetpipe::io_detail::read_pnm(path);
        if (img.empty() || (img.format() != jetpipe::PixelFormat::kGray8 &&
                            img.format() != jetpipe::PixelFormat::kBgr8)) {
          jetpipe::fuzz::fail("read_pnm returned an empty image or a format other than gray8/bgr8");
        }
        sink = sink + sum_bytes(img);
      },
      check);
  jetpipe::fuzz::expect_error_or_ok(
      [&] {
        const jetpipe::HostImage img = jetpipe::io_detail::read_pfm(path);
        if (img.empty() || img.format() != jetpipe::PixelFormat::kF32) {
          jetpipe::fuzz::fail("read_pfm returned an empty image or a format other than f32");
        }
        sink = sink + sum_bytes(img);
      },
      check);
  return 0;
}
