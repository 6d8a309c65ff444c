// SPDX-License-Identifier: MIT
// Synthetic sources: test://NAME?w=W&h=H&frames=N&format=F. Every pattern is a pure function of
// (pattern, size, format, frame index), computed in integers except the blob profile (a table made
// once per source), so a frame is the same however often and in whatever order it is asked for.
// Every format holds the same picture: the colour layouts bgr8's colours, nv12 gray8's pixels as
// its luma plane and chroma computed from the colours.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/io/io_internal.h"

namespace jetpipe::io_detail {

namespace {

constexpr const char* kPatterns = "gradient, checker, noise, blobs";
constexpr const char* kKeys = "w, h, frames, format";
constexpr const char* kFormats = "gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8 or nv12";
constexpr int kMaxSide = 16384;
constexpr std::int64_t kMaxFrames = 1000000000;

enum class Pattern { kGradient, kChecker, kNoise, kBlobs };

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

int gray_of(int b, int g, int r) { return (b * 29 + g * 150 + r * 77 + 128) >> 8; }

// BT.601 limited-range chroma of a colour, in integers (the offset keeps the shifted sum ≥ 0).
std::uint8_t chroma_u(int b, int g, int r) {
  return static_cast<std::uint8_t>((-38 * r - 74 * g + 112 * b + 128 + (128 << 8)) >> 8);
}
std::uint8_t chroma_v(int b, int g, int r) {
  return static_cast<std::uint8_t>((112 * r - 94 * g - 18 * b + 128 + (128 << 8)) >> 8);
}

bool gray_plane(PixelFormat f) { return f == PixelFormat::kGray8 || f == PixelFormat::kNv12; }

// NV12: the chroma pair of the 2x2 block whose top-left pixel is (x, y), from that pixel's colour.
void put_chroma(const ImageView& v, int x, int y, int b, int g, int r) {
  if ((x | y) & 1) return;
  std::uint8_t* c = v.chroma_row(y / 2) + x;
  c[0] = chroma_u(b, g, r);
  c[1] = chroma_v(b, g, r);
}

// One pixel of colour (b, g, r) in the view's layout; `gray` is its gray value (GRAY8, NV12's
// luma). The 4-byte layouts' byte 3 is 255.
void put(const ImageView& v, int x, int y, int b, int g, int r, int gray) {
  std::uint8_t* row = v.row<std::uint8_t>(y);
  if (gray_plane(v.format)) {
    row[x] = static_cast<std::uint8_t>(gray);
    if (v.format == PixelFormat::kNv12) put_chroma(v, x, y, b, g, r);
    return;
  }
  const int bpp = bytes_per_pixel(v.format);
  std::uint8_t* p = row + bpp * x;
  const bool rgb = red_first(v.format);
  p[0] = static_cast<std::uint8_t>(rgb ? r : b);
  p[1] = static_cast<std::uint8_t>(g);
  p[2] = static_cast<std::uint8_t>(rgb ? b : r);
  if (bpp == 4) p[3] = 255;
}

void put(const ImageView& v, int x, int y, int b, int g, int r) {
  put(v, x, y, b, g, r, gray_of(b, g, r));
}

// Ramps along x, y and the diagonal, scrolling at different speeds.
void gradient(const ImageView& v, std::int64_t t) {
  const int s = static_cast<int>(t % 256);
  for (int y = 0; y < v.height; ++y) {
    const int gy = y * 256 / v.height;
    for (int x = 0; x < v.width; ++x) {
      const int gx = x * 256 / v.width;
      const int b = (gx + 4 * s) & 255;
      const int g = (gy + 2 * s) & 255;
      const int r = ((gx + gy) / 2 + 6 * s) & 255;
      put(v, x, y, b, g, r, (gx + gy / 4 + 4 * s) & 255);
    }
  }
}

// A checkerboard moving 2 px right and 1 px down per frame.
void checker(const ImageView& v, std::int64_t t) {
  const int cell = std::max(4, std::min(v.width, v.height) / 12);
  const std::int64_t ox = 2 * t, oy = t;
  for (int y = 0; y < v.height; ++y) {
    const std::int64_t cy = (y + oy) / cell;
    for (int x = 0; x < v.width; ++x) {
      const bool on = (((x + ox) / cell + cy) & 1) != 0;
      if (on) {
        put(v, x, y, 40, 200, 220);
      } else {
        put(v, x, y, 60, 40, 30);
      }
    }
  }
}

// n bytes of uniform noise for row y, seeded by the frame index and the row.
void noise_bytes(std::uint64_t seed, int y, std::size_t n, std::uint8_t* out) {
  std::uint64_t state = splitmix64(seed ^ static_cast<std::uint64_t>(y) * 0xD1B54A32D192ED03ull);
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 8 == 0) {
      state = splitmix64(state);
      bits = state;
    }
    out[i] = static_cast<std::uint8_t>(bits);
    bits >>= 8;
  }
}

// Uniform noise: GRAY8 and BGR8 rows are the row's noise bytes; the other colour layouts hold
// BGR8's colours, NV12 GRAY8's luma and chroma from BGR8's colours.
void noise(const ImageView& v, std::int64_t t) {
  const std::uint64_t seed = splitmix64(static_cast<std::uint64_t>(t));
  const std::size_t w = static_cast<std::size_t>(v.width);
  std::vector<std::uint8_t> bgr(3 * w);
  for (int y = 0; y < v.height; ++y) {
    std::uint8_t* r = v.row<std::uint8_t>(y);
    if (v.format == PixelFormat::kGray8 || v.format == PixelFormat::kBgr8) {
      noise_bytes(seed, y, v.row_bytes(), r);
      continue;
    }
    if (v.format == PixelFormat::kNv12) {
      noise_bytes(seed, y, w, r);
      if (y % 2 != 0) continue;
    }
    noise_bytes(seed, y, bgr.size(), bgr.data());
    for (int x = 0; x < v.width; ++x) {
      const std::uint8_t* c = &bgr[3 * static_cast<std::size_t>(x)];
      if (v.format == PixelFormat::kNv12) {
        put_chroma(v, x, y, c[0], c[1], c[2]);
      } else {
        put(v, x, y, c[0], c[1], c[2]);
      }
    }
  }
}

// A triangle wave: the position bounces between 0 and extent - 1.
int bounce(std::int64_t p, int extent) {
  if (extent <= 1) return 0;
  const std::int64_t period = 2 * static_cast<std::int64_t>(extent - 1);
  std::int64_t q = p % period;
  if (q < 0) q += period;
  return static_cast<int>(q < extent ? q : period - q);
}

// Four bright Gaussian spots (sigma = min(w, h) / 32) on a dark background, bouncing off the edges.
class Blobs {
 public:
  Blobs(int w, int h) : sigma_(std::max(2, std::min(w, h) / 32)) {
    const int r = 3 * sigma_;
    profile_.resize(static_cast<std::size_t>(r) * r + 1);
    for (std::size_t d2 = 0; d2 < profile_.size(); ++d2) {
      profile_[d2] = std::exp(-static_cast<double>(d2) / (2.0 * sigma_ * sigma_));
    }
  }

  void draw(const ImageView& v, std::int64_t t) const {
    struct Spot {
      int fx, fy, vx, vy;  // start (in 1/8 of the size) and velocity (px per frame)
      int b, g, r;         // peak colour
    };
    static constexpr Spot kSpots[] = {{1, 1, 3, 2, 255, 255, 255},
                                      {6, 2, -2, 3, 80, 255, 255},
                                      {3, 6, 4, -3, 255, 160, 80},
                                      {5, 4, -3, -2, 120, 120, 255}};
    for (int y = 0; y < v.height; ++y) {
      for (int x = 0; x < v.width; ++x) put(v, x, y, 16, 16, 16);
    }
    const int rad = 3 * sigma_;
    for (const Spot& s : kSpots) {
      const int cx = bounce(static_cast<std::int64_t>(v.width) * s.fx / 8 + s.vx * t, v.width);
      const int cy = bounce(static_cast<std::int64_t>(v.height) * s.fy / 8 + s.vy * t, v.height);
      for (int y = std::max(0, cy - rad); y <= std::min(v.height - 1, cy + rad); ++y) {
        for (int x = std::max(0, cx - rad); x <= std::min(v.width - 1, cx + rad); ++x) {
          const int d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
          if (d2 > rad * rad) continue;
          const double k = profile_[static_cast<std::size_t>(d2)];
          const int b = 16 + static_cast<int>(std::lround((s.b - 16) * k));
          const int g = 16 + static_cast<int>(std::lround((s.g - 16) * k));
          const int r = 16 + static_cast<int>(std::lround((s.r - 16) * k));
          max_put(v, x, y, b, g, r);
        }
      }
    }
  }

 private:
  // The brighter of the pixel and (b, g, r), channel by channel (gray: the gray values; NV12's
  // chroma follows its luma where the spot is brighter).
  static void max_put(const ImageView& v, int x, int y, int b, int g, int r) {
    if (gray_plane(v.format)) {
      std::uint8_t* p = v.row<std::uint8_t>(y) + x;
      const int val = gray_of(b, g, r);
      if (val <= *p) return;
      *p = static_cast<std::uint8_t>(val);
      if (v.format == PixelFormat::kNv12) put_chroma(v, x, y, b, g, r);
      return;
    }
    const int bpp = bytes_per_pixel(v.format);
    std::uint8_t* p = v.row<std::uint8_t>(y) + bpp * x;
    const bool rgb = red_first(v.format);
    p[0] = static_cast<std::uint8_t>(std::max<int>(p[0], rgb ? r : b));
    p[1] = static_cast<std::uint8_t>(std::max<int>(p[1], g));
    p[2] = static_cast<std::uint8_t>(std::max<int>(p[2], rgb ? b : r));
  }

  int sigma_;
  std::vector<double> profile_;  // exp(-d² / 2σ²) for d² = 0 .. (3σ)²
};

class TestSource : public Source {
 public:
  TestSource(std::string name, Pattern pattern, int w, int h, std::int64_t frames,
             PixelFormat format)
      : name_(std::move(name)),
        pattern_(pattern),
        w_(w),
        h_(h),
        frames_(frames),
        format_(format),
        blobs_(w, h) {}

  bool next(Frame* frame) override {
    if (index_ >= frames_) return false;
    const std::int64_t t = index_++;
    HostImage img = new_image(w_, h_, format_);
    const ImageView v = img.view();
    switch (pattern_) {
      case Pattern::kGradient:
        gradient(v, t);
        break;
      case Pattern::kChecker:
        checker(v, t);
        break;
      case Pattern::kNoise:
        noise(v, t);
        break;
      case Pattern::kBlobs:
        blobs_.draw(v, t);
        break;
    }
    frame->index = t;
    frame->source = "test:" + name_ + "#" + std::to_string(t);
    frame->image = std::move(img);
    frame->error.clear();
    return true;
  }

  std::optional<std::int64_t> total() const override { return frames_; }

  std::string describe() const override {
    return "test: " + name_ + " " + std::to_string(w_) + "x" + std::to_string(h_) + " " +
           to_string(format_) + ", " + std::to_string(frames_) +
           " frames (synthetic, deterministic)";
  }

 private:
  std::string name_;
  Pattern pattern_;
  int w_, h_;
  std::int64_t frames_;
  PixelFormat format_;
  Blobs blobs_;
  std::int64_t index_ = 0;
};

}  // namespace

std::unique_ptr<Source> open_test_source(const std::string& uri, const std::string& spec,
                                         bool colour) {
  const std::string where = "test source '" + uri + "': ";
  const std::size_t q = spec.find('?');
  const std::string name = spec.substr(0, q);
  Pattern pattern;
  if (name == "gradient") {
    pattern = Pattern::kGradient;
  } else if (name == "checker") {
    pattern = Pattern::kChecker;
  } else if (name == "noise") {
    pattern = Pattern::kNoise;
  } else if (name == "blobs") {
    pattern = Pattern::kBlobs;
  } else {
    throw input_error(where + "unknown pattern '" + name + "' (valid: " + kPatterns + ")");
  }
  std::int64_t w = 640, h = 480, frames = 30;
  // As a decoder does: colour in its own layout, or gray alone for a pipeline that reads gray.
  PixelFormat format = colour ? PixelFormat::kBgr8 : PixelFormat::kGray8;
  std::string query = q == std::string::npos ? std::string() : spec.substr(q + 1);
  std::size_t p = 0;
  while (q != std::string::npos && p <= query.size()) {
    const std::size_t amp = std::min(query.find('&', p), query.size());
    const std::string item = query.substr(p, amp - p);
    p = amp + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
    auto bad = [&](const char* valid) {
      return input_error(where + "bad value " + key + "=" + value + " (" + valid + ")");
    };
    if (key == "w") {
      if (!parse_decimal(value, 1, kMaxSide, &w)) throw bad("an integer 1..16384");
    } else if (key == "h") {
      if (!parse_decimal(value, 1, kMaxSide, &h)) throw bad("an integer 1..16384");
    } else if (key == "frames") {
      if (!parse_decimal(value, 1, kMaxFrames, &frames)) throw bad("an integer 1..1000000000");
    } else if (key == "format") {
      if (!parse_pixel_format(value, &format) || format == PixelFormat::kS16 ||
          format == PixelFormat::kF32) {
        throw bad(kFormats);
      }
    } else {
      throw input_error(where + "unknown key '" + key + "' (valid keys: " + kKeys + ")");
    }
  }
  return std::make_unique<TestSource>(name, pattern, static_cast<int>(w), static_cast<int>(h),
                                      frames, format);
}

}  // namespace jetpipe::io_detail
