// SPDX-License-Identifier: MIT
// libFuzzer harness: the source URI parsers and the pipelines built from them, none of which
// touches a device or the network: test:// (the built-in patterns, opened and one frame drawn
// with a 1 MiB frame limit), the GStreamer source URIs (parse_gst_source_uri, and the launch
// descriptions for a software and a Jetson element set), video output targets and resolve_uri.
// frames:// and file:// open paths on the machine and are left out. Refusals must be
// jetpipe::Error; anything else fails.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipeline/config.h"
#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/io_internal.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void any_error(const jetpipe::Error&) {}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jetpipe;
  const std::string uri(reinterpret_cast<const char*>(data), size);
  static const GstFeatures software = GstFeatures::software();
  static const GstFeatures jetson = GstFeatures::jetson_set();

  fuzz::expect_error_or_ok([&] { (void)resolve_uri(uri, "/base/dir"); }, any_error);
  fuzz::expect_error_or_ok(
      [&] {
        if (uri.compare(0, 7, "test://") != 0) return;
        const std::string rest = uri.substr(7);
        if (!is_builtin_test_pattern(rest.substr(0, rest.find('?')))) return;
        auto src = io_detail::open_test_source(uri, rest);
        src->set_max_frame_bytes(std::uint64_t{1} << 20);
        (void)src->describe();
        Frame f;
        if (src->next(&f) && f.image.empty()) fuzz::fail("a test frame without an image");
      },
      [](const Error& e) {
        if (e.kind() != ErrorKind::kInput)
          fuzz::fail(std::string("not an input error: ") + e.what());
      });
  for (const bool colour : {false, true}) {
    fuzz::expect_error_or_ok(
        [&] {
          SourceSpec spec = parse_gst_source_uri(uri, colour);
          // The copying path's tails, and the device-memory ones (NVMM, CUDA memory).
          for (const FrameMemory m :
               {FrameMemory::kSystem, FrameMemory::kNvmm, FrameMemory::kCuda}) {
            spec.device.memory = m;
            fuzz::expect_error_or_ok([&] { (void)gst_source_pipeline(spec, software); }, any_error);
            fuzz::expect_error_or_ok([&] { (void)gst_source_pipeline(spec, jetson); }, any_error);
          }
        },
        any_error);
  }
  fuzz::expect_error_or_ok(
      [&] {
        const VideoTarget t = parse_video_target(uri);
        fuzz::expect_error_or_ok([&] { (void)gst_sink_pipeline(t, software, 30, 4000); },
                                 any_error);
        fuzz::expect_error_or_ok([&] { (void)gst_sink_pipeline(t, jetson, 30, 4000); }, any_error);
      },
      any_error);
  return 0;
}
