// SPDX-License-Identifier: MIT
// threshold: OpenCV THRESH_BINARY on GRAY8: dst = src > floor(t) ? round(max_value) : 0, with t given
// or Otsu's from the image's 256-bin histogram (OpenCV's getThreshVal_Otsu_8u, exact).
#pragma once

#include <cstdint>

#include "pipeline/core/image.h"

namespace jetpipe {

int otsu_threshold(const std::uint64_t hist[256]);

void threshold_ref(double thresh, double max_value, const ImageView& src, const ImageView& dst,
                   int y0, int y1);

}  // namespace jetpipe
