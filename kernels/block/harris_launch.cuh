// SPDX-License-Identifier: MIT
// launch_harris with the fast kernel's shape chosen by the caller: for the tests, which drive the
// kernel's row logic through short strips and both lane widths, and the benchmark's sweep. Host
// code only (no device code), so C++ files include it. Defined in kernels/harris.cu.
//
//   launch_harris_rows(p, src, dst, 0, h, stream, FilterPath::kTiled, /*rows_per_warp=*/3,
//                      /*lane_cols=*/4);
#pragma once

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>

#include <cstdint>

#include "kernels/harris.h"
#include "kernels/texture.h"

namespace jetpipe {

// As launch_harris; for the fast kernel (ksize 3, block 3..7) rows_per_warp > 0 replaces the
// policy's rows per warp and lane_cols 4 or 8 its columns a lane (4 where 8 does not fit the
// width); the tile engine ignores both.
// max_key: as launch_harris_max's (null: none).
cudaError_t launch_harris_rows(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                               int y0, int y1, cudaStream_t stream, FilterPath path,
                               int rows_per_warp, int lane_cols, std::uint32_t* max_key = nullptr);

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
