// SPDX-License-Identifier: MIT
// box: box filter GRAY8 → GRAY8 (OpenCV boxFilter with ddepth −1): mean over ksize × ksize when
// normalize, else the saturated sum.
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
