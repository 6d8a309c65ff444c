// SPDX-License-Identifier: MIT
// box: box filter GRAY8 → GRAY8 (OpenCV boxFilter with ddepth −1): mean over ksize × ksize when
// normalize (exact integer sum, rounded to nearest: ksize² is odd, so no ties), else the saturated
// sum. A constant border is saturate_cast<uchar>(border.value).
#pragma once

#include "pipeline/core/border.h"
#include "pipeline/core/image.h"

namespace jetpipe {

struct BoxParams {
  int ksize = 3;  // odd, ≥ 1
  bool normalize = true;
  Border border;
};

inline int box_halo(const BoxParams& p) { return p.ksize / 2; }

void box_ref(const BoxParams& p, const ImageView& src, const ImageView& dst, int y0, int y1);

}  // namespace jetpipe
