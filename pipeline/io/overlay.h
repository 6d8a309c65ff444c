// SPDX-License-Identifier: MIT
// Drawing on BGR8 host images in plain C++ (no OpenCV), for `jetpipe run --annotate`: points,
// rectangles, shading, crosses and text in a 5x7 bitmap font; annotate() draws a frame's results
// with them. Everything clips at the image's edges; nothing is allocated but annotate()'s copy.
//
//   HostImage out = annotate(frame, record.results, record.index);  // a marked BGR8 copy
//   const Canvas c(out.view());                                     // or any BGR8 view, in place
//   c.cross(150, 80, 3, {60, 255, 60});
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/image.h"
#include "core/results.h"
#include "pipeline/io/convert.h"  // convert_8bit

namespace jetpipe {

struct Bgr {
  std::uint8_t b, g, r;
};

// Draws into a BGR8 view (the caller's pixels, changed in place). Coordinates are pixels, x right,
// y down; whatever falls outside the view is left out.
class Canvas {
 public:
  explicit Canvas(const ImageView& bgr8) : v_(bgr8) {}

  void put(int x, int y, Bgr c) const;
  void fill(int x0, int y0, int w, int h, Bgr c) const;
  // Darkens a rectangle (each channel to 3/8, rounded down) so an overlay reads on any picture.
  void shade(int x0, int y0, int w, int h) const;
  // Text in the 5x7 font, each font pixel a scale × scale square, 6 × scale per character
  // (characters the font lacks leave a blank); returns the width advanced.
  int text(int x0, int y0, const std::string& s, int scale, Bgr c) const;
  // A "+" of half-length `arm` centred on (cx, cy): 4 × arm + 1 pixels.
  void cross(int cx, int cy, int arm, Bgr c) const;

 private:
  ImageView v_;
};

// A BGR8 copy of `image` (any 8-bit frame layout, convert_8bit) with the records' detections as
// crosses and the first histogram and stats (and the frame index) as an overlay at the top left.
HostImage annotate(const ImageView& image,
                   const std::vector<std::pair<std::string, StageResult>>& results,
                   std::int64_t frame_index);

}  // namespace jetpipe
