// SPDX-License-Identifier: MIT
// Where the strip kernels' warps go across a row (host arithmetic, no CUDA): the fast filter
// kernel (fast_dispatch.cuh), convolve's strip kernel (convolve.cu), harris' fast kernel
// (harris/dispatch.cu) and the running box's tile-edged split (box.cu). Strips start at
// x0 = 16 + out · w while their columns x0 .. x0 + need − 1 lie in the row; the rest of the row
// goes to the right edge tiles if that leaves at most tile_w columns from the 16-column boundary
// after the last strip, or else one more strip moved left onto an `align`-byte boundary (the last
// one that fits), so the edge tiles get fewer columns. The running box (kernels/box.cu) splits its
// strips into interior and edge ones otherwise: run_box_split, and run_box_parts gives each kernel
// its strips; run_box_edge_rows the edge kernel's rows a warp.
#pragma once

namespace jetpipe::dev {

struct StripPlacement {
  int strips = 0;   // warps across a row
  int x0_last = 0;  // the last strip's first output column
  int edge_x0 = 0;  // the right edge tiles' first column: after the last strip's outputs, on 16
};

// width ≥ 16 + need (the launchers take the strips from there on).
constexpr StripPlacement place_strips(int width, int out, int need, int align, int tile_w) {
  StripPlacement p;
  p.strips = (width - 16 - need) / out + 1;
  p.x0_last = 16 + (p.strips - 1) * out;
  if (width - ((p.x0_last + out) & ~15) > tile_w) {
    p.x0_last = (width - need) / align * align;
    ++p.strips;
  }
  p.edge_x0 = (p.x0_last + out) & ~15;
  return p;
}

// The running box's column strips (strip k: outputs 480k .. 480k + 479 of `out` = 480, reading
// columns 480k − 16 .. 480k + out + 15): strips 1 .. inner_end − 1 read only columns inside the
// row (the interior kernel: cp.async alone, for 16-byte aligned views: vec); strip 0 and strips
// inner_end .. strips − 1 go to the edge kernel (every strip where !vec).
struct RunBoxSplit {
  int strips = 0;     // strips across the row
  int inner_end = 0;  // interior strips are [1, inner_end); none where inner_end ≤ 1
};

constexpr RunBoxSplit run_box_split(int width, int out, bool vec) {
  RunBoxSplit p;
  p.strips = (width + out - 1) / out;
  const int fit = width >= out + 16 ? (width - out - 16) / out + 1 : 0;  // 480k + 496 ≤ width
  p.inner_end = vec ? (fit < p.strips ? fit : p.strips) : 0;
  if (p.inner_end < 1) p.inner_end = 0;
  return p;
}

// Which of the image's strips one kernel of the split takes: its segs column strips, its strip i
// being the image's strip i < seg_split ? i : i + seg_jump (running_box_kernel, strip_of).
struct RunBoxStrips {
  int segs = 0, seg_split = 0, seg_jump = 0;
  constexpr int strip_of(int i) const { return i < seg_split ? i : i + seg_jump; }
};
struct RunBoxParts {
  RunBoxStrips inner;  // segs 0: no interior kernel
  RunBoxStrips edge;   // strip 0 and [inner_end, strips); every strip without an interior kernel
};

constexpr RunBoxParts run_box_parts(const RunBoxSplit& s) {
  RunBoxParts p;
  if (s.inner_end > 1) {
    p.inner = {s.inner_end - 1, 0, 1};
    p.edge = {1 + s.strips - s.inner_end, 1, s.inner_end - 1};
  } else {
    p.edge = {s.strips, s.strips, 0};
  }
  return p;
}

// The split's edge kernel's rows a warp: the fewest (at least `least`) whose warps, segs strips ×
// ⌈rows / it⌉, fit in `resident_warps`, one wave of the device's resident blocks (one warp a strip
// where even that does not fit). Its warps each re-read 2R halo rows, so more rows a warp cost
// fewer halo reads but a longer wave; a second wave costs a whole warp's time again
// (docs/decisions/046-box-running-ring-dp2a.md).
constexpr int run_box_edge_rows(int segs, int rows, long long resident_warps, int least) {
  const long long per_strip = segs > 0 ? resident_warps / segs : 0;  // warps a strip may have
  const long long r = per_strip > 0 ? (rows + per_strip - 1) / per_strip : rows;
  return static_cast<int>(r < least ? least : r);
}

}  // namespace jetpipe::dev
