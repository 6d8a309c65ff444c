// SPDX-License-Identifier: MIT
// Experiment (decision 045), not kept: gaussian 5x5 replicate at 16384^2 and 1080p, event-timed,
// rotating inputs, % of a D2D copy in the same process; the output checked against gaussian_ref
// on bands of rows. Built against one tree: nvcc -I TREE ... (tools/gpu/gauss-mini.sh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/gaussian.h"

using namespace jetpipe;

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Every border (constant 0 and 77 too), odd sizes, rows a warp 1 / 4 / 37 / the policy's, the
// input at a 16-byte and a 1-byte column offset (the fast kernel and the tile engine), whole
// images against gaussian_ref. Returns the number of mismatching cases.
static int check_all(const char* tag, cudaStream_t st) {
  const Border borders[] = {{BorderMode::kConstant, 0},   {BorderMode::kConstant, 77},
                            {BorderMode::kReplicate, 0},  {BorderMode::kReflect, 0},
                            {BorderMode::kReflect101, 0}, {BorderMode::kWrap, 0}};
  const int sizes[][2] = {{1200, 131}, {16383, 40}, {600, 17}, {513, 16}, {1920, 1080}};
  std::mt19937 rng(std::random_device{}());
  int cases = 0, bad = 0;
  for (const auto& sz : sizes) {
    const int w = sz[0], h = sz[1];
    for (int off : {0, 16, 1}) {
      const int pw = w + off + 32;
      std::vector<std::uint8_t> host(size_t(pw) * h);
      for (auto& v : host) v = static_cast<std::uint8_t>(rng());
      void* d;
      size_t pitch;
      CK(cudaMallocPitch(&d, &pitch, pw, h));
      CK(cudaMemcpy2D(d, pitch, host.data(), pw, pw, h, cudaMemcpyHostToDevice));
      void* o;
      size_t opitch;
      CK(cudaMallocPitch(&o, &opitch, w, h));
      ImageView iv{};
      iv.data = static_cast<std::uint8_t*>(d) + off, iv.width = w, iv.height = h;
      iv.pitch = pitch, iv.format = PixelFormat::kGray8;
      ImageView ov = iv;
      ov.data = static_cast<std::uint8_t*>(o), ov.pitch = opitch;
      ImageView hs = iv;
      hs.data = host.data() + off, hs.pitch = pw;
      std::vector<std::uint8_t> want(size_t(w) * h), got(size_t(w) * h);
      ImageView hd = hs;
      hd.data = want.data(), hd.pitch = w;
      for (const Border& b : borders) {
        const GaussianParams p = resolve_gaussian(5, 0, b);
        gaussian_ref(p, hs, hd, 0, h);
        for (int rows : {0, 1, 4, 37}) {
          FilterLaunchOptions lo;
          lo.rows_per_warp = rows;
          CK(cudaMemsetAsync(o, 0xa5, opitch * h, st));
          const int mid = h / 3;  // two uneven row strips
          CK(launch_gaussian(p, FilterSource(iv), ov, 0, mid, LaunchContext{}, st,
                             FilterPath::kTiled, lo));
          CK(launch_gaussian(p, FilterSource(iv), ov, mid, h, LaunchContext{}, st,
                             FilterPath::kTiled, lo));
          CK(cudaStreamSynchronize(st));
          CK(cudaMemcpy2D(got.data(), w, o, opitch, w, h, cudaMemcpyDeviceToHost));
          ++cases;
          if (got != want) {
            ++bad;
            std::printf("%s MISMATCH %dx%d off %d border %d/%g rows %d\n", tag, w, h, off,
                        static_cast<int>(b.mode), b.value, rows);
          }
        }
      }
      CK(cudaFree(d));
      CK(cudaFree(o));
    }
  }
  std::printf("%s check: %d cases, %d mismatching\n", tag, cases, bad);
  return bad;
}

int main(int argc, char** argv) {
  const char* tag = argc > 1 ? argv[1] : "?";
  const int reps = 25, n_in = 4;
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  // Copy bandwidth: 1 GiB D2D, read + write.
  {
    const size_t n = size_t(1) << 30;
    void *p, *q;
    CK(cudaMalloc(&p, n));
    CK(cudaMalloc(&q, n));
    CK(cudaMemsetAsync(p, 1, n, st));
    std::vector<float> t;
    for (int i = 0; i < 10; ++i) {
      CK(cudaEventRecord(a, st));
      CK(cudaMemcpyAsync(q, p, n, cudaMemcpyDeviceToDevice, st));
      CK(cudaEventRecord(b, st));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    const double gbps = 2.0 * n / (median(t) * 1e-3) / 1e9;
    std::printf("%s copy %.0f GB/s\n", tag, gbps);
    CK(cudaFree(p));
    CK(cudaFree(q));
    if (argc > 2 && std::strcmp(argv[2], "check") == 0) return check_all(tag, st) ? 1 : 0;
    for (int wh : {16384, 1920}) {
      const int w = wh, h = wh == 1920 ? 1080 : 16384;
      std::mt19937 rng(12345 + w);
      std::vector<std::uint8_t> host(size_t(w) * h);
      for (auto& v : host) v = static_cast<std::uint8_t>(rng());
      std::vector<void*> in(n_in);
      size_t pitch = 0;
      for (auto& d : in) {
        CK(cudaMallocPitch(&d, &pitch, w, h));
        CK(cudaMemcpy2D(d, pitch, host.data(), w, w, h, cudaMemcpyHostToDevice));
      }
      void* out;
      size_t opitch;
      CK(cudaMallocPitch(&out, &opitch, w, h));
      ImageView iv{};
      ImageView ov{};
      iv.data = static_cast<std::uint8_t*>(in[0]);
      iv.width = w, iv.height = h, iv.pitch = pitch, iv.format = PixelFormat::kGray8;
      ov = iv;
      ov.data = static_cast<std::uint8_t*>(out);
      ov.pitch = opitch;
      const GaussianParams p = resolve_gaussian(5, 0, Border{BorderMode::kReplicate, 0});
      for (int rows : {0, 8, 15, 30, 60}) {
        FilterLaunchOptions o;
        o.rows_per_warp = rows;
        std::vector<float> t;
        for (int r = -3; r < reps; ++r) {
          iv.data = static_cast<std::uint8_t*>(in[(r + 3) % n_in]);
          CK(cudaEventRecord(a, st));
          CK(launch_gaussian(p, FilterSource(iv), ov, 0, h, LaunchContext{}, st, FilterPath::kTiled,
                             o));
          CK(cudaEventRecord(b, st));
          CK(cudaEventSynchronize(b));
          float ms;
          CK(cudaEventElapsedTime(&ms, a, b));
          if (r >= 0) t.push_back(ms);
        }
        // Check: input 0 against the twin on the first, middle and last 64 rows.
        iv.data = static_cast<std::uint8_t*>(in[0]);
        CK(launch_gaussian(p, FilterSource(iv), ov, 0, h, LaunchContext{}, st, FilterPath::kTiled,
                           o));
        CK(cudaStreamSynchronize(st));
        std::vector<std::uint8_t> got(size_t(w) * h), want(size_t(w) * h);
        CK(cudaMemcpy2D(got.data(), w, out, opitch, w, h, cudaMemcpyDeviceToHost));
        ImageView hs{};
        hs.data = host.data(), hs.width = w, hs.height = h, hs.pitch = w;
        hs.format = PixelFormat::kGray8;
        ImageView hd = hs;
        hd.data = want.data();
        long bad = 0;
        for (int y0 : {0, h / 2, h - 64}) {
          gaussian_ref(p, hs, hd, y0, y0 + 64);
          bad += std::memcmp(got.data() + size_t(y0) * w, want.data() + size_t(y0) * w,
                             size_t(64) * w) != 0;
        }
        const double us = median(t) * 1e3;
        std::printf("%s gaussian5x5 %dx%d rows %2d %8.1f us %6.1f%% copy %s\n", tag, w, h, rows, us,
                    100.0 * 2.0 * w * h / (us * 1e-6) / 1e9 / gbps, bad ? "MISMATCH" : "ok");
      }
      for (auto& d : in) CK(cudaFree(d));
      CK(cudaFree(out));
    }
  }
  return 0;
}
