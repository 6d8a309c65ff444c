// SPDX-License-Identifier: MIT
// pipeline/io: PNM/PFM codecs, OpenCV codecs (when built with them), natural order, and the sources
// (frame folders, y4m, VideoCapture, test://, URI dispatch).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/to_gray.h"
#include "pipeline/io/gst_source.h"
#include "pipeline/io/image_io.h"
#include "pipeline/io/source.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_OPENCV
#include <opencv2/imgcodecs.hpp>
#endif

namespace jetpipe {
namespace {

namespace fs = std::filesystem;
using test::max_diff;
using test::TempDir;

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Runs fn, expects a jetpipe::Error of `kind` whose message holds every one of `parts`.
template <class Fn>
void expect_error(Fn fn, ErrorKind kind, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown; expected one mentioning " << parts.front();
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message: " << e.what() << "\nmissing: " << p;
  }
}

std::vector<Frame> read_all(Source& s) {
  std::vector<Frame> out;
  Frame f;
  while (s.next(&f)) {
    out.push_back(f);
    if (out.size() > 10000) break;
  }
  return out;
}

bool same_pixels(const ImageView& a, const ImageView& b) {
  if (a.width != b.width || a.height != b.height || a.format != b.format) return false;
  for (int y = 0; y < a.height; ++y) {
    if (std::memcmp(a.row<std::uint8_t>(y), b.row<std::uint8_t>(y), a.row_bytes()) != 0) {
      return false;
    }
  }
  return true;
}

// ---- PNM
// ------------------------------------------------------------------------------------------

struct Shape {
  int w, h, pad;
};
const Shape kShapes[] = {{1, 1, 0}, {3, 129, 0}, {129, 3, 13}, {113, 7, 13}, {4, 2, 1}};

TEST(PnmIo, RoundTripGrayAndColour) {
  TempDir dir;
  std::mt19937 rng(test::fresh_seed());
  for (const Shape& s : kShapes) {
    for (PixelFormat f : {PixelFormat::kGray8, PixelFormat::kBgr8}) {
      SCOPED_TRACE(std::to_string(s.w) + "x" + std::to_string(s.h) + " pad " +
                   std::to_string(s.pad) + " " + to_string(f));
      const HostImage src = test::random_image(s.w, s.h, f, rng, s.pad);
      const std::string path = dir / (f == PixelFormat::kGray8 ? "a.pgm" : "a.ppm");
      write_image(path, src.view());
      const HostImage back = read_image(path);
      ASSERT_EQ(back.format(), f);
      EXPECT_EQ(max_diff(src.view(), back.view()).max_abs, 0);
    }
  }
}

TEST(PnmIo, ColourFilesHoldRgbAndRgb8IsWrittenAsIs) {
  TempDir dir;
  HostImage bgr(1, 1, PixelFormat::kBgr8);
  bgr.view().row<std::uint8_t>(0)[0] = 1;  // B
  bgr.view().row<std::uint8_t>(0)[1] = 2;  // G
  bgr.view().row<std::uint8_t>(0)[2] = 3;  // R
  write_image(dir / "c.ppm", bgr.view());
  EXPECT_EQ(read_bytes(dir / "c.ppm"), std::string("P6\n1 1\n255\n\x03\x02\x01", 14));

  HostImage rgb(1, 1, PixelFormat::kRgb8);
  std::memcpy(rgb.view().data, "\x03\x02\x01", 3);  // R G B
  write_image(dir / "d.ppm", rgb.view());
  const HostImage back = read_image(dir / "d.ppm");
  ASSERT_EQ(back.format(), PixelFormat::kBgr8);
  EXPECT_EQ(back.view().row<std::uint8_t>(0)[0], 1);
  EXPECT_EQ(back.view().row<std::uint8_t>(0)[2], 3);
}

TEST(PnmIo, AsciiP2P3WithComments) {
  TempDir dir;
  write_bytes(dir / "a.pgm",
              "P2\n# a comment\n3 2 # trailing comment\n# another\n255\n0 1 2\n 3\t4 255\n");
  const HostImage g = read_image(dir / "a.pgm");
  ASSERT_EQ(g.format(), PixelFormat::kGray8);
  ASSERT_EQ(g.width(), 3);
  ASSERT_EQ(g.height(), 2);
  EXPECT_EQ(g.view().at<std::uint8_t>(2, 0), 2);
  EXPECT_EQ(g.view().at<std::uint8_t>(0, 1), 3);
  EXPECT_EQ(g.view().at<std::uint8_t>(2, 1), 255);

  write_bytes(dir / "b.ppm", "P3 2 1 255 255 0 0  0 0 255");  // red, blue; no final newline
  const HostImage c = read_image(dir / "b.ppm");
  ASSERT_EQ(c.format(), PixelFormat::kBgr8);
  const std::uint8_t* p = c.view().row<std::uint8_t>(0);
  EXPECT_EQ(std::vector<int>(p, p + 6), (std::vector<int>{0, 0, 255, 255, 0, 0}));
}

TEST(PnmIo, BinaryHeaderWithCommentsAnyWhitespaceAndSmallMaxval) {
  TempDir dir;
  write_bytes(dir / "a.pgm", "P5\t# c\r\n2\n#x\n 1 # y\n15#after maxval\n\x0f\x08");
  const HostImage g = read_image(dir / "a.pgm");
  ASSERT_EQ(g.width(), 2);
  EXPECT_EQ(g.view().at<std::uint8_t>(0, 0), 255);
  EXPECT_EQ(g.view().at<std::uint8_t>(1, 0), (8 * 255 + 7) / 15);
}

struct Corrupt {
  const char* name;
  std::string bytes;
  const char* says;
};

TEST(PnmIo, CorruptFilesGiveInputErrorsNamingTheFile) {
  const std::vector<Corrupt> cases = {
      {"empty", "", "bad magic"},
      {"truncated_header", "P5\n64", "truncated PNM header"},
      {"truncated_header2", "P6 4 4", "truncated PNM header"},
      {"truncated_data", "P5\n4 4\n255\n" + std::string(10, 'x'),
       "truncated PNM data: expected 16 bytes, got 10"},
      {"truncated_colour", "P6\n4 4\n255\n" + std::string(47, 'x'),
       "truncated PNM data: expected 48 bytes, got 47"},
      {"bad_magic", "XY\n4 4\n255\n" + std::string(16, 'x'), "bad magic"},
      {"bad_magic2", "P9\n4 4\n255\n" + std::string(16, 'x'), "bad magic"},
      {"bitmap", "P4\n8 1\n\xff", "unsupported PNM type P4"},
      {"maxval0", "P5\n1 1\n0\n\x00", "maxval 0"},
      {"maxval65535", "P5\n1 1\n65535\n\x00\x00", "maxval 65535"},
      {"width0", "P5\n0 4\n255\n", "width is 0"},
      {"height0", "P5\n4 0\n255\n", "height is 0"},
      {"lying_size", "P5\n100000 100000\n255\n" + std::string(64, 'x'),
       "expected 10000000000 bytes, got 64"},
      {"absurd_size", "P6\n99999999 99999999\n255\n", "too large"},
      {"huge_number", "P6\n99999999999999999999 1\n255\n", "width too large"},
      {"garbage_width", "P5\n4x 4\n255\n" + std::string(16, 'x'), "unexpected 'x' after width"},
      {"garbage_maxval", "P5\n4 4\n255x" + std::string(16, 'x'), "unexpected 'x' after maxval"},
      {"negative", "P5\n-4 4\n255\n", "expected width, found '-'"},
      {"magic_glued", "P54 4 255\n" + std::string(16, 'x'), "bad magic"},
      {"ascii_truncated", "P2 3 3 255\n1 2 3\n", "truncated PNM data"},
      {"ascii_short", "P2 2 2 255\n1 2 3                ", "got 3 of 4 samples"},
      {"ascii_over_maxval", "P2 2 1 15\n3 16\n", "exceeds maxval 15"},
      {"ascii_garbage", "P2 2 1 255\n1 x\n", "unexpected 'x'"},
      {"binary_over_maxval", "P5 2 1 100\n\x10\xff", "exceeds maxval 100"},
  };
  TempDir dir;
  for (const Corrupt& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir / (std::string(c.name) + ".pgm");
    write_bytes(path, c.bytes);
    expect_error([&] { read_image(path); }, ErrorKind::kInput, {path, c.says});
  }
}

TEST(PnmIo, EveryTruncationOfABinaryFileIsAnError) {
  TempDir dir;
  std::mt19937 rng(test::fresh_seed());
  for (const char* name : {"full.pgm", "full.ppm"}) {
    const PixelFormat f = name[6] == 'g' ? PixelFormat::kGray8 : PixelFormat::kBgr8;
    write_image(dir / name, test::random_image(5, 3, f, rng).view());
    const std::string bytes = read_bytes(dir / name);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      SCOPED_TRACE(std::string(name) + " cut at " + std::to_string(n));
      write_bytes(dir / "cut.pgm", bytes.substr(0, n));
      expect_error([&] { read_image(dir / "cut.pgm"); }, ErrorKind::kInput, {"cut.pgm"});
    }
  }
}

TEST(PnmIo, MissingFileAndDirectory) {
  TempDir dir;
  expect_error([&] { read_image(dir / "nope.pgm"); }, ErrorKind::kInput,
               {dir / "nope.pgm", "no such file"});
  expect_error([&] { read_image(dir.str()); }, ErrorKind::kInput, {dir.str(), "directory"});
}

TEST(PnmIo, PfmRoundTripF32AndS16) {
  TempDir dir;
  std::mt19937 rng(test::fresh_seed());
  const HostImage f = test::random_image(13, 5, PixelFormat::kF32, rng, 13);
  write_image(dir / "f.pfm", f.view());
  const HostImage fb = read_image(dir / "f.pfm");
  ASSERT_EQ(fb.format(), PixelFormat::kF32);
  EXPECT_EQ(max_diff(f.view(), fb.view()).max_abs, 0);

  const HostImage s = test::random_image(7, 3, PixelFormat::kS16, rng, 13);
  write_image(dir / "s.pfm", s.view());
  const HostImage sb = read_image(dir / "s.pfm");
  ASSERT_EQ(sb.format(), PixelFormat::kF32);  // S16 is stored as float
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 7; ++x) {
      EXPECT_EQ(sb.view().at<float>(x, y), s.view().at<std::int16_t>(x, y));
    }
  }
  write_bytes(dir / "t.pfm", "Pf\n4 4\n-1.0\n" + std::string(20, 'x'));
  expect_error([&] { read_image(dir / "t.pfm"); }, ErrorKind::kInput,
               {"t.pfm", "truncated PFM data: expected 64 bytes, got 20"});
}

TEST(PnmIo, WriteErrorsNameTheFile) {
  TempDir dir;
  HostImage g(2, 2, PixelFormat::kGray8);
  HostImage f(2, 2, PixelFormat::kF32);
  EXPECT_THROW(write_image(dir / "g.ppm", g.view()), Error);
  EXPECT_THROW(write_image(dir / "f.pgm", f.view()), Error);
  EXPECT_THROW(write_image(dir / "g.xyz", g.view()), Error);
  expect_error([&] { write_image(dir / "missing/sub/g.pgm", g.view()); }, ErrorKind::kRuntime,
               {"g.pgm", "cannot write"});
}

TEST(ImageIo, PreferredExtension) {
  const bool cv = have_opencv_codecs();
  EXPECT_EQ(preferred_extension(PixelFormat::kGray8), cv ? "png" : "pgm");
  EXPECT_EQ(preferred_extension(PixelFormat::kBgr8), cv ? "png" : "ppm");
  EXPECT_EQ(preferred_extension(PixelFormat::kRgb8), cv ? "png" : "ppm");
  EXPECT_EQ(preferred_extension(PixelFormat::kS16), cv ? "tiff" : "pfm");
  EXPECT_EQ(preferred_extension(PixelFormat::kF32), cv ? "tiff" : "pfm");
  // Whatever is preferred can be written and read back.
  TempDir dir;
  std::mt19937 rng(test::fresh_seed());
  for (PixelFormat f : {PixelFormat::kGray8, PixelFormat::kBgr8, PixelFormat::kF32}) {
    const HostImage img = test::random_image(5, 4, f, rng, 3);
    const std::string path = dir / ("p." + preferred_extension(f));
    write_image(path, img.view());
    EXPECT_EQ(max_diff(img.view(), read_image(path).view()).max_abs, 0) << path;
  }
}

// ---- Natural order
// --------------------------------------------------------------------------------

TEST(IoNaturalSort, Cases) {
  EXPECT_TRUE(natural_less("f2", "f10"));
  EXPECT_FALSE(natural_less("f10", "f2"));
  EXPECT_TRUE(natural_less("f10", "f010"));  // equal value: shorter run first
  EXPECT_TRUE(natural_less("f2", "f02"));
  EXPECT_TRUE(natural_less("img_9.png", "img_10.png"));
  EXPECT_TRUE(natural_less("a", "a1"));
  EXPECT_TRUE(natural_less("a1", "a1b"));
  EXPECT_TRUE(natural_less("frame01b", "frame1c"));  // values and text first, run length last
  EXPECT_TRUE(natural_less("x99999999999999999999998", "x99999999999999999999999"));
  EXPECT_TRUE(natural_less("x9", "x18446744073709551616"));
  EXPECT_FALSE(natural_less("f2", "f2"));
  EXPECT_TRUE(natural_less("B", "a"));  // byte order for text
}

TEST(IoNaturalSort, SortsAndIsAStrictWeakOrder) {
  const std::vector<std::string> expected = {"f",    "f0",   "f00",  "f1",    "f01", "f001",
                                             "f1a",  "f01b", "f2",   "f02",   "f9",  "f10",
                                             "f010", "f11",  "f100", "f1000", "g",   "g1"};
  std::vector<std::string> v = expected;
  std::mt19937 rng(test::fresh_seed());
  std::shuffle(v.begin(), v.end(), rng);
  std::sort(v.begin(), v.end(), natural_less);
  EXPECT_EQ(v, expected);
  for (const auto& a : expected) {
    for (const auto& b : expected) {
      const int n = natural_less(a, b) + natural_less(b, a) + (a == b);
      EXPECT_EQ(n, 1) << a << " vs " << b;
      for (const auto& c : expected) {
        if (natural_less(a, b) && natural_less(b, c)) {
          EXPECT_TRUE(natural_less(a, c)) << a << " < " << b << " < " << c;
        }
      }
    }
  }
}

// ---- Frame folders
// --------------------------------------------------------------------------------

HostImage flat(int w, int h, PixelFormat f, std::uint8_t v) {
  HostImage img(w, h, f);
  for (int y = 0; y < h; ++y)
    std::memset(img.view().row<std::uint8_t>(y), v, img.view().row_bytes());
  return img;
}

TEST(FrameSource, CorruptFileInTheMiddleYieldsAnErrorFrameAndTheRunGoesOn) {
  TempDir dir;
  write_image(dir / "f1.pgm", flat(4, 3, PixelFormat::kGray8, 10).view());
  write_image(dir / "f2.PPM", flat(4, 3, PixelFormat::kBgr8, 20).view());
  write_bytes(dir / "f3.pgm", "P5\n640 480\n255\n" + std::string(1200, 'x'));
  write_image(dir / "f10.pgm", flat(4, 3, PixelFormat::kGray8, 100).view());
  write_bytes(dir / "notes.txt", "not a frame");
  write_image(dir / ".hidden.pgm", flat(4, 3, PixelFormat::kGray8, 1).view());
  fs::create_directory(dir / "sub.pgm");

  auto src = open_source("frames://" + dir.str());
  ASSERT_TRUE(src->total().has_value());
  EXPECT_EQ(*src->total(), 4);
  EXPECT_NE(src->describe().find("4 files"), std::string::npos) << src->describe();
  const std::vector<Frame> frames = read_all(*src);
  ASSERT_EQ(frames.size(), 4u);
  const std::vector<std::string> names = {"f1.pgm", "f2.PPM", "f3.pgm", "f10.pgm"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(frames[i].index, i);
    EXPECT_EQ(frames[i].source, names[i]);
  }
  EXPECT_TRUE(frames[0].error.empty());
  EXPECT_EQ(frames[0].image.view().at<std::uint8_t>(3, 2), 10);
  EXPECT_EQ(frames[1].image.format(), PixelFormat::kBgr8);
  EXPECT_EQ(frames[3].image.view().at<std::uint8_t>(0, 0), 100);
  EXPECT_TRUE(frames[2].image.empty());
  EXPECT_EQ(frames[2].error,
            "frame 2 (f3.pgm): truncated PNM data: expected 307200 bytes, got 1200");
  Frame extra;
  EXPECT_FALSE(src->next(&extra));
}

TEST(FrameSource, GlobsPlainPathsAndRelativeUris) {
  TempDir dir;
  for (const char* n : {"a1.pgm", "a2.pgm", "a10.pgm", "b1.pgm"}) {
    write_image(dir / n, flat(2, 2, PixelFormat::kGray8, 7).view());
  }
  auto names = [](Source& s) {
    std::vector<std::string> out;
    for (const Frame& f : read_all(s)) out.push_back(f.source);
    return out;
  };
  const std::vector<std::string> a = {"a1.pgm", "a2.pgm", "a10.pgm"};
  EXPECT_EQ(names(*open_source("frames://" + dir.str() + "/a*.pgm")), a);
  EXPECT_EQ(names(*open_source(dir.str() + "/a?*")), a);
  expect_error([&] { open_source(dir.str() + "/b?.PGM"); }, ErrorKind::kInput,
               {"b?.PGM", "matches no frame files"});  // globs are case-sensitive
  EXPECT_EQ(*open_source(dir.str())->total(), 4);

  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path().parent_path());
  const std::string rel = dir.path().filename().string();
  std::optional<std::int64_t> total;
  try {
    total = open_source("frames://" + rel)->total();
  } catch (...) {
  }
  fs::current_path(cwd);
  EXPECT_EQ(total, 4);
}

TEST(FrameSource, MissingFolderOrEmptyGlobNamesTheUri) {
  TempDir dir;
  write_image(dir / "a1.pgm", flat(2, 2, PixelFormat::kGray8, 7).view());
  const std::string missing = "frames://" + dir.str() + "/nothere";
  expect_error([&] { open_source(missing); }, ErrorKind::kInput, {missing, "no such directory"});
  const std::string glob = "frames://" + dir.str() + "/*.png";
  expect_error([&] { open_source(glob); }, ErrorKind::kInput, {glob, "matches no frame files"});
  fs::create_directory(dir / "empty");
  expect_error([&] { open_source(dir / "empty"); }, ErrorKind::kInput,
               {dir / "empty", "no frame files"});
  const std::string wild_dir = "frames://" + dir.str() + "/*/x.pgm";
  expect_error([&] { open_source(wild_dir); }, ErrorKind::kInput, {wild_dir, "file name only"});
}

TEST(FrameSource, PngFramesNeedOpenCv) {
  TempDir dir;
  write_image(dir / "a1.pgm", flat(2, 2, PixelFormat::kGray8, 7).view());
  write_bytes(dir / "a2.png", "\x89PNG\r\n\x1a\n");  // header only: invalid either way
  auto src = open_source(dir.str());
  const std::vector<Frame> frames = read_all(*src);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_TRUE(frames[0].error.empty());
  if (have_opencv_codecs()) {
    EXPECT_NE(frames[1].error.find("frame 1 (a2.png): cannot decode"), std::string::npos)
        << frames[1].error;
  } else {
    EXPECT_EQ(frames[1].error,
              "frame 1 (a2.png): built without OpenCV: only PGM/PPM frames can be read");
  }
}

// ---- y4m
// ------------------------------------------------------------------------------------------

std::uint8_t luma(int x, int y, int k) { return static_cast<std::uint8_t>(x + 7 * y + 13 * k); }

// A y4m file with `frames` frames whose luma is luma(x, y, k) and chroma 128.
std::string make_y4m(int w, int h, const std::string& chroma, int frames, std::size_t chroma_bytes,
                     const std::string& frame_line = "FRAME") {
  std::string s = "YUV4MPEG2 W" + std::to_string(w) + " H" + std::to_string(h) + " F25:1 Ip A1:1" +
                  (chroma.empty() ? "" : " C" + chroma) + " XYSCSS=420JPEG\n";
  for (int k = 0; k < frames; ++k) {
    s += frame_line + "\n";
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) s += static_cast<char>(luma(x, y, k));
    }
    s += std::string(chroma_bytes, '\x80');
  }
  return s;
}

void expect_luma(const Frame& f, int w, int h, int k) {
  ASSERT_TRUE(f.error.empty()) << f.error;
  ASSERT_EQ(f.image.format(), PixelFormat::kGray8);
  ASSERT_EQ(f.image.width(), w);
  ASSERT_EQ(f.image.height(), h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) ASSERT_EQ(f.image.view().at<std::uint8_t>(x, y), luma(x, y, k));
  }
}

TEST(Y4mSource, ReadsLumaOfEveryChromaLayout) {
  struct Layout {
    const char* c;
    std::size_t chroma;  // bytes for 5x3
  };
  const Layout layouts[] = {{"", 2 * 3 * 2},    {"420jpeg", 2 * 3 * 2},
                            {"420paldv", 12},   {"420mpeg2", 12},
                            {"420", 12},        {"422", 2 * 3 * 3},
                            {"444", 2 * 5 * 3}, {"444alpha", 3 * 15},
                            {"411", 2 * 2 * 3}, {"mono", 0}};
  TempDir dir;
  for (const Layout& l : layouts) {
    SCOPED_TRACE(l.c);
    write_bytes(dir / "clip.y4m", make_y4m(5, 3, l.c, 3, l.chroma));
    auto src = open_source("file://" + dir / "clip.y4m");
    EXPECT_EQ(src->total(), 3);
    EXPECT_NE(src->describe().find("gray8"), std::string::npos) << src->describe();
    const std::vector<Frame> frames = read_all(*src);
    ASSERT_EQ(frames.size(), 3u);
    for (int k = 0; k < 3; ++k) {
      expect_luma(frames[k], 5, 3, k);
      EXPECT_EQ(frames[k].source, "clip.y4m#" + std::to_string(k));
      ASSERT_TRUE(frames[k].pts_s.has_value());  // its position: index / the header's 25 fps
      EXPECT_DOUBLE_EQ(*frames[k].pts_s, k / 25.0);
    }
  }
}

TEST(Y4mSource, TruncatedLastFrameGivesAnErrorFrameThenTheEnd) {
  TempDir dir;
  std::string y = make_y4m(6, 4, "420", 3, 2 * 3 * 2);
  y.resize(y.size() - 5);
  write_bytes(dir / "cut.y4m", y);
  auto src = open_source("file://" + dir / "cut.y4m");
  EXPECT_EQ(src->total(), 3);
  const std::vector<Frame> frames = read_all(*src);
  ASSERT_EQ(frames.size(), 3u);
  expect_luma(frames[0], 6, 4, 0);
  expect_luma(frames[1], 6, 4, 1);
  EXPECT_TRUE(frames[2].image.empty());
  EXPECT_EQ(frames[2].error, "frame 2 (cut.y4m#2): truncated Y4M frame: expected 36 bytes, got 31");

  // Cut inside the FRAME line, and a stray header.
  write_bytes(dir / "cut2.y4m", make_y4m(6, 4, "420", 1, 12) + "FRA");
  auto s2 = open_source("file://" + dir / "cut2.y4m");
  const std::vector<Frame> f2 = read_all(*s2);
  ASSERT_EQ(f2.size(), 2u);
  EXPECT_NE(f2[1].error.find("truncated Y4M frame header"), std::string::npos) << f2[1].error;
  write_bytes(dir / "bad.y4m", make_y4m(6, 4, "420", 1, 12) + "FRAMX\n" + std::string(36, 'x'));
  const std::vector<Frame> f3 = read_all(*open_source("file://" + dir / "bad.y4m"));
  ASSERT_EQ(f3.size(), 2u);
  EXPECT_NE(f3[1].error.find("expected FRAME"), std::string::npos) << f3[1].error;
}

TEST(Y4mSource, FrameParametersAndHeaderErrors) {
  TempDir dir;
  write_bytes(dir / "p.y4m", make_y4m(3, 2, "mono", 2, 0, "FRAME Ip XFOO=1"));
  auto src = open_source("file://" + dir / "p.y4m");
  EXPECT_FALSE(src->total().has_value());  // unknown when FRAME lines carry parameters
  const std::vector<Frame> frames = read_all(*src);
  ASSERT_EQ(frames.size(), 2u);
  expect_luma(frames[1], 3, 2, 1);
  EXPECT_EQ(read_all(*open_source(dir / "p.y4m")).size(), 2u);  // a plain path = file://

  const std::string bad = "file://" + dir / "b.y4m";
  write_bytes(dir / "b.y4m", make_y4m(4, 4, "420p10", 1, 48));
  expect_error([&] { open_source(bad); }, ErrorKind::kInput, {bad, "C420p10", "only 8-bit"});
  write_bytes(dir / "b.y4m", "YUV4MPEG2 W4 C420\n");
  expect_error([&] { open_source(bad); }, ErrorKind::kInput, {bad, "W and H"});
  write_bytes(dir / "b.y4m", "YUV4MPEG2 W4 H0\n");
  expect_error([&] { open_source(bad); }, ErrorKind::kInput, {bad, "frame size"});
  write_bytes(dir / "b.y4m", "RIFF....");
  expect_error([&] { open_source(bad); }, ErrorKind::kInput, {bad, "not a Y4M file"});
  // A header line past the limit is too long, not truncated; one cut short is truncated.
  write_bytes(dir / "b.y4m", "YUV4MPEG2 W4 H4 X" + std::string(5000, 'x') + "\n");
  expect_error([&] { open_source(bad); }, ErrorKind::kInput, {bad, "line too long (over 4096"});
  write_bytes(dir / "b.y4m", "YUV4MPEG2 W4 H4");
  expect_error([&] { open_source(bad); }, ErrorKind::kInput, {bad, "truncated Y4M header"});
  const std::string missing = "file://" + dir / "none.y4m";
  expect_error([&] { open_source(missing); }, ErrorKind::kInput, {missing, "no such file"});
}

// OpenCV's imwrite gives no reason for a failure; the error says what the file system does.
TEST(ImageIo, AFailedWriteSaysWhy) {
  if (!have_opencv_codecs()) GTEST_SKIP() << "built without OpenCV";
  TempDir dir;
  const HostImage img(4, 4, PixelFormat::kGray8);
  try {
    write_image(dir / "missing/a.png", img.view());
    FAIL() << "a write into a missing folder succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing is not a folder"), std::string::npos) << e.what();
  }
}

// ---- test://
// --------------------------------------------------------------------------------------

TEST(TestSource, DeterministicAndMoving) {
  for (const char* pattern : {"gradient", "checker", "noise", "blobs"}) {
    for (const char* format : {"gray8", "bgr8"}) {
      SCOPED_TRACE(std::string(pattern) + " " + format);
      const std::string uri =
          std::string("test://") + pattern + "?w=97&h=61&frames=4&format=" + format;
      auto a = open_source(uri);
      auto b = open_source(uri);
      EXPECT_EQ(a->total(), 4);
      const std::vector<Frame> fa = read_all(*a);
      const std::vector<Frame> fb = read_all(*b);
      ASSERT_EQ(fa.size(), 4u);
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(fa[k].source, std::string("test:") + pattern + "#" + std::to_string(k));
        EXPECT_EQ(fa[k].image.width(), 97);
        EXPECT_EQ(fa[k].image.height(), 61);
        EXPECT_EQ(fa[k].image.format(),
                  std::string(format) == "gray8" ? PixelFormat::kGray8 : PixelFormat::kBgr8);
        EXPECT_TRUE(same_pixels(fa[k].image.view(), fb[k].image.view())) << "frame " << k;
        if (k > 0) {
          EXPECT_FALSE(same_pixels(fa[k].image.view(), fa[k - 1].image.view())) << "frame " << k;
        }
      }
    }
  }
}

TEST(TestSource, DefaultsAndBlobsAreBrightOnDark) {
  auto src = open_source("test://blobs");
  EXPECT_EQ(src->total(), 30);
  Frame f;
  ASSERT_TRUE(src->next(&f));
  EXPECT_EQ(f.image.width(), 640);
  EXPECT_EQ(f.image.height(), 480);
  EXPECT_EQ(f.image.format(), PixelFormat::kBgr8);
  auto gray = open_source("test://blobs?format=gray8&frames=1");
  ASSERT_TRUE(gray->next(&f));
  int bright = 0, dark = 0, peak = 0;
  for (int y = 0; y < f.image.height(); ++y) {
    for (int x = 0; x < f.image.width(); ++x) {
      const int v = f.image.view().at<std::uint8_t>(x, y);
      peak = std::max(peak, v);
      bright += v > 128;
      dark += v < 32;
    }
  }
  EXPECT_GE(peak, 200);
  EXPECT_GT(bright, 50);
  EXPECT_GT(dark, 640 * 480 * 9 / 10);
  EXPECT_FALSE(gray->next(&f));
}

TEST(TestSource, BadNamesAndParametersListWhatIsValid) {
  expect_error([] { open_source("test://plasma"); }, ErrorKind::kInput,
               {"test://plasma", "gradient", "checker", "noise", "blobs"});
  expect_error([] { open_source("test://noise?fps=3"); }, ErrorKind::kInput,
               {"fps", "w, h, frames, format"});
  expect_error([] { open_source("test://noise?w=0"); }, ErrorKind::kInput, {"w=0", "1..16384"});
  expect_error([] { open_source("test://noise?h=12x"); }, ErrorKind::kInput, {"h=12x"});
  expect_error([] { open_source("test://noise?frames=-1"); }, ErrorKind::kInput, {"frames=-1"});
  expect_error([] { open_source("test://noise?format=yuyv"); }, ErrorKind::kInput,
               {"format=yuyv", "gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8 or nv12"});
  expect_error([] { open_source("test://noise?format=f32"); }, ErrorKind::kInput, {"format=f32"});
}

// Every format holds the same picture: the colour layouts bgr8's colours (byte 3 is 255), nv12
// gray8's pixels as its luma plane, with chroma from the colours (the same for every frame of a
// pattern's picture); to_gray of each colour layout equals to_gray of bgr8. Odd sizes, frames
// through a padded allocator.
TEST(TestSource, EveryFormatHoldsTheSamePicture) {
  SourceOptions padded;
  padded.allocator = [](int w, int h, PixelFormat f) {
    return HostImage(w, h, f, min_pitch(w, f) + 7);
  };
  for (const char* pattern : {"gradient", "checker", "noise", "blobs"}) {
    const std::string base = std::string("test://") + pattern + "?w=37&h=23&frames=2&format=";
    auto frame = [&](const char* format, int index) {
      auto src = open_source(base + format, padded);
      Frame f;
      for (int i = 0; i <= index; ++i) EXPECT_TRUE(src->next(&f));
      EXPECT_EQ(to_string(f.image.format()), std::string(format));
      return f.image;
    };
    for (int t : {0, 1}) {
      const HostImage bgr = frame("bgr8", t), gray = frame("gray8", t);
      HostImage want(37, 23, PixelFormat::kGray8);
      to_gray_ref(bgr.view(), want.view(), 0, 23);
      for (const char* name : {"rgb8", "bgrx8", "rgbx8", "rgba8"}) {
        const HostImage img = frame(name, t);
        const ImageView v = img.view();
        const int bpp = bytes_per_pixel(v.format);
        const bool rgb = red_first(v.format);
        int differ = 0;
        for (int y = 0; y < 23; ++y) {
          for (int x = 0; x < 37; ++x) {
            const std::uint8_t* p = v.row<std::uint8_t>(y) + bpp * x;
            const std::uint8_t* q = bgr.view().row<std::uint8_t>(y) + 3 * x;
            differ += p[rgb ? 2 : 0] != q[0] || p[1] != q[1] || p[rgb ? 0 : 2] != q[2] ||
                      (bpp == 4 && p[3] != 255);
          }
        }
        EXPECT_EQ(differ, 0) << pattern << " " << name;
        HostImage got(37, 23, PixelFormat::kGray8);
        to_gray_ref(v, got.view(), 0, 23);
        EXPECT_TRUE(same_pixels(got.view(), want.view())) << pattern << " " << name;
      }
      const HostImage nv = frame("nv12", t);
      EXPECT_TRUE(same_pixels(luma_plane(nv.view()), gray.view())) << pattern;
      // Chroma: deterministic, and not flat where the picture has colour.
      const HostImage again = frame("nv12", t);
      int values = 0;
      bool seen[256] = {};
      for (int y = 0; y < chroma_rows(23); ++y) {
        const std::uint8_t* a = nv.view().uv + y * nv.view().uv_pitch;
        const std::uint8_t* b = again.view().uv + y * again.view().uv_pitch;
        EXPECT_EQ(std::memcmp(a, b, 38), 0) << pattern << " chroma row " << y;
        for (int i = 0; i < 38; ++i) {
          values += seen[a[i]] ? 0 : 1;
          seen[a[i]] = true;
        }
      }
      EXPECT_GT(values, 1) << pattern;
    }
  }
}

// ---- URIs and video
// -------------------------------------------------------------------------------

TEST(SourceUri, UnknownSchemeAndMissingFiles) {
  expect_error([] { open_source("nosuch://cam/1"); }, ErrorKind::kInput,
               {"nosuch://cam/1", "frames://DIR", "file://", "test://"});
  expect_error([] { open_source(""); }, ErrorKind::kInput, {"frames://"});
  TempDir dir;
  const std::string missing = "file://" + dir / "clip.avi";
  expect_error([&] { open_source(missing); }, ErrorKind::kInput, {missing, "no such file"});
  expect_error([&] { open_source(dir / "nothing"); }, ErrorKind::kInput,
               {dir / "nothing", "no such file or directory"});
  write_bytes(dir / "junk.avi", "definitely not a video");
  // Video files go through GStreamer, else OpenCV (source.cpp).
  const bool reader = have_gstreamer() || have_opencv_codecs();
  expect_error([&] { open_source("file://" + dir / "junk.avi"); }, ErrorKind::kInput,
               {"junk.avi", reader ? "cannot open" : "built without OpenCV"});
}

TEST(VideoSource, FirstFramesOfVtest) {
  const std::string path = test::opencv_sample("vtest.avi");
  if (path.empty()) GTEST_SKIP() << "opencv-doc's vtest.avi is not installed";
  if (!have_gstreamer() && !have_opencv_codecs()) {
    expect_error([&] { open_source("file://" + path); }, ErrorKind::kInput,
                 {"built without OpenCV"});
    return;
  }
  if (have_gstreamer()) {  // GStreamer reads it (source.cpp): MS-MPEG4 video in AVI
    for (const char* e : {"avidemux", "avdec_msmpeg4"}) {
      if (!test::gst_has_element(e)) GTEST_SKIP() << "GStreamer element " << e << " missing";
    }
  }
  auto src = open_source("file://" + path);
  EXPECT_NE(src->describe().find("vtest.avi"), std::string::npos);
  Frame f;
  HostImage prev;
  for (int k = 0; k < 5; ++k) {
    ASSERT_TRUE(src->next(&f)) << k;
    EXPECT_TRUE(f.error.empty());
    EXPECT_EQ(f.index, k);
    EXPECT_EQ(f.source.rfind("vtest.avi#" + std::to_string(k) + " t=", 0), 0u) << f.source;
    // GStreamer hands the decoder's I420 over as NV12; OpenCV's VideoCapture gives BGR.
    EXPECT_EQ(f.image.format(), have_gstreamer() ? PixelFormat::kNv12 : PixelFormat::kBgr8);
    EXPECT_EQ(f.image.width(), 768);
    EXPECT_EQ(f.image.height(), 576);
    if (k > 0) {
      EXPECT_FALSE(same_pixels(prev.view(), f.image.view()));
    }
    prev = f.image;
  }
}

#if JETPIPE_HAVE_OPENCV
// ---- OpenCV codecs
// --------------------------------------------------------------------------------

TEST(ImageIoOpenCv, PngRoundTripAndJpegCloseEnough) {
  TempDir dir;
  std::mt19937 rng(test::fresh_seed());
  for (PixelFormat f : {PixelFormat::kGray8, PixelFormat::kBgr8}) {
    const HostImage img = test::random_image(129, 3, f, rng, 13);
    write_image(dir / "a.png", img.view());
    const HostImage back = read_image(dir / "a.png");
    ASSERT_EQ(back.format(), f);
    EXPECT_EQ(max_diff(img.view(), back.view()).max_abs, 0);
  }
  HostImage rgb = test::random_image(5, 5, PixelFormat::kRgb8, rng, 1);
  write_image(dir / "rgb.png", rgb.view());
  const HostImage rb = read_image(dir / "rgb.png");
  EXPECT_EQ(rb.view().at<std::uint8_t>(0, 0), rgb.view().at<std::uint8_t>(2, 0));  // B ← R[2]

  Frame smooth;
  ASSERT_TRUE(open_source("test://gradient?w=64&h=48&frames=1")->next(&smooth));
  write_image(dir / "a.JPG", smooth.image.view());
  const HostImage jb = read_image(dir / "a.JPG");
  ASSERT_EQ(jb.format(), PixelFormat::kBgr8);
  double sum = 0;
  for (int y = 0; y < 48; ++y) {
    for (int i = 0; i < 64 * 3; ++i) {
      sum +=
          std::abs(jb.view().row<std::uint8_t>(y)[i] - smooth.image.view().row<std::uint8_t>(y)[i]);
    }
  }
  EXPECT_LT(sum / (64 * 48 * 3), 8.0);
}

TEST(ImageIoOpenCv, AlphaDroppedSixteenBitRefusedTruncatedPngNamed) {
  TempDir dir;
  cv::Mat bgra(2, 3, CV_8UC4, cv::Scalar(10, 20, 30, 40));
  ASSERT_TRUE(cv::imwrite(dir / "a.png", bgra));
  const HostImage a = read_image(dir / "a.png");
  ASSERT_EQ(a.format(), PixelFormat::kBgr8);
  EXPECT_EQ(a.view().at<std::uint8_t>(2, 1), 30);  // R of pixel (0, 1)

  cv::Mat deep(2, 3, CV_16UC1, cv::Scalar(1000));
  ASSERT_TRUE(cv::imwrite(dir / "d.png", deep));
  expect_error([&] { read_image(dir / "d.png"); }, ErrorKind::kInput, {"d.png", "16-bit"});

  std::mt19937 rng(test::fresh_seed());
  write_image(dir / "t.png", test::random_image(64, 64, PixelFormat::kBgr8, rng).view());
  std::string bytes = read_bytes(dir / "t.png");
  write_bytes(dir / "t.png", bytes.substr(0, bytes.size() / 2));
  expect_error([&] { read_image(dir / "t.png"); }, ErrorKind::kInput,
               {dir / "t.png", "cannot decode", "PNG"});
  write_bytes(dir / "z.jpg", "");
  expect_error([&] { read_image(dir / "z.jpg"); }, ErrorKind::kInput, {"z.jpg", "JPEG"});
}

TEST(ImageIoOpenCv, TiffRoundTripF32AndS16) {
  TempDir dir;
  std::mt19937 rng(test::fresh_seed());
  for (PixelFormat f : {PixelFormat::kF32, PixelFormat::kS16}) {
    const HostImage img = test::random_image(17, 9, f, rng, 13);
    write_image(dir / "a.tiff", img.view());
    const HostImage back = read_image(dir / "a.tiff");
    ASSERT_EQ(back.format(), f);
    EXPECT_EQ(max_diff(img.view(), back.view()).max_abs, 0);
  }
  HostImage f(4, 4, PixelFormat::kF32);
  EXPECT_THROW(write_image(dir / "f.png", f.view()), Error);
}
#endif  // JETPIPE_HAVE_OPENCV

// ---- Frames from the source's allocator (the frame pool)
// ---------------------------------------

// A stand-in for the frame pool: every image it hands out lies in a block of its own whose rows are
// padded by kPad bytes filled with kPoison (a writer that assumes pitch == row bytes misplaces
// rows; one that runs past a row overwrites the padding). It remembers every block, in order.
class PaddedAllocator {
 public:
  static constexpr std::size_t kPad = 64;
  static constexpr std::uint8_t kPoison = 0xA5;

  ImageAllocator fn() {
    return [this](int w, int h, PixelFormat f) { return allocate(w, h, f); };
  }
  std::size_t calls() const { return blocks_.size(); }
  // Whether v's pixels lie inside the block handed out by call number `call`, starting at its first
  // byte with this allocator's pitch.
  bool handed_out(std::size_t call, const ImageView& v) const {
    if (call >= blocks_.size() || v.empty()) return false;
    const Block& b = blocks_[call];
    const std::size_t span = v.pitch * static_cast<std::size_t>(v.height - 1) + v.row_bytes();
    return v.data == b.data && v.pitch == v.row_bytes() + kPad && span <= b.size;
  }
  // Whether every padding byte after each row of v still holds kPoison.
  static bool padding_untouched(const ImageView& v) {
    for (int y = 0; y < v.height; ++y) {
      const std::uint8_t* pad = v.row<std::uint8_t>(y) + v.row_bytes();
      for (std::size_t i = 0; i < v.pitch - v.row_bytes(); ++i) {
        if (pad[i] != kPoison) return false;
      }
    }
    return true;
  }

 private:
  struct Block {
    const std::uint8_t* data;
    std::size_t size;
  };

  HostImage allocate(int w, int h, PixelFormat f) {
    ImageView v;
    v.width = w;
    v.height = h;
    v.format = f;
    v.pitch = v.row_bytes() + kPad;
    const std::size_t size = v.pitch * static_cast<std::size_t>(h);
    std::shared_ptr<std::uint8_t[]> storage(new std::uint8_t[size]);
    std::memset(storage.get(), kPoison, size);
    v.data = storage.get();
    blocks_.push_back({v.data, size});
    return HostImage(std::move(storage), v);
  }

  std::vector<Block> blocks_;
};

// `pooled` came from `alloc` (call number `call`) and holds the pixels of `plain`, row by row.
void expect_pooled_copy(const PaddedAllocator& alloc, std::size_t call, const HostImage& pooled,
                        const HostImage& plain) {
  ASSERT_FALSE(plain.empty());
  EXPECT_TRUE(alloc.handed_out(call, pooled.view()))
      << "the image is not allocation " << call << " of the allocator (pitch "
      << pooled.view().pitch << ", row bytes " << pooled.view().row_bytes() << ")";
  EXPECT_TRUE(same_pixels(plain.view(), pooled.view()));
  EXPECT_EQ(max_diff(plain.view(), pooled.view()).max_abs, 0);
  EXPECT_TRUE(PaddedAllocator::padding_untouched(pooled.view()))
      << "a row was written past its end";
}

// Reads every frame of `uri` without an allocator, then again with a PaddedAllocator set: frame k
// must be the allocator's k-th image (one call per frame) and hold the same pixels.
void expect_frames_from_allocator(const std::string& uri, std::size_t frames) {
  SCOPED_TRACE(uri);
  const std::vector<Frame> plain = read_all(*open_source(uri));
  PaddedAllocator alloc;
  auto src = open_source(uri);
  src->set_allocator(alloc.fn());
  const std::vector<Frame> pooled = read_all(*src);
  ASSERT_EQ(plain.size(), frames);
  ASSERT_EQ(pooled.size(), frames);
  EXPECT_EQ(alloc.calls(), frames);
  for (std::size_t k = 0; k < frames; ++k) {
    SCOPED_TRACE("frame " + std::to_string(k));
    ASSERT_TRUE(plain[k].error.empty()) << plain[k].error;
    ASSERT_TRUE(pooled[k].error.empty()) << pooled[k].error;
    EXPECT_EQ(pooled[k].source, plain[k].source);
    expect_pooled_copy(alloc, k, pooled[k].image, plain[k].image);
  }
}

TEST(SourceAllocator, FrameFolderOfPgmAndPpm) {
  const std::string dir = std::string(JETPIPE_TEST_DATA) + "/regression/frames";
  expect_frames_from_allocator("frames://" + dir, 4);
  expect_frames_from_allocator("frames://" + dir + "/*.pgm", 1);
}

TEST(SourceAllocator, Y4mLumaPlanes) {
  TempDir dir;
  write_bytes(dir / "clip.y4m", make_y4m(7, 5, "420", 3, 2 * 4 * 3));
  expect_frames_from_allocator("file://" + dir / "clip.y4m", 3);
  write_bytes(dir / "mono.y4m", make_y4m(37, 5, "mono", 2, 0));
  expect_frames_from_allocator("file://" + dir / "mono.y4m", 2);
}

TEST(SourceAllocator, TestPatterns) {
  expect_frames_from_allocator("test://noise?w=37&h=5&frames=3", 3);
  expect_frames_from_allocator("test://noise?w=37&h=5&frames=3&format=gray8", 3);
  expect_frames_from_allocator("test://blobs?w=37&h=5&frames=2", 2);
}

// read_image with an allocator: the built-in PNM / PFM readers and, with OpenCV, PNG and TIFF.
TEST(SourceAllocator, ReadImageDecodesIntoTheAllocatorsImage) {
  TempDir dir;
  std::mt19937 rng(test::fresh_seed());
  std::vector<std::pair<std::string, PixelFormat>> files = {
      {"g.pgm", PixelFormat::kGray8}, {"c.ppm", PixelFormat::kBgr8}, {"f.pfm", PixelFormat::kF32}};
  if (have_opencv_codecs()) {
    files.insert(files.end(), {{"g.png", PixelFormat::kGray8},
                               {"c.png", PixelFormat::kBgr8},
                               {"s.tiff", PixelFormat::kS16},
                               {"f.tiff", PixelFormat::kF32}});
  }
  PaddedAllocator alloc;
  for (const auto& [name, format] : files) {
    SCOPED_TRACE(name);
    write_image(dir / name, test::random_image(37, 5, format, rng, 3).view());
    const HostImage plain = read_image(dir / name);
    const std::size_t call = alloc.calls();
    const HostImage pooled = read_image(dir / name, alloc.fn());
    EXPECT_EQ(alloc.calls(), call + 1);
    expect_pooled_copy(alloc, call, pooled, plain);
  }
  // An unreadable file fails as before, whether or not the allocator was reached.
  write_bytes(dir / "cut.pgm", "P5\n37 5\n255\n" + std::string(10, 'x'));
  expect_error([&] { read_image(dir / "cut.pgm", alloc.fn()); }, ErrorKind::kInput,
               {dir / "cut.pgm", "truncated PNM data"});
}

}  // namespace
}  // namespace jetpipe
