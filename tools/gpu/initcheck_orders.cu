// SPDX-License-Identifier: MIT
// Whether compute-sanitizer initcheck sees the writes the executor orders in each of its ways
// before a read: a D2D cudaMemcpy2DAsync (to_gray of a gray frame) then a kernel reading its
// destination, (0) on one stream, (1) captured in a graph, (2) in a graph across a forked stream,
// (3) across two streams with an event; (4) an H2D copy outside a graph that the graph waits for
// as an external event (the strip copies ahead of the graph); (5) an H2D copy followed by a stream
// write of a flag that a kernel polls for (copy_wait: poll). Standalone (not built by CMake):
//   nvcc -O2 -arch=sm_90 -o /tmp/initcheck_orders tools/gpu/initcheck_orders.cu -lcuda
//   compute-sanitizer --tool initcheck /tmp/initcheck_orders
// H100, 2026-11-24 (commit 0ba8802): "sum 2566326, expected 2566326: equal", initcheck ERROR
// SUMMARY: 0 errors, so each of these orders alone is one initcheck sees (docs/PERFORMANCE.md).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>

namespace {

__global__ void spin(volatile unsigned* flag, unsigned want) {
  while (*flag < want) {
  }
}

__global__ void sum(const unsigned char* p, size_t pitch, int w, int h, unsigned* out) {
  unsigned s = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = threadIdx.x; x < w; x += blockDim.x) s += p[y * pitch + x];
  }
  atomicAdd(out, s);
}

bool ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::printf("%s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}
#define CK(x) \
  if (!ok((x), #x)) return 1

}  // namespace

int main() {
  const int w = 301, h = 203;  // the test frame's size where initcheck first reported
  const size_t pitch = 384, bytes = pitch * h;
  unsigned char *src, *host, *dst[6], *up[2];
  unsigned *out, *flag;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMemset(src, 7, bytes));
  for (auto& d : dst) CK(cudaMalloc(&d, bytes));
  for (auto& d : up) CK(cudaMalloc(&d, bytes));
  CK(cudaHostAlloc(&host, bytes, cudaHostAllocDefault));
  for (size_t i = 0; i < bytes; ++i) host[i] = 7;
  CK(cudaMallocManaged(&out, sizeof(unsigned)));
  *out = 0;
  CK(cudaMalloc(&flag, sizeof(unsigned)));
  CK(cudaMemset(flag, 0, sizeof(unsigned)));
  CK(cudaDeviceSynchronize());
  cudaStream_t s, s2;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t ev, ex;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&ex, cudaEventDisableTiming));
  auto copy = [&](unsigned char* to, const unsigned char* from, cudaStream_t st) {
    return cudaMemcpy2DAsync(to, pitch, from, pitch, w, h, cudaMemcpyDefault, st);
  };
  auto graph = [&](auto&& body) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    CK(body());
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    return 0;
  };

  CK(copy(dst[0], src, s));  // (0)
  sum<<<1, 128, 0, s>>>(dst[0], pitch, w, h, out);
  CK(cudaStreamSynchronize(s));
  if (graph([&] {  // (1)
        cudaError_t e = copy(dst[1], src, s);
        sum<<<1, 128, 0, s>>>(dst[1], pitch, w, h, out);
        return e != cudaSuccess ? e : cudaGetLastError();
      }) != 0) {
    return 1;
  }
  if (graph([&] {  // (2)
        cudaEventRecord(ev, s);
        cudaStreamWaitEvent(s2, ev, 0);
        cudaError_t e = copy(dst[2], src, s2);
        cudaEventRecord(ev, s2);
        cudaStreamWaitEvent(s, ev, 0);
        sum<<<1, 128, 0, s>>>(dst[2], pitch, w, h, out);
        return e != cudaSuccess ? e : cudaGetLastError();
      }) != 0) {
    return 1;
  }
  CK(copy(dst[3], src, s2));  // (3)
  CK(cudaEventRecord(ev, s2));
  CK(cudaStreamWaitEvent(s, ev, 0));
  sum<<<1, 128, 0, s>>>(dst[3], pitch, w, h, out);
  CK(cudaStreamSynchronize(s));
  CK(copy(up[0], host, s2));  // (4)
  CK(cudaEventRecord(ex, s2));
  if (graph([&] {
        cudaStreamWaitEvent(s, ex, cudaEventWaitExternal);
        cudaError_t e = copy(dst[4], up[0], s);
        sum<<<1, 128, 0, s>>>(dst[4], pitch, w, h, out);
        return e != cudaSuccess ? e : cudaGetLastError();
      }) != 0) {
    return 1;
  }
  CK(copy(up[1], host, s2));  // (5)
  if (cuStreamWriteValue32(reinterpret_cast<CUstream>(s2), reinterpret_cast<CUdeviceptr>(flag), 1,
                           0) != CUDA_SUCCESS) {
    std::printf("cuStreamWriteValue32 failed\n");
    return 1;
  }
  spin<<<1, 1, 0, s>>>(flag, 1);
  CK(copy(dst[5], up[1], s));
  sum<<<1, 128, 0, s>>>(dst[5], pitch, w, h, out);
  CK(cudaStreamSynchronize(s));
  const unsigned want = 6u * 7u * static_cast<unsigned>(w * h);
  std::printf("sum %u, expected %u: %s\n", *out, want, *out == want ? "equal" : "DIFFERENT");
  return *out == want ? 0 : 1;
}
