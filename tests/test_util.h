// SPDX-License-Identifier: MIT
// Helpers for tests: fresh random images (seed printed on failure), pitched views, comparisons.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/image.h"

namespace jetpipe::test {

// A seed drawn fresh for each test, unless JETPIPE_SEED is set; recorded in the test's output.
std::uint32_t fresh_seed();

// A random image with rows padded by pad_elems elements (pitch ≠ row bytes when pad_elems > 0).
HostImage random_image(int width, int height, PixelFormat format, std::mt19937& rng,
                       int pad_elems = 0);

// The pixels of `src` (BGR8 or GRAY8) in `format`, rows padded by pad_bytes: BGR8 / RGB8 / BGRx /
// RGBx / RGBA with the same colours (byte 3 random: to_gray must ignore it); GRAY8 / NV12 take the
// green channel (or the gray) as their gray image, NV12's chroma random. So to_gray of the result
// equals to_gray of src for the colour formats.
HostImage as_format(const ImageView& src, PixelFormat format, std::mt19937& rng, int pad_bytes = 0);

// Size, format and every pixel byte (both planes of NV12, no row padding) as one string: equal
// strings, equal images.
std::string pack_pixels(const ImageView& v);

// Fills with a pattern that no algorithm would produce (to catch unwritten pixels).
void poison(const ImageView& v);

// Largest absolute difference between two views of one shape and format (as doubles), and where.
struct Diff {
  double max_abs = 0;
  int x = -1, y = -1;
};
Diff max_diff(const ImageView& a, const ImageView& b);

// A fresh folder for one test: mkdtemp() under the system temp folder ($TMPDIR, else /tmp), named
// jetpipe-<suite>.<test>-XXXXXX, so concurrent runs (two build folders, ctest -j) never share one.
// Removed with its contents when the TempDir goes out of scope, unless the test has failed by
// then: a failed test's folder is kept and its path printed ("[ kept     ] ...").
//   TempDir dir;  write_image(dir / "a.pgm", img);  o.output_dir = dir / "out";
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Whether `s` contains `part` (for EXPECT_TRUE(has(message, "...")) << message).
inline bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The message of the jetpipe::Error that `f` throws, or "no error".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// The command that runs the jetpipe CLI of this build: its path, behind the cross-compiling
// emulator when the build has one (an arm64 build's tests run under qemu-aarch64, so must the CLI
// they start). cli_shell() is the same as one shell word list, each word quoted.
//   execv(cmd[0], ...cmd, "run", ...);   std::system((cli_shell() + " info").c_str());
std::vector<std::string> cli_command();
std::string cli_shell();

// A file's whole contents ("" when it cannot be read).
std::string slurp(const std::filesystem::path& path);

// Built with AddressSanitizer (JETPIPE_SANITIZE): freed memory waits in its quarantine (256 MiB
// by default), so a process's RSS says little about what the code holds; tests that bound memory
// measure the heap in use (tests/test_soak.cpp) or skip their RSS check.
#if defined(__SANITIZE_ADDRESS__)
#define JETPIPE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JETPIPE_TEST_ASAN 1
#endif
#endif
#ifdef JETPIPE_TEST_ASAN
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// Real photos from Debian's opencv-doc, when installed (else empty: the test skips).
std::string opencv_sample(const std::string& name);

// Whether GStreamer has the element `name` (initialising it); false in builds without GStreamer.
// For elements detect_gst_features() does not look for: the demuxers and decoders of test clips.
bool gst_has_element(const char* name);

// A UDP port on 127.0.0.1 that was free a moment ago (0 if none could be had).
int free_udp_port();

// Stores `value` into `flag` after `delay`, from a thread of its own (a stop request, as a signal
// handler or another thread gives one); the destructor joins it.
class RaiseLater {
 public:
  RaiseLater(std::atomic<int>& flag, int value, std::chrono::milliseconds delay)
      : thread_([&flag, value, delay] {
          std::this_thread::sleep_for(delay);
          flag.store(value);
        }) {}
  ~RaiseLater() { thread_.join(); }
  RaiseLater(const RaiseLater&) = delete;
  RaiseLater& operator=(const RaiseLater&) = delete;

 private:
  std::thread thread_;
};

}  // namespace jetpipe::test
