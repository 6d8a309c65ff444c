// SPDX-License-Identifier: MIT
// The CUDA twins of the neighbourhood filters (gaussian, box, sobel, convolve, harris) and the
// texture wrapper, against the CPU twins.
//
// GpuTexture: for every border mode, the pixels each path reads outside the image (a few pixels,
// several image sizes and up to 4099 pixels away, left, right, up and down; widths and heights 1,
// 2, 3, 5, 6, 7, 100, 4097, 16383, 16384) equal border_remap's: the texture unit's clamp / border /
// mirror / wrap (normalized coordinates at 16384 and at widths that are not powers of two
// included) and the in-kernel remap of reflect101 and constant ≠ 0, through the same device code
// as the filters (launch_border_probe).
//
// Gpu<Filter>: fresh random images (seed printed; JETPIPE_SEED replays), sizes 1×1, 1×N, N×1,
// 3×129, 129×3, 113×113, 540×33 and 700×67 (the fast kernel's strips and edge tiles) and 1920×1080
// (fewer combinations), every border mode (constant with 0 and with 77.3), the filter's sizes; each
// case in three input layouts (cudaMallocPitch, rows padded by 13 bytes, an ROI at x offset 1..3 of
// a padded image) through BOTH paths (FilterPath::kTexture, which falls back to kTiled where the
// view does not qualify for a texture, and kTiled), into a poisoned output inside a larger poisoned
// image (nothing outside the view may change), as one launch and as three uneven row strips. Every
// output equals the CPU twin bit for bit (harris's F32 too: the same exact integer core and the
// same double operations in the same order). GpuHarrisFast: harris's fused kernel over its strip
// geometry (widths around one strip and the right edge tile, heights from 2), block sizes 3..7,
// every border, both lane widths and several rows per warp. GpuFilterPhoto: the same on a real
// frame (tests/regression/frames/vtest_0000.ppm).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "kernels/box.h"
#include "kernels/convolve.h"
#include "kernels/gaussian.h"
#include "kernels/harris.h"
#include "kernels/ref_util.h"
#include "kernels/sobel.h"
#include "kernels/to_gray.h"
#include "kernels/tuning_filters.h"
#include "pipeline/io/image_io.h"
#include "tests/filter_cases.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_CUDA
#include "kernels/texture.h"
#endif

namespace jetpipe {
namespace {

using test::fresh_seed;
using test::random_image;

using test::Case;
using test::case_name;
using test::kBorderCount;
using test::kBig;
using test::kBorders;
using test::NamedBorder;
using test::Size2;

// The sizes of the GPU cases: 540×33 and 700×67 reach the fast kernel's strips and edge tiles.
const std::vector<Size2> kSizes = {{1, 1},   {1, 37},    {37, 1},   {3, 129},
                        {129, 3}, {113, 113}, {540, 33}, {700, 67}};

std::vector<Case> make_cases(int variants, const std::vector<int>& big_variants) {
  return test::make_cases(kSizes, variants, big_variants);
}

#if JETPIPE_HAVE_CUDA

// ---- Harness -----------------------------------------------------------------------------------

using Stream = CudaStream;  // core/cuda_memory.h

// test::upload, test::poison_device and plain cudaMemcpy work on the legacy default stream, which
// does not order work against a cudaStreamNonBlocking stream such as Stream's (and a pageable
// upload may still be in flight when the call returns): wait for them before launching on one.
// Without this the poison could land after a launch had written its output (run 23: 117 failures,
// every "three row strips" one in the first strip).
void settle_legacy_stream() { JP_CUDA(cudaDeviceSynchronize()); }

using RefFn = std::function<void(const ImageView& src, const ImageView& dst, int y0, int y1)>;
using GpuFn = std::function<cudaError_t(const FilterSource& src, const ImageView& dst, int y0,
                                        int y1, cudaStream_t stream, FilterPath path)>;

// An input layout on the device holding the pixels of `host`.
struct DeviceInput {
  DeviceImage owner;
  ImageView view;
  std::string layout;
};

std::vector<DeviceInput> device_inputs(const ImageView& host, std::mt19937& rng) {
  std::vector<DeviceInput> in;
  {
    DeviceImage d = test::upload(host, 0);
    const ImageView v = d.view();
    in.push_back({std::move(d), v, "cudaMallocPitch"});
  }
  {
    DeviceImage d = test::upload(host, 13);
    const ImageView v = d.view();
    in.push_back({std::move(d), v, "rows padded by 13 bytes"});
  }
  {
    const int ox = std::uniform_int_distribution<int>(1, 3)(rng);
    HostImage big = random_image(host.width + ox + 2, host.height + 2, host.format, rng, 13);
    copy_image(host, big.view().roi(ox, 1, host.width, host.height));
    DeviceImage d = test::upload(big.view(), 13);
    const ImageView v = d.view().roi(ox, 1, host.width, host.height);
    in.push_back({std::move(d), v, "ROI at x=" + std::to_string(ox) + " y=1 of a padded image"});
  }
  settle_legacy_stream();
  return in;
}

// Compares a downloaded output parent (the device parent's copy) with the expected image: the view
// (at dst inside dev_parent) equal bit for bit, the parent's other bytes still poisoned.
void expect_output(const HostImage& parent, const ImageView& dev_parent, const ImageView& dst,
                   const ImageView& expected, const std::string& what) {
  const ImageView pv = parent.view();
  const std::size_t bpp = bytes_per_pixel(pv.format);
  const std::size_t off = static_cast<std::size_t>(dst.data - dev_parent.data);
  const std::size_t x_off = off % dev_parent.pitch, y_off = off / dev_parent.pitch;
  bool guard_ok = true;
  for (int y = 0; y < pv.height && guard_ok; ++y) {
    const std::uint8_t* row = pv.row<std::uint8_t>(y);
    const bool row_in = static_cast<std::size_t>(y) >= y_off &&
                        static_cast<std::size_t>(y) < y_off + static_cast<std::size_t>(dst.height);
    for (std::size_t i = 0; i < pv.row_bytes(); ++i) {
      const bool in_view = row_in && i >= x_off && i < x_off + dst.width * bpp;
      if (!in_view && row[i] != 0xA5) {
        ADD_FAILURE() << what << ": wrote outside the output view at byte " << i << " of row " << y;
        guard_ok = false;
        break;
      }
    }
  }
  ImageView got = dst;
  got.data = pv.data + y_off * pv.pitch + x_off;
  got.pitch = pv.pitch;
  int differ = 0, fx = -1, fy = -1;
  for (int y = 0; y < got.height; ++y) {
    for (int x = 0; x < got.width; ++x) {
      if (std::memcmp(got.row<std::uint8_t>(y) + x * bpp, expected.row<std::uint8_t>(y) + x * bpp,
                      bpp) != 0) {
        if (differ++ == 0) {
          fx = x;
          fy = y;
        }
      }
    }
  }
  const test::Diff d = test::max_diff(got, expected);
  EXPECT_EQ(differ, 0) << what << ": " << differ << " pixels differ, the first at (" << fx << ", "
                       << fy << "); largest difference " << d.max_abs << " at (" << d.x << ", "
                       << d.y << ")";
}

// Runs the GPU twin in every layout, both paths, whole and in strips, against the CPU twin.
void check_gpu_filter(const ImageView& host_src, const Border& border, PixelFormat out,
                      const RefFn& ref, const GpuFn& gpu, std::mt19937& rng) {
  const int w = host_src.width, h = host_src.height;
  HostImage expected(w, h, out);
  ref(host_src, expected.view(), 0, h);
  const std::size_t bpp = bytes_per_pixel(out);
  Stream stream;
  for (DeviceInput& in : device_inputs(host_src, rng)) {
    SCOPED_TRACE(in.layout);
    const UniqueTexture tex(in.view, border);
    const bool aligned = in.layout == "cudaMallocPitch";
    if (aligned) {
      ASSERT_TRUE(tex.valid()) << "a cudaMallocPitch image should take a texture: " << tex.why();
    } else if (in.layout.rfind("rows padded", 0) == 0) {
      EXPECT_FALSE(tex.valid()) << "an odd pitch cannot back a texture";
    }
    for (FilterPath path : {FilterPath::kTexture, FilterPath::kTiled}) {
      SCOPED_TRACE(std::string("path ") + to_string(path) +
                   (path == FilterPath::kTexture && !tex.valid() ? " (no texture: tiled)" : ""));
      const FilterSource src(in.view, tex);
      // Aligned input: an aligned output at (0, 1) of a pitched parent (16-byte stores); else an
      // output at (2, 1) of a parent with an odd pitch.
      DeviceImage parent = aligned ? DeviceImage(w + 4, h + 2, out)
                                   : DeviceImage(w + 4, h + 2, out, (w + 9) * bpp + 1);
      const ImageView dst = parent.view().roi(aligned ? 0 : 2, 1, w, h);
      for (int strips : {1, 3}) {
        test::poison_device(parent.view());
        settle_legacy_stream();
        if (strips == 1) {
          ASSERT_EQ(gpu(src, dst, 0, h, stream.get(), path), cudaSuccess);
        } else {  // uneven: [0, h/5), [h/5, a), [a, h)
          const int s1 = h / 5, s2 = s1 + (h - s1) * 2 / 3;
          ASSERT_EQ(gpu(src, dst, 0, s1, stream.get(), path), cudaSuccess);
          ASSERT_EQ(gpu(src, dst, s1, s2, stream.get(), path), cudaSuccess);
          ASSERT_EQ(gpu(src, dst, s2, h, stream.get(), path), cudaSuccess);
        }
        ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
        const HostImage got = test::download(parent.view());
        expect_output(got, parent.view(), dst, expected.view(),
                      strips == 1 ? "one launch" : "three row strips");
      }
    }
  }
}

#define REQUIRE_CUDA_BUILD()
#else
#define REQUIRE_CUDA_BUILD() GTEST_SKIP() << "built without CUDA"
#endif  // JETPIPE_HAVE_CUDA

// ---- GpuTexture --------------------------------------------------------------------------------

TEST(GpuTexture, AddressingTableAndFill) {
  REQUIRE_CUDA_BUILD();
#if JETPIPE_HAVE_CUDA
  for (double v : {0.0, 0.4, 0.5, 1.5, 2.5, 77.3, -3.0, 254.6, 300.0, std::nan("")}) {
    const Border b{BorderMode::kConstant, v};
    EXPECT_EQ(border_fill_u8(b), ref::border_value_u8(b)) << v;
  }
  const auto a = [](BorderMode m, double v) { return texture_addressing(Border{m, v}); };
  EXPECT_EQ(a(BorderMode::kReplicate, 0).address, cudaAddressModeClamp);
  EXPECT_FALSE(a(BorderMode::kReplicate, 0).remap);
  EXPECT_EQ(a(BorderMode::kConstant, 0).address, cudaAddressModeBorder);
  EXPECT_FALSE(a(BorderMode::kConstant, 0.3).remap);  // saturates to 0: the unit's zero border
  EXPECT_TRUE(a(BorderMode::kConstant, 77.3).remap);
  EXPECT_EQ(a(BorderMode::kReflect, 0).address, cudaAddressModeMirror);
  EXPECT_TRUE(a(BorderMode::kReflect, 0).normalized);
  EXPECT_EQ(a(BorderMode::kWrap, 0).address, cudaAddressModeWrap);
  EXPECT_TRUE(a(BorderMode::kWrap, 0).normalized);
  EXPECT_TRUE(a(BorderMode::kReflect101, 0).remap);
#endif
}

TEST(GpuTexture, OwnsAndMoves) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  const HostImage h = random_image(64, 8, PixelFormat::kGray8, rng);
  DeviceImage d = test::upload(h.view(), 0);
  UniqueTexture t(d.view(), Border{BorderMode::kWrap, 0});
  ASSERT_TRUE(t.valid()) << t.why();
  const cudaTextureObject_t obj = t.ref().pixels;
  UniqueTexture moved(std::move(t));
  EXPECT_FALSE(t.valid());  // NOLINT: moved-from is empty by contract
  EXPECT_TRUE(moved.valid());
  EXPECT_EQ(moved.ref().pixels, obj);
  EXPECT_TRUE(moved.serves(d.view(), Border{BorderMode::kWrap, 0}));
  EXPECT_FALSE(moved.serves(d.view(), Border{BorderMode::kReflect, 0}));
  // A texture for another border is refused by the launchers.
  DeviceImage out(64, 8, PixelFormat::kGray8);
  GaussianParams gp = resolve_gaussian(5, 0, Border{BorderMode::kReflect, 0});
  Stream s;
  EXPECT_EQ(launch_gaussian(gp, FilterSource(d.view(), moved), out.view(), 0, 8, LaunchContext{},
                            s.get()),
            cudaErrorInvalidValue);
  // Views that cannot back a texture: an ROI at an odd offset, an odd pitch.
  EXPECT_FALSE(UniqueTexture(d.view().roi(1, 0, 63, 8), Border{}).valid());
  DeviceImage odd = test::upload(h.view(), 13);
  const UniqueTexture none(odd.view(), Border{});
  EXPECT_FALSE(none.valid());
  EXPECT_STRNE(none.why(), "");
#endif
}

#if JETPIPE_HAVE_CUDA
// Every query (x, y) through both paths equals the image extended by border_remap.
void check_probe(int w, int h, const Border& border, std::mt19937& rng) {
  SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + to_string(border.mode) + " " +
               std::to_string(border.value));
  const HostImage host = random_image(w, h, PixelFormat::kGray8, rng);
  DeviceImage dev_img = test::upload(host.view(), 0);
  const UniqueTexture tex(dev_img.view(), border);
  ASSERT_TRUE(tex.valid()) << tex.why();

  // Coordinates along one axis of length n: inside near both edges, 1..40 outside each side, and
  // several lengths away (repeated reflection and wrapping).
  const auto axis = [](int n) {
    std::vector<int> v;
    for (int d = 1; d <= 40; ++d) {
      v.push_back(-d);
      v.push_back(n - 1 + d);
    }
    for (int i = 0; i < std::min(n, 8); ++i) {
      v.push_back(i);
      v.push_back(n - 1 - i);
    }
    for (int k : {2, 3, 5}) {
      v.push_back(-k * n - 1);
      v.push_back(k * n + 2);
      v.push_back(-k * n + std::min(n - 1, 3));
    }
    // Far outside (mirror and wrap of normalized coordinates many periods out).
    for (int d : {61, 100, 333, 4099}) {
      v.push_back(-d);
      v.push_back(n - 1 + d);
    }
    v.push_back(n / 2);
    return v;
  };
  const std::vector<int> xs = axis(w), ys = axis(h);
  std::vector<int> xy;
  for (int x : xs) {
    for (int y : {0, h / 2, h - 1, -1, h, -7, h + 6}) xy.insert(xy.end(), {x, y});
  }
  for (int y : ys) {
    for (int x : {0, w / 2, w - 1, -1, w, -17, w + 16}) xy.insert(xy.end(), {x, y});
  }
  const int n = static_cast<int>(xy.size() / 2);
  DeviceBuffer d_xy(xy.size() * sizeof(int)), d_out(static_cast<std::size_t>(n) * 17);
  JP_CUDA(cudaMemcpy(d_xy.get(), xy.data(), xy.size() * sizeof(int), cudaMemcpyHostToDevice));
  settle_legacy_stream();

  const std::uint8_t fill = ref::border_value_u8(border);
  const auto expect = [&](int x, int y) -> int {
    const int sx = border_remap(x, w, border.mode), sy = border_remap(y, h, border.mode);
    if (sx < 0 || sy < 0) return fill;
    return host.view().row<std::uint8_t>(sy)[sx];
  };
  Stream stream;
  for (FilterPath path : {FilterPath::kTexture, FilterPath::kTiled}) {
    SCOPED_TRACE(to_string(path));
    ASSERT_EQ(launch_border_probe(FilterSource(dev_img.view(), tex), border, path, d_xy.get<int>(),
                                  n, d_out.get<std::uint8_t>(), stream.get()),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    std::vector<std::uint8_t> out(static_cast<std::size_t>(n) * 17);
    JP_CUDA(cudaMemcpy(out.data(), d_out.get(), out.size(), cudaMemcpyDeviceToHost));
    int failures = 0;
    for (int i = 0; i < n && failures < 10; ++i) {
      const int x = xy[2 * i], y = xy[2 * i + 1];
      if (out[17 * i] != expect(x, y)) {
        ADD_FAILURE() << "pixel (" << x << ", " << y << "): got " << int(out[17 * i])
                      << ", border_remap says " << expect(x, y);
        ++failures;
      }
      const int cx = x & ~15;
      for (int b = 0; b < 16 && failures < 10; ++b) {
        if (out[17 * i + 1 + b] != expect(cx + b, y)) {
          ADD_FAILURE() << "chunk at (" << cx << ", " << y << ") byte " << b << ": got "
                        << int(out[17 * i + 1 + b]) << ", border_remap says " << expect(cx + b, y);
          ++failures;
        }
      }
    }
  }
}
#endif

class GpuTextureBorder : public ::testing::TestWithParam<int> {};
TEST_P(GpuTextureBorder, SamplesOutsideLikeBorderRemap) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  const Border& b = kBorders[GetParam()].border;
  for (int w : {1, 2, 3, 4097, 16383, 16384}) check_probe(w, 3, b, rng);  // left, right
  for (int h : {1, 2, 3, 4097, 16383, 16384}) check_probe(3, h, b, rng);  // up, down
  check_probe(16384, 2, b, rng);
  check_probe(2, 16384, b, rng);
  check_probe(33, 17, b, rng);
  for (int n : {5, 6, 7, 100}) {  // more widths and heights that are not powers of two
    check_probe(n, 5, b, rng);
    check_probe(5, n, b, rng);
  }
#endif
}
INSTANTIATE_TEST_SUITE_P(Modes, GpuTextureBorder, ::testing::Range(0, kBorderCount),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string(kBorders[i.param].name);
                         });

// ---- gaussian ----------------------------------------------------------------------------------

using test::GaussianVariant;
// Fixed tables (3, 5, 7, 9), sampled kernels (15, 31), sigma-derived sizes (ksize 0), a tiny sigma
// whose Q8 taps are 0 256 0 (the identity), ksize 1.
const GaussianVariant kGaussian[] = {{3, 0},   {5, 0},   {7, 0},   {9, 0}, {15, 0}, {31, 0},
                                     {0, 1.0}, {0, 2.5}, {3, 0.1}, {1, 0}, {5, 1.3}};

#if JETPIPE_HAVE_CUDA
void check_gaussian(const ImageView& src, const GaussianVariant& g, const Border& b,
                    std::mt19937& rng) {
  const GaussianParams p = resolve_gaussian(g.ksize, g.sigma, b);
  SCOPED_TRACE("gaussian ksize " + std::to_string(p.ksize) + " sigma " + std::to_string(g.sigma));
  check_gpu_filter(
      src, b, PixelFormat::kGray8,
      [&](const ImageView& s, const ImageView& d, int y0, int y1) {
        gaussian_ref(p, s, d, y0, y1);
      },
      [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
          FilterPath pa) { return launch_gaussian(p, s, d, y0, y1, LaunchContext{}, st, pa); },
      rng);
}
#endif

class GpuGaussian : public ::testing::TestWithParam<Case> {};
TEST_P(GpuGaussian, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const Case& c = GetParam();
  std::mt19937 rng(fresh_seed());
  const HostImage src = random_image(c.size.w, c.size.h, PixelFormat::kGray8, rng);
  check_gaussian(src.view(), kGaussian[c.variant], kBorders[c.border].border, rng);
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, GpuGaussian,
                         ::testing::ValuesIn(make_cases(std::size(kGaussian), {1, 5})), case_name);

// The fast kernel across a 16384-wide image: many strips, the last one moved left, the normalized
// coordinates of reflect and wrap at that width.
TEST(GpuGaussianWide, Width16384) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  for (int w : {16384, 16383, 16000}) {
    const HostImage src = random_image(w, 40, PixelFormat::kGray8, rng);
    for (int b : {1, 2, 3, 5}) check_gaussian(src.view(), {5, 0}, kBorders[b].border, rng);
    check_gaussian(src.view(), {3, 0}, kBorders[3].border, rng);
  }
#endif
}

// The fast kernel's ring of rows in flight (cp.async into shared memory): strips of several
// windows' worth of rows (the ring wraps), every radius the kernel takes, every border (rows
// outside the image remapped, a constant border's put in place after the copy), a height that
// leaves a short last band (check_gpu_filter: every layout, whole and in row strips); box 5 × 5 too
// (the symmetric vertical pass with a sum epilogue).
TEST(GpuFastRing, RowsInFlightMatchTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  const HostImage img = random_image(1200, 131, PixelFormat::kGray8, rng);
  const ImageView src = img.view();
  for (int ksize : {3, 5, 7, 9}) {
    for (int rows : {4, 37, 0}) {
      for (int b = 0; b < kBorderCount; ++b) {
        SCOPED_TRACE("ksize " + std::to_string(ksize) + " rows " + std::to_string(rows) +
                     " border " + kBorders[b].name);
        FilterLaunchOptions o;
        o.rows_per_warp = rows;
        const GaussianParams gp = resolve_gaussian(ksize, 0, kBorders[b].border);
        check_gpu_filter(
            src, kBorders[b].border, PixelFormat::kGray8,
            [&](const ImageView& s, const ImageView& d, int y0, int y1) {
              gaussian_ref(gp, s, d, y0, y1);
            },
            [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
                FilterPath pa) {
              return launch_gaussian(gp, s, d, y0, y1, LaunchContext{}, st, pa, o);
            },
            rng);
        if (ksize != 5 || rows != 37) continue;
        BoxParams bp;
        bp.ksize = 5;
        bp.border = kBorders[b].border;
        check_gpu_filter(
            src, kBorders[b].border, PixelFormat::kGray8,
            [&](const ImageView& s, const ImageView& d, int y0, int y1) {
              box_ref(bp, s, d, y0, y1);
            },
            [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
                FilterPath pa) { return launch_box(bp, s, d, y0, y1, LaunchContext{}, st, pa, o); },
            rng);
      }
    }
  }
#endif
}

// The fast kernel's rows per warp (FilterLaunchOptions) for gaussian, box and sobel: one row a
// warp, three (groups of edge rows that do not divide the strips' rows) and 16, each with the early
// trigger on and off.
TEST(GpuFastRows, EveryRowsPerWarpMatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  const HostImage src = random_image(1040, 45, PixelFormat::kGray8, rng);
  for (int rows : {1, 3, 16}) {
    for (bool early : {true, false}) {
      SCOPED_TRACE("rows per warp " + std::to_string(rows) + " early trigger " +
                   std::to_string(early));
      FilterLaunchOptions o;
      o.rows_per_warp = rows;
      LaunchContext ctx;
      ctx.early_trigger = early;
      const Border& b = kBorders[2].border;
      const GaussianParams gp = resolve_gaussian(5, 0, b);
      check_gpu_filter(
          src.view(), b, PixelFormat::kGray8,
          [&](const ImageView& s, const ImageView& d, int y0, int y1) {
            gaussian_ref(gp, s, d, y0, y1);
          },
          [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
              FilterPath pa) { return launch_gaussian(gp, s, d, y0, y1, ctx, st, pa, o); },
          rng);
      BoxParams bp;
      bp.ksize = 7;
      bp.border = b;
      check_gpu_filter(
          src.view(), b, PixelFormat::kGray8,
          [&](const ImageView& s, const ImageView& d, int y0, int y1) {
            box_ref(bp, s, d, y0, y1);
          },
          [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
              FilterPath pa) { return launch_box(bp, s, d, y0, y1, ctx, st, pa, o); },
          rng);
      SobelParams sp;
      sp.dx = 1;
      sp.dy = 0;
      sp.ksize = 3;
      sp.border = b;
      check_gpu_filter(
          src.view(), b, PixelFormat::kS16,
          [&](const ImageView& s, const ImageView& d, int y0, int y1) {
            sobel_ref(sp, s, d, y0, y1);
          },
          [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
              FilterPath pa) { return launch_sobel(sp, s, d, y0, y1, ctx, st, pa, o); },
          rng);
    }
  }
#endif
}

// gaussian fused with to_gray: a BGR8 / RGB8 / BGRx / RGBA source is read as its to_gray image.
// Equals to_gray_ref then gaussian_ref, bit for bit, for every border, the fast kernel's radii
// (ksize 3..9) and the tile engine's (ksize 11), the identity (ksize 1), three layouts
// (cudaMallocPitch; rows padded by 13 bytes; an ROI at x offset 1: byte loads), as one launch and
// as two uneven row strips.
#if JETPIPE_HAVE_CUDA
// The gaussian over the colour image `src`, whole and in two uneven strips (with `ctx` and `o`),
// equals `want` (to_gray_ref then gaussian_ref) bit for bit.
void expect_colour_gaussian(const GaussianParams& p, const ImageView& src, const ImageView& want,
                            const LaunchContext& ctx, const FilterLaunchOptions& o) {
  const int h = src.height;
  DeviceImage out(src.width, h, PixelFormat::kGray8);
  for (int strips : {1, 2}) {
    test::poison_device(out.view());
    const int mid = strips == 1 ? h : h / 3;
    const FilterSource fs(src);
    ASSERT_EQ(launch_gaussian(p, fs, out.view(), 0, mid, ctx, nullptr, FilterPath::kAuto, o),
              cudaSuccess);
    if (mid < h) {
      ASSERT_EQ(launch_gaussian(p, fs, out.view(), mid, h, ctx, nullptr, FilterPath::kAuto, o),
                cudaSuccess);
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const HostImage got = test::download(out.view());
    const test::Diff d = test::max_diff(got.view(), want);
    ASSERT_EQ(d.max_abs, 0) << "at (" << d.x << ", " << d.y << "), strips " << strips;
  }
}
#endif

TEST(GpuGaussianColour, MatchesToGrayThenTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  std::vector<Size2> sizes = kSizes;
  sizes.push_back({1000, 40});
  sizes.push_back({517, 19});   // the fast kernel: one strip and a right edge tile of 21 columns
  sizes.push_back({1441, 16});  // a strip moved left onto x0_last; the fewest rows it takes
  sizes.push_back(kBig);
  for (const Size2& sz : sizes) {
    for (PixelFormat f :
         {PixelFormat::kBgr8, PixelFormat::kRgb8, PixelFormat::kBgrx8, PixelFormat::kRgba8}) {
      const HostImage colour = random_image(sz.w + 1, sz.h, f, rng);  // +1: room for the ROI
      const ImageView full = colour.view();
      HostImage gray(sz.w, sz.h, PixelFormat::kGray8);
      to_gray_ref(full.roi(0, 0, sz.w, sz.h), gray.view(), 0, sz.h);
      for (int layout = 0; layout < 3; ++layout) {
        const DeviceImage dev_img = test::upload(full, layout == 1 ? 13 : 0);
        const ImageView src = dev_img.view().roi(layout == 2 ? 1 : 0, 0, sz.w, sz.h);
        HostImage gray_roi(sz.w, sz.h, PixelFormat::kGray8);
        if (layout == 2) to_gray_ref(full.roi(1, 0, sz.w, sz.h), gray_roi.view(), 0, sz.h);
        const ImageView want_src = layout == 2 ? gray_roi.view() : gray.view();
        for (int bi = 0; bi < kBorderCount; ++bi) {
          if (sz.w == kBig.w && bi != 1 && bi != 5) continue;  // big: constant77 and wrap only
          for (int ksize : {1, 3, 5, 7, 9, 11}) {
            const GaussianParams p = resolve_gaussian(ksize, 0, kBorders[bi].border);
            SCOPED_TRACE(std::to_string(sz.w) + "x" + std::to_string(sz.h) + " " + to_string(f) +
                         " layout " + std::to_string(layout) + " " + kBorders[bi].name +
                         " ksize " + std::to_string(ksize));
            HostImage want(sz.w, sz.h, PixelFormat::kGray8);
            gaussian_ref(p, want_src, want.view(), 0, sz.h);
            expect_colour_gaussian(p, src, want.view(), LaunchContext{}, FilterLaunchOptions{});
          }
        }
      }
    }
  }
#endif
}

// The staged kernel (gaussian over a colour source) at every rows per warp it takes
// (FilterLaunchOptions, 1..4) and the early trigger on and off, whole and in two uneven strips:
// equals to_gray_ref then gaussian_ref.
TEST(GpuGaussianColour, StagedRowsPerWarpMatchTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  for (const Size2& sz : {Size2{1000, 40}, Size2{517, 19}, Size2{1920, 67}}) {
    for (PixelFormat f : {PixelFormat::kBgr8, PixelFormat::kRgbx8}) {
      const HostImage colour = random_image(sz.w, sz.h, f, rng);
      HostImage gray(sz.w, sz.h, PixelFormat::kGray8);
      to_gray_ref(colour.view(), gray.view(), 0, sz.h);
      const DeviceImage src = test::upload(colour.view());
      for (int bi : {0, 3}) {
        for (int ksize : {3, 5, 9}) {
          const GaussianParams p = resolve_gaussian(ksize, 0, kBorders[bi].border);
          HostImage want(sz.w, sz.h, PixelFormat::kGray8);
          gaussian_ref(p, gray.view(), want.view(), 0, sz.h);
          for (int rows = 1; rows <= 4; ++rows) {
            for (bool early : {true, false}) {
              SCOPED_TRACE(std::to_string(sz.w) + "x" + std::to_string(sz.h) + " " + to_string(f) +
                           " " + kBorders[bi].name + " ksize " + std::to_string(ksize) + " rows " +
                           std::to_string(rows) + " early trigger " + std::to_string(early));
              FilterLaunchOptions o;
              o.rows_per_warp = rows;
              LaunchContext ctx;
              ctx.early_trigger = early;
              expect_colour_gaussian(p, src.view(), want.view(), ctx, o);
            }
          }
        }
      }
    }
  }
#endif
}

// ---- box ---------------------------------------------------------------------------------------

using test::BoxVariant;
const BoxVariant kBox[] = {{1, true},  {3, true},  {5, true},  {9, true},   {15, true},
                           {31, true}, {3, false}, {5, false}, {15, false}, {31, false}};

#if JETPIPE_HAVE_CUDA
// launch_box with options against box_ref (check_gpu_filter: every layout, path, strip split).
void check_box_launch(const ImageView& src, const BoxParams& p, const FilterLaunchOptions& o,
                      std::mt19937& rng) {
  check_gpu_filter(
      src, p.border, PixelFormat::kGray8,
      [&](const ImageView& s, const ImageView& d, int y0, int y1) { box_ref(p, s, d, y0, y1); },
      [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
          FilterPath pa) { return launch_box(p, s, d, y0, y1, LaunchContext{}, st, pa, o); },
      rng);
}

void check_box(const ImageView& src, const BoxVariant& v, const Border& b, std::mt19937& rng) {
  BoxParams p;
  p.ksize = v.ksize;
  p.normalize = v.normalize;
  p.border = b;
  SCOPED_TRACE("box ksize " + std::to_string(v.ksize) + (v.normalize ? " mean" : " sum"));
  check_box_launch(src, p, FilterLaunchOptions{}, rng);
}
#endif

class GpuBox : public ::testing::TestWithParam<Case> {};
TEST_P(GpuBox, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const Case& c = GetParam();
  std::mt19937 rng(fresh_seed());
  const HostImage src = random_image(c.size.w, c.size.h, PixelFormat::kGray8, rng);
  check_box(src.view(), kBox[c.variant], kBorders[c.border].border, rng);
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, GpuBox, ::testing::ValuesIn(make_cases(std::size(kBox), {2, 4})),
                         case_name);

// Every odd ksize 1..33 (the running-sum kernel takes 3..31, the separable engine 33) through both
// engines (running sums, the sliding windows), mean and sum, every border, on widths around a
// warp's 480 columns and heights down to 1 (the border rows far out); the running kernel also at 1,
// 3 and 37 rows a warp (bands of several warps, a ksize taller than a band, its ring of rows
// wrapping several times in a band of 37 rows), and split at every size: with the tile engine's
// edges (977 and 1003 wide: the last strip moved left and not; 977 × 290: two edge tiles of 256
// rows down on the left, three of 128 on the right) and with the edge kernel.
class GpuBoxKsize : public ::testing::TestWithParam<int> {};
TEST_P(GpuBoxKsize, EveryEngineMatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const int ksize = GetParam();
  std::mt19937 rng(fresh_seed());
  struct Run {
    BoxEngine engine;
    int rows;
    long long split_px = -1;  // 0: the interior and edge kernels at every size
    int edge_rows = 0;        // > 0: the split's edges by the edge kernel, not the tile engine
  };
  for (const Size2& sz : {Size2{1, 1}, Size2{37, 5}, Size2{5, 41}, Size2{497, 23}, Size2{1003, 70},
                          Size2{977, 290}}) {
    const HostImage src = random_image(sz.w, sz.h, PixelFormat::kGray8, rng);
    for (int bi = 0; bi < kBorderCount; ++bi) {
      for (bool normalize : {true, false}) {
        for (const Run& run :
             {Run{BoxEngine::kRunning, 0}, Run{BoxEngine::kRunning, 1}, Run{BoxEngine::kRunning, 3},
              Run{BoxEngine::kRunning, 37}, Run{BoxEngine::kRunning, 0, 0},
              Run{BoxEngine::kRunning, 3, 0}, Run{BoxEngine::kRunning, 0, 0, 3},
              Run{BoxEngine::kWindow, 0}, Run{BoxEngine::kTile, 0}}) {
          BoxParams p;
          p.ksize = ksize;
          p.normalize = normalize;
          p.border = kBorders[bi].border;
          FilterLaunchOptions o;
          o.box_engine = run.engine;
          o.rows_per_warp = run.rows;
          o.box_split_px = run.split_px;
          o.box_edge_rows = run.edge_rows;
          SCOPED_TRACE(std::to_string(sz.w) + "x" + std::to_string(sz.h) + " " + kBorders[bi].name +
                       (normalize ? " mean" : " sum") +
                       (run.engine == BoxEngine::kRunning ? " running"
                        : run.engine == BoxEngine::kTile  ? " tile"
                                                          : " window") +
                       " rows " + std::to_string(run.rows) + (run.split_px == 0 ? " split" : "") +
                       (run.edge_rows > 0 ? " edge kernel" : ""));
          check_box_launch(src.view(), p, o, rng);
        }
      }
    }
  }
#endif
}
INSTANTIATE_TEST_SUITE_P(Ksizes, GpuBoxKsize, ::testing::Range(1, 34, 2));

// Above 31 (the policy's tile engine, the separable one by name) to the largest, 65: every border,
// mean and sum, on tiles cut at the right and bottom and images narrower or shorter than the window.
TEST(GpuBoxWide, TileAndSeparableMatchTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  for (int ksize : {35, 47, 65}) {
    for (const Size2& sz : {Size2{5, 41}, Size2{300, 90}, Size2{513, 17}}) {
      const HostImage src = random_image(sz.w, sz.h, PixelFormat::kGray8, rng);
      for (int bi = 0; bi < kBorderCount; ++bi) {
        for (bool normalize : {true, false}) {
          for (BoxEngine engine : {BoxEngine::kAuto, BoxEngine::kWindow}) {
            BoxParams p;
            p.ksize = ksize;
            p.normalize = normalize;
            p.border = kBorders[bi].border;
            FilterLaunchOptions o;
            o.box_engine = engine;
            SCOPED_TRACE(std::to_string(ksize) + " " + std::to_string(sz.w) + "x" +
                         std::to_string(sz.h) + " " + kBorders[bi].name +
                         (normalize ? " mean" : " sum") +
                         (engine == BoxEngine::kAuto ? " policy" : " separable"));
            check_box_launch(src.view(), p, o, rng);
          }
        }
      }
    }
  }
#endif
}

// A launch above kRunBoxSplitPx with the policy's own split: 4,100 × 4,097 and a 4,103-wide one
// whose last strip is narrow (moved left), ksize 3, 15 and 31 (above 2^24 pixels: 3 with the tile
// engine's edges, 15 and 31 with the edge kernel at the rows that fit one wave; bands of fewer rows
// than the whole, as check_gpu_filter cuts them, the tile edges); then the edge kernel at 5 rows a
// warp.
TEST(GpuBoxLarge, SplitLaunchMatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  static_assert(4100LL * 4097 > kRunBoxSplitPx, "the case must reach the split");
  const struct {
    Size2 size;
    int ksize;
    int border;
  } cases[] = {{{4100, 4097}, 15, 1}, {{4103, 4097}, 31, 3}, {{4103, 4099}, 3, 5}};
  for (const auto& c : cases) {
    const HostImage src = random_image(c.size.w, c.size.h, PixelFormat::kGray8, rng);
    BoxParams p;
    p.ksize = c.ksize;
    p.border = kBorders[c.border].border;
    SCOPED_TRACE(std::to_string(c.size.w) + "x" + std::to_string(c.size.h) + " ksize " +
                 std::to_string(c.ksize) + " " + kBorders[c.border].name);
    FilterLaunchOptions o;
    o.box_engine = BoxEngine::kRunning;
    check_box_launch(src.view(), p, o, rng);
    o.box_edge_rows = 5;  // the edge kernel's rows a warp (the bench's " edgeN" rows)
    SCOPED_TRACE("edge kernel 5 rows a warp");
    check_box_launch(src.view(), p, o, rng);
  }
#endif
}

// ---- sobel -------------------------------------------------------------------------------------

using test::SobelVariant;
const SobelVariant kSobel[] = {
    {1, 0, 3, 1, false},  {0, 1, 3, 1, false},   {1, 1, 3, 1, false},   {2, 0, 5, 1, false},
    {0, 2, 5, 1, false},  {1, 2, 5, 1, false},   {1, 0, 1, 1, false},   {0, 2, 1, 1, false},
    {1, 0, 3, 1, true},   {0, 1, 5, 0.25, true}, {1, 1, 5, 0.1, false}, {2, 0, 3, 3.3, false},
    {2, 2, 5, 40, false},
};

#if JETPIPE_HAVE_CUDA
void check_sobel(const ImageView& src, const SobelVariant& v, const Border& b, std::mt19937& rng) {
  SobelParams p;
  p.dx = v.dx;
  p.dy = v.dy;
  p.ksize = v.ksize;
  p.scale = v.scale;
  p.abs8 = v.abs8;
  p.border = b;
  SCOPED_TRACE("sobel dx " + std::to_string(v.dx) + " dy " + std::to_string(v.dy) + " ksize " +
               std::to_string(v.ksize) + " scale " + std::to_string(v.scale) +
               (v.abs8 ? " abs8" : " s16"));
  check_gpu_filter(
      src, b, v.abs8 ? PixelFormat::kGray8 : PixelFormat::kS16,
      [&](const ImageView& s, const ImageView& d, int y0, int y1) { sobel_ref(p, s, d, y0, y1); },
      [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
          FilterPath pa) { return launch_sobel(p, s, d, y0, y1, LaunchContext{}, st, pa); },
      rng);
}
#endif

class GpuSobel : public ::testing::TestWithParam<Case> {};
TEST_P(GpuSobel, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const Case& c = GetParam();
  std::mt19937 rng(fresh_seed());
  const HostImage src = random_image(c.size.w, c.size.h, PixelFormat::kGray8, rng);
  check_sobel(src.view(), kSobel[c.variant], kBorders[c.border].border, rng);
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, GpuSobel,
                         ::testing::ValuesIn(make_cases(std::size(kSobel), {2, 9})), case_name);

// ---- convolve ----------------------------------------------------------------------------------

using test::ConvolveVariant;
using test::random_convolve;
const ConvolveVariant kConvolve[] = {{3, 5}, {15, 15}, {1, 1}, {5, 3}, {7, 1}};

#if JETPIPE_HAVE_CUDA
void check_convolve(const ImageView& src, const ConvolveParams& p, std::mt19937& rng) {
  SCOPED_TRACE("convolve " + std::to_string(p.rows) + "x" + std::to_string(p.cols));
  check_gpu_filter(
      src, p.border, PixelFormat::kGray8,
      [&](const ImageView& s, const ImageView& d, int y0, int y1) {
        convolve_ref(p, s, d, y0, y1);
      },
      [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
          FilterPath pa) { return launch_convolve(p, s, d, y0, y1, st, pa); },
      rng);
}
#endif

class GpuConvolve : public ::testing::TestWithParam<Case> {};
TEST_P(GpuConvolve, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const Case& c = GetParam();
  std::mt19937 rng(fresh_seed());
  const ConvolveParams p = random_convolve(kConvolve[c.variant], kBorders[c.border].border, rng);
  const HostImage src = random_image(c.size.w, c.size.h, PixelFormat::kGray8, rng);
  check_convolve(src.view(), p, rng);
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, GpuConvolve,
                         ::testing::ValuesIn(make_cases(std::size(kConvolve), {0, 1})), case_name);

// The strip kernel (square 3, 5, 7 over aligned views of ≥ 544 × 16): each arithmetic
// (ConvolveArith: integer, fused, general), widths of one strip (544: the right edge tile 16
// wide), one strip and a right edge tile of 60 columns (588), and a last strip moved left
// (1041), every border. The taps are drawn for the arithmetic asked, and the case checks that
// convolve_arith gives it.
struct ConvolveStripVariant {
  int k;
  ConvolveArith arith;
};
const ConvolveStripVariant kConvolveStrip[] = {
    {3, ConvolveArith::kInteger}, {5, ConvolveArith::kInteger}, {7, ConvolveArith::kInteger},
    {3, ConvolveArith::kFused},   {5, ConvolveArith::kFused},   {7, ConvolveArith::kFused},
    {3, ConvolveArith::kGeneral}, {5, ConvolveArith::kGeneral}, {7, ConvolveArith::kGeneral}};
const std::vector<Size2> kConvolveStripSizes = {{544, 16}, {588, 23}, {1041, 40}};

#if JETPIPE_HAVE_CUDA
// Integer: small integers in units of 2^−s (s from −2: e > 0 too), delta in eighths (in fours
// where s < 0): every sum exact, half-way cases and saturation at both ends. Fused: integers up to
// 3000 in units of 2^−10 (products exact, sums not). General: random_convolve's.
ConvolveParams strip_convolve(const ConvolveStripVariant& v, const Border& b, std::mt19937& rng) {
  ConvolveParams p;
  if (v.arith == ConvolveArith::kGeneral) {
    p = random_convolve({v.k, v.k}, b, rng);
  } else {
    p.rows = p.cols = v.k;
    p.border = b;
    std::uniform_int_distribution<int> small(-12, 12), big(-3000, 3000), eighths(-160, 160);
    const int s = std::uniform_int_distribution<int>(-2, 6)(rng);
    for (int i = 0; i < v.k * v.k; ++i) {
      p.taps.push_back(v.arith == ConvolveArith::kInteger ? std::ldexp(float(small(rng)), -s)
                                                          : std::ldexp(float(big(rng)), -10));
    }
    p.delta = v.arith == ConvolveArith::kFused
                  ? std::uniform_real_distribution<double>(-20, 20)(rng)
              : s < 0 ? 4.0 * small(rng)
                      : eighths(rng) / 8.0;
  }
  EXPECT_EQ(convolve_arith(p), v.arith) << "the drawn taps take another arithmetic";
  return p;
}
#endif

class GpuConvolveStrip : public ::testing::TestWithParam<Case> {};
TEST_P(GpuConvolveStrip, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const Case& c = GetParam();
  std::mt19937 rng(fresh_seed());
  const ConvolveParams p =
      strip_convolve(kConvolveStrip[c.variant], kBorders[c.border].border, rng);
  const HostImage src = random_image(c.size.w, c.size.h, PixelFormat::kGray8, rng);
  SCOPED_TRACE(to_string(kConvolveStrip[c.variant].arith));
  check_convolve(src.view(), p, rng);
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, GpuConvolveStrip,
                         ::testing::ValuesIn(test::make_cases(kConvolveStripSizes,
                                                              std::size(kConvolveStrip),
                                                              {1, 4, 7})),
                         case_name);

// Which arithmetic the taps get: the boundaries of each condition.
TEST(GpuConvolveArith, Classes) {
  REQUIRE_CUDA_BUILD();
#if JETPIPE_HAVE_CUDA
  const auto arith = [](int k, std::vector<float> taps, double delta) {
    ConvolveParams p;
    p.rows = p.cols = k;
    p.taps = std::move(taps);
    p.delta = delta;
    return convolve_arith(p);
  };
  const std::vector<float> sharpen = {0, -1, 0, -1, 5, -1, 0, -1, 0};
  EXPECT_EQ(arith(3, sharpen, 0), ConvolveArith::kInteger);
  EXPECT_EQ(arith(3, sharpen, 3.5), ConvolveArith::kInteger);
  EXPECT_EQ(arith(3, std::vector<float>(9, 128.f), 0), ConvolveArith::kInteger);  // 2^7 units
  EXPECT_EQ(arith(3, {128, 1, 0, 0, 0, 0, 0, 0, 0}, 0), ConvolveArith::kFused);   // 128 units
  EXPECT_EQ(arith(3, {127, 1, 0, 0, 0, 0, 0, 0, 0}, 0), ConvolveArith::kInteger);
  EXPECT_EQ(arith(3, sharpen, 0x1p22), ConvolveArith::kFused);  // the sums reach 2^22 units
  EXPECT_EQ(arith(3, sharpen, 0x1p21), ConvolveArith::kInteger);
  EXPECT_EQ(arith(3, {65793.f, 0, 0, 0, 0, 0, 0, 0, 0}, 0), ConvolveArith::kFused);
  EXPECT_EQ(arith(3, {65795.f, 0, 0, 0, 0, 0, 0, 0, 0}, 0), ConvolveArith::kGeneral);
  EXPECT_EQ(arith(3, std::vector<float>(9, 0.1f), 0), ConvolveArith::kGeneral);
  EXPECT_EQ(arith(3, std::vector<float>(9, 0.f), 0), ConvolveArith::kInteger);
  EXPECT_EQ(arith(3, {std::nanf(""), 0, 0, 0, 0, 0, 0, 0, 0}, 0), ConvolveArith::kNone);
  EXPECT_EQ(arith(3, sharpen, INFINITY), ConvolveArith::kNone);
  EXPECT_EQ(arith(3, {0x1p101f, 0, 0, 0, 0, 0, 0, 0, 0}, 0), ConvolveArith::kNone);
  EXPECT_EQ(arith(9, std::vector<float>(81, 1.f), 0), ConvolveArith::kNone);  // not a strip shape
  std::vector<float> k16;
  for (int i = 0; i < 25; ++i) k16.push_back((i % 7 - 2) * 0.0625f);  // the bench's
  EXPECT_EQ(arith(5, k16, 3.5), ConvolveArith::kInteger);
  for (float& t : k16) t += 0x1p-10f;
  EXPECT_EQ(arith(5, k16, 3.5), ConvolveArith::kFused);
  // 2^−23 units: the epilogue's constant is exact for |e| ≤ 22 only.
  EXPECT_EQ(arith(3, {0x1p-23f, 0, 0, 0, 0, 0, 0, 0, 0}, 0), ConvolveArith::kFused);
  EXPECT_EQ(arith(3, {0x1p-22f, 0, 0, 0, 0, 0, 0, 0, 0}, 0), ConvolveArith::kInteger);
#endif
}

// ---- harris ------------------------------------------------------------------------------------

using test::HarrisVariant;
// ksize 3 with block 3..7 runs the fast kernel where the view fits it (aligned, ≥ 152 wide), the
// others the tile engine.
const HarrisVariant kHarris[] = {{3, 3}, {5, 3}, {3, 5}, {2, 1}, {4, 7},
                                 {1, 3}, {7, 5}, {4, 3}, {6, 3}, {7, 3}};

#if JETPIPE_HAVE_CUDA
// o: the fast kernel's shape (zeros: the policy's).
void check_harris(const ImageView& src, const HarrisParams& p, std::mt19937& rng,
                  const HarrisLaunchOptions& o = {}, const LaunchContext& ctx = {}) {
  SCOPED_TRACE("harris block " + std::to_string(p.block_size) + " ksize " +
               std::to_string(p.ksize) + " rows per warp " + std::to_string(o.rows_per_warp) +
               " lane columns " + std::to_string(o.lane_cols) + " tiled px " +
               std::to_string(o.tiled_px) + " early trigger " + std::to_string(ctx.early_trigger));
  check_gpu_filter(
      src, p.border, PixelFormat::kF32,
      [&](const ImageView& s, const ImageView& d, int y0, int y1) { harris_ref(p, s, d, y0, y1); },
      [&](const FilterSource& s, const ImageView& d, int y0, int y1, cudaStream_t st,
          FilterPath pa) { return launch_harris(p, s, d, y0, y1, ctx, st, pa, o); },
      rng);
}
#endif

class GpuHarris : public ::testing::TestWithParam<Case> {};
TEST_P(GpuHarris, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const Case& c = GetParam();
  HarrisParams p;
  p.block_size = kHarris[c.variant].block_size;
  p.ksize = kHarris[c.variant].ksize;
  p.k = 0.04;
  p.border = kBorders[c.border].border;
  std::mt19937 rng(fresh_seed());
  const HostImage src = random_image(c.size.w, c.size.h, PixelFormat::kGray8, rng);
  check_harris(src.view(), p, rng);
#endif
}
INSTANTIATE_TEST_SUITE_P(Sizes, GpuHarris,
                         ::testing::ValuesIn(make_cases(std::size(kHarris), {0, 9})), case_name);

// The fast kernel's geometry, with 8 and with 4 columns a lane: 152 wide is one 4-column strip
// (too narrow for 8: 4 instead), 272 one 8-column strip and two 4-column ones (the second at an
// X0 that is not a multiple of 16), 297 one more strip moved left (both), 1040 several strips and a
// moved one (both); 2 rows (row_near's least), 5, 19 and 40 rows, each through rows per warp of 1
// (one output row a strip), 3, 16 and the policy's, every border mode, block 3..7 (v = block − 3).
class GpuHarrisFast : public ::testing::TestWithParam<Case> {};
TEST_P(GpuHarrisFast, MatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const Case& c = GetParam();
  HarrisParams p;
  p.block_size = 3 + c.variant;
  p.ksize = 3;
  p.k = 0.04;
  p.border = kBorders[c.border].border;
  std::mt19937 rng(fresh_seed());
  const HostImage src = random_image(c.size.w, c.size.h, PixelFormat::kGray8, rng);
  for (int lanes : {8, 4}) {
    for (int rows : {0, 1, 3, 16}) {
      HarrisLaunchOptions o;
      o.rows_per_warp = rows;
      o.lane_cols = lanes;
      check_harris(src.view(), p, rng, o);
    }
  }
#endif
}
std::vector<Case> harris_fast_cases() {
  std::vector<Case> cases;
  for (const Size2& s : {Size2{152, 2}, Size2{272, 5}, Size2{297, 19}, Size2{1040, 40}}) {
    for (int b = 0; b < kBorderCount; ++b) {
      for (int v = 0; v < 5; ++v) cases.push_back({s, b, v});
    }
  }
  return cases;
}
INSTANTIATE_TEST_SUITE_P(Geometry, GpuHarrisFast, ::testing::ValuesIn(harris_fast_cases()),
                         case_name);

// ksize 3, block 3 at sizes where the tiled kernel and the fast kernel both apply
// (HarrisLaunchOptions
// ::tiled_px: every launch tiled, or none), each with the early trigger on and off: both equal the
// twin in every layout, path and strip split.
TEST(GpuHarrisTiledOrFast, BothMatchTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  std::mt19937 rng(fresh_seed());
  HarrisParams p;
  p.block_size = 3;
  p.ksize = 3;
  for (const Size2& sz : {Size2{640, 48}, Size2{1040, 40}}) {
    const HostImage src = random_image(sz.w, sz.h, PixelFormat::kGray8, rng);
    for (int b : {0, 2, 3}) {  // not wrap: the tiled kernel does not take it
      p.border = kBorders[b].border;
      for (long long tiled_px : {0LL, 1LL << 40}) {
        for (bool early : {true, false}) {
          HarrisLaunchOptions o;
          o.tiled_px = tiled_px;
          LaunchContext ctx;
          ctx.early_trigger = early;
          check_harris(src.view(), p, rng, o, ctx);
        }
      }
    }
  }
#endif
}

// launch_harris_max: the response as launch_harris writes it, and the maximum of all of it
// gathered over three strips into one key (the detection's quality threshold reads it): the fast
// kernel with 8- and 4-column lanes and several rows per warp, its edge tiles and the tile engine
// (ksize 5, and widths under a strip), every border mode.
TEST(GpuHarrisMax, GathersTheMaximumOverStrips) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  Stream st;
  DeviceBuffer key(sizeof(std::uint32_t));
  for (const Size2& size :
       {Size2{1, 1}, Size2{113, 113}, Size2{297, 19}, Size2{1040, 40}, Size2{1920, 1080}}) {
    const HostImage src = random_image(size.w, size.h, PixelFormat::kGray8, rng);
    const DeviceImage dsrc = test::upload(src.view());
    for (int b = 0; b < kBorderCount; ++b) {
      for (const auto& [block, ksize, rows, lanes] :
           {std::array<int, 4>{3, 3, 0, 0}, std::array<int, 4>{3, 3, 3, 4},
            std::array<int, 4>{5, 3, 16, 8}, std::array<int, 4>{3, 5, 0, 0}}) {
        SCOPED_TRACE(std::to_string(size.w) + "x" + std::to_string(size.h) + " " +
                     kBorders[b].name + " block " + std::to_string(block) + " ksize " +
                     std::to_string(ksize) + " rows " + std::to_string(rows) + " lanes " +
                     std::to_string(lanes) + " seed " + std::to_string(seed));
        HarrisParams p;
        p.block_size = block;
        p.ksize = ksize;
        p.border = kBorders[b].border;
        HostImage want(size.w, size.h, PixelFormat::kF32);
        harris_ref(p, src.view(), want.view(), 0, size.h);
        float max = -INFINITY;
        for (int y = 0; y < size.h; ++y) {
          for (int x = 0; x < size.w; ++x) max = std::max(max, want.view().at<float>(x, y));
        }
        DeviceImage out(size.w, size.h, PixelFormat::kF32);
        test::poison_device(out.view());
        ASSERT_EQ(cudaMemsetAsync(key.get(), 0, sizeof(std::uint32_t), st.get()), cudaSuccess);
        const int cut[4] = {0, size.h / 3, 2 * size.h / 3, size.h};
        for (int k = 0; k < 3; ++k) {
          auto* slot = static_cast<std::uint32_t*>(key.get());
          HarrisLaunchOptions o;
          o.rows_per_warp = rows;
          o.lane_cols = lanes;
          ASSERT_EQ(launch_harris_max(p, dsrc.view(), out.view(), cut[k], cut[k + 1], slot,
                                      LaunchContext{}, st.get(), FilterPath::kAuto, o),
                    cudaSuccess);
        }
        std::uint32_t got = 0;
        ASSERT_EQ(cudaMemcpyAsync(&got, key.get(), sizeof got, cudaMemcpyDeviceToHost, st.get()),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(st.get()), cudaSuccess);
        EXPECT_EQ(got, test::host_order_key(max)) << "maximum " << max;
        const HostImage back = test::download(out.view());
        EXPECT_EQ(test::rows_differ(back.view(), want.view()), 0)
            << "rows of the response differ from the twin's";
      }
    }
  }
  DeviceImage in(32, 8, PixelFormat::kGray8), out(32, 8, PixelFormat::kF32);
  EXPECT_EQ(launch_harris_max(HarrisParams{}, in.view(), out.view(), 0, 8, nullptr, LaunchContext{},
                              st.get()),
            cudaErrorInvalidValue);
#endif
}

// ---- launcher contract -------------------------------------------------------------------------

TEST(GpuFilterArgs, RejectsBadArguments) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  DeviceImage a(32, 16, PixelFormat::kGray8), b(32, 16, PixelFormat::kGray8),
      c(31, 16, PixelFormat::kGray8);
  DeviceImage f(32, 16, PixelFormat::kF32);
  Stream s;
  const GaussianParams g = resolve_gaussian(5, 0, Border{});
  EXPECT_EQ(launch_gaussian(g, a.view(), c.view(), 0, 16, LaunchContext{}, s.get()),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_gaussian(g, a.view(), b.view(), 0, 17, LaunchContext{}, s.get()),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_gaussian(g, a.view(), b.view(), 9, 8, LaunchContext{}, s.get()),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_gaussian(g, a.view(), f.view(), 0, 16, LaunchContext{}, s.get()),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_gaussian(g, a.view(), b.view(), 3, 3, LaunchContext{}, s.get()),
            cudaSuccess);  // no rows
  GaussianParams even = g;
  even.ksize = 4;
  EXPECT_EQ(launch_gaussian(even, a.view(), b.view(), 0, 16, LaunchContext{}, s.get()),
            cudaErrorInvalidValue);
  HarrisParams h;
  h.block_size = 32;
  EXPECT_EQ(launch_harris(h, a.view(), f.view(), 0, 16, LaunchContext{}, s.get()),
            cudaErrorInvalidValue);
  SobelParams sp;
  sp.dx = sp.dy = 0;
  DeviceImage s16(32, 16, PixelFormat::kS16);
  EXPECT_EQ(launch_sobel(sp, a.view(), s16.view(), 0, 16, LaunchContext{}, s.get()),
            cudaErrorInvalidValue);
  ConvolveParams cp;
  cp.rows = 3;
  cp.cols = 3;
  cp.taps.assign(8, 0.1f);
  EXPECT_EQ(launch_convolve(cp, a.view(), b.view(), 0, 16, s.get()), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
#endif
}

// ---- a real frame ------------------------------------------------------------------------------

TEST(GpuFilterPhoto, EveryFilterMatchesTwin) {
  JP_REQUIRE_GPU();
#if JETPIPE_HAVE_CUDA
  const std::string path = std::string(JETPIPE_TEST_DATA) + "/regression/frames/vtest_0000.ppm";
  const HostImage color = read_image(path);
  HostImage gray(color.width(), color.height(), PixelFormat::kGray8);
  to_gray_ref(color.view(), gray.view(), 0, color.height());
  const ImageView g = gray.view();
  std::mt19937 rng(fresh_seed());
  for (const NamedBorder& nb : kBorders) {
    SCOPED_TRACE(nb.name);
    const Border& b = nb.border;
    check_gaussian(g, {5, 0}, b, rng);
    check_gaussian(g, {0, 2.0}, b, rng);
    check_box(g, {5, true}, b, rng);
    check_box(g, {3, false}, b, rng);
    check_sobel(g, {1, 0, 3, 1, false}, b, rng);
    check_sobel(g, {0, 1, 3, 0.5, true}, b, rng);
    check_convolve(g, random_convolve({3, 5}, b, rng), rng);
    for (const ConvolveStripVariant& v : kConvolveStrip) {
      check_convolve(g, strip_convolve(v, b, rng), rng);
    }
    HarrisParams hp;
    hp.border = b;
    check_harris(g, hp, rng);
  }
#endif
}

}  // namespace
}  // namespace jetpipe
