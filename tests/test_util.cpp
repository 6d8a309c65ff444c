// SPDX-License-Identifier: MIT
#include "tests/test_util.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace jetpipe::test {

std::uint32_t fresh_seed() {
  std::uint32_t seed;
  if (const char* env = std::getenv("JETPIPE_SEED")) {
    seed = static_cast<std::uint32_t>(std::strtoul(env, nullptr, 10));
  } else {
    seed = std::random_device{}();
  }
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::printf("[ seed     ] JETPIPE_SEED=%u\n", seed);
  return seed;
}

HostImage random_image(int width, int height, PixelFormat format, std::mt19937& rng,
                       int pad_elems) {
  const int bpp = bytes_per_pixel(format);
  const int elem = format == PixelFormat::kS16 ? 2 : (format == PixelFormat::kF32 ? 4 : 1);
  HostImage img(width, height, format,
                static_cast<std::size_t>(width) * bpp + static_cast<std::size_t>(pad_elems) * elem);
  const ImageView v = img.view();
  for (int y = 0; y < height; ++y) {
    if (format == PixelFormat::kF32) {
      std::uniform_real_distribution<float> d(-1.f, 1.f);
      for (int x = 0; x < width; ++x) v.row<float>(y)[x] = d(rng);
    } else if (format == PixelFormat::kS16) {
      std::uniform_int_distribution<int> d(-32768, 32767);
      for (int x = 0; x < width; ++x) v.row<std::int16_t>(y)[x] = static_cast<std::int16_t>(d(rng));
    } else {
      std::uniform_int_distribution<int> d(0, 255);
      for (std::size_t i = 0; i < v.row_bytes(); ++i) {
        v.row<std::uint8_t>(y)[i] = static_cast<std::uint8_t>(d(rng));
      }
    }
  }
  if (format == PixelFormat::kNv12) {  // the chroma plane too
    std::uniform_int_distribution<int> d(0, 255);
    for (int y = 0; y < chroma_rows(height); ++y) {
      std::uint8_t* r = v.uv + static_cast<std::size_t>(y) * v.uv_pitch;
      for (std::size_t i = 0; i < min_pitch(width, format); ++i)
        r[i] = static_cast<std::uint8_t>(d(rng));
    }
  }
  return img;
}

HostImage as_format(const ImageView& src, PixelFormat format, std::mt19937& rng, int pad_bytes) {
  const bool from_gray = src.format == PixelFormat::kGray8;
  if (!from_gray && src.format != PixelFormat::kBgr8)
    throw std::invalid_argument("as_format: gray8 or bgr8 in");
  HostImage out(src.width, src.height, format, min_pitch(src.width, format) + pad_bytes);
  const ImageView v = out.view();
  std::uniform_int_distribution<int> d(0, 255);
  const int bpp = bytes_per_pixel(format);
  for (int y = 0; y < src.height; ++y) {
    const std::uint8_t* s = src.row<const std::uint8_t>(y);
    std::uint8_t* o = v.row<std::uint8_t>(y);
    for (int x = 0; x < src.width; ++x) {
      if (format == PixelFormat::kNv12 || format == PixelFormat::kGray8) {
        o[x] = from_gray ? s[x] : s[3 * x + 1];
        continue;
      }
      const std::uint8_t b = from_gray ? s[x] : s[3 * x], g = from_gray ? s[x] : s[3 * x + 1],
                         r = from_gray ? s[x] : s[3 * x + 2];
      std::uint8_t* p = o + bpp * x;
      p[0] = red_first(format) ? r : b;
      p[1] = g;
      p[2] = red_first(format) ? b : r;
      if (bpp == 4) p[3] = static_cast<std::uint8_t>(d(rng));  // ignored: any value
    }
  }
  if (format == PixelFormat::kNv12) {
    for (int y = 0; y < chroma_rows(src.height); ++y) {
      std::uint8_t* r = v.uv + static_cast<std::size_t>(y) * v.uv_pitch;
      for (std::size_t i = 0; i < min_pitch(src.width, format); ++i)
        r[i] = static_cast<std::uint8_t>(d(rng));
    }
  }
  return out;
}

void poison(const ImageView& v) {
  for (int y = 0; y < v.height; ++y) std::memset(v.row<std::uint8_t>(y), 0xA5, v.row_bytes());
}

Diff max_diff(const ImageView& a, const ImageView& b) {
  Diff d;
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.format, b.format);
  const int ch = channels(a.format);
  for (int y = 0; y < a.height; ++y) {
    for (int x = 0; x < a.width * ch; ++x) {
      double va, vb;
      switch (a.format) {
        case PixelFormat::kS16:
          va = a.row<std::int16_t>(y)[x];
          vb = b.row<std::int16_t>(y)[x];
          break;
        case PixelFormat::kF32:
          va = a.row<float>(y)[x];
          vb = b.row<float>(y)[x];
          break;
        default:
          va = a.row<std::uint8_t>(y)[x];
          vb = b.row<std::uint8_t>(y)[x];
      }
      const double e = std::isnan(va) || std::isnan(vb) ? INFINITY : std::fabs(va - vb);
      if (e > d.max_abs) {
        d.max_abs = e;
        d.x = x / ch;
        d.y = y;
      }
    }
  }
  return d;
}

TempDir::TempDir() {
  std::string name = "jetpipe";
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    name += std::string("-") + info->test_suite_name() + "." + info->name();
  }
  for (char& c : name) {
    if (c == '/') c = '_';  // parameterized tests: Suite/Test/0
  }
  if (name.size() > 120) name.resize(120);
  std::string tmpl = (std::filesystem::temp_directory_path() / (name + "-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
  }
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (::testing::Test::HasFailure()) {
    std::printf("[ kept     ] %s\n", path_.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string opencv_sample(const std::string& name) {
  const std::string p = "/usr/share/doc/opencv-doc/examples/data/" + name;
  return std::filesystem::exists(p) ? p : std::string();
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace jetpipe::test
