// SPDX-License-Identifier: MIT
// Helpers for tests: fresh random images (seed printed on failure), pitched views, comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include "core/image.h"

namespace jetpipe::test {

// A seed drawn fresh for each test, unless JETPIPE_SEED is set; recorded in the test's output.
std::uint32_t fresh_seed();

// A random image with rows padded by pad_elems elements (pitch ≠ row bytes when pad_elems > 0).
HostImage random_image(int width, int height, PixelFormat format, std::mt19937& rng,
                       int pad_elems = 0);

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

}  // namespace jetpipe::test
