// SPDX-License-Identifier: MIT
// Helpers for tests: fresh random images (seed printed on failure), pitched views, comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
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

// Real photos from Debian's opencv-doc, when installed (else empty: the test skips).
std::string opencv_sample(const std::string& name);

}  // namespace jetpipe::test
