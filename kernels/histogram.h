// SPDX-License-Identifier: MIT
// histogram: uniform bins over [lo, hi) of a GRAY8 image, as OpenCV calcHist (uniform): a value v in
// range goes to bin floor((v − lo) · bins / (hi − lo)); values outside [lo, hi) are not counted.
// Like calcHist, lo and hi are taken as float (its ranges are float) and the bin is computed in
// double as floor(v·t − t·lo), t = bins / (hi − lo), clamped to [0, bins).
#pragma once

#include <cstdint>

#include "pipeline/core/image.h"

namespace jetpipe {

struct HistogramParams {
  int bins = 256;  // 1..256
  double lo = 0, hi = 256;
};

// The bin of each 8-bit value, or −1 when out of range (the table the GPU uses too).
void histogram_lut(const HistogramParams& p, int lut[256]);

// Adds the counts of rows [y0, y1) of src to counts[0 .. bins).
void histogram_ref(const HistogramParams& p, const ImageView& src, int y0, int y1,
                   std::uint64_t* counts);

}  // namespace jetpipe
