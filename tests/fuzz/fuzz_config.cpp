// SPDX-License-Identifier: MIT
// libFuzzer harness: YAML text → a validated pipeline config (pipeline/config.h), and the same
// text as a platform profile (pipeline/platform.h). Every refusal must be a jetpipe::Error of kind
// kConfig whose message starts with the file's name (so it says where).
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipeline/config.h"
#include "pipeline/platform.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kFile = "fuzz.yaml";

void check(const jetpipe::Error& e) {
  const std::string m = e.what();
  if (e.kind() != jetpipe::ErrorKind::kConfig) jetpipe::fuzz::fail("not a config error: " + m);
  if (m.rfind(kFile, 0) != 0) jetpipe::fuzz::fail("the message does not name the file: " + m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  jetpipe::fuzz::expect_error_or_ok(
      [&] {
        const jetpipe::PipelineConfig cfg = jetpipe::parse_config(text, kFile, "/fuzz");
        (void)cfg.image_names();
      },
      check);
  jetpipe::fuzz::expect_error_or_ok([&] { (void)jetpipe::load_platform_text(text, kFile); }, check);
  return 0;
}
