// SPDX-License-Identifier: MIT
// A frame's maximum as one 32-bit word that atomicMax can update: the order-preserving key of a
// float (−0 taken as +0; NaN never published), 0 meaning "no value yet". detect keeps the maximum
// of its response there (the quality threshold); harris can gather it as it writes the response
// (launch_harris_max), sparing the detection its own pass over the image.
//
//   dev::publish_max(slot, m);   // every lane of the warp; m = −inf for "nothing"
#pragma once

#include <cstdint>

namespace jetpipe::dev {

__device__ __forceinline__ std::uint32_t order_key(float s) {
  std::uint32_t b = __float_as_uint(s);
  if (b == 0x80000000u) b = 0;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float from_order_key(std::uint32_t k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
}

// The warp's maximum of m as an order key, 0 where no lane has a value (m = −inf or NaN). Every
// lane of the warp calls it (full-warp reduction).
__device__ __forceinline__ std::uint32_t warp_max_key(float m) {
  const std::uint32_t key = (m > -INFINITY) ? order_key(m) : 0u;  // NaN > x is false: 0
  return __reduce_max_sync(0xffffffffu, key);
}

// The warp's maximum key (warp_max_key) into *slot: one atomicMax per warp, and none where the
// slot already holds as much (most warps of a frame, once a large value is in).
__device__ __forceinline__ void publish_key(std::uint32_t* slot, std::uint32_t best) {
  if ((threadIdx.x & 31) == 0 && best != 0 &&
      best > *static_cast<volatile const std::uint32_t*>(slot)) {
    atomicMax(slot, best);
  }
}

// The warp's maximum of m into *slot. m = −inf or NaN: no value. Every lane of the warp calls it.
__device__ __forceinline__ void publish_max(std::uint32_t* slot, float m) {
  publish_key(slot, warp_max_key(m));
}

}  // namespace jetpipe::dev
