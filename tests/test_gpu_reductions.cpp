// SPDX-License-Identifier: MIT
// GPU reductions and point kernels against their CPU twins: histogram (every counting kernel),
// stats (GRAY8, S16, F32), the fused histogram + stats, Otsu on the device, threshold, to_gray.
//
// Inputs are drawn fresh (seed printed; JETPIPE_SEED=n replays) at sizes 1×1, 1×N, N×1, 3×129,
// 113×113, 1920×1080, 4097×3, 16384×64, in three device layouts: pitched (cudaMallocPitch), rows
// padded by 13 bytes (odd pitch: every row differently aligned) and an ROI at x offset 1..3 inside a
// padded image whose border holds other values (a read outside the ROI changes the result).
// Every output is poisoned before each run. Whole-image results are also computed in three uneven
// row strips (one of them sometimes empty), in order and concurrently on three streams sharing one
// workspace, and must be identical.
// Tolerances: exact (bit for bit) for histogram, GRAY8/S16 stats, fused, Otsu, threshold, to_gray.
// F32 stats: min, max and count exact; sums within 1e-12 of sum |v| (resp. v²) of stats_ref's
// sequential double sums, mean and stddev within 1e-9 relative (of max(|ref|, stddev)); and the
// GPU's own result bit-identical for any strip split.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/histogram.h"
#include "kernels/stats.h"
#include "kernels/threshold.h"
#include "kernels/to_gray.h"
#include "pipeline/io/image_io.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda_memory.h"

namespace jetpipe {
namespace {

using test::download;
using test::fresh_seed;
using test::random_image;
using test::upload;

// ---- Shapes, layouts, contents --------------------------------------------------------------------

struct Size2 {
  int w, h;
};
const std::vector<Size2> kSizes = {{1, 1},     {1, 77},   {1000, 1}, {3, 129},
                                   {113, 113}, {1920, 1080}, {4097, 3}, {16384, 64}};

enum class Layout { kPitched, kPadded, kRoi };
const char* name(Layout l) {
  return l == Layout::kPitched ? "pitched" : l == Layout::kPadded ? "padded" : "roi";
}
const Layout kLayouts[] = {Layout::kPitched, Layout::kPadded, Layout::kRoi};

// A device copy of `host` in a layout. pad_bytes: row padding for kPadded / kRoi (13 for 8-bit
// formats; a multiple of the element size otherwise). The ROI's surroundings hold `border`.
struct Placed {
  DeviceImage owner;
  ImageView view;
  std::string what;
};

Placed place(const ImageView& host, Layout layout, int roi_x, std::size_t pad_bytes,
             std::uint8_t border = 0xA5) {
  Placed p;
  p.what = std::string(name(layout)) + " " + std::to_string(host.width) + "x" +
           std::to_string(host.height) + " " + to_string(host.format);
  if (layout == Layout::kPitched) {
    p.owner = upload(host, 0);
    p.view = p.owner.view();
  } else if (layout == Layout::kPadded) {
    p.owner = upload(host, pad_bytes);
    p.view = p.owner.view();
  } else {
    HostImage big(host.width + roi_x + 2, host.height + 2, host.format);
    for (int y = 0; y < big.height(); ++y) {
      std::memset(big.view().row<std::uint8_t>(y), border, big.view().row_bytes());
    }
    copy_image(host, big.view().roi(roi_x, 1, host.width, host.height));
    p.owner = upload(big.view(), pad_bytes);
    p.view = p.owner.view().roi(roi_x, 1, host.width, host.height);
    p.what += " x+" + std::to_string(roi_x);
  }
  return p;
}

// Three uneven strips [0, a), [a, b), [b, h); a strip may be empty for small heights.
std::vector<int> strip_bounds(int h) {
  const int a = h / 5, b = std::min(h, a + (h + 1) / 2);
  return {0, a, b, h};
}

HostImage filled(int w, int h, std::uint8_t v) {
  HostImage img(w, h, PixelFormat::kGray8);
  for (int y = 0; y < h; ++y) std::memset(img.view().row<std::uint8_t>(y), v, w);
  return img;
}

// GRAY8 image of values drawn by `pick` (rng → value).
template <class Pick>
HostImage gray_image(int w, int h, std::mt19937& rng, Pick pick) {
  HostImage img(w, h, PixelFormat::kGray8);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) img.view().row<std::uint8_t>(y)[x] = pick(rng);
  }
  return img;
}

// The regression frame (a real street scene) as GRAY8, darkened to a quarter: most values < 64.
HostImage dark_photo() {
  const HostImage bgr = read_image(std::string(JETPIPE_TEST_DATA) + "/regression/frames/vtest_0000.ppm");
  HostImage gray(bgr.width(), bgr.height(), PixelFormat::kGray8);
  to_gray_ref(bgr.view(), gray.view(), 0, bgr.height());
  for (int y = 0; y < gray.height(); ++y) {
    std::uint8_t* r = gray.view().row<std::uint8_t>(y);
    for (int x = 0; x < gray.width(); ++x) r[x] = static_cast<std::uint8_t>(r[x] / 4);
  }
  return gray;
}

// ---- Histogram ------------------------------------------------------------------------------------

struct NamedParams {
  const char* name;
  HistogramParams p;
};
std::vector<NamedParams> hist_params() {
  return {{"256 [0,256)", {256, 0, 256}},
          {"1 [0,256)", {1, 0, 256}},
          {"7 [10,200)", {7, 10, 200}},
          {"255 [0,255)", {255, 0, 255}},
          {"100 [0.5,250.7)", {100, 0.5, 250.7}}};
}

// Counting kernels and launch shapes: the policy's, lane-striped tables shared by 8 warps or two
// tables, one private table per warp (7 × 32 KB), and the warp-shared simple variant.
struct Config {
  const char* name;
  HistogramLaunchOptions o;
};
const Config kConfigs[] = {
    {"auto", {}},
    {"striped 8 warps 1 table", {HistogramKernel::kLaneStriped, 8, 1, 0}},
    {"striped 5 warps 2 tables", {HistogramKernel::kLaneStriped, 5, 2, 0}},
    {"striped 7 private tables", {HistogramKernel::kLaneStriped, 7, 7, 0}},
    {"warp-shared", {HistogramKernel::kWarpShared, 0, 0, 0}},
};

std::vector<std::uint64_t> ref_histogram(const HistogramParams& p, const ImageView& host) {
  std::vector<std::uint64_t> c(static_cast<std::size_t>(p.bins), 0);
  histogram_ref(p, host, 0, host.height, c.data());
  return c;
}

// Device workspace (zeroed once) and poisoned outputs, reused across runs like a pipeline would.
struct HistRunner {
  DeviceBuffer ws{histogram_workspace_bytes()};
  DeviceBuffer bins{256 * sizeof(std::uint64_t)};
  DeviceBuffer stats{sizeof(StatsAccum)};
  HistRunner() { JP_CUDA(cudaMemset(ws.get(), 0, ws.bytes())); }

  void poison() {
    JP_CUDA(cudaMemset(bins.get(), 0xA5, bins.bytes()));
    JP_CUDA(cudaMemset(stats.get(), 0xA5, stats.bytes()));
  }
  std::vector<std::uint64_t> bins_host(int n) const {
    std::vector<std::uint64_t> h(static_cast<std::size_t>(n));
    JP_CUDA(cudaMemcpy(h.data(), bins.get(), h.size() * 8, cudaMemcpyDeviceToHost));
    return h;
  }
  StatsAccum stats_host() const {
    StatsAccum s;
    JP_CUDA(cudaMemcpy(&s, stats.get(), sizeof s, cudaMemcpyDeviceToHost));
    return s;
  }
  // Whole image in one launch, or the strips in order on one stream.
  std::vector<std::uint64_t> run(const HistogramParams& p, const ImageView& v,
                                 const HistogramLaunchOptions& o, bool strips, bool fused = false) {
    poison();
    const std::vector<int> b = strips ? strip_bounds(v.height) : std::vector<int>{0, v.height};
    for (std::size_t i = 0; i + 1 < b.size(); ++i) {
      if (fused) {
        JP_CUDA(launch_histogram_stats(p, v, bins.get<std::uint64_t>(), stats.get<StatsAccum>(),
                                       b[i], b[i + 1], ws.get(), nullptr, o));
      } else {
        JP_CUDA(launch_histogram(p, v, bins.get<std::uint64_t>(), b[i], b[i + 1], ws.get(), nullptr,
                                 o));
      }
    }
    JP_CUDA(cudaDeviceSynchronize());
    return bins_host(p.bins);
  }
};

TEST(GpuHistogram, MatchesTwinAllSizesLayoutsParamsKernels) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  HistRunner r;
  int roi_x = 0;
  for (const Size2& s : kSizes) {
    const HostImage host = random_image(s.w, s.h, PixelFormat::kGray8, rng);
    for (Layout layout : kLayouts) {
      const Placed d = place(host.view(), layout, 1 + roi_x++ % 3, 13);
      for (const NamedParams& np : hist_params()) {
        const std::vector<std::uint64_t> want = ref_histogram(np.p, host.view());
        for (const Config& c : kConfigs) {
          SCOPED_TRACE(d.what + ", bins " + np.name + ", kernel " + c.name);
          EXPECT_EQ(r.run(np.p, d.view, c.o, false), want);
          EXPECT_EQ(r.run(np.p, d.view, c.o, true), want) << "three strips";
        }
      }
    }
  }
}

TEST(GpuHistogram, StripsOnConcurrentStreamsShareOneWorkspace) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  HistRunner r;
  cudaStream_t st[3];
  for (auto& s : st) JP_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (const Size2& s : {Size2{1920, 1080}, Size2{16384, 64}, Size2{113, 113}, Size2{3, 129}}) {
    const HostImage host = random_image(s.w, s.h, PixelFormat::kGray8, rng);
    const Placed d = place(host.view(), Layout::kPadded, 0, 13);
    const HistogramParams p{7, 10, 200};
    const std::vector<std::uint64_t> want = ref_histogram(p, host.view());
    for (const Config& c : kConfigs) {
      SCOPED_TRACE(d.what + ", kernel " + c.name);
      for (int frame = 0; frame < 3; ++frame) {  // the workspace is reused frame after frame
        r.poison();
        const std::vector<int> b = strip_bounds(s.h);
        for (int i = 0; i < 3; ++i) {
          JP_CUDA(launch_histogram(p, d.view, r.bins.get<std::uint64_t>(), b[i], b[i + 1],
                                   r.ws.get(), st[(i + frame) % 3], c.o));
        }
        JP_CUDA(cudaDeviceSynchronize());
        EXPECT_EQ(r.bins_host(p.bins), want) << "frame " << frame;
      }
    }
  }
  for (auto& s : st) JP_CUDA(cudaStreamDestroy(s));
}

TEST(GpuHistogram, SkewedInputs) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  HistRunner r;
  const int w = 1920, h = 1080;
  std::vector<std::pair<std::string, HostImage>> cases;
  cases.emplace_back("all 0", filled(w, h, 0));
  cases.emplace_back("all 255", filled(w, h, 255));
  cases.emplace_back("0 and 255", gray_image(w, h, rng, [](std::mt19937& g) {
                       return static_cast<std::uint8_t>(g() & 1 ? 255 : 0);
                     }));
  cases.emplace_back("90% one value", gray_image(w, h, rng, [](std::mt19937& g) {
                       const std::uint32_t v = g();
                       return static_cast<std::uint8_t>(v % 10 ? 17 : v >> 24);
                     }));
  cases.emplace_back("dark photo", dark_photo());
  for (const auto& [what, host] : cases) {
    for (Layout layout : kLayouts) {
      const Placed d = place(host.view(), layout, 2, 13, 77);
      for (const NamedParams& np : hist_params()) {
        const std::vector<std::uint64_t> want = ref_histogram(np.p, host.view());
        for (const Config& c : kConfigs) {
          SCOPED_TRACE(what + ", " + d.what + ", bins " + np.name + ", kernel " + c.name);
          EXPECT_EQ(r.run(np.p, d.view, c.o, true), want);
        }
      }
    }
  }
}

// One or two blocks of one or three warps walk thousands of work items each: the double-buffered
// loop's steady state, warps of a block hammering one table (constant images send every pixel of a
// lane to one counter), an odd width (every row differently aligned).
TEST(GpuHistogram, LongRunsOnTinyGrids) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  HistRunner r;
  std::vector<std::pair<std::string, HostImage>> cases;
  cases.emplace_back("constant 200", filled(16384, 512, 200));
  cases.emplace_back("constant 3", filled(16384, 512, 3));
  cases.emplace_back("two values", gray_image(16384, 512, rng, [](std::mt19937& g) {
                       return static_cast<std::uint8_t>(g() & 1 ? 130 : 1);
                     }));
  cases.emplace_back("uniform", random_image(16381, 300, PixelFormat::kGray8, rng));
  const HistogramParams p{256, 0, 256};
  for (const auto& [what, host] : cases) {
    const Placed d = place(host.view(), Layout::kPadded, 0, 13);
    const std::vector<std::uint64_t> want = ref_histogram(p, host.view());
    for (HistogramKernel k : {HistogramKernel::kLaneStriped, HistogramKernel::kWarpShared}) {
      for (int warps : {1, 3}) {
        for (int blocks : {1, 2}) {
          SCOPED_TRACE(what + (k == HistogramKernel::kWarpShared ? ", warp-shared, " : ", striped, ") +
                       std::to_string(blocks) + " blocks of " + std::to_string(warps) + " warps");
          HistogramLaunchOptions o;
          o.kernel = k;
          o.warps_per_block = warps;
          o.max_blocks = blocks;
          EXPECT_EQ(r.run(p, d.view, o, blocks == 2), want);
        }
      }
    }
  }
}

TEST(GpuHistogram, WritesIntoMappedHostMemory) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const HostImage host = random_image(1920, 1080, PixelFormat::kGray8, rng);
  const Placed d = place(host.view(), Layout::kPitched, 0, 0);
  DeviceBuffer ws(histogram_workspace_bytes());
  JP_CUDA(cudaMemset(ws.get(), 0, ws.bytes()));
  PinnedBuffer bins(256 * 8, true), stats(sizeof(StatsAccum), true);
  std::memset(bins.get(), 0xA5, bins.bytes());
  std::memset(stats.get(), 0xA5, stats.bytes());
  const HistogramParams p;
  JP_CUDA(launch_histogram_stats(p, d.view, bins.device<std::uint64_t>(),
                                 stats.device<StatsAccum>(), 0, host.height(), ws.get(), nullptr));
  JP_CUDA(cudaDeviceSynchronize());
  const std::vector<std::uint64_t> got(bins.get<std::uint64_t>(), bins.get<std::uint64_t>() + 256);
  EXPECT_EQ(got, ref_histogram(p, host.view()));
  StatsAccum want;
  stats_ref(host.view(), 0, host.height(), &want);
  const StatsAccum s = *stats.get<StatsAccum>();
  EXPECT_EQ(s.min, want.min);
  EXPECT_EQ(s.max, want.max);
  EXPECT_EQ(s.isum, want.isum);
  EXPECT_EQ(s.isumsq, want.isumsq);
  EXPECT_EQ(s.count, want.count);
}

TEST(GpuHistogram, RejectsBadArguments) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const HostImage host = random_image(64, 8, PixelFormat::kGray8, rng);
  const Placed d = place(host.view(), Layout::kPitched, 0, 0);
  HistRunner r;
  auto* bins = r.bins.get<std::uint64_t>();
  EXPECT_EQ(launch_histogram({0, 0, 256}, d.view, bins, 0, 8, r.ws.get(), nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_histogram({257, 0, 256}, d.view, bins, 0, 8, r.ws.get(), nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_histogram({}, d.view, bins, 0, 9, r.ws.get(), nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(launch_histogram({}, d.view, bins, 5, 4, r.ws.get(), nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(launch_histogram({}, d.view, bins, 0, 8, nullptr, nullptr), cudaErrorInvalidValue);
  ImageView s16 = d.view;
  s16.format = PixelFormat::kS16;
  s16.width /= 2;
  EXPECT_EQ(launch_histogram({}, s16, bins, 0, 8, r.ws.get(), nullptr), cudaErrorInvalidValue);
  // An empty strip is no work (and no error); the workspace stays as it was.
  EXPECT_EQ(launch_histogram({}, d.view, bins, 3, 3, r.ws.get(), nullptr), cudaSuccess);
  HistogramLaunchOptions o;
  EXPECT_EQ(r.run({}, d.view, o, true), ref_histogram({}, host.view()));
}

// ---- Stats ----------------------------------------------------------------------------------------

struct StatsRunner {
  DeviceBuffer ws;
  DeviceBuffer out{sizeof(StatsAccum)};
  StatsRunner(PixelFormat f, int height) : ws(stats_workspace_bytes(f, height)) {
    JP_CUDA(cudaMemset(ws.get(), 0, ws.bytes()));
  }
  StatsAccum run(const ImageView& v, const std::vector<int>& bounds, cudaStream_t* streams = nullptr) {
    JP_CUDA(cudaMemset(out.get(), 0xA5, out.bytes()));
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      JP_CUDA(launch_stats(v, out.get<StatsAccum>(), bounds[i], bounds[i + 1], ws.get(),
                           streams ? streams[i % 3] : nullptr));
    }
    JP_CUDA(cudaDeviceSynchronize());
    StatsAccum s;
    JP_CUDA(cudaMemcpy(&s, out.get(), sizeof s, cudaMemcpyDeviceToHost));
    return s;
  }
};

void expect_same_bits(double a, double b, const char* what) {
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << what << ": " << a << " vs " << b;
}

void expect_int_stats(const StatsAccum& got, const StatsAccum& want, PixelFormat f) {
  EXPECT_EQ(got.min, want.min);
  EXPECT_EQ(got.max, want.max);
  EXPECT_EQ(got.isum, want.isum);
  EXPECT_EQ(got.isumsq, want.isumsq);
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.fsum, 0.0);
  EXPECT_EQ(got.fsumsq, 0.0);
  const StatsResult a = stats_finish(got, f), b = stats_finish(want, f);
  expect_same_bits(a.mean, b.mean, "mean");
  expect_same_bits(a.stddev, b.stddev, "stddev");
}

TEST(GpuStats, IntegerFormatsExact) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  cudaStream_t st[3];
  for (auto& s : st) JP_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int roi_x = 0;
  for (PixelFormat f : {PixelFormat::kGray8, PixelFormat::kS16}) {
    for (const Size2& s : kSizes) {
      const HostImage host = random_image(s.w, s.h, f, rng);
      StatsAccum want;
      stats_ref(host.view(), 0, s.h, &want);
      StatsRunner r(f, s.h);
      for (Layout layout : kLayouts) {
        const Placed d = place(host.view(), layout, 1 + roi_x++ % 3, f == PixelFormat::kS16 ? 14 : 13);
        SCOPED_TRACE(d.what);
        expect_int_stats(r.run(d.view, {0, s.h}), want, f);
        expect_int_stats(r.run(d.view, strip_bounds(s.h)), want, f);
        expect_int_stats(r.run(d.view, strip_bounds(s.h), st), want, f);
      }
    }
  }
  for (auto& s : st) JP_CUDA(cudaStreamDestroy(s));
}

TEST(GpuStats, SkewedAndExtremeInputs) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  std::vector<std::pair<std::string, HostImage>> cases;
  cases.emplace_back("all 0", filled(1920, 1080, 0));
  cases.emplace_back("all 255", filled(1920, 1080, 255));
  cases.emplace_back("0 and 255", gray_image(4097, 257, rng, [](std::mt19937& g) {
                       return static_cast<std::uint8_t>(g() & 1 ? 255 : 0);
                     }));
  cases.emplace_back("dark photo", dark_photo());
  HostImage s16_ext(777, 131, PixelFormat::kS16);  // only the extremes: sums of squares at 2^30
  for (int y = 0; y < s16_ext.height(); ++y) {
    for (int x = 0; x < s16_ext.width(); ++x) {
      s16_ext.view().row<std::int16_t>(y)[x] = static_cast<std::int16_t>(rng() & 1 ? 32767 : -32768);
    }
  }
  cases.emplace_back("s16 extremes", s16_ext);
  HostImage s16_one(129, 3, PixelFormat::kS16);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 129; ++x) s16_one.view().row<std::int16_t>(y)[x] = -7;
  }
  cases.emplace_back("s16 all -7", s16_one);
  for (const auto& [what, host] : cases) {
    StatsAccum want;
    stats_ref(host.view(), 0, host.height(), &want);
    StatsRunner r(host.format(), host.height());
    for (Layout layout : kLayouts) {
      const Placed d = place(host.view(), layout, 3, host.format() == PixelFormat::kS16 ? 14 : 13, 99);
      SCOPED_TRACE(what + ", " + d.what);
      expect_int_stats(r.run(d.view, strip_bounds(host.height())), want, host.format());
    }
  }
}

TEST(GpuStats, F32WithinToleranceAndDeterministic) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  cudaStream_t st[3];
  for (auto& s : st) JP_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int roi_x = 0;
  for (const Size2& s : kSizes) {
    HostImage host = random_image(s.w, s.h, PixelFormat::kF32, rng);
    for (int y = 0; y < s.h; ++y) {  // shift and scale: a mean far from 0, values of mixed size
      for (int x = 0; x < s.w; ++x) host.view().row<float>(y)[x] = host.view().row<float>(y)[x] * 100 + 30;
    }
    StatsAccum want;
    stats_ref(host.view(), 0, s.h, &want);
    double abs_sum = 0, sq_sum = 0;
    for (int y = 0; y < s.h; ++y) {
      for (int x = 0; x < s.w; ++x) {
        const double v = host.view().row<float>(y)[x];
        abs_sum += std::fabs(v);
        sq_sum += v * v;
      }
    }
    const StatsResult rw = stats_finish(want, PixelFormat::kF32);
    StatsRunner r(PixelFormat::kF32, s.h);
    for (Layout layout : kLayouts) {
      const Placed d = place(host.view(), layout, 1 + roi_x++ % 3, 12);
      SCOPED_TRACE(d.what);
      const StatsAccum whole = r.run(d.view, {0, s.h});
      EXPECT_EQ(whole.min, want.min);
      EXPECT_EQ(whole.max, want.max);
      EXPECT_EQ(whole.count, want.count);
      EXPECT_EQ(whole.isum, 0);
      EXPECT_EQ(whole.isumsq, 0u);
      EXPECT_NEAR(whole.fsum, want.fsum, 1e-12 * abs_sum);
      EXPECT_NEAR(whole.fsumsq, want.fsumsq, 1e-12 * sq_sum);
      const StatsResult rg = stats_finish(whole, PixelFormat::kF32);
      const double scale = std::max(std::fabs(rw.mean), rw.stddev);
      EXPECT_NEAR(rg.mean, rw.mean, 1e-9 * scale);
      EXPECT_NEAR(rg.stddev, rw.stddev, 1e-9 * scale);
      for (const StatsAccum& other :
           {r.run(d.view, strip_bounds(s.h)), r.run(d.view, strip_bounds(s.h), st)}) {
        expect_same_bits(other.fsum, whole.fsum, "fsum, strips vs whole");
        expect_same_bits(other.fsumsq, whole.fsumsq, "fsumsq, strips vs whole");
        EXPECT_EQ(other.min, whole.min);
        EXPECT_EQ(other.max, whole.max);
        EXPECT_EQ(other.count, whole.count);
      }
    }
  }
  for (auto& s : st) JP_CUDA(cudaStreamDestroy(s));
}

TEST(GpuStats, RejectsMisalignedElementsAndBadArguments) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const HostImage host = random_image(33, 5, PixelFormat::kS16, rng);
  const Placed odd = place(host.view(), Layout::kPadded, 0, 13);  // odd pitch: rows misaligned
  StatsRunner r(PixelFormat::kS16, 5);
  EXPECT_EQ(launch_stats(odd.view, r.out.get<StatsAccum>(), 0, 5, r.ws.get(), nullptr),
            cudaErrorInvalidValue);
  ImageView bgr = odd.view;
  bgr.format = PixelFormat::kBgr8;
  bgr.width = 11;
  EXPECT_EQ(launch_stats(bgr, r.out.get<StatsAccum>(), 0, 5, r.ws.get(), nullptr),
            cudaErrorInvalidValue);
  const Placed ok = place(host.view(), Layout::kPadded, 0, 14);
  EXPECT_EQ(launch_stats(ok.view, r.out.get<StatsAccum>(), 0, 6, r.ws.get(), nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_stats(ok.view, nullptr, 0, 5, r.ws.get(), nullptr), cudaErrorInvalidValue);
}

// ---- Fused histogram + stats ---------------------------------------------------------------------

TEST(GpuFused, HistogramAndStatsMatchTwins) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  HistRunner r;
  int roi_x = 0;
  std::vector<std::pair<std::string, HostImage>> cases;
  for (const Size2& s : kSizes) cases.emplace_back("uniform", random_image(s.w, s.h, PixelFormat::kGray8, rng));
  cases.emplace_back("all 255", filled(333, 77, 255));
  cases.emplace_back("dark photo", dark_photo());
  for (const auto& [what, host] : cases) {
    StatsAccum want;
    stats_ref(host.view(), 0, host.height(), &want);
    for (Layout layout : kLayouts) {
      const Placed d = place(host.view(), layout, 1 + roi_x++ % 3, 13);
      for (const NamedParams& np : {hist_params()[0], hist_params()[2]}) {
        for (const Config& c : kConfigs) {
          for (bool strips : {false, true}) {
            SCOPED_TRACE(what + ", " + d.what + ", bins " + np.name + ", kernel " + c.name +
                         (strips ? ", strips" : ""));
            EXPECT_EQ(r.run(np.p, d.view, c.o, strips, true), ref_histogram(np.p, host.view()));
            expect_int_stats(r.stats_host(), want, PixelFormat::kGray8);
          }
        }
      }
    }
  }
}

// ---- Otsu and threshold --------------------------------------------------------------------------

// otsu_threshold's recurrence, replayed on the host (threshold_ref.cpp, step for step): the class
// mean mu1 after each level the loop does not skip (NaN for skipped levels).
std::vector<double> host_mu1(const std::vector<std::uint64_t>& hist) {
  std::vector<double> out(256, std::nan(""));
  std::uint64_t n = 0;
  for (int i = 0; i < 256; ++i) n += hist[i];
  if (n == 0) return out;
  const double scale = 1.0 / static_cast<double>(n);
  double mu1 = 0, q1 = 0;
  for (int i = 0; i < 256; ++i) {
    const double p_i = static_cast<double>(hist[i]) * scale;
    mu1 *= q1;
    q1 += p_i;
    const double q2 = 1. - q1;
    if (std::min(q1, q2) < FLT_EPSILON || std::max(q1, q2) > 1. - FLT_EPSILON) continue;
    mu1 = (mu1 + i * p_i) / q1;
    out[i] = mu1;
  }
  return out;
}

// The device's threshold; with mu1, the step-for-step path's mu1 per level (NaN where skipped);
// with path, which path decided (1 certified, 0 step for step).
double device_otsu(const std::vector<std::uint64_t>& hist, std::vector<double>* mu1 = nullptr,
                   int* path = nullptr) {
  DeviceBuffer h(256 * 8), t(8), trace(256 * 8), p(sizeof(int));
  JP_CUDA(cudaMemcpy(h.get(), hist.data(), 256 * 8, cudaMemcpyHostToDevice));
  JP_CUDA(cudaMemset(t.get(), 0xA5, 8));
  JP_CUDA(cudaMemset(p.get(), 0xA5, sizeof(int)));
  const std::vector<double> nans(256, std::nan(""));
  JP_CUDA(cudaMemcpy(trace.get(), nans.data(), 256 * 8, cudaMemcpyHostToDevice));
  JP_CUDA(launch_otsu_threshold(h.get<std::uint64_t>(), t.get<double>(), nullptr,
                                mu1 ? trace.get<double>() : nullptr, p.get<int>()));
  double v = 0;
  JP_CUDA(cudaMemcpy(&v, t.get(), 8, cudaMemcpyDeviceToHost));
  int got_path = -1;
  JP_CUDA(cudaMemcpy(&got_path, p.get(), sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(got_path == 0 || got_path == 1) << "path not written: " << got_path;
  if (path) *path = got_path;
  if (mu1) {
    mu1->resize(256);
    JP_CUDA(cudaMemcpy(mu1->data(), trace.get(), 256 * 8, cudaMemcpyDeviceToHost));
  }
  return v;
}

// Kinds of histograms: kDense, kHuge and kBimodal have one clear best level (the certified path
// must decide nearly all), kPosterized, kNearEps and kTwo put equal-sigma levels (zero counts) or
// q1 exactly at FLT_EPSILON next to the best one (the step-for-step path must decide).
enum OtsuKind { kDense, kSparse, kWindow, kHuge, kTwo, kBimodal, kPosterized, kNearEps, kKinds };

TEST(GpuOtsu, EqualsHostOnRandomAndEdgeHistograms) {
  JP_REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  std::vector<std::pair<int, std::vector<std::uint64_t>>> cases;
  cases.emplace_back(-1, std::vector<std::uint64_t>(256, 0));  // empty: 0
  for (int v : {0, 1, 128, 255}) {                             // one level: every level skipped
    std::vector<std::uint64_t> h(256, 0);
    h[v] = 12345;
    cases.emplace_back(-1, h);
  }
  for (int t = 0; t < 2400; ++t) {
    std::vector<std::uint64_t> h(256, 0);
    const int kind = t % kKinds;
    const int lo = static_cast<int>(rng() % 256), span = 1 + static_cast<int>(rng() % 256);
    for (int i = 0; i < 256; ++i) {
      switch (kind) {
        case kDense:
          h[i] = rng() % 100000;
          break;
        case kSparse:
          h[i] = rng() % 7 == 0 ? rng() % 1000 : 0;
          break;
        case kWindow:
          h[i] = (i >= lo && i < lo + span) ? rng() % 50 : 0;
          break;
        case kHuge:
          h[i] = rng() % (std::uint64_t(1) << 40);
          break;
        case kTwo:
          h[i] = (i == lo || i == (lo + span) % 256) ? 1 + rng() % 1000 : 0;
          break;
        case kPosterized:
          h[i] = i % 4 == 0 ? 1 + rng() % 100000 : 0;
          break;
        case kNearEps:
          break;  // below
        default: {
          const double a = std::exp(-0.5 * std::pow((i - 60) / 12.0, 2));
          const double b = std::exp(-0.5 * std::pow((i - 190) / 20.0, 2));
          h[i] = static_cast<std::uint64_t>(1e6 * (a + 0.6 * b)) + rng() % 3;
        }
      }
    }
    if (kind == kNearEps) {  // 2^23 pixels: q1 = FLT_EPSILON exactly at the first or last level
      std::uint64_t left = std::uint64_t(1) << 23;
      const int edge = t % 2 ? 0 : 255;
      h[edge] = 1;
      --left;
      for (int i = 40; i < 220 && left > 0; ++i) {
        const std::uint64_t c = std::min<std::uint64_t>(left, rng() % 100000);
        h[i] += c;
        left -= c;
      }
      h[128] += left;
    }
    cases.emplace_back(kind, h);
  }
  int fast[kKinds] = {}, count[kKinds] = {};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("histogram case " + std::to_string(c) + ", kind " +
                 std::to_string(cases[c].first));
    const std::vector<std::uint64_t>& hist = cases[c].second;
    const double want = otsu_threshold(hist.data());
    int path = -1;
    expect_same_bits(device_otsu(hist, nullptr, &path), want, "otsu");
    if (cases[c].first >= 0) {
      ++count[cases[c].first];
      fast[cases[c].first] += path == 1;
    }
    // The step-for-step path (forced by the trace): every division of the recurrence, bit for bit
    // (NaN = skipped on both sides).
    std::vector<double> mu1;
    int exact_path = -1;
    expect_same_bits(device_otsu(hist, &mu1, &exact_path), want, "otsu, step for step");
    std::uint64_t n = 0;
    for (std::uint64_t v : hist) n += v;
    if (n > 0) EXPECT_EQ(exact_path, 0);  // an empty histogram needs neither path: 0, path 1
    const std::vector<double> want_mu1 = host_mu1(hist);
    int wrong = 0;
    for (int i = 0; i < 256; ++i) {
      if (std::memcmp(&mu1[i], &want_mu1[i], 8) != 0 && !(std::isnan(mu1[i]) && std::isnan(want_mu1[i]))) {
        if (++wrong <= 3) ADD_FAILURE() << "mu1 at level " << i << ": " << mu1[i] << " vs " << want_mu1[i];
      }
    }
    EXPECT_EQ(wrong, 0);
  }
  // Both paths ran, each where it should (host emulation, 80,000 histograms: dense 99.99%, huge
  // and bimodal 100% certified; posterized 0%).
  for (int k : {kDense, kHuge, kBimodal}) {
    EXPECT_GE(fast[k], count[k] * 95 / 100)
        << "kind " << k << ": certified " << fast[k] << " of " << count[k];
  }
  for (int k : {kPosterized, kNearEps}) {
    EXPECT_EQ(fast[k], 0) << "kind " << k << ": certified " << fast[k] << " of " << count[k];
  }
  std::printf("GpuOtsu: certified path decided");
  for (int k = 0; k < kKinds; ++k) std::printf(" kind %d: %d/%d", k, fast[k], count[k]);
  std::printf("\n");
}

TEST(GpuThreshold, FixedValuesAllLayouts) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const std::vector<std::pair<double, double>> tm = {
      {127.9, 255}, {-5, 200}, {0, 255}, {254, 128.5}, {255, 255}, {300, 255},
      {17, 0},      {17, -3},  {17, 300}, {99.5, 127.5}, {std::nan(""), 255}};
  int roi_x = 0;
  for (const Size2& s : kSizes) {
    const HostImage host = random_image(s.w, s.h, PixelFormat::kGray8, rng);
    for (Layout in_layout : kLayouts) {
      const Placed src = place(host.view(), in_layout, 1 + roi_x++ % 3, 13);
      for (Layout out_layout : {Layout::kPitched, Layout::kRoi}) {
        const HostImage zero = filled(s.w, s.h, 0);
        const Placed dst = place(zero.view(), out_layout, 1 + roi_x++ % 3, 13, 0x5A);
        for (const auto& [t, m] : tm) {
          SCOPED_TRACE(src.what + " → " + dst.what + ", t " + std::to_string(t) + ", max " +
                       std::to_string(m));
          HostImage want(s.w, s.h, PixelFormat::kGray8);
          threshold_ref(t, m, host.view(), want.view(), 0, s.h);
          test::poison_device(dst.view);
          const std::vector<int> b = strip_bounds(s.h);
          for (int i = 0; i < 3; ++i) {
            JP_CUDA(launch_threshold(t, m, src.view, dst.view, b[i], b[i + 1], nullptr));
          }
          JP_CUDA(cudaDeviceSynchronize());
          const test::Diff diff = test::max_diff(download(dst.view).view(), want.view());
          EXPECT_EQ(diff.max_abs, 0) << "at " << diff.x << "," << diff.y;
        }
        if (out_layout == Layout::kRoi) {  // the border around the ROI is untouched
          const HostImage all = download(dst.owner.view());
          const ImageView a = all.view();
          EXPECT_EQ(a.row<std::uint8_t>(0)[0], 0x5A);
          EXPECT_EQ(a.row<std::uint8_t>(a.height - 1)[a.width - 1], 0x5A);
        }
      }
    }
  }
}

TEST(GpuThreshold, InPlace) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const HostImage host = random_image(1001, 37, PixelFormat::kGray8, rng);
  const Placed d = place(host.view(), Layout::kPadded, 0, 13);
  HostImage want(host.width(), host.height(), PixelFormat::kGray8);
  threshold_ref(90, 255, host.view(), want.view(), 0, host.height());
  JP_CUDA(launch_threshold(90, 255, d.view, d.view, 0, host.height(), nullptr));
  JP_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(test::max_diff(download(d.view).view(), want.view()).max_abs, 0);
}

// The pipeline's Otsu path with no host round trip: histogram → Otsu → threshold from device memory.
TEST(GpuThreshold, OtsuOnDevice) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  std::vector<std::pair<std::string, HostImage>> cases;
  cases.emplace_back("dark photo", dark_photo());
  cases.emplace_back("uniform", random_image(1920, 1080, PixelFormat::kGray8, rng));
  cases.emplace_back("bimodal", gray_image(641, 479, rng, [](std::mt19937& g) {
                       std::normal_distribution<double> a(60, 12), b(180, 25);
                       const double v = g() % 3 ? a(g) : b(g);
                       return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0l, 255l));
                     }));
  cases.emplace_back("constant", filled(100, 10, 42));
  HistRunner r;
  DeviceBuffer t(8);
  for (const auto& [what, host] : cases) {
    SCOPED_TRACE(what);
    const Placed src = place(host.view(), Layout::kRoi, 1, 13);
    const HostImage zero = filled(host.width(), host.height(), 0);
    const Placed dst = place(zero.view(), Layout::kPitched, 0, 0);
    std::vector<std::uint64_t> hist = ref_histogram({}, host.view());
    const double want_t = otsu_threshold(hist.data());
    HostImage want(host.width(), host.height(), PixelFormat::kGray8);
    threshold_ref(want_t, 255, host.view(), want.view(), 0, host.height());

    r.poison();
    JP_CUDA(cudaMemset(t.get(), 0xA5, 8));
    test::poison_device(dst.view);
    const std::vector<int> b = strip_bounds(host.height());
    for (int i = 0; i < 3; ++i) {
      JP_CUDA(launch_histogram({}, src.view, r.bins.get<std::uint64_t>(), b[i], b[i + 1],
                               r.ws.get(), nullptr));
    }
    JP_CUDA(launch_otsu_threshold(r.bins.get<std::uint64_t>(), t.get<double>(), nullptr));
    int path = -1;  // the photo's, the noise's and the constant's: the certified path decides
    expect_same_bits(device_otsu(hist, nullptr, &path), want_t, "otsu of the image's histogram");
    if (what != "bimodal") EXPECT_EQ(path, 1);
    for (int i = 0; i < 3; ++i) {
      JP_CUDA(launch_threshold_from(t.get<double>(), 255, src.view, dst.view, b[i], b[i + 1],
                                    nullptr));
    }
    JP_CUDA(cudaDeviceSynchronize());
    double got_t = 0;
    JP_CUDA(cudaMemcpy(&got_t, t.get(), 8, cudaMemcpyDeviceToHost));
    expect_same_bits(got_t, want_t, "otsu threshold");
    EXPECT_EQ(test::max_diff(download(dst.view).view(), want.view()).max_abs, 0);
  }
}

// ---- to_gray --------------------------------------------------------------------------------------

void check_to_gray(const HostImage& host, Layout in_layout, Layout out_layout, int roi_x,
                   const std::string& what) {
  const Placed src = place(host.view(), in_layout, roi_x, 13);
  const HostImage zero = filled(host.width(), host.height(), 0);
  const Placed dst = place(zero.view(), out_layout, roi_x, 13, 0x5A);
  SCOPED_TRACE(what + ": " + src.what + " → " + dst.what);
  HostImage want(host.width(), host.height(), PixelFormat::kGray8);
  to_gray_ref(host.view(), want.view(), 0, host.height());
  for (bool strips : {false, true}) {
    test::poison_device(dst.view);
    const std::vector<int> b = strips ? strip_bounds(host.height()) : std::vector<int>{0, host.height()};
    for (std::size_t i = 0; i + 1 < b.size(); ++i) {
      JP_CUDA(launch_to_gray(src.view, dst.view, b[i], b[i + 1], nullptr));
    }
    JP_CUDA(cudaDeviceSynchronize());
    const test::Diff diff = test::max_diff(download(dst.view).view(), want.view());
    EXPECT_EQ(diff.max_abs, 0) << "at " << diff.x << "," << diff.y << (strips ? ", strips" : "");
  }
}

// Every frame format: BGR8 / RGB8, the 4-byte layouts (byte 3 random), GRAY8 and NV12 (its luma
// plane).
TEST(GpuToGray, EveryFrameFormatExactAllLayouts) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  int roi_x = 0;
  for (PixelFormat f :
       {PixelFormat::kBgr8, PixelFormat::kRgb8, PixelFormat::kBgrx8, PixelFormat::kRgbx8,
        PixelFormat::kRgba8, PixelFormat::kGray8, PixelFormat::kNv12}) {
    for (const Size2& s : kSizes) {
      const HostImage host = random_image(s.w, s.h, f, rng);
      for (Layout in : kLayouts) {
        for (Layout out : kLayouts) {
          check_to_gray(host, in, out, 1 + roi_x++ % 3, to_string(f));
        }
      }
    }
  }
}

// All 2^24 colours once (a 4096 × 4096 BGR image, pitched) and the regression photo.
TEST(GpuToGray, EveryColourAndAPhoto) {
  JP_REQUIRE_GPU();
  HostImage all(4096, 4096, PixelFormat::kBgr8);
  for (int y = 0; y < 4096; ++y) {
    std::uint8_t* r = all.view().row<std::uint8_t>(y);
    for (int x = 0; x < 4096; ++x) {
      const std::uint32_t c = static_cast<std::uint32_t>(y) * 4096 + x;
      r[3 * x] = c & 0xff;
      r[3 * x + 1] = (c >> 8) & 0xff;
      r[3 * x + 2] = c >> 16;
    }
  }
  check_to_gray(all, Layout::kPitched, Layout::kPitched, 0, "every colour");
  const HostImage photo =
      read_image(std::string(JETPIPE_TEST_DATA) + "/regression/frames/vtest_0000.ppm");
  check_to_gray(photo, Layout::kPitched, Layout::kPitched, 0, "photo");
  check_to_gray(photo, Layout::kRoi, Layout::kRoi, 2, "photo");
}

}  // namespace
}  // namespace jetpipe

#endif  // JETPIPE_HAVE_CUDA
