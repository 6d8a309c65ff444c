// SPDX-License-Identifier: MIT
// CPU twin of detect: threshold + non-maximum suppression over a (2r+1)² window clipped to the
// image. Equal neighbours do not suppress each other: every pixel of a plateau above the threshold
// survives.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/detect.h"

namespace jetpipe {

namespace {

float score_at(const ImageView& src, int x, int y) {
  switch (src.format) {
    case PixelFormat::kF32:
      return src.row<const float>(y)[x];
    case PixelFormat::kS16:
      return src.row<const std::int16_t>(y)[x];
    default:
      return src.row<const std::uint8_t>(y)[x];
  }
}

}  // namespace

float detect_max_ref(const ImageView& src, int y0, int y1) {
  float m = -std::numeric_limits<float>::infinity();
  for (int y = y0; y < y1; ++y) {
    for (int x = 0; x < src.width; ++x) m = std::max(m, score_at(src, x, y));
  }
  return m;
}

void detect_candidates_ref(const DetectParams& p, float thresh, const ImageView& src, int y0,
                           int y1, std::vector<Detection>* out) {
  const int r = p.nms_radius;
  for (int y = y0; y < y1; ++y) {
    for (int x = 0; x < src.width; ++x) {
      const float s = score_at(src, x, y);
      if (!(s > thresh)) continue;
      bool is_max = true;
      for (int v = std::max(y - r, 0); is_max && v <= std::min(y + r, src.height - 1); ++v) {
        for (int u = std::max(x - r, 0); u <= std::min(x + r, src.width - 1); ++u) {
          if (score_at(src, u, v) > s) {
            is_max = false;
            break;
          }
        }
      }
      if (is_max) out->push_back(Detection{x, y, s});
    }
  }
}

DetectResult detect_finish(std::vector<Detection> candidates, int max_detections) {
  std::sort(candidates.begin(), candidates.end(), detection_before);
  const std::size_t keep =
      std::min(candidates.size(), static_cast<std::size_t>(std::max(max_detections, 0)));
  DetectResult r;
  r.count = keep;
  r.overflow = candidates.size() - keep;
  candidates.resize(keep);
  r.points = std::move(candidates);
  return r;
}

}  // namespace jetpipe
