// SPDX-License-Identifier: MIT
#include "tests/gpu_test_util.h"

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

#if JETPIPE_HAVE_CUDA
DeviceImage upload(const ImageView& host, std::size_t pad_bytes) {
  DeviceImage d(host.width, host.height, host.format, pad_bytes ? host.row_bytes() + pad_bytes : 0);
  JP_CUDA(cudaMemcpy2D(d.view().data, d.view().pitch, host.data, host.pitch, host.row_bytes(),
                       static_cast<std::size_t>(host.height), cudaMemcpyHostToDevice));
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
}
#endif

}  // namespace jetpipe::test
