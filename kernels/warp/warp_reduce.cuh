// SPDX-License-Identifier: MIT
// Warp-wide reductions by xor shuffles (a butterfly: every lane ends with the result; for floating
// point the order of additions is fixed by the lane pattern, so results are deterministic).
//
//   unsigned long long s = dev::warp_sum(my_sum);   // all 32 lanes call it
#pragma once

namespace jetpipe::dev {

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <class T>
__device__ __forceinline__ T warp_min(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const T w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w < v ? w : v;
  }
  return v;
}

template <class T>
__device__ __forceinline__ T warp_max(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const T w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w > v ? w : v;
  }
  return v;
}

// Double sums with the additions written as __dadd_rn: the same rounding whatever the compiler's
// contraction settings.
__device__ __forceinline__ double warp_sum_rn(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = __dadd_rn(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

}  // namespace jetpipe::dev
