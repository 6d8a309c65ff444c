// SPDX-License-Identifier: MIT
// Reductions and point kernels: histogram (jetpipe's kernels beside CUB DeviceHistogram::
// HistogramEven, NPP nppiHistogramEven_8u_C1R and OpenCV calcHist on the CPU), stats (beside CUB
// DeviceReduce Sum + Min + Max), the fused histogram + stats, to_gray, threshold (fixed, and Otsu
// on the device). Each case is checked once against the CPU twin; a wrong result prints MISMATCH in
// its row. bytes = bytes read + bytes written (a histogram reads W·H bytes).
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda_check.h"
#include "kernels/histogram.h"
#include "kernels/stats.h"
#include "kernels/threshold.h"
#include "kernels/to_gray.h"
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

constexpr const char* kMismatch = "MISMATCH vs CPU twin";

HostImage to_host(const ImageView& d) {
  HostImage h(d.width, d.height, d.format);
  JP_CUDA(cudaMemcpy2D(h.view().data, h.view().pitch, d.data, d.pitch, d.row_bytes(),
                       static_cast<std::size_t>(d.height), cudaMemcpyDeviceToHost));
  return h;
}

// Contiguous copies (pitch = row bytes) of the inputs, for CUB's 1D reductions.
std::vector<DeviceImage> contiguous(const std::vector<DeviceImage>& in, cudaStream_t stream) {
  std::vector<DeviceImage> out;
  for (const DeviceImage& d : in) {
    const ImageView& v = d.view();
    out.emplace_back(v.width, v.height, v.format, v.row_bytes());
    copy_image_async(v, out.back().view(), stream);
  }
  JP_CUDA(cudaStreamSynchronize(stream));
  return out;
}

std::vector<std::uint64_t> ref_histogram(const HistogramParams& p, const ImageView& host) {
  std::vector<std::uint64_t> c(static_cast<std::size_t>(p.bins), 0);
  histogram_ref(p, host, 0, host.height, c.data());
  return c;
}

bool same_stats(const StatsAccum& a, const StatsAccum& b) {
  return a.min == b.min && a.max == b.max && a.isum == b.isum && a.isumsq == b.isumsq &&
         a.count == b.count;
}

#if JETPIPE_HAVE_NPP

// The buffer-size query's output type changed across NPP versions (int*, size_t*): deduce it.
template <class R, class A, class B, class C, class D>
C third_param(R (*)(A, B, C, D));
using NppBufferSize =
    std::remove_pointer_t<decltype(third_param(&nppiHistogramEvenGetBufferSize_8u_C1R_Ctx))>;

void npp_check(NppStatus s, const char* what) {
  if (s != NPP_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(s));
}
#endif

// ---- histogram, fused, stats on one GRAY8 input set ---------------------------------------------

void bench_gray8(Bench& b, const Size& s, Data data) {
  const bool want_hist = b.wants("histogram"), want_stats = b.wants("stats"),
             want_fused = b.wants("fused"), want_thresh = b.wants("threshold") || b.wants("otsu");
  if (!want_hist && !want_stats && !want_fused && !want_thresh) return;
  const std::vector<DeviceImage> in = b.inputs(s, PixelFormat::kGray8, data);
  const int n = static_cast<int>(in.size());
  const HostImage host = to_host(in[0].view());
  const double px = static_cast<double>(s.width) * s.height;
  cudaStream_t st = b.stream();
  const HistogramParams p256;
  const std::vector<std::uint64_t> want_bins = ref_histogram(p256, host.view());
  StatsAccum want_stats_acc;
  stats_ref(host.view(), 0, s.height, &want_stats_acc);

  DeviceBuffer ws(std::max(histogram_workspace_bytes(), stats_workspace_bytes(PixelFormat::kGray8, s.height)));
  JP_CUDA(cudaMemset(ws.get(), 0, ws.bytes()));
  DeviceBuffer bins(256 * 8), stats(sizeof(StatsAccum));
  auto bins_ok = [&](const std::vector<std::uint64_t>& want) {
    std::vector<std::uint64_t> got(want.size());
    JP_CUDA(cudaMemcpy(got.data(), bins.get(), got.size() * 8, cudaMemcpyDeviceToHost));
    return got == want;
  };
  auto stats_ok = [&] {
    StatsAccum got;
    JP_CUDA(cudaMemcpy(&got, stats.get(), sizeof got, cudaMemcpyDeviceToHost));
    return same_stats(got, want_stats_acc);
  };
  auto add = [&](const char* kernel, const char* impl, double us, double bytes, std::string note) {
    b.add(Row{kernel, impl, s.name(), to_string(data), us, bytes, std::move(note)});
  };

  if (want_hist) {
    struct V {
      const char* impl;
      HistogramLaunchOptions o;
    };
    // jetpipe: the policy (lane-striped, one table per block of 8 warps); -private: one 32 KB
    // table per warp, 7 warps (224 KB, one block per SM); -warp: one 256-bin table per warp.
    std::vector<V> variants = {{"jetpipe", {}},
                               {"jetpipe-private", {HistogramKernel::kLaneStriped, 7, 7, 0}},
                               {"jetpipe-warp", {HistogramKernel::kWarpShared, 0, 0, 0}}};
    if (px >= 64e6) {  // launch shapes of the lane-striped kernel
      variants.push_back({"jetpipe-w4t1", {HistogramKernel::kLaneStriped, 4, 1, 0}});
      variants.push_back({"jetpipe-w8t2", {HistogramKernel::kLaneStriped, 8, 2, 0}});
      variants.push_back({"jetpipe-w6t1", {HistogramKernel::kLaneStriped, 6, 1, 0}});
    }
    for (const V& v : variants) {
      JP_CUDA(cudaMemsetAsync(bins.get(), 0xA5, bins.bytes(), st));
      JP_CUDA(launch_histogram(p256, in[0].view(), bins.get<std::uint64_t>(), 0, s.height, ws.get(), st, v.o));
      JP_CUDA(cudaStreamSynchronize(st));
      const bool ok = bins_ok(want_bins);
      const double us = b.time_us([&](int rep) {
        JP_CUDA(launch_histogram(p256, in[rep % n].view(), bins.get<std::uint64_t>(), 0, s.height,
                                 ws.get(), st, v.o));
      });
      add("histogram", v.impl, us, px, ok ? "" : kMismatch);
    }
    {  // 7 bins over [10, 200): the same cost by design (values are mapped to bins once per image)
      const HistogramParams p7{7, 10, 200};
      JP_CUDA(launch_histogram(p7, in[0].view(), bins.get<std::uint64_t>(), 0, s.height, ws.get(), st));
      JP_CUDA(cudaStreamSynchronize(st));
      const bool ok = bins_ok(ref_histogram(p7, host.view()));
      const double us = b.time_us([&](int rep) {
        JP_CUDA(launch_histogram(p7, in[rep % n].view(), bins.get<std::uint64_t>(), 0, s.height,
                                 ws.get(), st));
      });
      add("histogram", "jetpipe-7bins", us, px, ok ? "" : kMismatch);
    }
    {  // CUB: 256 bins of uint8 samples, the pitched (row stride) overload
      DeviceBuffer hist(256 * sizeof(int));
      const ImageView v0 = in[0].view();
      std::size_t temp = 0;
      JP_CUDA(cub::DeviceHistogram::HistogramEven(nullptr, temp, v0.data, hist.get<int>(), 257, 0,
                                                  256, s.width, s.height, v0.pitch, st));
      DeviceBuffer t(temp);
      auto run = [&](const ImageView& v) {
        JP_CUDA(cub::DeviceHistogram::HistogramEven(t.get(), temp, v.data, hist.get<int>(), 257, 0,
                                                    256, s.width, s.height, v.pitch, st));
      };
      run(v0);
      std::vector<int> got(256);
      JP_CUDA(cudaMemcpyAsync(got.data(), hist.get(), 256 * sizeof(int), cudaMemcpyDeviceToHost, st));
      JP_CUDA(cudaStreamSynchronize(st));
      bool ok = true;
      for (int i = 0; i < 256; ++i) ok = ok && static_cast<std::uint64_t>(got[i]) == want_bins[i];
      const double us = b.time_us([&](int rep) { run(in[rep % n].view()); });
      add("histogram", "cub", us, px, ok ? "" : "cub result differs");
    }
#if JETPIPE_HAVE_NPP
    {
      const NppStreamContext ctx = npp_context(b);
      const NppiSize roi{s.width, s.height};
      NppBufferSize size = 0;
      npp_check(nppiHistogramEvenGetBufferSize_8u_C1R_Ctx(roi, 257, &size, ctx),
                "nppiHistogramEvenGetBufferSize_8u_C1R_Ctx");
      DeviceBuffer buf(static_cast<std::size_t>(size)), hist(256 * sizeof(Npp32s));
      auto run = [&](const ImageView& v) {
        npp_check(nppiHistogramEven_8u_C1R_Ctx(v.data, static_cast<int>(v.pitch), roi,
                                               hist.get<Npp32s>(), 257, 0, 256,
                                               buf.get<Npp8u>(), ctx),
                  "nppiHistogramEven_8u_C1R_Ctx");
      };
      run(in[0].view());
      std::vector<Npp32s> got(256);
      JP_CUDA(cudaMemcpyAsync(got.data(), hist.get(), 256 * sizeof(Npp32s), cudaMemcpyDeviceToHost, st));
      JP_CUDA(cudaStreamSynchronize(st));
      bool ok = true;
      for (int i = 0; i < 256; ++i) ok = ok && static_cast<std::uint64_t>(got[i]) == want_bins[i];
      const double us = b.time_us([&](int rep) { run(in[rep % n].view()); });
      add("histogram", "npp", us, px, ok ? "" : "npp result differs");
    }
#endif
#if JETPIPE_HAVE_OPENCV
    if (s.width * static_cast<double>(s.height) <= 3840.0 * 2160.0) {
      const ImageView hv = host.view();
      const cv::Mat m(hv.height, hv.width, CV_8UC1, hv.data, hv.pitch);
      const int channels[] = {0}, hist_size[] = {256};
      const float range[] = {0, 256};
      const float* ranges[] = {range};
      cv::Mat hist;
      const double us = b.time_host_us(
          [&] { cv::calcHist(&m, 1, channels, cv::Mat(), hist, 1, hist_size, ranges); });
      add("histogram", "opencv-cpu", us, px, "");
    }
#endif
  }

  if (want_fused) {
    JP_CUDA(launch_histogram_stats(p256, in[0].view(), bins.get<std::uint64_t>(),
                                   stats.get<StatsAccum>(), 0, s.height, ws.get(), st));
    JP_CUDA(cudaStreamSynchronize(st));
    const bool ok = bins_ok(want_bins) && stats_ok();
    const double us = b.time_us([&](int rep) {
      JP_CUDA(launch_histogram_stats(p256, in[rep % n].view(), bins.get<std::uint64_t>(),
                                     stats.get<StatsAccum>(), 0, s.height, ws.get(), st));
    });
    add("fused-hist+stats", "jetpipe", us, px, ok ? "" : kMismatch);
  }

  if (want_stats) {
    JP_CUDA(launch_stats(in[0].view(), stats.get<StatsAccum>(), 0, s.height, ws.get(), st));
    JP_CUDA(cudaStreamSynchronize(st));
    const bool ok = stats_ok();
    const double us = b.time_us([&](int rep) {
      JP_CUDA(launch_stats(in[rep % n].view(), stats.get<StatsAccum>(), 0, s.height, ws.get(), st));
    });
    add("stats", "jetpipe", us, px, ok ? "" : kMismatch);

    // CUB DeviceReduce Sum, Min, Max (three passes, as CUB offers them) over contiguous copies.
    const std::vector<DeviceImage> flat = contiguous(in, st);
    DeviceBuffer out(3 * sizeof(unsigned long long));
    auto* sum = out.get<unsigned long long>();
    auto* mn = reinterpret_cast<std::uint8_t*>(sum + 1);
    auto* mx = reinterpret_cast<std::uint8_t*>(sum + 2);
    const long long items = static_cast<long long>(s.width) * s.height;
    std::size_t t_sum = 0, t_min = 0, t_max = 0;
    const std::uint8_t* d0 = flat[0].view().data;
    JP_CUDA(cub::DeviceReduce::Sum(nullptr, t_sum, d0, sum, items, st));
    JP_CUDA(cub::DeviceReduce::Min(nullptr, t_min, d0, mn, items, st));
    JP_CUDA(cub::DeviceReduce::Max(nullptr, t_max, d0, mx, items, st));
    DeviceBuffer t(std::max(t_sum, std::max(t_min, t_max)));
    auto run = [&](const std::uint8_t* d) {
      JP_CUDA(cub::DeviceReduce::Sum(t.get(), t_sum, d, sum, items, st));
      JP_CUDA(cub::DeviceReduce::Min(t.get(), t_min, d, mn, items, st));
      JP_CUDA(cub::DeviceReduce::Max(t.get(), t_max, d, mx, items, st));
    };
    run(d0);
    unsigned long long got[3];
    JP_CUDA(cudaMemcpyAsync(got, out.get(), sizeof got, cudaMemcpyDeviceToHost, st));
    JP_CUDA(cudaStreamSynchronize(st));
    std::uint8_t gmn, gmx;
    std::memcpy(&gmn, &got[1], 1);
    std::memcpy(&gmx, &got[2], 1);
    const bool cub_ok = got[0] == static_cast<unsigned long long>(want_stats_acc.isum) &&
                        gmn == want_stats_acc.min && gmx == want_stats_acc.max;
    const double cus = b.time_us([&](int rep) { run(flat[rep % n].view().data); });
    add("stats", "cub-sum+min+max", cus, px, cub_ok ? "" : "cub result differs");
  }

  if (want_thresh) {
    DeviceImage out(s.width, s.height, PixelFormat::kGray8);
    HostImage want(s.width, s.height, PixelFormat::kGray8);
    auto out_ok = [&] {
      const HostImage got = to_host(out.view());
      for (int y = 0; y < s.height; ++y) {
        if (std::memcmp(got.view().row<std::uint8_t>(y), want.view().row<std::uint8_t>(y), s.width)) {
          return false;
        }
      }
      return true;
    };
    if (b.wants("threshold")) {
      threshold_ref(100, 255, host.view(), want.view(), 0, s.height);
      JP_CUDA(launch_threshold(100, 255, in[0].view(), out.view(), 0, s.height, st));
      JP_CUDA(cudaStreamSynchronize(st));
      const bool ok = out_ok();
      const double us = b.time_us([&](int rep) {
        JP_CUDA(launch_threshold(100, 255, in[rep % n].view(), out.view(), 0, s.height, st));
      });
      add("threshold", "jetpipe", us, 2 * px, ok ? "" : kMismatch);
    }
    // Otsu entirely on the device: histogram → Otsu (one block) → threshold reading the value.
    DeviceBuffer t(8);
    const double want_t = otsu_threshold(want_bins.data());
    threshold_ref(want_t, 255, host.view(), want.view(), 0, s.height);
    auto chain = [&](const ImageView& v) {
      JP_CUDA(launch_histogram(p256, v, bins.get<std::uint64_t>(), 0, s.height, ws.get(), st));
      JP_CUDA(launch_otsu_threshold(bins.get<std::uint64_t>(), t.get<double>(), st));
      JP_CUDA(launch_threshold_from(t.get<double>(), 255, v, out.view(), 0, s.height, st));
    };
    chain(in[0].view());
    double got_t = -1;
    JP_CUDA(cudaMemcpyAsync(&got_t, t.get(), 8, cudaMemcpyDeviceToHost, st));
    JP_CUDA(cudaStreamSynchronize(st));
    const bool ok = got_t == want_t && out_ok();
    const double us = b.time_us([&](int rep) { chain(in[rep % n].view()); });
    add("threshold-otsu", "jetpipe", us, 3 * px, ok ? "" : kMismatch);
    const double ous = b.time_us(
        [&](int) { JP_CUDA(launch_otsu_threshold(bins.get<std::uint64_t>(), t.get<double>(), st)); });
    add("otsu (256 levels)", "jetpipe", ous, 256 * 8, "one block: latency, not bandwidth");
    const double ogpu = b.time_gpu_us([&](int) {
      JP_CUDA(launch_otsu_threshold(bins.get<std::uint64_t>(), t.get<double>(), st));
    });
    DeviceBuffer path(sizeof(int)), trace(256 * 8);
    JP_CUDA(launch_otsu_threshold(bins.get<std::uint64_t>(), t.get<double>(), st, nullptr,
                                  path.get<int>()));
    int took = -1;
    JP_CUDA(cudaMemcpyAsync(&took, path.get(), sizeof(int), cudaMemcpyDeviceToHost, st));
    JP_CUDA(cudaStreamSynchronize(st));
    add("otsu (256 levels)", "jetpipe-gpu", ogpu, 256 * 8,
        took == 1 ? "GPU time alone (no host launch); certified path"
                  : "GPU time alone (no host launch); step-for-step path");
    // The path that near-ties take (forced by the trace): the recurrences step for step.
    const double egpu = b.time_gpu_us([&](int) {
      JP_CUDA(launch_otsu_threshold(bins.get<std::uint64_t>(), t.get<double>(), st,
                                    trace.get<double>()));
    });
    add("otsu, step for step (forced)", "jetpipe-gpu", egpu, 256 * 8, "GPU time alone");
  }
}

void bench_stats_wide(Bench& b, const Size& s, PixelFormat f) {
  const char* kernel = f == PixelFormat::kS16 ? "stats-s16" : "stats-f32";
  if (!b.wants(kernel)) return;
  const std::vector<DeviceImage> in = b.inputs(s, f, Data::kUniform);
  const int n = static_cast<int>(in.size());
  const HostImage host = to_host(in[0].view());
  StatsAccum want;
  stats_ref(host.view(), 0, s.height, &want);
  DeviceBuffer ws(stats_workspace_bytes(f, s.height)), out(sizeof(StatsAccum));
  JP_CUDA(cudaMemset(ws.get(), 0, ws.bytes()));
  cudaStream_t st = b.stream();
  JP_CUDA(launch_stats(in[0].view(), out.get<StatsAccum>(), 0, s.height, ws.get(), st));
  StatsAccum got;
  JP_CUDA(cudaMemcpyAsync(&got, out.get(), sizeof got, cudaMemcpyDeviceToHost, st));
  JP_CUDA(cudaStreamSynchronize(st));
  bool ok;
  if (f == PixelFormat::kF32) {  // bench data are random bytes: skip NaN/inf-free assumptions
    const StatsResult a = stats_finish(got, f), r = stats_finish(want, f);
    ok = got.count == want.count &&
         (a.mean == r.mean || std::abs(a.mean - r.mean) <= 1e-9 * std::abs(r.mean) ||
          std::isnan(r.mean));
  } else {
    ok = same_stats(got, want);
  }
  const double us = b.time_us([&](int rep) {
    JP_CUDA(launch_stats(in[rep % n].view(), out.get<StatsAccum>(), 0, s.height, ws.get(), st));
  });
  b.add(Row{kernel, "jetpipe", s.name(), "uniform", us,
            static_cast<double>(in[0].view().row_bytes()) * s.height, ok ? "" : kMismatch});
}

void bench_to_gray(Bench& b, const Size& s, Data data) {
  if (!b.wants("to_gray")) return;
  const std::vector<DeviceImage> in = b.inputs(s, PixelFormat::kBgr8, data);
  const int n = static_cast<int>(in.size());
  const HostImage host = to_host(in[0].view());
  HostImage want(s.width, s.height, PixelFormat::kGray8);
  to_gray_ref(host.view(), want.view(), 0, s.height);
  DeviceImage out(s.width, s.height, PixelFormat::kGray8);
  cudaStream_t st = b.stream();
  JP_CUDA(launch_to_gray(in[0].view(), out.view(), 0, s.height, st));
  JP_CUDA(cudaStreamSynchronize(st));
  const HostImage got = to_host(out.view());
  bool ok = true;
  for (int y = 0; y < s.height && ok; ++y) {
    ok = std::memcmp(got.view().row<std::uint8_t>(y), want.view().row<std::uint8_t>(y), s.width) == 0;
  }
  const double us = b.time_us([&](int rep) {
    JP_CUDA(launch_to_gray(in[rep % n].view(), out.view(), 0, s.height, st));
  });
  b.add(Row{"to_gray", "jetpipe", s.name(), to_string(data), us,
            4.0 * s.width * s.height, ok ? "" : kMismatch});
}

}  // namespace

void bench_reductions(Bench& b) {
  for (const Size& s : b.sizes()) {
    for (Data d : {Data::kUniform, Data::kSkewed, Data::kPhoto}) bench_gray8(b, s, d);
    bench_stats_wide(b, s, PixelFormat::kS16);
    bench_stats_wide(b, s, PixelFormat::kF32);
    bench_to_gray(b, s, Data::kUniform);
    bench_to_gray(b, s, Data::kPhoto);
  }
}

}  // namespace jetpipe::bench
