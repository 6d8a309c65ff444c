// SPDX-License-Identifier: MIT
// Pixel groups of a point operation that writes one GRAY8 byte per pixel (to_gray, threshold): each
// thread owns up to 16 output pixels. Group 0 is the row's head, the pixels before the destination's
// first 16-byte aligned address; group g ≥ 1 is the 16 pixels from head + 16·(g − 1), so full
// groups store one aligned 16-byte vector. A 2D grid: x over groups (grid-stride), y over rows.
//
//   for (int r = blockIdx.y; r < rows; r += gridDim.y) {
//     const dev::OutRow o = dev::out_row(dst_row_pointer, width);
//     for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < o.groups; g += gridDim.x * blockDim.x) {
//       int x, n; o.group(g, &x, &n);   // pixels [x, x + n); n == 16 and g ≥ 1: aligned vector
//     }
//   }
#pragma once

#include <cstdint>

namespace jetpipe::dev {

struct OutRow {
  int head;    // pixels before the first aligned destination byte (< 16, capped at the width)
  int width;
  int groups;  // 1 + ceil((width − head) / 16)

  __device__ __forceinline__ void group(int g, int* x, int* n) const {
    if (g == 0) {
      *x = 0;
      *n = head;
    } else {
      *x = head + 16 * (g - 1);
      *n = min(16, width - *x);
    }
  }
};

__device__ __forceinline__ OutRow out_row(const std::uint8_t* dst_row, int width) {
  OutRow o;
  o.width = width;
  o.head = min(width, static_cast<int>((0u - static_cast<unsigned>(
                                            reinterpret_cast<std::uintptr_t>(dst_row))) & 15u));
  o.groups = 1 + (width - o.head + 15) / 16;
  return o;
}

// Groups of the widest row of this width: the x extent of a launch's grid.
__host__ __device__ inline int max_groups(int width) { return 2 + width / 16; }

}  // namespace jetpipe::dev
