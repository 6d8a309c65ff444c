// SPDX-License-Identifier: MIT
// 16 BGR8 / RGB8 pixels (48 bytes in 12 words) to their 16 GRAY8 values in 68 instructions
// (32 IDP4A, 16 LEA, 8 funnel shifts, 12 PRMT) instead of 124 (48 byte extracts, 48 IMAD, ...):
// the one colour conversion of the to_gray kernel and of the filters that read a colour frame as
// its gray image (BgrSrc, kernels/filters/source.cuh).
//
// Exact (kernels/to_gray.h: Y = (Σ c·v + 2^14) >> 15, c the 15-bit weights): with the doubled
// weights split in bytes, 2c = 256·hi + lo (hi, lo ≤ 255), a pixel's
//   t = 256·dp4a(v, hi) + dp4a(v, lo) + 2^15 = 2·Σ c·v + 2^15 < 2^24   (Σ c = 2^15, v ≤ 255),
// so t >> 16, its byte 2, is (2·Σ c·v + 2^15) >> 16 = (Σ c·v + 2^14) >> 15, and a PRMT that packs
// four outputs picks it out without a shift. tests/test_to_gray.cpp checks the identity over all
// 2^24 colours on the host; the GPU tests compare every output with the CPU twin.
#pragma once

#include <cstdint>

#include "kernels/to_gray.h"

namespace jetpipe::dev {

// t of the pixel in bytes 0..2 of v (the weights' byte 3 is zero) or 1..3 (weights shifted).
__device__ __forceinline__ std::uint32_t gray_t(std::uint32_t v, std::uint32_t hi,
                                                std::uint32_t lo) {
  return (__dp4a(v, hi, 0u) << 8) + __dp4a(v, lo, 1u << 15);
}

// The 16 outputs: byte 2 of each t, packed (12 PRMT).
__device__ __forceinline__ uint4 pack_gray16(const std::uint32_t (&t)[16]) {
  std::uint32_t out[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    // Byte 2 of each t: 0x62 takes byte 2 of the first and of the second into bytes 0 and 1.
    out[q] = __byte_perm(__byte_perm(t[4 * q], t[4 * q + 1], 0x62),
                         __byte_perm(t[4 * q + 2], t[4 * q + 3], 0x62), 0x5410);
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

__device__ __forceinline__ uint4 gray16(const std::uint32_t (&w)[12], GrayWeights k) {
  const std::uint32_t hi1 = k.hi << 8, lo1 = k.lo << 8;  // a pixel in bytes 1..3
  std::uint32_t t[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    // Pixel i's bytes start at byte b of the run: in word j at byte 0 or 1, or across words j
    // and j + 1 (bytes 2, 3), which a funnel shift brings to bytes 0..2.
    const int b = 3 * i, j = b / 4, at = b % 4;
    const std::uint32_t v = at < 2 ? w[j] : __funnelshift_r(w[j], w[j < 11 ? j + 1 : j], 8 * at);
    t[i] = at == 1 ? gray_t(v, hi1, lo1) : gray_t(v, k.hi, k.lo);
  }
  return pack_gray16(t);
}

// The same for 16 pixels of 4 bytes (BGRx / RGBx / RGBA: one word each, byte 3 ignored: the
// weights' byte 3 is zero): 32 IDP4A, 16 LEA, 12 PRMT.
__device__ __forceinline__ uint4 gray16_4(const std::uint32_t (&w)[16], GrayWeights k) {
  std::uint32_t t[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) t[i] = gray_t(w[i], k.hi, k.lo);
  return pack_gray16(t);
}

}  // namespace jetpipe::dev
