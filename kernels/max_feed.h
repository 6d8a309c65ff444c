// SPDX-License-Identifier: MIT
// What a response's writer (launch_harris_max) gathers for the detection reading the response, in
// the detection's workspace (detect_feed, kernels/detect.h):
// - max_key: the response's maximum, an order key (kernels/block/max_key.cuh) raised with
//   atomicMax: the quality threshold without a pass over the image;
// - bands (may be null): per band of 8 rows × 64 columns (rows 8b .. 8b + 7 of the image, columns
//   64c .. 64c + 63), the order key of the band's maximum at bands[c · band_pitch + b], 0 where no
//   launch wrote the whole band. A detection tile whose bands are all written and none above the
//   threshold has no candidate: its block returns without reading the response. Each detection
//   finish zeroes them for the next frame.
#pragma once

#include <cstdint>

namespace jetpipe {

struct MaxFeed {
  std::uint32_t* max_key = nullptr;
  std::uint32_t* bands = nullptr;
  int band_pitch = 0;  // entries from one band column to the next (≥ the image's rows / 8)
};
constexpr int kFeedBandRows = 8, kFeedBandCols = 64;

}  // namespace jetpipe
