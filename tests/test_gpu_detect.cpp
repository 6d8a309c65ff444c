// SPDX-License-Identifier: MIT
// GPU detect (kernels/detect/dispatch.cu) against its CPU twin: detect_max_ref +
// detect_candidates_ref + detect_finish. Exact: the same points in the same order (scores compared
// bit for bit), the same count and overflow. Fresh random responses (seed printed); F32, S16,
// GRAY8; tight, padded (13 elements), 16-byte aligned and ROI views; radius 0..5 and the generic
// paths (6..64); absolute threshold and quality; plateaus; candidates at, one below and one above
// max_detections and the internal sort sizes; a constant image (every pixel a candidate) beyond the
// candidate buffer, flat frames at many sizes, one peak on a flat frame and other dense frames
// (the bounds); strips; workspace reuse; a CUDA graph; mapped output; both candidates kernels
// (DetectPath: the tiles, and the rows where they apply). The output block is poisoned before
// every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/box.h"
#include "kernels/detect.h"
#include "kernels/harris.h"
#include "tests/gpu_test_util.h"
#include "tests/test_util.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda_check.h"
#include "core/cuda_memory.h"

namespace jetpipe {
namespace {

using test::fresh_seed;
using test::random_image;

// ---- Twin and comparison
// -------------------------------------------------------------------------

DetectResult cpu_detect(const DetectParams& p, const ImageView& v, int y0, int y1) {
  const float thresh =
      p.use_quality ? static_cast<float>(p.quality * static_cast<double>(detect_max_ref(v, y0, y1)))
                    : static_cast<float>(p.threshold);
  std::vector<Detection> c;
  detect_candidates_ref(p, thresh, v, y0, y1, &c);
  return detect_finish(std::move(c), p.max_detections);
}

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

::testing::AssertionResult same_result(const DetectResult& gpu, const DetectResult& cpu) {
  if (gpu.count != cpu.count || gpu.overflow != cpu.overflow) {
    return ::testing::AssertionFailure()
           << "count/overflow " << gpu.count << "/" << gpu.overflow << " on the GPU, " << cpu.count
           << "/" << cpu.overflow << " on the CPU";
  }
  for (std::size_t i = 0; i < cpu.points.size(); ++i) {
    const Detection &g = gpu.points[i], &c = cpu.points[i];
    if (g.x != c.x || g.y != c.y || bits(g.score) != bits(c.score)) {
      return ::testing::AssertionFailure()
             << "point " << i << " of " << cpu.points.size() << ": GPU (" << g.x << ", " << g.y
             << ", " << g.score << "), CPU (" << c.x << ", " << c.y << ", " << c.score << ")";
    }
  }
  return ::testing::AssertionSuccess() << cpu.count << " points, overflow " << cpu.overflow;
}

// ---- Device side
// ---------------------------------------------------------------------------------

// Workspace, output and stream for one (params, response size).
class GpuDetector {
 public:
  GpuDetector(const DetectParams& p, int width, int height)
      : p_(p), ws_(detect_workspace_bytes(p, width, height)), out_(detect_result_bytes(p)) {
    JP_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // Garbage in the workspace beyond the header must not matter.
    JP_CUDA(cudaMemsetAsync(ws_.get(), 0x5A, ws_.bytes(), stream_));
    JP_CUDA(detect_workspace_init(ws_.get(), width, height, stream_));
  }
  ~GpuDetector() { cudaStreamDestroy(stream_); }
  GpuDetector(const GpuDetector&) = delete;
  GpuDetector& operator=(const GpuDetector&) = delete;

  cudaStream_t stream() const { return stream_; }
  void* workspace() const { return ws_.get(); }
  DetectDeviceResult* out() const { return out_.get<DetectDeviceResult>(); }

  void poison() { JP_CUDA(cudaMemsetAsync(out_.get(), 0xA5, out_.bytes(), stream_)); }

  DetectResult fetch() {
    std::vector<unsigned char> host(out_.bytes());
    JP_CUDA(cudaMemcpyAsync(host.data(), out_.get(), host.size(), cudaMemcpyDeviceToHost, stream_));
    JP_CUDA(cudaStreamSynchronize(stream_));
    const auto* r = reinterpret_cast<const DetectDeviceResult*>(host.data());
    EXPECT_LE(r->count, static_cast<std::uint64_t>(std::max(p_.max_detections, 0)));
    if (r->count > static_cast<std::uint64_t>(std::max(p_.max_detections, 0))) return {};
    return to_detect_result(r);
  }

  DetectResult run(const ImageView& dev, int y0, int y1, const LaunchContext& ctx = {},
                   const DetectLaunchOptions& o = {}) {
    poison();
    JP_CUDA(launch_detect(p_, dev, y0, y1, ws_.get(), out(), ctx, stream_, o));
    return fetch();
  }

  // Strips at the cuts (y0 = cuts.front(), y1 = cuts.back()), then one finish.
  DetectResult run_strips(const ImageView& dev, const std::vector<int>& cuts) {
    poison();
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      JP_CUDA(launch_detect_max(p_, dev, cuts[i], cuts[i + 1], ws_.get(), stream_));
    }
    // Candidates in reverse order: the merge must not depend on it.
    for (std::size_t i = cuts.size() - 1; i > 0; --i) {
      JP_CUDA(launch_detect_candidates(p_, dev, cuts[i - 1], cuts[i], ws_.get(), LaunchContext{},
                                       stream_));
    }
    JP_CUDA(launch_detect_finish(p_, dev, cuts.front(), cuts.back(), ws_.get(), out(), stream_));
    return fetch();
  }

  // Strips whose candidates run before the later strips' maxima are in (the executor's strips
  // with harris gathering the maximum): strip i's maximum, then strip i − 1's candidates, with
  // the maximum gathered so far; then one finish.
  DetectResult run_strips_ahead(const ImageView& dev, const std::vector<int>& cuts) {
    poison();
    DetectParams p = p_;
    p.candidates_ahead = true;
    const std::size_t n = cuts.size() - 1;
    for (std::size_t i = 0; i <= n; ++i) {
      if (i < n) JP_CUDA(launch_detect_max(p_, dev, cuts[i], cuts[i + 1], ws_.get(), stream_));
      if (i > 0) {
        JP_CUDA(launch_detect_candidates(p, dev, cuts[i - 1], cuts[i], ws_.get(), LaunchContext{},
                                         stream_));
      }
    }
    JP_CUDA(launch_detect_finish(p, dev, cuts.front(), cuts.back(), ws_.get(), out(), stream_));
    return fetch();
  }

 private:
  DetectParams p_;
  DeviceBuffer ws_, out_;
  cudaStream_t stream_ = nullptr;
};

// A host response and its device copy, as one of three layouts.
struct Case {
  std::string layout;
  HostImage host_full;
  DeviceImage dev_full;
  ImageView host, dev;
};

int elem_bytes(PixelFormat f) { return bytes_per_pixel(f); }

// "roi": the view (ox, 1, W − ox − 2, H − 2) inside the image, whose pixels around it must not
// count.
Case make_case(HostImage img, const std::string& layout, int ox = 1) {
  Case c;
  c.layout = layout;
  if (layout == "roi") {
    const ImageView v = img.view();
    c.host_full = img;
    c.dev_full = test::upload(v, 13 * static_cast<std::size_t>(elem_bytes(v.format)));
    const int oy = 1;
    const int w = v.width - ox - 2, h = v.height - 2;
    c.host = v.roi(ox, oy, w, h);
    c.dev = c.dev_full.view().roi(ox, oy, w, h);
  } else {
    // "align16": rows 16-byte aligned with 16 to 31 bytes of padding (F32: the row-streaming
    // candidates kernel); "pad13": 13 elements of padding; "tight": none.
    const std::size_t rb = img.view().row_bytes();
    const std::size_t pad = layout == "pad13"
                                ? 13 * static_cast<std::size_t>(elem_bytes(img.view().format))
                            : layout == "align16" ? (16 - rb % 16) % 16 + 16
                                                  : 0;
    c.host_full = img;
    c.dev_full = test::upload(img.view(), pad);
    c.host = img.view();
    c.dev = c.dev_full.view();
  }
  return c;
}

// Random response of size w × h (a larger one for the ROI layout).
std::vector<Case> random_cases(int w, int h, PixelFormat f, std::mt19937& rng) {
  std::vector<Case> out;
  out.push_back(make_case(random_image(w, h, f, rng), "tight"));
  out.push_back(make_case(random_image(w, h, f, rng, 13), "pad13"));
  out.push_back(make_case(random_image(w, h, f, rng), "align16"));
  const int ox = 1 + w % 3;  // x offsets 1..3
  out.push_back(make_case(random_image(w + ox + 2, h + 2, f, rng), "roi", ox));
  return out;
}

float default_threshold(PixelFormat f) {
  return f == PixelFormat::kF32 ? 0.2f : f == PixelFormat::kS16 ? 1000.f : 40.f;
}

std::string describe(const DetectParams& p, const Case& c, PixelFormat f) {
  return std::string(to_string(f)) + " " + std::to_string(c.host.width) + "x" +
         std::to_string(c.host.height) + " " + c.layout + " r " + std::to_string(p.nms_radius) +
         (p.use_quality ? " quality " + std::to_string(p.quality)
                        : " threshold " + std::to_string(p.threshold)) +
         " max " + std::to_string(p.max_detections) +
         (p.path == DetectPath::kRows    ? " rows"
          : p.path == DetectPath::kTiles ? " tiles"
                                         : "");
}

// The candidates kernels a case can take: the tiles always, the rows where they apply (else the
// launch takes the tiles again: not run twice).
std::vector<DetectPath> paths_for(const DetectParams& p, const ImageView& dev) {
  std::vector<DetectPath> out{DetectPath::kTiles};
  if (detect_rows_apply(p, dev)) out.push_back(DetectPath::kRows);
  return out;
}

// Every path that takes the frame's rows [y0, y1) (y1 < 0: all of them) against the twin's result
// `cpu`.
void check_paths(const DetectParams& params, const Case& c, PixelFormat f, const DetectResult& cpu,
                 int y0 = 0, int y1 = -1) {
  if (y1 < 0) y1 = c.dev.height;
  for (const DetectPath path : paths_for(params, c.dev)) {
    DetectParams p = params;
    p.path = path;
    SCOPED_TRACE(describe(p, c, f) + " rows " + std::to_string(y0) + ".." + std::to_string(y1));
    GpuDetector d(p, c.dev.width, c.dev.height);
    EXPECT_TRUE(same_result(d.run(c.dev, y0, y1), cpu));
  }
}

void check_whole(const DetectParams& params, const Case& c, PixelFormat f) {
  check_paths(params, c, f, cpu_detect(params, c.host, 0, c.host.height));
}

// ---- Tests
// -----------------------------------------------------------------------------------------

TEST(GpuDetect, RandomResponsesMatchTwin) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  struct S {
    int w, h;
  };
  for (PixelFormat f : {PixelFormat::kF32, PixelFormat::kS16, PixelFormat::kGray8}) {
    for (const S s : {S{1, 1}, S{1, 77}, S{77, 1}, S{3, 129}, S{113, 113}, S{250, 97}}) {
      for (const Case& c : random_cases(s.w, s.h, f, rng)) {
        for (int r = 0; r <= 5; ++r) {
          for (bool quality : {false, true}) {
            for (int max : {1, 500}) {
              DetectParams p;
              p.nms_radius = r;
              p.max_detections = max;
              p.use_quality = quality;
              p.threshold = default_threshold(f);
              p.quality = f == PixelFormat::kF32 ? 0.3 : 0.2;
              check_whole(p, c, f);
            }
          }
        }
      }
    }
  }
}

TEST(GpuDetect, FullHdMatchesTwin) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  for (PixelFormat f : {PixelFormat::kF32, PixelFormat::kGray8}) {
    for (const Case& c : random_cases(1920, 1080, f, rng)) {
      if (f == PixelFormat::kGray8 && c.layout != "roi") continue;
      for (int r : {1, 4}) {
        for (bool quality : {false, true}) {
          for (int max : {500, 5000}) {  // the block sort and the CUB sort
            DetectParams p;
            p.nms_radius = r;
            p.max_detections = max;
            p.use_quality = quality;
            p.threshold = default_threshold(f);
            p.quality = 0.5;
            check_whole(p, c, f);
          }
        }
      }
    }
  }
}

TEST(GpuDetect, GenericRadii) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  for (PixelFormat f : {PixelFormat::kF32, PixelFormat::kS16}) {
    for (const Case& c : random_cases(203, 150, f, rng)) {
      for (int r : {6, 9, 16, 17, 40, 64}) {
        DetectParams p;
        p.nms_radius = r;
        p.max_detections = 50;
        p.threshold = default_threshold(f);
        check_whole(p, c, f);
      }
    }
  }
}

// Plateaus: the twin's documented example, and coarse random values (many equal neighbours).
TEST(GpuDetect, Plateaus) {
  JP_REQUIRE_GPU();
  HostImage img(9, 6, PixelFormat::kF32);
  const ImageView v = img.view();
  for (int y = 0; y < 6; ++y) {
    for (int x = 0; x < 9; ++x) v.row<float>(y)[x] = 0;
  }
  for (auto [x, y, s] : std::vector<std::tuple<int, int, float>>{{1, 1, 1},
                                                                 {2, 1, 1},
                                                                 {1, 2, 1},
                                                                 {2, 2, 1},
                                                                 {5, 1, 2},
                                                                 {6, 1, 2},
                                                                 {6, 2, 3},
                                                                 {4, 4, 1},
                                                                 {6, 4, 1},
                                                                 {8, 5, 0.5f}}) {
    v.row<float>(y)[x] = s;
  }
  for (int r : {0, 1, 2, 3}) {
    DetectParams p;
    p.nms_radius = r;
    p.threshold = 0.5;
    p.max_detections = 5;
    check_whole(p, make_case(img, "tight"), PixelFormat::kF32);
  }
  std::mt19937 rng(fresh_seed());
  for (PixelFormat f : {PixelFormat::kGray8, PixelFormat::kS16, PixelFormat::kF32}) {
    HostImage coarse(300, 200, f);
    std::uniform_int_distribution<int> d(0, 3);
    for (int y = 0; y < 200; ++y) {
      for (int x = 0; x < 300; ++x) {
        const int q = d(rng);
        if (f == PixelFormat::kGray8) coarse.view().row<std::uint8_t>(y)[x] = 100 + q;
        if (f == PixelFormat::kS16) coarse.view().row<std::int16_t>(y)[x] = -2 + q;
        if (f == PixelFormat::kF32) coarse.view().row<float>(y)[x] = 0.25f * q;
      }
    }
    for (int r : {1, 2, 5}) {
      for (int max : {10, 1000, 4097}) {
        DetectParams p;
        p.nms_radius = r;
        p.max_detections = max;
        p.threshold = f == PixelFormat::kGray8 ? 100 : f == PixelFormat::kS16 ? -2 : 0.1;
        check_whole(p, make_case(coarse, "pad13"), f);
        check_whole(p, make_case(coarse, "align16"), f);
      }
    }
  }
}

// n isolated peaks (on a grid of pitch 2r + 2) in a zero image; equal scores when `ties`.
HostImage peaks(int n, int r, bool ties, std::mt19937& rng) {
  const int step = 2 * r + 2, cols = 90;
  const int w = cols * step, h = ((n + cols - 1) / cols) * step + 1;
  HostImage img(w, h, PixelFormat::kF32);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) img.view().row<float>(y)[x] = 0;
  }
  std::uniform_real_distribution<float> d(1, 2);
  for (int i = 0; i < n; ++i) {
    img.view().row<float>((i / cols) * step + 1)[(i % cols) * step + 1] = ties ? 1.5f : d(rng);
  }
  return img;
}

// Candidates exactly at, one below and one above max_detections; and around the sort sizes.
TEST(GpuDetect, CandidatesAroundMaxDetections) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  // 1024: the small block sort; 4096: the large one; 8192: block 0's radix select (K ≤ 1024);
  // beyond: a grid-wide select first; K > 4096: CUB's sort.
  for (int n : {1, 499, 500, 501, 1023, 1024, 1025, 4095, 4096, 4097, 8192, 8193}) {
    for (bool ties : {false, true}) {
      const HostImage img = peaks(n, 1, ties, rng);
      for (int max : {n - 1, n, n + 1, 500, 1024, 1025, 4096, 4097}) {
        if (max < 1) continue;
        DetectParams p;
        p.nms_radius = 1;
        p.threshold = 0.5;
        p.max_detections = max;
        const Case c = make_case(img, "tight");
        SCOPED_TRACE(std::to_string(n) + " peaks" + (ties ? " (ties)" : ""));
        GpuDetector d(p, c.dev.width, c.dev.height);
        const DetectResult cpu = cpu_detect(p, c.host, 0, c.host.height);
        ASSERT_EQ(cpu.count + cpu.overflow, static_cast<std::uint64_t>(n));
        EXPECT_TRUE(same_result(d.run(c.dev, 0, c.dev.height), cpu)) << "max " << max;
      }
    }
  }
}

// Every pixel a candidate, far beyond the candidate buffer: the finish re-runs the NMS.
TEST(GpuDetect, ConstantImageBeyondBuffer) {
  JP_REQUIRE_GPU();
  HostImage img(1920, 1080, PixelFormat::kF32);
  for (int y = 0; y < 1080; ++y) {
    for (int x = 0; x < 1920; ++x) img.view().row<float>(y)[x] = 0.75f;
  }
  for (const char* layout : {"pad13", "align16"}) {
    const Case c = make_case(img, layout);
    for (int r : {0, 2, 9}) {
      DetectParams p;
      p.nms_radius = r;
      std::vector<Detection> all;  // the same for every threshold and quality below
      detect_candidates_ref(p, 0.5f, c.host, 0, c.host.height, &all);
      ASSERT_EQ(all.size(), std::size_t(1920) * 1080);
      for (int max : {1, 500, 4096, 5000}) {
        for (bool quality : {false, true}) {
          p.max_detections = max;
          p.use_quality = quality;
          p.threshold = 0.5;
          p.quality = 0.5;
          check_paths(p, c, PixelFormat::kF32, detect_finish(all, max));
        }
      }
    }
  }
}

// The finish's grid at one and two blocks an SM (DetectLaunchOptions) and the candidates' early
// trigger on and off: a sparse response (the finish's usual path), a flat one whose candidates
// overflow the buffer (the NMS re-run in grid-wide passes) and one with max_detections > 4096.
TEST(GpuDetect, FinishGridAndEarlyTrigger) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  HostImage flat(1920, 1080, PixelFormat::kF32);
  for (int y = 0; y < 1080; ++y) {
    for (int x = 0; x < 1920; ++x) flat.view().row<float>(y)[x] = 0.75f;
  }
  const Case cases[] = {make_case(random_image(1920, 1080, PixelFormat::kF32, rng), "align16"),
                        make_case(flat, "pad13")};
  for (const Case& c : cases) {
    for (int max : {500, 5000}) {
      DetectParams params;
      params.nms_radius = 2;
      params.use_quality = true;
      params.quality = 0.5;
      params.max_detections = max;
      const DetectResult cpu = cpu_detect(params, c.host, 0, c.host.height);
      for (const DetectPath path : paths_for(params, c.dev)) {
        DetectParams p = params;
        p.path = path;
        for (int blocks : {1, 2}) {
          for (bool early : {true, false}) {
            SCOPED_TRACE(describe(p, c, PixelFormat::kF32) + " finish blocks an SM " +
                         std::to_string(blocks) + (early ? " early trigger" : ""));
            DetectLaunchOptions o;
            o.finish_blocks_per_sm = blocks;
            LaunchContext ctx;
            ctx.early_trigger = early;
            GpuDetector d(p, c.dev.width, c.dev.height);
            EXPECT_TRUE(same_result(d.run(c.dev, 0, c.dev.height, ctx, o), cpu));
          }
        }
      }
    }
  }
}

// More candidates than the buffer with distinct scores (radius 0: every pixel above the threshold),
// and exactly one more than the buffer holds.
TEST(GpuDetect, DistinctCandidatesBeyondBuffer) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const int w = 1024, h = 1024;
  const std::size_t capacity = std::size_t(w) * h / 8;  // the workspace's documented rule
  HostImage noise = random_image(w, h, PixelFormat::kF32, rng);
  HostImage exact(w, h, PixelFormat::kF32);
  std::uniform_real_distribution<float> d(0.5f, 1.f);
  std::size_t placed = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      // The first capacity + 1 pixels above 0; the rest below (radius 0: each its own window).
      exact.view().row<float>(y)[x] = placed++ <= capacity ? d(rng) : -1.f;
    }
  }
  for (const HostImage* img : {&noise, &exact}) {
    for (int max : {1, 700, 4096, 4097, 20000}) {
      DetectParams p;
      p.nms_radius = 0;
      p.threshold = img == &noise ? -0.9 : 0.0;
      p.max_detections = max;
      check_whole(p, make_case(*img, "tight"), PixelFormat::kF32);
    }
  }
  // Many equal scores among distinct ones: GRAY8 noise at radius 0.
  HostImage gray = random_image(w, h, PixelFormat::kGray8, rng);
  for (int max : {3, 4096, 10000}) {
    DetectParams p;
    p.nms_radius = 0;
    p.threshold = 10;
    p.max_detections = max;
    check_whole(p, make_case(gray, "roi"), PixelFormat::kGray8);
  }
}

// A response of size w × h from score(x, y), in format f.
template <class F>
HostImage make_response(int w, int h, PixelFormat f, F score) {
  HostImage img(w, h, f);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const float s = score(x, y);
      if (f == PixelFormat::kF32) {
        img.view().row<float>(y)[x] = s;
      } else if (f == PixelFormat::kS16) {
        img.view().row<std::int16_t>(y)[x] = static_cast<std::int16_t>(s);
      } else {
        img.view().row<std::uint8_t>(y)[x] = static_cast<std::uint8_t>(s);
      }
    }
  }
  return img;
}

// Flat frames (every pixel a candidate) at sizes below, at and far beyond the candidate buffer
// (max(65536, W·H/8) keys): dense blocks drop the keys above the frame's bound and the finish
// gathers the rows up to it; every format, both candidates kernels, several max_detections.
TEST(GpuDetect, FlatFramesAtSizes) {
  JP_REQUIRE_GPU();
  const std::pair<int, int> sizes[] = {{1, 1},     {31, 7},     {257, 255},   {257, 256},
                                       {300, 200}, {1000, 700}, {1920, 1080}, {4096, 2160}};
  for (const auto& [w, h] : sizes) {
    for (const PixelFormat f : {PixelFormat::kF32, PixelFormat::kGray8, PixelFormat::kS16}) {
      if (f != PixelFormat::kF32 && w * h > 2000000)
        continue;  // the F32 runs cover the large sizes
      const HostImage img = make_response(w, h, f, [](int, int) { return 77.f; });
      for (int r : {1, 4}) {
        DetectParams p;
        p.nms_radius = r;
        p.threshold = 10;
        std::vector<Detection> all;  // the twin's candidates, once for every layout and max
        detect_candidates_ref(p, 10.f, img.view(), 0, h, &all);
        ASSERT_EQ(all.size(), static_cast<std::size_t>(w) * h);
        for (const char* layout : {"align16", "pad13"}) {
          const Case c = make_case(img, layout);
          for (int max : {1, 500, 5000}) {
            p.max_detections = max;
            check_paths(p, c, f, detect_finish(all, max));
          }
        }
      }
    }
  }
}

// Frames where (nearly) every pixel is a candidate but the scores differ, so a bound's score is
// not always the frame's best: isolated peaks on a flat frame (beyond and within max_detections),
// plateau bands brightening downwards and upwards, and dark noise of four levels (many ties).
TEST(GpuDetect, DenseCandidatesMatchTwin) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  std::uniform_int_distribution<int> level(0, 3);
  const int w = 1000, h = 700;
  std::vector<float> dark(static_cast<std::size_t>(w) * h);
  for (float& v : dark) v = static_cast<float>(level(rng));
  const std::vector<std::pair<std::string, HostImage>> frames = {
      {"peaks",
       make_response(w, h, PixelFormat::kF32,
                     [](int x, int y) { return (x % 97 == 50 && y % 89 == 40) ? 0.9f : 0.75f; })},
      {"bands down", make_response(w, h, PixelFormat::kF32,
                                   [](int, int y) { return static_cast<float>(y / 64); })},
      {"bands up", make_response(w, h, PixelFormat::kF32,
                                 [](int, int y) { return static_cast<float>(20 - y / 64); })},
      {"dark noise", make_response(w, h, PixelFormat::kF32, [&](int x, int y) {
         return dark[static_cast<std::size_t>(y) * w + x];
       })}};
  for (const auto& [name, img] : frames) {
    SCOPED_TRACE(name);
    const Case c = make_case(img, "align16");
    for (int max : {1, 50, 500, 5000}) {
      DetectParams p;
      p.nms_radius = 1;
      p.threshold = -1;
      p.max_detections = max;
      check_whole(p, c, PixelFormat::kF32);
      p.use_quality = true;
      p.quality = 0.1;
      check_whole(p, c, PixelFormat::kF32);
    }
  }
}

// A flat range of rows inside a frame whose rows outside it are brighter: the NMS windows of the
// range's first or last rows read them, so those rows hold no candidates and the plateau path must
// not take every pixel of the frame's largest score (it applies only where no window leaves the
// range, or at radius 0); launches over [40, 480) and [0, 300) of a 640 × 480 frame, every path.
TEST(GpuDetect, PlateauRangeInsideTheFrame) {
  JP_REQUIRE_GPU();
  const int w = 640, h = 480;
  const struct { int y0, y1; } ranges[] = {{40, h}, {0, 300}};
  for (const auto& range : ranges) {
    const HostImage img = make_response(w, h, PixelFormat::kF32, [&](int, int y) {
      return y < range.y0 || y >= range.y1 ? 90.f : 77.f;
    });
    const Case c = make_case(img, "align16");
    for (int r : {0, 2}) {
      for (int max : {1, 500, 5000}) {
        for (bool quality : {false, true}) {
          DetectParams p;
          p.nms_radius = r;
          p.threshold = 10;
          p.use_quality = quality;
          p.quality = 0.5;  // 38.5: the range's maximum is 77
          p.max_detections = max;
          const DetectResult cpu = cpu_detect(p, c.host, range.y0, range.y1);
          ASSERT_GT(cpu.count + cpu.overflow, 65536u) << "beyond the candidate buffer";
          check_paths(p, c, PixelFormat::kF32, cpu, range.y0, range.y1);
        }
      }
    }
  }
}

// One brighter pixel on a flat frame beyond the candidate buffer, with a fixed threshold: the
// dense blocks' bound has the flat score, so the finish must find the rows' largest score above
// it (a finish that took the bound's score for the largest would write the flat pixels first).
// The peak at a row's first and last pixel, at the frame's last, inside and at a random place;
// widths around 1024 and 4096 (the tiles' and the rows' last columns); both candidates kernels.
TEST(GpuDetect, OnePeakOnAFlatFrame) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const std::pair<int, int> sizes[] = {{1025, 97}, {1026, 70}, {1027, 65}, {4099, 37}};
  for (const auto& [w, h] : sizes) {
    std::uniform_int_distribution<int> rx(0, w - 1), ry(0, h - 1);
    const std::pair<int, int> places[] = {
        {0, h / 3}, {w - 1, h / 2}, {w - 1, h - 1}, {w / 2, h / 2}, {rx(rng), ry(rng)}};
    for (const auto& [px, py] : places) {
      const HostImage img = make_response(
          w, h, PixelFormat::kF32, [&](int x, int y) { return x == px && y == py ? 90.f : 77.f; });
      const Case cases[] = {make_case(img, "align16"), make_case(img, "pad13")};  // uploaded once
      for (int r : {0, 1, 4}) {
        for (int max : {1, 500}) {
          DetectParams p;
          p.nms_radius = r;
          p.threshold = 10;
          p.max_detections = max;
          const DetectResult cpu = cpu_detect(p, img.view(), 0, h);
          ASSERT_GT(cpu.count + cpu.overflow, 65536u) << "beyond the candidate buffer";
          ASSERT_EQ(cpu.points.front().x, px);
          SCOPED_TRACE("peak at " + std::to_string(px) + ", " + std::to_string(py));
          for (const Case& c : cases) check_paths(p, c, PixelFormat::kF32, cpu);
        }
      }
    }
  }
}

// NaN, infinities and signed zeros behave as in the twin (scores compared bit for bit).
TEST(GpuDetect, SpecialValues) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto pick = [&](const std::vector<float>& values) {
    HostImage img(131, 67, PixelFormat::kF32);
    std::uniform_int_distribution<int> d(0, static_cast<int>(values.size()) - 1);
    for (int y = 0; y < 67; ++y) {
      for (int x = 0; x < 131; ++x) img.view().row<float>(y)[x] = values[d(rng)];
    }
    return img;
  };
  HostImage img = pick({nan, inf, -inf, 0.f, -0.f, -1.f, 0.5f, 2.f});
  HostImage finite_max = pick({nan, -inf, 0.f, -0.f, -1.f, 0.5f, 2.f});
  HostImage zeros(64, 40, PixelFormat::kF32);  // ±0 plateaus above a negative threshold
  std::uniform_int_distribution<int> z(0, 2);
  for (int y = 0; y < 40; ++y) {
    for (int x = 0; x < 64; ++x) {
      const int k = z(rng);
      zeros.view().row<float>(y)[x] = k == 0 ? 0.f : k == 1 ? -0.f : -1.f;
    }
  }
  for (const HostImage* im : {&img, &finite_max, &zeros}) {
    for (int r : {0, 1, 3}) {
      for (bool quality : {false, true}) {
        DetectParams p;
        p.nms_radius = r;
        p.max_detections = 300;
        p.use_quality = quality;
        p.threshold = -0.5;
        p.quality = 0.1;
        check_whole(p, make_case(*im, "tight"), PixelFormat::kF32);
      }
    }
  }
}

// Three uneven strips (max for all, then candidates, then one finish) equal one launch and the
// twin, over the whole image and over a range of rows.
TEST(GpuDetect, StripsEqualWholeLaunch) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  HostImage flat(640, 301, PixelFormat::kF32);
  for (int y = 0; y < 301; ++y) {
    for (int x = 0; x < 640; ++x) flat.view().row<float>(y)[x] = 1.f;
  }
  struct Img {
    HostImage img;
    PixelFormat f;
  };
  for (const Img& in :
       {Img{random_image(301, 203, PixelFormat::kF32, rng), PixelFormat::kF32},
        Img{random_image(257, 190, PixelFormat::kGray8, rng, 13), PixelFormat::kGray8},
        Img{flat, PixelFormat::kF32}}) {
    for (const char* layout : {"pad13", "align16"}) {
      const Case c = make_case(in.img, layout);
      const int h = c.host.height;
      for (const std::vector<int>& cuts :
           {std::vector<int>{0, h / 5, h / 5 + 1, h}, std::vector<int>{0, h / 2 + 7, h - 3, h},
            std::vector<int>{9, 40, 41, h - 11}}) {
        for (int r : {1, 4, 17}) {
          for (bool quality : {false, true}) {
            DetectParams q;
            q.nms_radius = r;
            q.max_detections = 300;
            q.use_quality = quality;
            q.threshold = default_threshold(in.f);
            q.quality = 0.4;
            for (const DetectPath path : paths_for(q, c.dev)) {
              DetectParams p = q;
              p.path = path;
              SCOPED_TRACE(describe(p, c, in.f) + " strips " + std::to_string(cuts[0]) + " " +
                           std::to_string(cuts[1]) + " " + std::to_string(cuts[2]) + " " +
                           std::to_string(cuts[3]));
              GpuDetector d(p, c.dev.width, c.dev.height);
              const DetectResult cpu = cpu_detect(p, c.host, cuts.front(), cuts.back());
              const DetectResult whole = d.run(c.dev, cuts.front(), cuts.back());
              EXPECT_TRUE(same_result(whole, cpu)) << "one launch";
              EXPECT_TRUE(same_result(d.run_strips(c.dev, cuts), cpu)) << "strips";
            }
          }
        }
      }
    }
  }
}

// A response whose rows grow toward the bottom (value · scale(y)), the maximum in the last strip:
// the strips' candidates ahead of it use far lower thresholds than the frame's, which the finish
// must apply again (counts and overflow included).
HostImage growing(int w, int h, PixelFormat f, std::mt19937& rng, double (*scale)(double)) {
  HostImage img = random_image(w, h, f, rng);
  const ImageView v = img.view();
  for (int y = 0; y < h; ++y) {
    const double s = scale((y + 0.5) / h);
    for (int x = 0; x < w; ++x) {
      if (f == PixelFormat::kF32) v.row<float>(y)[x] = static_cast<float>(v.row<float>(y)[x] * s);
      if (f == PixelFormat::kS16) {
        v.row<std::int16_t>(y)[x] = static_cast<std::int16_t>(v.row<std::int16_t>(y)[x] * s);
      }
      if (f == PixelFormat::kGray8) {
        v.row<std::uint8_t>(y)[x] = static_cast<std::uint8_t>(v.row<std::uint8_t>(y)[x] * s);
      }
    }
  }
  return img;
}

TEST(GpuDetect, StripsAheadOfTheMaximum) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  auto cubic = [](double t) { return t * t * t; };
  struct Img {
    HostImage img;
    PixelFormat f;
  };
  for (const Img& in : {Img{growing(301, 203, PixelFormat::kF32, rng, cubic), PixelFormat::kF32},
                        Img{growing(640, 480, PixelFormat::kF32, rng, cubic), PixelFormat::kF32},
                        Img{growing(257, 190, PixelFormat::kS16, rng, cubic), PixelFormat::kS16},
                        Img{growing(199, 101, PixelFormat::kGray8, rng, cubic),
                            PixelFormat::kGray8}}) {
    for (const char* layout : {"pad13", "align16"}) {
      const Case c = make_case(in.img, layout);
      const int h = c.host.height;
      for (const std::vector<int>& cuts :
           {std::vector<int>{0, h / 4, h / 2, 3 * h / 4, h},
            std::vector<int>{0, h / 2 + 7, h - 30, h - 3, h}, std::vector<int>{0, 1, h}}) {
        for (int r : {1, 4}) {
          for (int max : {40, 300, 5000}) {
            DetectParams q;
            q.nms_radius = r;
            q.max_detections = max;
            q.use_quality = true;
            q.quality = 0.3;
            for (const DetectPath path : paths_for(q, c.dev)) {
              DetectParams p = q;
              p.path = path;
              SCOPED_TRACE(describe(p, c, in.f) + " cuts " + std::to_string(cuts[1]) + " " +
                           std::to_string(cuts[2]));
              GpuDetector d(p, c.dev.width, c.dev.height);
              const DetectResult cpu = cpu_detect(p, c.host, 0, h);
              ASSERT_GT(cpu.count, 0u);
              EXPECT_TRUE(same_result(d.run_strips_ahead(c.dev, cuts), cpu));
              EXPECT_TRUE(same_result(d.run(c.dev, 0, h), cpu)) << "the next frame, one launch";
            }
          }
        }
      }
    }
  }
}

// Strips ahead of the maximum whose low thresholds overflow the candidate buffer (radius 0: every
// pixel above the threshold is a candidate): the finish re-runs the NMS with the frame's threshold
// and counts what it finds, few (under the buffer) or many (a select over the image).
TEST(GpuDetect, StripsAheadOverflowTheBuffer) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const int w = 1024, h = 1024;
  std::uniform_real_distribution<float> low(0.f, 1e-3f), high(0.5f, 1.f);
  for (int high_pixels : {1000, 300000}) {
    HostImage img(w, h, PixelFormat::kF32);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) img.view().row<float>(y)[x] = low(rng);
    }
    std::uniform_int_distribution<int> bottom(3 * h / 4, h - 1), col(0, w - 1);
    for (int i = 0; i < high_pixels; ++i) img.view().row<float>(bottom(rng))[col(rng)] = high(rng);
    const Case c = make_case(img, "tight");
    for (int max : {100, 5000}) {
      DetectParams p;
      p.nms_radius = 0;
      p.max_detections = max;
      p.use_quality = true;
      p.quality = 0.5;
      SCOPED_TRACE(describe(p, c, PixelFormat::kF32) + " high pixels " +
                   std::to_string(high_pixels));
      GpuDetector d(p, w, h);
      const DetectResult cpu = cpu_detect(p, c.host, 0, h);
      EXPECT_TRUE(same_result(d.run_strips_ahead(c.dev, {0, h / 4, h / 2, 3 * h / 4, h}), cpu));
      EXPECT_TRUE(same_result(d.run(c.dev, 0, h), cpu)) << "the next frame, one launch";
    }
  }
}

// One workspace through frames of different kinds (the finish leaves it ready for the next frame).
TEST(GpuDetect, WorkspaceReusedAcrossFrames) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const int w = 700, h = 500;
  HostImage flat(w, h, PixelFormat::kF32);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) flat.view().row<float>(y)[x] = 3.f;
  }
  const std::vector<HostImage> frames = {random_image(w, h, PixelFormat::kF32, rng), flat,
                                         random_image(w, h, PixelFormat::kF32, rng), flat,
                                         random_image(w, h, PixelFormat::kF32, rng)};
  for (int max : {100, 6000}) {
    for (bool quality : {false, true}) {
      DetectParams p;
      p.nms_radius = 1;
      p.max_detections = max;
      p.use_quality = quality;
      p.threshold = 0.1;
      p.quality = 0.2;
      GpuDetector d(p, w, h);
      for (int i = 0; i < 2; ++i) {
        for (const HostImage& f : frames) {
          const Case c = make_case(f, "tight");
          EXPECT_TRUE(same_result(d.run(c.dev, 0, h), cpu_detect(p, c.host, 0, h)))
              << "max " << max << " quality " << quality;
        }
      }
    }
  }
}

// Captured into a CUDA graph (the finish is a cooperative kernel) and replayed.
TEST(GpuDetect, CapturedGraphReplays) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const HostImage img = random_image(640, 480, PixelFormat::kF32, rng);
  const Case c = make_case(img, "tight");
  for (int max : {500, 5000}) {
    DetectParams p;
    p.nms_radius = 2;
    p.max_detections = max;
    p.use_quality = true;
    p.quality = 0.1;
    GpuDetector d(p, 640, 480);
    const DetectResult cpu = cpu_detect(p, c.host, 0, 480);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    JP_CUDA(cudaStreamBeginCapture(d.stream(), cudaStreamCaptureModeThreadLocal));
    const cudaError_t launched =
        launch_detect(p, c.dev, 0, 480, d.workspace(), d.out(), LaunchContext{}, d.stream());
    JP_CUDA(cudaStreamEndCapture(d.stream(), &graph));
    JP_CUDA(launched);
    JP_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 3; ++rep) {
      d.poison();
      JP_CUDA(cudaGraphLaunch(exec, d.stream()));
      EXPECT_TRUE(same_result(d.fetch(), cpu)) << "replay " << rep << " max " << max;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

// The result written straight to mapped host memory.
// The feed (detect_feed, kernels/max_feed.h): harris' tiled kernel writes the response's maximum
// and the maxima of its bands of 8 rows × 64 columns as it writes the response, and the candidates
// return at once from the tiles the bands clear. The result equals the twin's over one launch,
// over strips on the bands' 8-row grid and over strips off it (those write no band, or only the
// bands they cover whole), on blurred noise (few tiles with candidates) and on noise, for quality
// and an absolute threshold, NMS radii 4 and 2. One workspace serves the frames in turn: each
// finish zeroes the bands (a stale band could clear a tile of the next frame); the bands are
// checked written after a whole-frame harris and zeroed after the finish.
TEST(GpuDetectFeed, HarrisBandsEqualTheTwin) {
  JP_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  const HarrisParams hp;  // block 3, ksize 3: the tiled kernel
  for (const auto& [w, h] :
       {std::pair{16, 16}, std::pair{113, 113}, std::pair{333, 77}, std::pair{1920, 1080}}) {
    for (const auto& [r, quality] : {std::pair{4, true}, std::pair{2, true}, std::pair{4, false}}) {
      DetectParams p;
      p.nms_radius = r;
      p.use_quality = quality;
      p.quality = 0.01;
      p.max_detections = 500;
      GpuDetector d(p, w, h);
      const MaxFeed feed = detect_feed(d.workspace(), w, h);
      const int band_cols = (w + kFeedBandCols - 1) / kFeedBandCols;
      const std::size_t band_words = static_cast<std::size_t>(feed.band_pitch) * band_cols;
      ASSERT_GE(feed.band_pitch, (h + kFeedBandRows - 1) / kFeedBandRows);
      auto bands = [&] {
        std::vector<std::uint32_t> b(band_words);
        JP_CUDA(cudaMemcpyAsync(b.data(), feed.bands, band_words * sizeof(std::uint32_t),
                                cudaMemcpyDeviceToHost, d.stream()));
        JP_CUDA(cudaStreamSynchronize(d.stream()));
        return static_cast<std::size_t>(
            std::count_if(b.begin(), b.end(), [](std::uint32_t k) { return k != 0; }));
      };
      for (int frame = 0; frame < 3; ++frame) {
        HostImage gray = random_image(w, h, PixelFormat::kGray8, rng);
        if (frame != 1) {  // blurred noise: corners in few places (3 × 3 box, twice)
          const HostImage once(w, h, PixelFormat::kGray8);
          box_ref(BoxParams{}, gray.view(), once.view(), 0, h);
          box_ref(BoxParams{}, once.view(), gray.view(), 0, h);
        }
        HostImage resp(w, h, PixelFormat::kF32);
        harris_ref(hp, gray.view(), resp.view(), 0, h);
        DetectParams pc = p;
        if (!quality) pc.threshold = 0.05 * detect_max_ref(resp.view(), 0, h);  // 5% of the max
        const DetectResult cpu = cpu_detect(pc, resp.view(), 0, h);
        const DeviceImage dgray = test::upload(gray.view());
        DeviceImage dresp(w, h, PixelFormat::kF32);
        std::vector<std::vector<int>> splits = {{0, h}};
        for (const std::vector<int>& cand :
             {std::vector<int>{0, 64, 136, h}, std::vector<int>{0, 37, 101, h}}) {
          std::vector<int> cuts{0};
          for (const int c : cand) {
            if (c > cuts.back() && c <= h) cuts.push_back(c);
          }
          if (cuts.back() != h) cuts.push_back(h);
          if (cuts.size() > 2) splits.push_back(cuts);
        }
        for (const std::vector<int>& cuts : splits) {
          std::string name;
          for (const int c : cuts) name += " " + std::to_string(c);
          SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " r " + std::to_string(r) +
                       (quality ? " quality" : " threshold") + " frame " + std::to_string(frame) +
                       " cuts" + name + " seed " + std::to_string(seed));
          test::poison_device(dresp.view());
          d.poison();
          for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
            ASSERT_EQ(launch_harris_max(hp, dgray.view(), dresp.view(), cuts[i], cuts[i + 1], feed,
                                        LaunchContext{}, d.stream()),
                      cudaSuccess);
          }
          if (cuts.size() == 2) {
            EXPECT_GT(bands(), 0u) << "a whole-frame harris wrote no band";
          }
          for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
            ASSERT_EQ(launch_detect_candidates(pc, dresp.view(), cuts[i], cuts[i + 1],
                                               d.workspace(), LaunchContext{}, d.stream()),
                      cudaSuccess);
          }
          ASSERT_EQ(
              launch_detect_finish(pc, dresp.view(), 0, h, d.workspace(), d.out(), d.stream()),
              cudaSuccess);
          EXPECT_TRUE(same_result(d.fetch(), cpu));
          EXPECT_EQ(bands(), 0u) << "the finish left bands for the next frame";
        }
      }
    }
  }
}

TEST(GpuDetect, MappedOutput) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const HostImage img = random_image(320, 240, PixelFormat::kS16, rng);
  const Case c = make_case(img, "tight");
  DetectParams p;
  p.nms_radius = 3;
  p.max_detections = 200;
  p.threshold = 1000;
  GpuDetector d(p, 320, 240);
  PinnedBuffer out(detect_result_bytes(p), true);
  std::memset(out.get(), 0xA5, out.bytes());
  JP_CUDA(launch_detect(p, c.dev, 0, 240, d.workspace(), out.device<DetectDeviceResult>(),
                        LaunchContext{}, d.stream()));
  JP_CUDA(cudaStreamSynchronize(d.stream()));
  EXPECT_TRUE(
      same_result(to_detect_result(out.get<DetectDeviceResult>()), cpu_detect(p, c.host, 0, 240)));
}

TEST(GpuDetect, RejectsInvalidArguments) {
  JP_REQUIRE_GPU();
  std::mt19937 rng(fresh_seed());
  const HostImage img = random_image(32, 16, PixelFormat::kF32, rng);
  const Case c = make_case(img, "tight");
  DetectParams p;
  GpuDetector d(p, 32, 16);
  auto run = [&](const DetectParams& q, const ImageView& v, int y0, int y1) {
    return launch_detect(q, v, y0, y1, d.workspace(), d.out(), LaunchContext{}, d.stream());
  };
  EXPECT_EQ(run(p, c.dev, 0, 17), cudaErrorInvalidValue);
  EXPECT_EQ(run(p, c.dev, 5, 4), cudaErrorInvalidValue);
  EXPECT_EQ(run(p, c.dev, -1, 4), cudaErrorInvalidValue);
  ImageView bgr = c.dev;
  bgr.format = PixelFormat::kBgr8;
  EXPECT_EQ(run(p, bgr, 0, 4), cudaErrorInvalidValue);
  DetectParams wide = p;
  wide.nms_radius = 65;
  EXPECT_EQ(run(wide, c.dev, 0, 16), cudaErrorInvalidValue);
  EXPECT_EQ(launch_detect(p, c.dev, 0, 16, nullptr, d.out(), LaunchContext{}, d.stream()),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_detect(p, c.dev, 0, 16, d.workspace(), nullptr, LaunchContext{}, d.stream()),
            cudaErrorInvalidValue);
  // An empty range reports nothing.
  const DetectResult empty = d.run(c.dev, 7, 7);
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.overflow, 0u);
}

}  // namespace
}  // namespace jetpipe

#else  // !JETPIPE_HAVE_CUDA

TEST(GpuDetect, RequiresCuda) { JP_REQUIRE_GPU(); }

#endif
