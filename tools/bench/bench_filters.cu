// SPDX-License-Identifier: MIT
// Neighbourhood filters: gaussian (5×5 through both paths, 3×3 and 7×7), box, sobel, convolve 5×5
// and harris, beside NPP (nppiFilterGaussBorder / FilterBoxBorder / FilterSobelVertBorder,
// replicate border) when built with it and OpenCV on the host CPU (GaussianBlur, boxFilter, Sobel;
// up to 3840×2160). bytes = bytes read + bytes written (2 per pixel for GRAY8 → GRAY8, 3 for → S16,
// 5 for → F32). Inputs rotate over enough copies to miss L2. Each jetpipe case is checked once
// against its CPU twin on three bands of 64 rows (top, middle, bottom: every border row); a
// difference prints MISMATCH in its row. NPP rows carry how many pixels differ from jetpipe's
// (OpenCV rounding).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cuda_check.h"
#include "kernels/box.h"
#include "kernels/convolve.h"
#include "kernels/gaussian.h"
#include "kernels/harris.h"
#include "kernels/sobel.h"
#include "kernels/texture.h"
#include "tools/bench/bench.h"

#if JETPIPE_HAVE_NPP
#include <npp.h>
#endif
#if JETPIPE_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace jetpipe::bench {

namespace {

using RefFn = std::function<void(const ImageView& src, const ImageView& dst, int y0, int y1)>;

// Row bands checked against the twin: all rows of small images, else the first, middle and last 64.
std::vector<std::pair<int, int>> check_bands(int h) {
  if (h <= 192) return {{0, h}};
  return {{0, 64}, {h / 2 - 32, h / 2 + 32}, {h - 64, h}};
}

// "" when the device output equals the CPU twin on the bands (harris too: bit for bit), else
// MISMATCH with where.
std::string check_twin(const ImageView& host_src, const ImageView& dev_out, const RefFn& ref) {
  const int w = host_src.width, h = host_src.height;
  HostImage want(w, h, dev_out.format), got(w, h, dev_out.format);
  double worst = 0;
  int wx = -1, wy = -1;
  for (const auto& [a, b] : check_bands(h)) {
    ref(host_src, want.view(), a, b);
    JP_CUDA(cudaMemcpy2D(got.view().row<std::uint8_t>(a), got.view().pitch,
                         dev_out.row<std::uint8_t>(a), dev_out.pitch, dev_out.row_bytes(),
                         static_cast<std::size_t>(b - a), cudaMemcpyDeviceToHost));
    for (int y = a; y < b; ++y) {
      for (int x = 0; x < w; ++x) {
        double g = 0, e = 0;
        switch (dev_out.format) {
          case PixelFormat::kS16:
            g = got.view().row<std::int16_t>(y)[x];
            e = want.view().row<std::int16_t>(y)[x];
            break;
          case PixelFormat::kF32:
            g = got.view().row<float>(y)[x];
            e = want.view().row<float>(y)[x];
            break;
          default:
            g = got.view().row<std::uint8_t>(y)[x];
            e = want.view().row<std::uint8_t>(y)[x];
        }
        const double d = std::isnan(g) ? INFINITY : std::fabs(g - e);
        if (d > worst) {
          worst = d;
          wx = x;
          wy = y;
        }
      }
    }
  }
  if (worst == 0) return "";
  return "MISMATCH vs CPU twin: " + std::to_string(worst) + " at (" + std::to_string(wx) + ", " +
         std::to_string(wy) + ")";
}

#if JETPIPE_HAVE_NPP
// Pixels of two device GRAY8/S16 images that differ (NPP against jetpipe), as a note.
std::string count_differences(const ImageView& a, const ImageView& b, const char* what) {
  std::vector<std::uint8_t> ha(a.row_bytes() * a.height), hb(b.row_bytes() * b.height);
  JP_CUDA(cudaMemcpy2D(ha.data(), a.row_bytes(), a.data, a.pitch, a.row_bytes(),
                       static_cast<std::size_t>(a.height), cudaMemcpyDeviceToHost));
  JP_CUDA(cudaMemcpy2D(hb.data(), b.row_bytes(), b.data, b.pitch, b.row_bytes(),
                       static_cast<std::size_t>(b.height), cudaMemcpyDeviceToHost));
  const int bpp = bytes_per_pixel(a.format);
  std::size_t diff = 0;
  for (std::size_t i = 0; i < ha.size(); i += bpp) {
    if (std::memcmp(&ha[i], &hb[i], bpp) != 0) ++diff;
  }
  return std::to_string(diff) + " px differ from " + what;
}


void npp_check(NppStatus s, const char* what) {
  if (s != NPP_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + std::to_string(s));
}
#endif

void bench_size(Bench& b, const Size& s) {
  const std::vector<DeviceImage> in = b.inputs(s, PixelFormat::kGray8, Data::kUniform);
  const int n = static_cast<int>(in.size());
  const HostImage host = b.host_input(s, PixelFormat::kGray8, Data::kUniform);
  const ImageView hv = host.view();
  const double px = static_cast<double>(s.width) * s.height;
  const int w = s.width, h = s.height;
  cudaStream_t st = b.stream();
  DeviceImage out8(w, h, PixelFormat::kGray8), out8b(w, h, PixelFormat::kGray8);
  const Border replicate{BorderMode::kReplicate, 0};
  const Border reflect101{BorderMode::kReflect101, 0};
  // One texture per rotating input, for the borders the texture rows use.
  std::vector<UniqueTexture> tex_replicate, tex_reflect101;
  for (const DeviceImage& d : in) {
    tex_replicate.emplace_back(d.view(), replicate);
    tex_reflect101.emplace_back(d.view(), reflect101);
  }
#if JETPIPE_HAVE_OPENCV
  const bool cpu = px <= 3840.0 * 2160.0;
  const cv::Mat m(h, w, CV_8UC1, hv.data, hv.pitch);
  cv::Mat cv_out;
#endif
#if JETPIPE_HAVE_NPP
  const NppStreamContext ctx = npp_context(b);
  const NppiSize size{w, h};
  const NppiPoint origin{0, 0};
#endif

  // ---- gaussian --------------------------------------------------------------------------------
  if (b.wants("gaussian")) {
    struct G {
      int ksize;
      FilterPath path;
      const Border* border;
      const char* impl;
    };
    const G cases[] = {{5, FilterPath::kTiled, &replicate, "jetpipe-tiled"},
                       {5, FilterPath::kTexture, &replicate, "jetpipe-tex"},
                       {5, FilterPath::kTiled, &reflect101, "jetpipe-tiled"},
                       {5, FilterPath::kTexture, &reflect101, "jetpipe-tex"},
                       {3, FilterPath::kAuto, &replicate, "jetpipe"},
                       {7, FilterPath::kAuto, &replicate, "jetpipe"}};
    for (const G& g : cases) {
      const GaussianParams p = resolve_gaussian(g.ksize, 0, *g.border);
      const auto& tex = g.border == &replicate ? tex_replicate : tex_reflect101;
      const double us = b.time_us([&](int rep) {
        const int i = rep % n;
        JP_CUDA(launch_gaussian(p, FilterSource(in[i].view(), tex[i]), out8.view(), 0, h,
                                LaunchContext{}, st, g.path));
      });
      JP_CUDA(launch_gaussian(p, FilterSource(in[0].view(), tex[0]), out8.view(), 0, h,
                              LaunchContext{}, st, g.path));
      JP_CUDA(cudaStreamSynchronize(st));
      const std::string note =
          check_twin(hv, out8.view(), [&](const ImageView& a, const ImageView& d, int y0, int y1) {
            gaussian_ref(p, a, d, y0, y1);
          });
      const std::string k = std::to_string(g.ksize);
      b.add({"gaussian" + k + "x" + k + "/" + to_string(g.border->mode), g.impl, s.name(),
             "uniform", us, 2 * px, note});
    }
    // The fast kernel's rows a warp (the policy's fast_rows, decision 045), replicate border, at
    // sizes where the policy's value is not lowered to fill the SMs, and at every size in a green
    // context (--sms: the Orin stand-in, whose policy is swept at 1080p): gaussian 3..9, box 3..7.
    if (px >= 1 << 24 || b.launch_sms() < b.props().multiProcessorCount) {
      for (int k : {3, 5, 7, 9}) {
        for (int rows : {6, 8, 12, 16, 24, 32}) {
          FilterLaunchOptions o;
          o.rows_per_warp = rows;
          const GaussianParams p = resolve_gaussian(k, 0, replicate);
          const BoxParams bp{k, true, replicate};
          for (bool box : {false, true}) {
            if (box && k == 9) continue;
            const auto launch = [&](int i) {
              return box ? launch_box(bp, FilterSource(in[i].view()), out8.view(), 0, h,
                                      LaunchContext{}, st, FilterPath::kTiled, o)
                         : launch_gaussian(p, FilterSource(in[i].view()), out8.view(), 0, h,
                                           LaunchContext{}, st, FilterPath::kTiled, o);
            };
            const double us = b.time_us([&](int rep) { JP_CUDA(launch(rep % n)); });
            JP_CUDA(launch(0));
            JP_CUDA(cudaStreamSynchronize(st));
            const std::string note = check_twin(
                hv, out8.view(), [&](const ImageView& a, const ImageView& d, int y0, int y1) {
                  if (box) {
                    box_ref(bp, a, d, y0, y1);
                  } else {
                    gaussian_ref(p, a, d, y0, y1);
                  }
                });
            const std::string ks = std::to_string(k);
            b.add({std::string(box ? "box" : "gaussian") + ks + "x" + ks + " r" +
                       std::to_string(rows),
                   "jetpipe-tiled", s.name(), "uniform", us, 2 * px, note});
          }
        }
      }
    }
#if JETPIPE_HAVE_NPP
    {
      const GaussianParams p = resolve_gaussian(5, 0, replicate);
      const double us = b.time_us([&](int rep) {
        const ImageView& v = in[rep % n].view();
        npp_check(nppiFilterGaussBorder_8u_C1R_Ctx(v.data, static_cast<int>(v.pitch), size, origin,
                                                   out8b.view().data,
                                                   static_cast<int>(out8b.view().pitch), size,
                                                   NPP_MASK_SIZE_5_X_5, NPP_BORDER_REPLICATE, ctx),
                  "nppiFilterGaussBorder_8u_C1R_Ctx");
      });
      // Compare on one input: NPP and jetpipe both on input 0.
      const ImageView& v = in[0].view();
      npp_check(
          nppiFilterGaussBorder_8u_C1R_Ctx(v.data, static_cast<int>(v.pitch), size, origin,
                                           out8b.view().data, static_cast<int>(out8b.view().pitch),
                                           size, NPP_MASK_SIZE_5_X_5, NPP_BORDER_REPLICATE, ctx),
          "nppiFilterGaussBorder_8u_C1R_Ctx");
      JP_CUDA(launch_gaussian(p, v, out8.view(), 0, h, LaunchContext{}, st));
      JP_CUDA(cudaStreamSynchronize(st));
      b.add({"gaussian5x5/replicate", "npp", s.name(), "uniform", us, 2 * px,
             count_differences(out8b.view(), out8.view(), "jetpipe")});
    }
#endif
#if JETPIPE_HAVE_OPENCV
    if (cpu) {
      const double us = b.time_host_us(
          [&] { cv::GaussianBlur(m, cv_out, cv::Size(5, 5), 0, 0, cv::BORDER_REPLICATE); });
      b.add({"gaussian5x5/replicate", "opencv-cpu", s.name(), "uniform", us, 2 * px, ""});
    }
#endif
  }

  // ---- box -------------------------------------------------------------------------------------
  if (b.wants("box")) {
    // Every odd ksize 3..31 through the policy's engine (jetpipe-tiled; -tex: the texture path),
    // and through each engine by name: running sums (-running), the sliding windows (-window:
    // the fast kernel up to 9, the separable engine above), docs/decisions/039-box-running-sums.md,
    // and the tile engine (-tile); 33, 45 and 65 through the policy's and the separable engine;
    // the running kernel's rows a warp swept at 9, 15, 21, 25 and 31 (" rN", 8 .. 256), and at 9,
    // 15 and 31 its interior and edge kernels at every size (" split": the policy splits launches
    // above kRunBoxSplitPx only), the edge kernel at 4 .. 32 rows a warp (" split edgeN"; " split"
    // alone: the policy's edges, the tile engine's where the view allows).
    struct B {
      int ksize;
      FilterPath path;
      BoxEngine engine;
      const char* impl;
      int rows;  // the running kernel's rows a warp; 0: the policy's
      bool split = false;  // the interior and edge kernels at every size (" split")
      int edge_rows = 0;   // the split's edge kernel's rows a warp (" edgeN"); 0: one wave's
    };
    std::vector<B> cases;
    for (int k = 3; k <= 31; k += 2) {
      cases.push_back({k, FilterPath::kTiled, BoxEngine::kAuto, "jetpipe-tiled", 0});
      if (k == 5) cases.push_back({k, FilterPath::kTexture, BoxEngine::kAuto, "jetpipe-tex", 0});
      cases.push_back({k, FilterPath::kTiled, BoxEngine::kRunning, "jetpipe-running", 0});
      cases.push_back({k, FilterPath::kTiled, BoxEngine::kWindow, "jetpipe-window", 0});
      cases.push_back({k, FilterPath::kTiled, BoxEngine::kTile, "jetpipe-tile", 0});
      if (k == 9 || k == 15 || k == 21 || k == 25 || k == 31) {
        for (int r : {8, 16, 32, 64, 96, 128, 192, 256}) {
          cases.push_back({k, FilterPath::kTiled, BoxEngine::kRunning, "jetpipe-running", r});
        }
      }
      if (k == 9 || k == 15 || k == 31) {
        cases.push_back({k, FilterPath::kTiled, BoxEngine::kRunning, "jetpipe-running", 0, true});
        for (int e : {4, 8, 16, 24, 32}) {
          cases.push_back(
              {k, FilterPath::kTiled, BoxEngine::kRunning, "jetpipe-running", 0, true, e});
        }
      }
    }
    for (int k : {33, 45, 65}) {  // above the running kernel's 31
      cases.push_back({k, FilterPath::kTiled, BoxEngine::kAuto, "jetpipe-tiled", 0});
      cases.push_back({k, FilterPath::kTiled, BoxEngine::kWindow, "jetpipe-window", 0});
    }
    for (const B& c : cases) {
      BoxParams p;
      p.ksize = c.ksize;
      p.border = replicate;
      FilterLaunchOptions o;
      o.box_engine = c.engine;
      o.rows_per_warp = c.rows;
      o.box_split_px = c.split ? 0 : -1;
      o.box_edge_rows = c.edge_rows;
      const double us = b.time_us([&](int rep) {
        const int i = rep % n;
        JP_CUDA(launch_box(p, FilterSource(in[i].view(), tex_replicate[i]), out8.view(), 0, h,
                           LaunchContext{}, st, c.path, o));
      });
      JP_CUDA(launch_box(p, FilterSource(in[0].view(), tex_replicate[0]), out8.view(), 0, h,
                         LaunchContext{}, st, c.path, o));
      JP_CUDA(cudaStreamSynchronize(st));
      const std::string note =
          check_twin(hv, out8.view(), [&](const ImageView& a, const ImageView& d, int y0, int y1) {
            box_ref(p, a, d, y0, y1);
          });
      const std::string k = std::to_string(c.ksize);
      const std::string r = (c.rows > 0 ? " r" + std::to_string(c.rows) : "") +
                            (c.split ? " split" : "") +
                            (c.edge_rows > 0 ? " edge" + std::to_string(c.edge_rows) : "");
      b.add(
          {"box" + k + "x" + k + r + "/replicate", c.impl, s.name(), "uniform", us, 2 * px, note});
    }
#if JETPIPE_HAVE_NPP
    {
      const auto run = [&](const ImageView& v) {
        npp_check(nppiFilterBoxBorder_8u_C1R_Ctx(
                      v.data, static_cast<int>(v.pitch), size, origin, out8b.view().data,
                      static_cast<int>(out8b.view().pitch), size, NppiSize{5, 5}, NppiPoint{2, 2},
                      NPP_BORDER_REPLICATE, ctx),
                  "nppiFilterBoxBorder_8u_C1R_Ctx");
      };
      const double us = b.time_us([&](int rep) { run(in[rep % n].view()); });
      BoxParams p;
      p.ksize = 5;
      p.border = replicate;
      run(in[0].view());
      JP_CUDA(launch_box(p, in[0].view(), out8.view(), 0, h, LaunchContext{}, st));
      JP_CUDA(cudaStreamSynchronize(st));
      b.add({"box5x5/replicate", "npp", s.name(), "uniform", us, 2 * px,
             count_differences(out8b.view(), out8.view(), "jetpipe")});
    }
#endif
#if JETPIPE_HAVE_OPENCV
    if (cpu) {
      const double us = b.time_host_us([&] {
        cv::boxFilter(m, cv_out, -1, cv::Size(5, 5), cv::Point(-1, -1), true, cv::BORDER_REPLICATE);
      });
      b.add({"box5x5/replicate", "opencv-cpu", s.name(), "uniform", us, 2 * px, ""});
    }
#endif
  }

  // ---- sobel (d/dx, 3×3, S16) ------------------------------------------------------------------
  if (b.wants("sobel")) {
    DeviceImage out16(w, h, PixelFormat::kS16), out16b(w, h, PixelFormat::kS16);
    SobelParams p;
    p.dx = 1;
    p.dy = 0;
    p.ksize = 3;
    p.border = replicate;
    for (FilterPath path : {FilterPath::kTiled, FilterPath::kTexture}) {
      const double us = b.time_us([&](int rep) {
        const int i = rep % n;
        JP_CUDA(launch_sobel(p, FilterSource(in[i].view(), tex_replicate[i]), out16.view(), 0, h,
                             LaunchContext{}, st, path));
      });
      JP_CUDA(launch_sobel(p, FilterSource(in[0].view(), tex_replicate[0]), out16.view(), 0, h,
                           LaunchContext{}, st, path));
      JP_CUDA(cudaStreamSynchronize(st));
      const std::string note =
          check_twin(hv, out16.view(), [&](const ImageView& a, const ImageView& d, int y0, int y1) {
            sobel_ref(p, a, d, y0, y1);
          });
      b.add({"sobel3x3dx/s16", path == FilterPath::kTexture ? "jetpipe-tex" : "jetpipe-tiled",
             s.name(), "uniform", us, 3 * px, note});
    }
#if JETPIPE_HAVE_NPP
    {
      const auto run = [&](const ImageView& v) {
        npp_check(
            nppiFilterSobelVertBorder_8u16s_C1R_Ctx(v.data, static_cast<int>(v.pitch), size, origin,
                                                    reinterpret_cast<Npp16s*>(out16b.view().data),
                                                    static_cast<int>(out16b.view().pitch), size,
                                                    NPP_MASK_SIZE_3_X_3, NPP_BORDER_REPLICATE, ctx),
            "nppiFilterSobelVertBorder_8u16s_C1R_Ctx");
      };
      const double us = b.time_us([&](int rep) { run(in[rep % n].view()); });
      run(in[0].view());
      JP_CUDA(launch_sobel(p, in[0].view(), out16.view(), 0, h, LaunchContext{}, st));
      JP_CUDA(cudaStreamSynchronize(st));
      b.add({"sobel3x3dx/s16", "npp", s.name(), "uniform", us, 3 * px,
             count_differences(out16b.view(), out16.view(), "jetpipe")});
    }
#endif
#if JETPIPE_HAVE_OPENCV
    if (cpu) {
      const double us = b.time_host_us(
          [&] { cv::Sobel(m, cv_out, CV_16S, 1, 0, 3, 1, 0, cv::BORDER_REPLICATE); });
      b.add({"sobel3x3dx/s16", "opencv-cpu", s.name(), "uniform", us, 3 * px, ""});
    }
#endif
  }

  // ---- convolve ------------------------------------------------------------------------------
  // 5×5 with the taps of issue 42 (k/16: exact sums, the integer path) through both paths, its rows
  // a warp swept; the same shape with taps whose products are exact but sums are not (the fused
  // path) and with general float taps (k/10: FMUL + FADD); sharpen 3×3 (integers) and 7×7 k/16.
  if (b.wants("convolve")) {
    struct C {
      const char* name;
      int k;
      float scale, bias;  // taps (i % 7 − 2) · scale + bias
      FilterPath path;
      int rows;  // rows a warp; 0: the policy's
    };
    std::vector<C> cases = {{"convolve5x5", 5, 0.0625f, 0, FilterPath::kTiled, 0},
                            {"convolve5x5", 5, 0.0625f, 0, FilterPath::kTexture, 0}};
    for (int r : {4, 8, 16, 32, 64})
      cases.push_back({"convolve5x5", 5, 0.0625f, 0, FilterPath::kTiled, r});
    cases.push_back({"convolve5x5 fused", 5, 0.0625f, 0.0009765625f, FilterPath::kTiled, 0});
    cases.push_back({"convolve5x5 general", 5, 0.1f, 0, FilterPath::kTiled, 0});
    cases.push_back({"convolve3x3 sharpen", 3, 0, 0, FilterPath::kTiled, 0});
    cases.push_back({"convolve7x7", 7, 0.0625f, 0, FilterPath::kTiled, 0});
    for (const C& c : cases) {
      ConvolveParams p;
      p.rows = p.cols = c.k;
      p.border = replicate;
      p.delta = 3.5;
      if (c.k == 3) {
        p.taps = {0, -1, 0, -1, 5, -1, 0, -1, 0};
      } else {
        for (int i = 0; i < c.k * c.k; ++i) p.taps.push_back((i % 7 - 2) * c.scale + c.bias);
      }
      FilterLaunchOptions o;
      o.rows_per_warp = c.rows;
      const double us = b.time_us([&](int rep) {
        const int i = rep % n;
        JP_CUDA(launch_convolve(p, FilterSource(in[i].view(), tex_replicate[i]), out8.view(), 0, h,
                                st, c.path, o));
      });
      JP_CUDA(launch_convolve(p, FilterSource(in[0].view(), tex_replicate[0]), out8.view(), 0, h,
                              st, c.path, o));
      JP_CUDA(cudaStreamSynchronize(st));
      const std::string note =
          check_twin(hv, out8.view(), [&](const ImageView& a, const ImageView& d, int y0, int y1) {
            convolve_ref(p, a, d, y0, y1);
          });
      std::string name = c.name;
      if (c.rows > 0) name += " r" + std::to_string(c.rows);
      b.add({name, c.path == FilterPath::kTexture ? "jetpipe-tex" : "jetpipe-tiled", s.name(),
             "uniform", us, 2 * px, note});
    }
  }

  // ---- harris ----------------------------------------------------------------------------------
  // block 3 / ksize 3 (the default pipeline's) through both paths with the policy's shape, then the
  // fast kernel's lane width (8 or 4 columns) and rows per warp swept, block 5 and 7 (fast kernel)
  // and ksize 5 (the tile engine). Every case must equal the CPU twin bit for bit.
  if (b.wants("harris")) {
    DeviceImage out32(w, h, PixelFormat::kF32);
    struct H {
      int block_size, ksize;
      FilterPath path;
      int lanes, rows;  // the fast kernel's columns a lane and rows per warp; 0: the policy's
    };
    std::vector<H> cases = {{3, 3, FilterPath::kTiled, 0, 0}, {3, 3, FilterPath::kTexture, 0, 0}};
    for (FilterPath path : {FilterPath::kTiled, FilterPath::kTexture}) {
      for (int lanes : {8, 4}) {
        for (int rows : {4, 5, 6, 8, 16, 32}) cases.push_back({3, 3, path, lanes, rows});
      }
    }
    cases.push_back({5, 3, FilterPath::kAuto, 0, 0});
    cases.push_back({7, 3, FilterPath::kAuto, 0, 0});
    cases.push_back({3, 5, FilterPath::kAuto, 0, 0});
    for (const H& c : cases) {
      HarrisParams p;
      p.block_size = c.block_size;
      p.ksize = c.ksize;
      p.border = reflect101;
      HarrisLaunchOptions o;
      o.rows_per_warp = c.rows;
      o.lane_cols = c.lanes;
      const double us = b.time_us([&](int rep) {
        const int i = rep % n;
        JP_CUDA(launch_harris(p, FilterSource(in[i].view(), tex_reflect101[i]), out32.view(), 0, h,
                              LaunchContext{}, st, c.path, o));
      });
      JP_CUDA(launch_harris(p, FilterSource(in[0].view(), tex_reflect101[0]), out32.view(), 0, h,
                            LaunchContext{}, st, c.path, o));
      JP_CUDA(cudaStreamSynchronize(st));
      const std::string note =
          check_twin(hv, out32.view(), [&](const ImageView& a, const ImageView& d, int y0, int y1) {
            harris_ref(p, a, d, y0, y1);
          });
      const char* impl = c.path == FilterPath::kTexture ? "jetpipe-tex"
                         : c.path == FilterPath::kTiled ? "jetpipe-tiled"
                                                        : "jetpipe";
      std::string name = "harris" + std::to_string(c.block_size) + "/" + std::to_string(c.ksize);
      if (c.lanes > 0) name += " lc" + std::to_string(c.lanes) + " r" + std::to_string(c.rows);
      b.add({name, impl, s.name(), "uniform", us, 5 * px, note});
    }
    // The tiled kernel (block 3 / ksize 3) itself, beside the fast kernel's rows above (the
    // kTiled row runs whichever the policy picks for this size).
    {
      HarrisParams p;
      p.border = reflect101;
      const double us = b.time_us([&](int rep) {
        JP_CUDA(launch_harris_tiled(p, in[rep % n].view(), out32.view(), 0, h, nullptr,
                                    LaunchContext{}, st));
      });
      JP_CUDA(
          launch_harris_tiled(p, in[0].view(), out32.view(), 0, h, nullptr, LaunchContext{}, st));
      JP_CUDA(cudaStreamSynchronize(st));
      const std::string note =
          check_twin(hv, out32.view(), [&](const ImageView& a, const ImageView& d, int y0, int y1) {
            harris_ref(p, a, d, y0, y1);
          });
      b.add({"harris3/3 tiles", "jetpipe-tiles", s.name(), "uniform", us, 5 * px, note});
    }
  }
}

}  // namespace

void bench_filters(Bench& b) {
  for (const Size& s : b.sizes()) bench_size(b, s);
}

}  // namespace jetpipe::bench
