// SPDX-License-Identifier: MIT
// to_gray: BGR8 / RGB8 / GRAY8 → GRAY8 with OpenCV cvtColor's fixed-point weights and rounding:
//   Y = (R·4899 + G·9617 + B·1868 + 2^13) >> 14   (exact; GRAY8 input is copied).
#pragma once

#include "pipeline/core/image.h"

namespace jetpipe {

// Writes output rows [y0, y1) of dst (GRAY8, same size as src).
void to_gray_ref(const ImageView& src, const ImageView& dst, int y0, int y1);

}  // namespace jetpipe
