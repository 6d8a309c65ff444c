// SPDX-License-Identifier: MIT
#include "tests/gpu_test_util.h"

#include <cstdlib>
#include <cstring>

namespace jetpipe::test {

std::string gpu_unavailable_reason() {
#if JETPIPE_HAVE_CUDA
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
  }
  if (n == 0) return "no CUDA device";
  return "";
#else
  return "built without CUDA";
#endif
}

bool under_sanitizer(const char* tool) {
  const char* env = std::getenv("JETPIPE_SANITIZER");
  return env != nullptr && (tool == nullptr || std::strcmp(env, tool) == 0);
}

#if JETPIPE_HAVE_CUDA
DeviceImage upload(const ImageView& host, std::size_t pad_bytes) {
  DeviceImage d(host.width, host.height, host.format, pad_bytes ? host.row_bytes() + pad_bytes : 0);
  JP_CUDA(cudaMemcpy2D(d.view().data, d.view().pitch, host.data, host.pitch, host.row_bytes(),
                       static_cast<std::size_t>(host.height), cudaMemcpyHostToDevice));
  // A copy from pageable memory may still be in flight on the legacy stream when cudaMemcpy2D
  // returns, and kernels under test run on non-blocking streams that do not wait for it.
  JP_CUDA(cudaDeviceSynchronize());
  return d;
}

HostImage download(const ImageView& device) {
  HostImage h(device.width, device.height, device.format);
  JP_CUDA(cudaMemcpy2D(h.view().data, h.view().pitch, device.data, device.pitch,
                       device.row_bytes(), static_cast<std::size_t>(device.height),
                       cudaMemcpyDeviceToHost));
  return h;
}

void poison_device(const ImageView& device) {
  JP_CUDA(cudaMemset2D(device.data, device.pitch, 0xA5, device.row_bytes(),
                       static_cast<std::size_t>(device.height)));
  // cudaMemset2D is asynchronous on the legacy stream: finish it before any non-blocking stream
  // writes the view, or the poison can land on top of the output.
  JP_CUDA(cudaDeviceSynchronize());
}
#endif

}  // namespace jetpipe::test
