// SPDX-License-Identifier: MIT
// pipeline/io/overlay.h: the --annotate drawing on small canvases, pixel by pixel, edges included.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/io/overlay.h"

namespace jetpipe {
namespace {

// A BGR8 canvas of one colour, rows padded (pitch ≠ row bytes) to catch pitch mistakes.
HostImage blank(int w, int h, std::uint8_t v) {
  HostImage img(w, h, PixelFormat::kBgr8, static_cast<std::size_t>(w) * 3 + 7);
  for (int y = 0; y < h; ++y) {
    std::uint8_t* row = img.view().row<std::uint8_t>(y);
    for (int i = 0; i < w * 3 + 7; ++i) row[i] = v;
  }
  return img;
}

// The pixels of `img` as one character each: '#' where (b, g, r) == c, '.' where all channels
// equal `bg`, '?' elsewhere.
std::vector<std::string> picture(const HostImage& img, Bgr c, std::uint8_t bg) {
  std::vector<std::string> rows;
  for (int y = 0; y < img.height(); ++y) {
    std::string s;
    const std::uint8_t* p = img.view().row<std::uint8_t>(y);
    for (int x = 0; x < img.width(); ++x) {
      const std::uint8_t* q = p + 3 * x;
      s += q[0] == c.b && q[1] == c.g && q[2] == c.r ? '#'
           : q[0] == bg && q[1] == bg && q[2] == bg  ? '.'
                                                     : '?';
    }
    rows.push_back(s);
  }
  return rows;
}

constexpr Bgr kGreen{60, 255, 60};

TEST(Overlay, CrossAtAKnownPlace) {
  const HostImage img = blank(7, 5, 9);
  Canvas(img.view()).cross(3, 2, 2, kGreen);
  const std::vector<std::string> want = {"...#...",  //
                                         "...#...",  //
                                         ".#####.",  //
                                         "...#...",  //
                                         "...#..."};
  EXPECT_EQ(picture(img, kGreen, 9), want);
  // The row padding stays untouched.
  for (int y = 0; y < 5; ++y) EXPECT_EQ(img.view().row<std::uint8_t>(y)[7 * 3], 9);
}

TEST(Overlay, CrossClippedAtTheEdges) {
  const HostImage img = blank(5, 4, 9);
  const Canvas c(img.view());
  c.cross(0, 0, 2, kGreen);                        // the top-left corner: only the arms inside
  c.cross(4, 3, 1, kGreen);                        // the bottom-right corner
  c.cross(-3, 2, 1, kGreen);                       // wholly outside: nothing
  c.cross(2, 10, 3, kGreen);                       // below: nothing (arm 3 stops at row 7)
  const std::vector<std::string> want = {"###..",  //
                                         "#....",  //
                                         "#...#",  //
                                         "...##"};
  EXPECT_EQ(picture(img, kGreen, 9), want);
}

TEST(Overlay, FillShadeAndClip) {
  const HostImage img = blank(6, 4, 80);
  const Canvas c(img.view());
  c.shade(-2, -1, 4, 3);  // rows 0..1, columns 0..1 → 80 * 3 / 8 = 30
  c.fill(4, 2, 5, 5, {1, 2, 3});
  const std::vector<std::string> want = {"??....",  //
                                         "??....",  //
                                         "....##",  //
                                         "....##"};
  EXPECT_EQ(picture(img, {1, 2, 3}, 80), want);
  EXPECT_EQ(img.view().row<std::uint8_t>(1)[3 * 1 + 2], 30);
}

TEST(Overlay, TextInTheFiveBySevenFont) {
  const HostImage img = blank(14, 9, 0);
  const Canvas c(img.view());
  const Bgr white{255, 255, 255};
  EXPECT_EQ(c.text(1, 1, "1-", 1, white), 12);              // 6 pixels per character
  const std::vector<std::string> want = {"..............",  //
                                         "...#..........",  //
                                         "..##..........",  //
                                         "...#..........",  //
                                         "...#...#####..",  //
                                         "...#..........",  //
                                         "...#..........",  //
                                         "..###.........",  //
                                         ".............."};
  EXPECT_EQ(picture(img, white, 0), want);
  // Scale 2 doubles each font pixel; characters the font lacks leave a blank of the same width.
  const HostImage big = blank(6, 4, 0);
  EXPECT_EQ(Canvas(big.view()).text(-4, -10, "?.", 2, white), 24);
  const std::vector<std::string> dot = {"......",  //
                                        "......",  //
                                        "......",  //
                                        "......"};
  EXPECT_EQ(picture(big, white, 0), dot);  // '?' blank; '.' starts at x = 8, off the canvas
}

TEST(Overlay, AnnotateLeavesTheInputAndMarksACopy) {
  HostImage gray(160, 60, PixelFormat::kGray8);
  for (int y = 0; y < 60; ++y) {
    for (int x = 0; x < 160; ++x) gray.view().row<std::uint8_t>(y)[x] = 200;
  }
  DetectResult d;
  d.count = 1;
  d.points = {{159, 59, 1.0f}};  // the corner: clipped
  // The panel: "#3" and "det 1", 134 x 24 pixels at (4, 4).
  const HostImage a = annotate(gray.view(), {{"corners", d}}, 3);
  ASSERT_EQ(a.format(), PixelFormat::kBgr8);
  const std::uint8_t* corner = a.view().row<std::uint8_t>(59) + 3 * 159;
  EXPECT_EQ(corner[0], 60);
  EXPECT_EQ(corner[1], 255);
  EXPECT_EQ(corner[2], 60);
  EXPECT_EQ(a.view().row<std::uint8_t>(40)[3 * 100], 200);  // outside the panel and the marks
  EXPECT_EQ(a.view().row<std::uint8_t>(27)[3 * 137], 75);   // the panel's corner: 200 * 3 / 8
  EXPECT_EQ(a.view().row<std::uint8_t>(28)[3 * 137], 200);  // just below it
  EXPECT_EQ(gray.view().row<std::uint8_t>(59)[159], 200);
}

// GRAY8 → BGR8 replicates each value, and back gives it again for every value; a BGR8 pixel goes
// to gray by (29 B + 150 G + 77 R + 128) >> 8; same formats copy.
TEST(Overlay, Convert8BitBothWays) {
  HostImage gray(256, 2, PixelFormat::kGray8);
  for (int x = 0; x < 256; ++x) {
    gray.view().row<std::uint8_t>(0)[x] = static_cast<std::uint8_t>(x);
    gray.view().row<std::uint8_t>(1)[x] = static_cast<std::uint8_t>(255 - x);
  }
  const HostImage bgr = convert_8bit(gray.view(), PixelFormat::kBgr8);
  ASSERT_EQ(bgr.view().format, PixelFormat::kBgr8);
  EXPECT_EQ(bgr.view().row<std::uint8_t>(1)[3 * 10 + 2], 245);
  const HostImage back = convert_8bit(bgr.view(), PixelFormat::kGray8);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 256; ++x) {
      ASSERT_EQ(back.view().row<std::uint8_t>(y)[x], gray.view().row<std::uint8_t>(y)[x]) << x;
    }
  }
  HostImage px(1, 1, PixelFormat::kBgr8);
  std::uint8_t* p = px.view().row<std::uint8_t>(0);
  p[0] = 200, p[1] = 10, p[2] = 90;  // B, G, R
  EXPECT_EQ(convert_8bit(px.view(), PixelFormat::kGray8).view().row<std::uint8_t>(0)[0],
            (200 * 29 + 10 * 150 + 90 * 77 + 128) >> 8);
  const HostImage same = convert_8bit(px.view(), PixelFormat::kBgr8);
  EXPECT_EQ(same.view().row<std::uint8_t>(0)[1], 10);
}

}  // namespace
}  // namespace jetpipe
