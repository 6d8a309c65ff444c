// SPDX-License-Identifier: MIT
#include "pipeline/device_frame.h"

#include <cstdio>
#include <string>

#include "core/error.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda_check.h"
#endif

namespace jetpipe {

namespace {

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

void check_view(const ImageView& v) {
  const bool frame_format =
      v.format == PixelFormat::kGray8 || v.format == PixelFormat::kNv12 || is_colour(v.format);
  if (!frame_format) {
    throw input_error(std::string("device frame: format ") + to_string(v.format) +
                      " is not a frame format (gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8, nv12)");
  }
  if (v.data == nullptr || v.width <= 0 || v.height <= 0) {
    throw input_error("device frame: no pixels (data " + hex(v.data) + ", " +
                      std::to_string(v.width) + "x" + std::to_string(v.height) + ")");
  }
  if (v.pitch < min_pitch(v.width, v.format)) {
    throw input_error("device frame: pitch " + std::to_string(v.pitch) + " is less than a row (" +
                      std::to_string(min_pitch(v.width, v.format)) + " bytes)");
  }
  if (v.format == PixelFormat::kNv12 &&
      (v.uv == nullptr || v.uv_pitch < min_pitch(v.width, v.format))) {
    throw input_error("device frame: nv12 needs its chroma plane (uv " + hex(v.uv) + ", uv_pitch " +
                      std::to_string(v.uv_pitch) + ")");
  }
}

}  // namespace

#if JETPIPE_HAVE_CUDA

void check_device_frame(const DeviceFrame& d) {
  check_view(d.view);
  int device = 0;
  JP_CUDA(cudaGetDevice(&device));
  for (const void* p :
       {static_cast<const void*>(d.view.data), static_cast<const void*>(d.view.uv)}) {
    if (p == nullptr) continue;
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw input_error("device frame: CUDA cannot tell what memory " + hex(p) + " is (" +
                        cudaGetErrorString(e) + ")");
    }
    if (a.type == cudaMemoryTypeUnregistered) {
      throw input_error("device frame: " + hex(p) +
                        " is pageable host memory, not device memory (give it as a host frame, or "
                        "register it with cudaHostRegister)");
    }
    if (a.type == cudaMemoryTypeDevice && a.device != device) {
      throw input_error("device frame: " + hex(p) + " is on device " + std::to_string(a.device) +
                        ", the pipeline runs on device " + std::to_string(device));
    }
    if (a.type == cudaMemoryTypeHost && a.devicePointer != p) {
      throw input_error(
          "device frame: " + hex(p) +
          " is mapped host memory; give its device pointer (cudaHostGetDevicePointer)");
    }
  }
}

HostImage download_device_frame(const DeviceFrame& d) {
  check_device_frame(d);
  const ImageView& v = d.view;
  if (d.ready_event != nullptr) {
    JP_CUDA(cudaEventSynchronize(d.ready_event));
  } else if (d.ready_stream != nullptr) {
    JP_CUDA(cudaStreamSynchronize(d.ready_stream));
  }
  HostImage out(v.width, v.height, v.format);
  const ImageView h = out.view();
  JP_CUDA(cudaMemcpy2D(h.data, h.pitch, v.data, v.pitch, v.row_bytes(),
                       static_cast<std::size_t>(v.height), cudaMemcpyDefault));
  if (v.format == PixelFormat::kNv12) {
    JP_CUDA(cudaMemcpy2D(h.uv, h.uv_pitch, v.uv, v.uv_pitch, v.chroma_row_bytes(),
                         static_cast<std::size_t>(chroma_rows(v.height)), cudaMemcpyDefault));
  }
  return out;
}

#else  // !JETPIPE_HAVE_CUDA

void check_device_frame(const DeviceFrame& d) {
  check_view(d.view);
  throw input_error("device frame: this build has no CUDA");
}

HostImage download_device_frame(const DeviceFrame& d) {
  check_device_frame(d);
  return HostImage();
}

#endif  // JETPIPE_HAVE_CUDA

}  // namespace jetpipe
