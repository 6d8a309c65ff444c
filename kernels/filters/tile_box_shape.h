// SPDX-License-Identifier: MIT
// The box tile engine's tile shapes (host arithmetic, no CUDA; kernels/filters/tile_box.cuh):
// shared memory of a tile of tw × th outputs at radius r, and the shape of a column part's tiles
// (tile_box_part). tests/test_strips.cpp checks the shapes for every part width to 300 and every
// radius.
#pragma once

#include <cstddef>

namespace jetpipe::dev {

// Shared memory of a tile of tw × th outputs: the input (th + 2r rows of tw + 2r bytes, rounded to
// 16) and the column sums (th rows of tile_box_sum_pitch 16-bit sums).
constexpr int tile_box_cols(int tw, int r) { return tw + 2 * r; }
// An odd number of 32-bit words a row: the 16 or more rows a warp's lanes read at once fall in
// distinct banks.
constexpr int tile_box_sum_pitch(int tw, int r) {
  return 2 * (((tile_box_cols(tw, r) + 1) / 2) | 1);
}
constexpr int tile_box_in_bytes(int tw, int th, int r) {
  return ((th + 2 * r) * tile_box_cols(tw, r) + 15) / 16 * 16;
}
constexpr std::size_t tile_box_smem_bytes(int tw, int th, int r) {
  return static_cast<std::size_t>(tile_box_in_bytes(tw, th, r)) +
         static_cast<std::size_t>(th) * tile_box_sum_pitch(tw, r) * 2;
}

// One part of a launch: output columns [x0, x1) (x0 on 16) in tiles of tw columns (a multiple of
// 16, at most the engine's max_w) × th rows, across × ⌈rows / th⌉ of them, row-major. th · tw / 16
// ≤ the block's threads: a thread 16 outputs of a row.
struct TileBoxPart {
  int x0 = 0, x1 = 0;
  int tw = 0, th = 0;
  int across = 0, tiles = 0;
};

// Columns [x0, x1) of `rows` output rows at radius r, blocks of `threads` threads: tiles as wide as
// the part (to max_w, on 16) and as tall as the threads at 16 outputs each make them, fewer rows
// where the shared memory would pass max_smem (narrow tiles at large radii). An empty part has no
// tiles.
constexpr TileBoxPart tile_box_part(int x0, int x1, long long rows, int r, int max_w, int threads,
                                    std::size_t max_smem) {
  TileBoxPart p;
  p.x0 = x0;
  p.x1 = x1;
  const int w = x1 > x0 ? x1 - x0 : 0;
  if (w == 0 || rows <= 0) return p;
  p.tw = w >= max_w ? max_w : (w + 15) / 16 * 16;
  p.th = threads / (p.tw / 16);
  while (p.th > 1 && tile_box_smem_bytes(p.tw, p.th, r) > max_smem) --p.th;
  p.across = (w + p.tw - 1) / p.tw;
  p.tiles = static_cast<int>(p.across * ((rows + p.th - 1) / p.th));
  return p;
}

}  // namespace jetpipe::dev
