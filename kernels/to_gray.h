// SPDX-License-Identifier: MIT
// to_gray: BGR8 / RGB8 / GRAY8 → GRAY8 with OpenCV cvtColor's fixed-point weights and rounding
// (OpenCV 4.x: 15 fractional bits; the older 14-bit weights 4899/9617/1868 differ by 1 on ~0.3% of
// colours, checked over all 2^24 against OpenCV 4.6):
//   Y = (R·9798 + G·19235 + B·3735 + 2^14) >> 15   (exact; GRAY8 input is copied).
#pragma once

#include "pipeline/core/image.h"

namespace jetpipe {

// Writes output rows [y0, y1) of dst (GRAY8, same size as src).
void to_gray_ref(const ImageView& src, const ImageView& dst, int y0, int y1);

}  // namespace jetpipe
