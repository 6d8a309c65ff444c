// SPDX-License-Identifier: MIT
// The box filter's rounded mean on the GPU (host arithmetic, no CUDA): round(s / area) =
// floor(n / d) with n = 2s + area and d = 2·area, as a multiply-high by a magic number instead of a
// division. With M = floor(2^B / d) + 1 and e = M·d − 2^B ∈ (0, d], floor(n·M / 2^B) = floor(n / d)
// whenever n·e < 2^B (the error n·e / (d·2^B) stays under 1/d).
//   - box_magic, B = 32 (__umulhi, one instruction): n·e < 2^32 holds to ksize 45; the fast kernel
//     (ksize ≤ 9) and the running kernel (≤ 31) use it.
//   - box_magic64, B = 64 (__umul64hi): exact for every n < 2^32, so every ksize to 65; the tile
//     engine and the separable engine use it. (The tile engine once took the 32-bit form to 65: off
//     by one in 1-11 pixels of a frame, H200 2026-11-28.)
// tests/test_box_mean.cpp checks both against the division for every sum of every ksize they take.
#pragma once

#include <cstdint>

namespace jetpipe::dev {

constexpr std::uint32_t box_magic(std::uint32_t d) {
  return static_cast<std::uint32_t>((std::uint64_t(1) << 32) / d + 1);
}
constexpr std::uint64_t box_magic64(std::uint64_t d) { return ~std::uint64_t(0) / d + 1; }

// The largest ksize box_magic serves (its users static_assert against it).
constexpr int kBoxMagic32MaxKsize = 45;

}  // namespace jetpipe::dev
