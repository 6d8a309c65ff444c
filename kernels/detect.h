// SPDX-License-Identifier: MIT
// detect: non-maximum suppression on a single-channel response (F32, S16 or GRAY8). A pixel is a
// candidate when its score > threshold and no pixel of its (2r+1)² window (clipped to the image) has a
// larger score. With quality q, threshold = q · (the frame's maximum), like goodFeaturesToTrack.
// The best max_detections candidates in the contract's order are reported; the rest are counted as
// overflow.
#pragma once

#include <vector>

#include "pipeline/core/image.h"
#include "pipeline/core/results.h"

namespace jetpipe {

struct DetectParams {
  bool use_quality = false;
  double threshold = 0;  // absolute, when !use_quality
  double quality = 0.01; // relative to the frame's maximum, when use_quality
  int nms_radius = 1;
  int max_detections = 1000;
};

inline int detect_halo(const DetectParams& p) { return p.nms_radius; }

// Maximum score over rows [y0, y1) (−infinity for no rows).
float detect_max_ref(const ImageView& src, int y0, int y1);

// Appends the candidates of rows [y0, y1) (raster order) with score > thresh.
void detect_candidates_ref(const DetectParams& p, float thresh, const ImageView& src, int y0, int y1,
                           std::vector<Detection>* out);

// Sorts all candidates in the contract's order and keeps the best max_detections.
DetectResult detect_finish(std::vector<Detection> candidates, int max_detections);

}  // namespace jetpipe
