// SPDX-License-Identifier: MIT
// libFuzzer harness: the YUV4MPEG2 source (pipeline/io/y4m_source.cpp). The input is written to a
// scratch file, opened and read to its end (at most 64 frames of at most 16 MiB). Opening may fail
// with an input error; a frame either has a GRAY8 image of the header's size or an error; the
// stream ends after a frame with an error.
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static jetpipe::fuzz::ScratchFile file(".y4m");
  const std::string& path = file.write(data, size);
  jetpipe::fuzz::expect_error_or_ok(
      [&] {
        auto src = jetpipe::io_detail::open_y4m_source("file://fuzz.y4m", path);
        src->set_max_frame_bytes(std::uint64_t{16} << 20);
        (void)src->describe();
        jetpipe::Frame f;
        int w = -1, h = -1;
        for (int i = 0; i < 64 && src->next(&f); ++i) {
          if (f.index != i) jetpipe::fuzz::fail("frame index " + std::to_string(f.index));
          if (!f.error.empty()) {
            if (!f.image.empty()) jetpipe::fuzz::fail("a frame with an error and an image");
            if (src->next(&f)) jetpipe::fuzz::fail("a frame after a frame with an error");
            break;
          }
          const jetpipe::ImageView v = f.image.view();
          if (v.format != jetpipe::PixelFormat::kGray8 || v.width <= 0 || v.height <= 0 ||
              (w >= 0 && (v.width != w || v.height != h))) {
            jetpipe::fuzz::fail("a frame of another shape or format than the header's");
          }
          w = v.width;
          h = v.height;
          volatile std::uint8_t last = v.row<std::uint8_t>(v.height - 1)[v.width - 1];
          (void)last;
        }
      },
      check);
  return 0;
}
