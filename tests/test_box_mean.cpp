// SPDX-License-Identifier: MIT
// kernels/filters/box_mean.h: the GPU box engines' rounded mean as a multiply-high, against the
// division it replaces, for every sum of every ksize each form serves (no GPU needed: the host
// computes the same high words the device's __umulhi and __umul64hi return).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kernels/filters/box_mean.h"
#if JETPIPE_HAVE_CUDA
#include "kernels/tuning_filters.h"
#endif

namespace jetpipe::dev {
namespace {

// The separable and tile engines' largest ksize (kernels/tuning_filters.h, which a CPU build does
// not declare).
constexpr int kMaxKsize = 65;
#if JETPIPE_HAVE_CUDA
static_assert(kMaxKsize == 2 * kSepMaxRadius + 1);
#endif

std::uint32_t mulhi32(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b) >> 32);
}
std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
}

// Sums s = 0 .. 255·area of a ksize whose mean differs from round(s / area) (half up), by form.
struct Misses {
  long long m32 = 0, m64 = 0;
};
Misses misses(int ksize) {
  const std::uint32_t area = static_cast<std::uint32_t>(ksize * ksize), d = 2 * area;
  const std::uint32_t magic = box_magic(d);
  const std::uint64_t magic64 = box_magic64(d);
  Misses m;
  for (std::uint32_t s = 0; s <= 255 * area; ++s) {
    const std::uint32_t n = 2 * s + area, want = n / d;
    m.m32 += mulhi32(n, magic) != want;
    m.m64 += mulhi64(n, magic64) != want;
  }
  return m;
}

TEST(BoxMean, MultiplyHighEqualsTheDivisionForEverySum) {
  for (int k = 1; k <= kMaxKsize; k += 2) {
    const Misses m = misses(k);
    EXPECT_EQ(m.m64, 0) << "box_magic64, ksize " << k;
    if (k <= kBoxMagic32MaxKsize) EXPECT_EQ(m.m32, 0) << "box_magic, ksize " << k;
  }
  // Where the 32-bit form stops: ksize 49 misses 28 sums (65 misses 226), hence box_magic64 for the
  // engines that go past kBoxMagic32MaxKsize.
  EXPECT_EQ(misses(49).m32, 28);
  EXPECT_EQ(misses(65).m32, 226);
}

}  // namespace
}  // namespace jetpipe::dev
