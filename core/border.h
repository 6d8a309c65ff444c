// SPDX-License-Identifier: MIT
// Border modes with OpenCV's names and meanings, and the one coordinate remap shared by the CPU twins
// and every CUDA path that does not use the texture unit's own addressing.
//   constant   iiiiii|abcdefgh|iiiiiii   (value v)
//   replicate  aaaaaa|abcdefgh|hhhhhhh
//   reflect    fedcba|abcdefgh|hgfedcb
//   reflect101 gfedcb|abcdefgh|gfedcba   (OpenCV's BORDER_DEFAULT)
//   wrap       cdefgh|abcdefgh|abcdefg
#pragma once

#include <string>

#include "core/hd.h"

namespace jetpipe {

enum class BorderMode { kConstant, kReplicate, kReflect, kReflect101, kWrap };

const char* to_string(BorderMode m);
// Parses OpenCV's names; returns false for anything else.
bool parse_border_mode(const std::string& s, BorderMode* out);

// Maps coordinate p into [0, len) for the mode; returns -1 for kConstant outside the image.
// Works for any distance outside (repeated reflection), and for len == 1.
JP_HD int border_remap(int p, int len, BorderMode mode) {
  if (p >= 0 && p < len) return p;
  switch (mode) {
    case BorderMode::kConstant: return -1;
    case BorderMode::kReplicate: return p < 0 ? 0 : len - 1;
    case BorderMode::kWrap: {
      int r = p % len;
      return r < 0 ? r + len : r;
    }
    case BorderMode::kReflect: {  // period 2·len: a b c | c b a
      const int period = 2 * len;
      int r = p % period;
      if (r < 0) r += period;
      return r < len ? r : period - 1 - r;
    }
    case BorderMode::kReflect101: {  // period 2·len − 2: a b c | b a
      if (len == 1) return 0;
      const int period = 2 * len - 2;
      int r = p % period;
      if (r < 0) r += period;
      return r < len ? r : period - r;
    }
  }
  return -1;
}

}  // namespace jetpipe

namespace jetpipe {

// A border mode with its constant value (used only by kConstant).
struct Border {
  BorderMode mode = BorderMode::kReflect101;
  double value = 0;
};

}  // namespace jetpipe
