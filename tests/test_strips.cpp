// SPDX-License-Identifier: MIT
// kernels/launch/strips.h: the strip kernels' placement across a row, against the formulas each
// launcher wrote out before it (fast filter kernel, convolve's strips, harris' 8- and 4-column
// lanes), for every width the strips take up to 20,000, and the invariants the kernels rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/filters/tile_box_shape.h"
#include "kernels/launch/strips.h"
#if JETPIPE_HAVE_CUDA
#include "kernels/tuning_filters.h"
#endif

namespace jetpipe::dev {
namespace {

// The edge tiles' widths (kernels/tuning_filters.h, whose constants a CPU build does not declare).
constexpr int kSepW = 64, kConvW = 64, kHarrisW = 32;
constexpr int kBoxTileW = 256, kBoxTileThreads = 256;
#if JETPIPE_HAVE_CUDA
static_assert(kSepW == kSepTileW && kConvW == kConvTileW && kHarrisW == kHarrisTileW);
static_assert(kBoxTileW == kTileBoxW && kBoxTileThreads == kTileBoxThreads);
#endif

struct Case {
  const char* name;
  int out, need, align, tile_w;
};

// The launchers' own arithmetic before place_strips (fast_dispatch.cuh, convolve.cu at 512
// outputs, harris/dispatch.cu).
StripPlacement fast_before(int width) {
  StripPlacement p;
  p.strips = (width - 512) / 480 + 1;
  p.x0_last = 16 + (p.strips - 1) * 480;
  if (width - (p.x0_last + 480) > kSepW) {
    p.x0_last = ((width - 496) / 16) * 16;
    ++p.strips;
  }
  p.edge_x0 = p.x0_last + 480;
  return p;
}
StripPlacement convolve_before(int width) {
  StripPlacement p;
  p.strips = (width - (512 + 32)) / 512 + 1;
  p.x0_last = 16 + (p.strips - 1) * 512;
  if (width - (p.x0_last + 512) > kConvW) {
    p.x0_last = ((width - 512 - 16) / 16) * 16;
    ++p.strips;
  }
  p.edge_x0 = p.x0_last + 512;
  return p;
}
StripPlacement harris_before(int width, int out, int need, int align) {
  StripPlacement p;
  p.strips = (width - 16 - need) / out + 1;
  p.x0_last = 16 + (p.strips - 1) * out;
  if (width - ((p.x0_last + out) & ~15) > kHarrisW) {
    p.x0_last = (width - need) / align * align;
    ++p.strips;
  }
  p.edge_x0 = (p.x0_last + out) & ~15;
  return p;
}

TEST(StripPlacement, EqualsEachLaunchersFormula) {
  for (int width = 16 + 496; width <= 20000; ++width) {
    const StripPlacement a = place_strips(width, 480, 496, 16, kSepW), b = fast_before(width);
    ASSERT_EQ(a.strips, b.strips) << "fast, width " << width;
    ASSERT_EQ(a.x0_last, b.x0_last) << "fast, width " << width;
    ASSERT_EQ(a.edge_x0, b.edge_x0) << "fast, width " << width;
  }
  for (int width = 16 + 528; width <= 20000; ++width) {
    const StripPlacement a = place_strips(width, 512, 528, 16, kConvW), b = convolve_before(width);
    ASSERT_EQ(a.strips, b.strips) << "convolve, width " << width;
    ASSERT_EQ(a.x0_last, b.x0_last) << "convolve, width " << width;
  }
  for (const Case& c :
       {Case{"harris 8", 240, 256, 16, kHarrisW}, Case{"harris 4", 120, 136, 8, kHarrisW}}) {
    for (int width = 16 + c.need; width <= 20000; ++width) {
      const StripPlacement a = place_strips(width, c.out, c.need, c.align, c.tile_w),
                           b = harris_before(width, c.out, c.need, c.align);
      ASSERT_EQ(a.strips, b.strips) << c.name << ", width " << width;
      ASSERT_EQ(a.x0_last, b.x0_last) << c.name << ", width " << width;
      ASSERT_EQ(a.edge_x0, b.edge_x0) << c.name << ", width " << width;
    }
  }
}

// What the kernels assume: every strip's columns inside the row, strips in order and aligned, the
// last one not left of the one before, and the right edge tiles' columns ≤ the tile width.
TEST(StripPlacement, StripsInsideTheRowAndEdgeTilesNarrow) {
  for (const Case& c :
       {Case{"fast", 480, 496, 16, kSepW}, Case{"convolve", 512, 528, 16, kConvW},
        Case{"harris 8", 240, 256, 16, kHarrisW}, Case{"harris 4", 120, 136, 8, kHarrisW}}) {
    for (int width = 16 + c.need; width <= 20000; ++width) {
      const StripPlacement p = place_strips(width, c.out, c.need, c.align, c.tile_w);
      ASSERT_GE(p.strips, 1) << c.name << ", width " << width;
      ASSERT_LE(p.x0_last + c.need, width) << c.name << ", width " << width;
      ASSERT_EQ(p.x0_last % c.align, 0) << c.name << ", width " << width;
      const int before = 16 + (p.strips - 2) * c.out;  // the strip left of the last one
      if (p.strips >= 2) ASSERT_GE(p.x0_last, before) << c.name << ", width " << width;
      ASSERT_LE(width - p.edge_x0, c.tile_w) << c.name << ", width " << width;
      ASSERT_EQ(p.edge_x0 % 16, 0) << c.name << ", width " << width;
    }
  }
}

// The running box's interior strips read only columns inside the row; the two kernels' strips
// (run_box_parts, as box.cu launches them and running_box_kernel maps them) are every strip once;
// unaligned views have no interior strips.
TEST(RunBoxSplit, InteriorStripsInsideAndEveryStripOnce) {
  constexpr int out = 480;
  for (int width = 1; width <= 20000; ++width) {
    for (bool vec : {false, true}) {
      const RunBoxSplit p = run_box_split(width, out, vec);
      ASSERT_EQ(p.strips, (width + out - 1) / out) << width;
      const RunBoxParts parts = run_box_parts(p);
      ASSERT_EQ(parts.inner.segs, std::max(0, p.inner_end - 1)) << width;
      std::vector<int> seen(static_cast<std::size_t>(p.strips), 0);
      for (int i = 0; i < parts.inner.segs; ++i) {
        const int k = parts.inner.strip_of(i);
        ASSERT_GE(k, 1) << width;
        ASSERT_LT(k, p.inner_end) << width;
        ASSERT_GE(out * k - 16, 0) << width;
        ASSERT_LE(out * k + out + 16, width) << width << " strip " << k;
        ++seen[static_cast<std::size_t>(k)];
      }
      for (int i = 0; i < parts.edge.segs; ++i) {
        const int k = parts.edge.strip_of(i);
        ASSERT_GE(k, 0) << width;
        ASSERT_LT(k, p.strips) << width;
        ++seen[static_cast<std::size_t>(k)];
      }
      for (int k = 0; k < p.strips; ++k) ASSERT_EQ(seen[static_cast<std::size_t>(k)], 1) << width;
      if (!vec) ASSERT_EQ(p.inner_end, 0);
      // The last interior strip is the last one that fits: the next reads past the row or is the
      // image's last strip.
      if (vec && p.inner_end >= 1 && p.inner_end < p.strips) {
        ASSERT_GT(out * p.inner_end + out + 16, width) << width;
      }
    }
  }
}

// The edge kernel's rows a warp fit its warps in one wave, and one row fewer would not (unless at
// the floor); where one warp a strip is too many already, one warp a strip.
TEST(RunBoxSplit, EdgeRowsFewestThatFitOneWave) {
  const auto warps = [](int segs, int rows, int r) {
    return static_cast<long long>(segs) * ((rows + r - 1) / r);
  };
  for (int segs = 1; segs <= 5; ++segs) {
    for (int rows = 1; rows <= 400; rows += 3) {
      for (long long resident = 1; resident <= 300; resident += 7) {
        for (int least : {1, 4}) {
          const int r = run_box_edge_rows(segs, rows, resident, least);
          ASSERT_GE(r, least);
          if (resident < segs) {
            ASSERT_EQ(r, std::max(rows, least)) << segs << " " << rows << " " << resident;
            continue;
          }
          ASSERT_LE(warps(segs, rows, r), resident) << segs << " " << rows << " " << resident;
          if (r > least) {
            ASSERT_GT(warps(segs, rows, r - 1), resident) << segs << " " << rows << " " << resident;
          }
        }
      }
    }
  }
  // The H200's 16384² split: two edge strips, 132 SMs × 3 blocks × 4 warps; 4K's.
  EXPECT_EQ(run_box_edge_rows(2, 16384, 132 * 12, 4), 21);
  EXPECT_EQ(run_box_edge_rows(2, 2160, 132 * 12, 4), 4);
}

// The box tile engine's column parts (tile_box_part, the running box's edge columns): for every
// part width to 300, radius 1..32 (ksize to 65) and heights around the tile heights, tiles cover
// the part and the rows exactly as the kernel walks them, a 16-aligned width no wider than the
// engine's and under 16 past the part, at most one thread a 16 outputs, the shared memory within 48
// KB, and as tall as the threads allow wherever that fits (every radius ≤ 15, the running
// kernel's).
TEST(TileBoxPart, ShapesCoverThePartWithinTheBlock) {
  constexpr std::size_t kMaxSmem = 48 * 1024;
  for (int w = 0; w <= 300; ++w) {
    for (int r = 1; r <= 32; ++r) {
      for (long long rows : {1LL, 5LL, 16LL, 85LL, 86LL, 256LL, 257LL, 4097LL}) {
        const int x0 = 32;
        const TileBoxPart p =
            tile_box_part(x0, x0 + w, rows, r, kBoxTileW, kBoxTileThreads, kMaxSmem);
        SCOPED_TRACE("width " + std::to_string(w) + " r " + std::to_string(r) + " rows " +
                     std::to_string(rows));
        ASSERT_EQ(p.x0, x0);
        ASSERT_EQ(p.x1, x0 + w);
        if (w == 0) {
          ASSERT_EQ(p.tiles, 0);
          continue;
        }
        ASSERT_EQ(p.tw % 16, 0);
        ASSERT_GT(p.tw, 0);
        ASSERT_LE(p.tw, kBoxTileW);
        ASSERT_TRUE(p.tw >= w || p.tw == kBoxTileW);
        ASSERT_LT(p.tw, w + 16);
        ASSERT_GE(p.th, 1);
        ASSERT_LE(p.th * (p.tw / 16), kBoxTileThreads);
        ASSERT_LE(tile_box_smem_bytes(p.tw, p.th, r), kMaxSmem);
        if (r <= 15) ASSERT_EQ(p.th, kBoxTileThreads / (p.tw / 16));
        if (p.th < kBoxTileThreads / (p.tw / 16)) {  // the cap: one row more would not fit
          ASSERT_GT(tile_box_smem_bytes(p.tw, p.th + 1, r), kMaxSmem);
        }
        // The kernel's walk: tile i at column (i mod across) · tw, row (i / across) · th; every
        // output column and row in exactly one tile.
        ASSERT_GE(static_cast<long long>(p.across) * p.tw, w);
        ASSERT_LT(static_cast<long long>(p.across - 1) * p.tw, w);
        const long long down = p.tiles / p.across;
        ASSERT_EQ(static_cast<long long>(p.across) * down, p.tiles);
        ASSERT_GE(down * p.th, rows);
        ASSERT_LT((down - 1) * p.th, rows);
      }
    }
  }
  // The running box's edges at 16384 wide (16 left, 48 right) and 4K's (16 and 16), 15 × 15.
  const TileBoxPart left = tile_box_part(0, 16, 16384, 7, kBoxTileW, kBoxTileThreads, kMaxSmem);
  EXPECT_EQ(left.tw, 16);
  EXPECT_EQ(left.th, 256);
  EXPECT_EQ(left.tiles, 64);
  const TileBoxPart right =
      tile_box_part(16336, 16384, 16384, 7, kBoxTileW, kBoxTileThreads, kMaxSmem);
  EXPECT_EQ(right.tw, 48);
  EXPECT_EQ(right.th, 85);
  EXPECT_EQ(right.tiles, 193);
}

}  // namespace
}  // namespace jetpipe::dev
