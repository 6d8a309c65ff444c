// SPDX-License-Identifier: MIT
// The overlay drawing of `--annotate` (overlay.h): a 5x7 bitmap font, a clipped canvas, and the
// panel of a frame's results (index, stats, detections count, histogram plot).
#include "pipeline/io/overlay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <variant>

namespace jetpipe {

namespace {

// 5x7 glyphs, one byte per row (low 5 bits, MSB left), for the overlay's few characters.
struct Glyph {
  char c;
  std::uint8_t rows[7];
};
constexpr Glyph kFont[] = {{'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
                           {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
                           {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
                           {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
                           {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
                           {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
                           {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
                           {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
                           {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
                           {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
                           {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}},
                           {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
                           {'#', {0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A}},
                           {':', {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}},
                           {'a', {0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F}},
                           {'d', {0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F}},
                           {'e', {0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E}},
                           {'i', {0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E}},
                           {'m', {0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11}},
                           {'n', {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11}},
                           {'s', {0x00, 0x00, 0x0E, 0x10, 0x0E, 0x01, 0x1E}},
                           {'t', {0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06}},
                           {'x', {0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11}}};

std::string fmt(const char* f, double v) {
  char b[48];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

void Canvas::put(int x, int y, Bgr c) const {
  if (x < 0 || y < 0 || x >= v_.width || y >= v_.height) return;
  std::uint8_t* p = v_.row<std::uint8_t>(y) + 3 * x;
  p[0] = c.b;
  p[1] = c.g;
  p[2] = c.r;
}

void Canvas::fill(int x0, int y0, int w, int h, Bgr c) const {
  for (int y = y0; y < y0 + h; ++y) {
    for (int x = x0; x < x0 + w; ++x) put(x, y, c);
  }
}

void Canvas::shade(int x0, int y0, int w, int h) const {
  for (int y = std::max(0, y0); y < std::min(v_.height, y0 + h); ++y) {
    std::uint8_t* p = v_.row<std::uint8_t>(y);
    for (int x = std::max(0, x0); x < std::min(v_.width, x0 + w); ++x) {
      for (int k = 0; k < 3; ++k) p[3 * x + k] = static_cast<std::uint8_t>(p[3 * x + k] * 3 / 8);
    }
  }
}

int Canvas::text(int x0, int y0, const std::string& s, int scale, Bgr c) const {
  int x = x0;
  for (char ch : s) {
    for (const Glyph& g : kFont) {
      if (g.c != ch) continue;
      for (int r = 0; r < 7; ++r) {
        for (int b = 0; b < 5; ++b) {
          if (g.rows[r] & (0x10 >> b)) fill(x + b * scale, y0 + r * scale, scale, scale, c);
        }
      }
    }
    x += 6 * scale;
  }
  return x - x0;
}

void Canvas::cross(int cx, int cy, int arm, Bgr c) const {
  for (int d = -arm; d <= arm; ++d) {
    put(cx + d, cy, c);
    put(cx, cy + d, c);
  }
}

HostImage annotate(const ImageView& image,
                   const std::vector<std::pair<std::string, StageResult>>& results,
                   std::int64_t frame_index) {
  HostImage out = convert_8bit(image, PixelFormat::kBgr8);
  const Canvas c(out.view());
  const int s = image.width >= 1280 ? 2 : 1;
  const HistogramResult* hist = nullptr;
  const StatsResult* stats = nullptr;
  std::uint64_t detections = 0;
  bool have_detect = false;
  for (const auto& [name, r] : results) {
    if (const auto* h = std::get_if<HistogramResult>(&r)) {
      if (!hist) hist = h;
    } else if (const auto* st = std::get_if<StatsResult>(&r)) {
      if (!stats) stats = st;
    } else if (const auto* d = std::get_if<DetectResult>(&r)) {
      have_detect = true;
      detections += d->count;
      for (const Detection& p : d->points) {
        c.cross(p.x, p.y, 3 * s, {0, 0, 0});  // a dark outline first, then green
        c.cross(p.x + 1, p.y + 1, 3 * s, {0, 0, 0});
        c.cross(p.x, p.y, 3 * s, {60, 255, 60});
      }
    }
  }
  std::vector<std::string> lines = {"#" + std::to_string(frame_index)};
  if (stats) {
    lines.push_back("mean " + fmt("%.1f", stats->mean) + " sd " + fmt("%.1f", stats->stddev));
    lines.push_back("min " + fmt("%g", stats->min) + " max " + fmt("%g", stats->max));
  }
  if (have_detect) lines.push_back("det " + std::to_string(detections));
  const int plot_w = 128 * s, plot_h = hist ? 48 * s : 0, line_h = 9 * s, pad = 3 * s;
  std::size_t longest = 0;
  for (const auto& l : lines) longest = std::max(longest, l.size());
  const int panel_w = std::max(plot_w, static_cast<int>(longest) * 6 * s) + 2 * pad;
  const int panel_h = plot_h + (hist ? pad : 0) + static_cast<int>(lines.size()) * line_h + 2 * pad;
  c.shade(4, 4, panel_w, panel_h);
  int y = 4 + pad;
  if (hist && !hist->bins.empty()) {
    const std::size_t nb = hist->bins.size();
    std::vector<std::uint64_t> col(static_cast<std::size_t>(plot_w), 0);
    for (int x = 0; x < plot_w; ++x) {
      const std::size_t b0 = static_cast<std::size_t>(x) * nb / plot_w;
      const std::size_t b1 = std::max(b0 + 1, static_cast<std::size_t>(x + 1) * nb / plot_w);
      for (std::size_t b = b0; b < b1 && b < nb; ++b) col[x] = std::max(col[x], hist->bins[b]);
    }
    const std::uint64_t peak =
        std::max<std::uint64_t>(1, *std::max_element(col.begin(), col.end()));
    for (int x = 0; x < plot_w; ++x) {
      // Square-root scale: the background's peak does not flatten everything else.
      const int hgt = static_cast<int>(
          std::lround(plot_h * std::sqrt(static_cast<double>(col[x]) / static_cast<double>(peak))));
      c.fill(4 + pad + x, y + plot_h - hgt, 1, hgt, {230, 200, 120});
    }
    y += plot_h + pad;
  }
  for (const auto& l : lines) {
    c.text(4 + pad, y, l, s, {255, 255, 255});
    y += line_h;
  }
  return out;
}

}  // namespace jetpipe
