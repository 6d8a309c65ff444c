// SPDX-License-Identifier: MIT
#include "tools/bench/bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/cuda_check.h"
#include "core/error.h"
#include "pipeline/io/image_io.h"
#include "tools/bench/blocking.h"

namespace jetpipe::bench {

const char* to_string(Data d) {
  switch (d) {
    case Data::kUniform: return "uniform";
    case Data::kSkewed: return "skewed";
    case Data::kPhoto: return "photo";
  }
  return "?";
}

Bench::Bench(int reps, std::string filter, std::vector<Size> sizes)
    : reps_(reps), filter_(std::move(filter)), sizes_(std::move(sizes)) {
  JP_CUDA(cudaGetDeviceProperties(&props_, 0));
  JP_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  JP_CUDA(cudaEventCreate(&start_));
  JP_CUDA(cudaEventCreate(&stop_));
  JP_CUDA(
      cudaHostAlloc(reinterpret_cast<void**>(&release_), 2 * sizeof(int), cudaHostAllocMapped));
  release_[0] = release_[1] = 0;
  launch_sms_ = props_.multiProcessorCount;
  copy_gbps_ = measure_copy_bandwidth();
  std::printf("device: %s, %d SMs, L2 %d MiB, copy bandwidth (read + write, 1 GiB D2D) %.0f GB/s\n",
              props_.name, props_.multiProcessorCount, props_.l2CacheSize >> 20, copy_gbps_);
}

Bench::~Bench() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaFreeHost(release_);
  cudaStreamDestroy(stream_);
}

void Bench::set_launch_sms(int sms, std::string note) {
  launch_sms_ = sms;
  note_ = std::move(note);
}

bool Bench::wants(const std::string& kernel) const {
  if (std::find(groups_.begin(), groups_.end(), kernel) == groups_.end()) groups_.push_back(kernel);
  const tools::FilterMatch m = tools::match_filter(filter_, kernel);
  if (m.run) match_ = m;  // rows come from the last group that runs (some ask several up front)
  return m.run;
}

double Bench::time_us(const std::function<void(int)>& launch) { return time_impl(launch, false); }

double Bench::time_gpu_us(const std::function<void(int)>& launch) {
  return time_impl(launch, true);
}

double Bench::time_impl(const std::function<void(int)>& launch, bool blocked) {
  const int warmup = 3;
  for (int i = 0; i < warmup; ++i) launch(i);
  JP_CUDA(cudaGetLastError());
  JP_CUDA(cudaStreamSynchronize(stream_));
  int* dev_release = nullptr;
  JP_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_release), release_, 0));
  volatile int* release = release_;
  std::vector<double> t;
  for (int i = 0; i < reps_; ++i) {
    if (blocked) {
      release[0] = 0;
      release[1] = 0;
      JP_CUDA(launch_stream_blocker(dev_release, dev_release + 1, stream_));
    }
    JP_CUDA(cudaEventRecord(start_, stream_));
    launch(warmup + i);
    JP_CUDA(cudaGetLastError());
    JP_CUDA(cudaEventRecord(stop_, stream_));
    if (blocked) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      release[0] = 1;
    }
    JP_CUDA(cudaEventSynchronize(stop_));
    if (blocked && release[1] != 0) {
      throw Error("jetpipe-bench: the blocking kernel was not released within a second");
    }
    float ms = 0;
    JP_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    t.push_back(ms * 1000.0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double Bench::time_host_us(const std::function<void()>& fn, int reps) {
  if (reps <= 0) reps = std::max(3, reps_ / 4);
  fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double Bench::measure_copy_bandwidth() {
  const std::size_t bytes = std::size_t(1) << 30;
  DeviceBuffer a(bytes), b(bytes);
  JP_CUDA(cudaMemsetAsync(a.get(), 1, bytes, stream_));
  const double us = time_us([&](int) {
    JP_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream_));
  });
  return 2.0 * static_cast<double>(bytes) / (us * 1e3);
}

HostImage Bench::host_input(const Size& s, PixelFormat f, Data data) {
  HostImage img(s.width, s.height, f);
  const ImageView v = img.view();
  std::mt19937 rng(12345);
  HostImage photo;
  if (data == Data::kPhoto) {
    for (const char* p : {"/usr/share/doc/opencv-doc/examples/data/baboon.jpg",
                          JETPIPE_SOURCE_DIR "/tests/regression/frames/vtest_0000.ppm"}) {
      try {
        photo = read_image(p);
        break;
      } catch (const std::exception&) {
      }
    }
  }
  for (int y = 0; y < s.height; ++y) {
    std::uint8_t* row = v.row<std::uint8_t>(y);
    for (std::size_t i = 0; i < v.row_bytes(); ++i) {
      std::uint8_t value;
      if (data == Data::kUniform) {
        value = static_cast<std::uint8_t>(rng() >> 24);
      } else if (data == Data::kSkewed) {
        const std::uint32_t r = rng();
        value = (r % 10 != 0) ? 17 : static_cast<std::uint8_t>(r >> 24);
      } else if (!photo.empty()) {
        const ImageView p = photo.view();
        const int px = static_cast<int>(i / bytes_per_pixel(f)) % p.width, py = y % p.height;
        value = p.row<std::uint8_t>(py)[px * channels(p.format) + (i % channels(p.format)) %
                                                                        channels(p.format)];
      } else {
        value = static_cast<std::uint8_t>((i * 7 + static_cast<std::size_t>(y) * 3) / 5);
      }
      row[i] = value;
    }
  }
  return img;
}

std::vector<DeviceImage> Bench::inputs(const Size& s, PixelFormat f, Data data, std::size_t pitch) {
  const HostImage h = host_input(s, f, data);
  const double bytes = static_cast<double>(h.view().row_bytes()) * s.height;
  const int copies =
      std::max(1, std::min(16, static_cast<int>(3.0 * props_.l2CacheSize / bytes) + 1));
  std::vector<DeviceImage> out;
  for (int i = 0; i < copies; ++i) {
    out.emplace_back(s.width, s.height, f, pitch);
    const ImageView& d = out.back().view();
    JP_CUDA(cudaMemcpy2D(d.data, d.pitch, h.view().data, h.view().pitch, h.view().row_bytes(),
                         static_cast<std::size_t>(s.height), cudaMemcpyHostToDevice));
  }
  return out;
}

#if JETPIPE_HAVE_NPP
NppStreamContext npp_context(const Bench& b) {
  NppStreamContext c{};
  const cudaDeviceProp& p = b.props();
  c.hStream = b.stream();
  JP_CUDA(cudaGetDevice(&c.nCudaDeviceId));
  c.nMultiProcessorCount = b.launch_sms();
  c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
  c.nSharedMemPerBlock = p.sharedMemPerBlock;
  c.nCudaDevAttrComputeCapabilityMajor = p.major;
  c.nCudaDevAttrComputeCapabilityMinor = p.minor;
  JP_CUDA(cudaStreamGetFlags(b.stream(), &c.nStreamFlags));
  return c;
}
#endif

void Bench::add(Row row) {
  if (!tools::keep_row(filter_, match_, row.kernel)) return;
  const double gbps = row.bytes / (row.us * 1e3);
  std::printf("%-22s %-14s %-12s %-8s %10.1f us %8.1f GB/s %6.1f%%  %s\n", row.kernel.c_str(),
              row.impl.c_str(), row.size.c_str(), row.data.c_str(), row.us, gbps,
              100.0 * gbps / copy_gbps_, row.note.c_str());
  std::fflush(stdout);
  rows_.push_back(std::move(row));
}

void Bench::print_table() const {
  std::printf("\n%-22s %-14s %-12s %-8s %13s %13s %7s\n", "kernel", "impl", "size", "data",
              "median", "throughput", "% copy");
  for (const auto& r : rows_) {
    const double gbps = r.bytes / (r.us * 1e3);
    std::printf("%-22s %-14s %-12s %-8s %10.1f us %8.1f GB/s %6.1f%%\n", r.kernel.c_str(),
                r.impl.c_str(), r.size.c_str(), r.data.c_str(), r.us, gbps,
                100.0 * gbps / copy_gbps_);
  }
  if (!note_.empty()) std::printf("\n%s\n", note_.c_str());
}

void Bench::write_json(const std::string& path) const {
  nlohmann::ordered_json j;
  j["device"] = props_.name;
  j["sms"] = launch_sms_;
  j["device_sms"] = props_.multiProcessorCount;
  if (!note_.empty()) j["note"] = note_;
  j["copy_gbps"] = copy_gbps_;
  j["reps"] = reps_;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : rows_) {
    const double gbps = r.bytes / (r.us * 1e3);
    rows.push_back({{"kernel", r.kernel}, {"impl", r.impl}, {"size", r.size}, {"data", r.data},
                    {"us", r.us}, {"bytes", r.bytes}, {"gbps", gbps},
                    {"pct_copy", 100.0 * gbps / copy_gbps_}, {"note", r.note}});
  }
  j["rows"] = rows;
  std::ofstream(path) << j.dump(2) << '\n';
}

}  // namespace jetpipe::bench
