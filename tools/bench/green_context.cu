// SPDX-License-Identifier: MIT
#include <cuda.h>

#include <bitset>

#include "core/cuda_check.h"
#include "core/cuda_memory.h"
#include "tools/bench/green_context.h"
#include "tools/bench/sms_option.h"

namespace jetpipe::bench {

#if CUDA_VERSION >= 12040

namespace {

std::string describe(CUresult r, const char* call) {
  const char* name = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown error";
  return std::string(call) + " failed: " + name;
}

}  // namespace

std::unique_ptr<GreenContext> GreenContext::create(int sms, std::string* why, bool* bad_request) {
  *bad_request = false;
  const auto fail = [why](std::string reason) {
    *why = std::move(reason);
    return std::unique_ptr<GreenContext>();
  };
  CUresult r = cuInit(0);
  if (r != CUDA_SUCCESS) return fail(describe(r, "cuInit"));
  int driver = 0;
  cuDriverGetVersion(&driver);
  if (driver < 12040) {  // cuGreenCtxCreate and the resource calls are missing from this libcuda
    return fail("the driver supports CUDA " + std::to_string(driver / 1000) + "." +
                std::to_string(driver % 1000 / 10));
  }
  CUdevice dev = 0;
  if ((r = cuDeviceGet(&dev, 0)) != CUDA_SUCCESS) return fail(describe(r, "cuDeviceGet"));
  CUdevResource all{};
  if ((r = cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM)) != CUDA_SUCCESS) {
    return fail(describe(r, "cuDeviceGetDevResource"));
  }
  const std::string bad = tools::check_sms_request(sms, static_cast<int>(all.sm.smCount));
  if (!bad.empty()) {
    *bad_request = true;
    return fail(bad);
  }
  // One group of at least `sms` SMs; the rest of the device stays outside the context.
  CUdevResource part{}, rest{};
  unsigned groups = 1;
  r = cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, static_cast<unsigned>(sms));
  if (r != CUDA_SUCCESS) return fail(describe(r, "cuDevSmResourceSplitByCount"));
  if (groups < 1) return fail("cuDevSmResourceSplitByCount made no group");
  CUdevResourceDesc desc = nullptr;
  if ((r = cuDevResourceGenerateDesc(&desc, &part, 1)) != CUDA_SUCCESS) {
    return fail(describe(r, "cuDevResourceGenerateDesc"));
  }
  CUgreenCtx green = nullptr;
  if ((r = cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)) != CUDA_SUCCESS) {
    return fail(describe(r, "cuGreenCtxCreate"));
  }
  std::unique_ptr<GreenContext> g(new GreenContext);
  g->green_ = green;
  g->device_sms_ = static_cast<int>(all.sm.smCount);
  // The runtime API takes the thread's current context: runtime streams, allocations and launches
  // of this thread go to the green context's SMs from here on.
  CUcontext ctx = nullptr;
  if ((r = cuCtxFromGreenCtx(&ctx, green)) != CUDA_SUCCESS) {
    return fail(describe(r, "cuCtxFromGreenCtx"));
  }
  if ((r = cuCtxSetCurrent(ctx)) != CUDA_SUCCESS) {
    return fail(describe(r, "cuCtxSetCurrent"));
  }
  // The SM count of the context now current, as the driver reports it (not the split's request).
  CUdevResource got{};
  if ((r = cuCtxGetDevResource(ctx, &got, CU_DEV_RESOURCE_TYPE_SM)) != CUDA_SUCCESS) {
    return fail(describe(r, "cuCtxGetDevResource"));
  }
  g->sms_ = static_cast<int>(got.sm.smCount);
  return g;
}

GreenContext::~GreenContext() {
  if (green_ == nullptr) return;
  cuCtxSetCurrent(nullptr);
  cuGreenCtxDestroy(static_cast<CUgreenCtx>(green_));
}

#else  // CUDA_VERSION < 12040: no green contexts in this toolkit

std::unique_ptr<GreenContext> GreenContext::create(int, std::string* why, bool* bad_request) {
  *bad_request = false;
  *why = "built with CUDA " + std::to_string(CUDA_VERSION / 1000) + "." +
         std::to_string(CUDA_VERSION % 1000 / 10);
  return nullptr;
}

GreenContext::~GreenContext() = default;

#endif

namespace {

constexpr int kCensusWords = 32;  // up to 1024 SM ids

// Each block records its SM and stays ~20 µs, so a grid of many waves spreads over every SM the
// context lets it use.
__global__ void sm_census_kernel(unsigned* bits) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (threadIdx.x == 0) atomicOr(&bits[(smid / 32) % kCensusWords], 1u << (smid % 32));
  const long long t0 = clock64();
  while (clock64() - t0 < 20000) {
  }
}

}  // namespace

int count_sms_used(cudaStream_t stream) {
  DeviceBuffer bits(kCensusWords * sizeof(unsigned));
  JP_CUDA(cudaMemsetAsync(bits.get(), 0, kCensusWords * sizeof(unsigned), stream));
  sm_census_kernel<<<8192, 64, 0, stream>>>(static_cast<unsigned*>(bits.get()));
  JP_CUDA(cudaGetLastError());
  unsigned host[kCensusWords];
  JP_CUDA(cudaMemcpyAsync(host, bits.get(), sizeof host, cudaMemcpyDeviceToHost, stream));
  JP_CUDA(cudaStreamSynchronize(stream));
  int n = 0;
  for (unsigned w : host) n += static_cast<int>(std::bitset<32>(w).count());
  return n;
}

}  // namespace jetpipe::bench
