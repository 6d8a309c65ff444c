// SPDX-License-Identifier: MIT
// Move-only owners of CUDA memory (CUDA builds only): device buffers, pitched device images, pinned
// and mapped host buffers; and of CUDA streams and events. Allocation happens when a pipeline is
// built, never per frame.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "core/cuda_check.h"
#include "core/image.h"

namespace jetpipe {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) JP_CUDA(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      std::swap(ptr_, o.ptr_);
      std::swap(bytes_, o.bytes_);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void reset() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A pitched device image (cudaMallocPitch: rows aligned for textures and wide loads), or with an
// explicit pitch in bytes (tests use odd pitches).
class DeviceImage {
 public:
  DeviceImage() = default;
  DeviceImage(int width, int height, PixelFormat format, std::size_t pitch = 0) {
    const std::size_t row = static_cast<std::size_t>(width) * bytes_per_pixel(format);
    void* p = nullptr;
    if (pitch == 0) {
      JP_CUDA(cudaMallocPitch(&p, &pitch, row, static_cast<std::size_t>(height)));
      owned_ = p;
    } else {
      JP_CUDA(cudaMalloc(&p, pitch * static_cast<std::size_t>(height)));
      owned_ = p;
    }
    view_ = ImageView{static_cast<std::uint8_t*>(p), width, height, pitch, format};
  }
  ~DeviceImage() {
    if (owned_) cudaFree(owned_);
  }
  DeviceImage(DeviceImage&& o) noexcept { *this = std::move(o); }
  DeviceImage& operator=(DeviceImage&& o) noexcept {
    if (this != &o) {
      if (owned_) cudaFree(owned_);
      owned_ = std::exchange(o.owned_, nullptr);
      view_ = std::exchange(o.view_, ImageView{});
    }
    return *this;
  }
  DeviceImage(const DeviceImage&) = delete;
  DeviceImage& operator=(const DeviceImage&) = delete;

  const ImageView& view() const { return view_; }

 private:
  void* owned_ = nullptr;
  ImageView view_;
};

// A non-blocking stream (never ordered against the legacy default stream).
class CudaStream {
 public:
  CudaStream() { JP_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (s_) cudaStreamDestroy(s_);
  }
  CudaStream(CudaStream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  CudaStream& operator=(CudaStream&&) = delete;
  CudaStream(const CudaStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// An event; with `timing`, one that records time (cudaEventElapsedTime), else a lighter one for
// ordering only.
class CudaEvent {
 public:
  explicit CudaEvent(bool timing) {
    JP_CUDA(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~CudaEvent() {
    if (e_) cudaEventDestroy(e_);
  }
  CudaEvent(CudaEvent&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Pinned (page-locked) host memory; with `mapped`, also visible to the device (zero-copy).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::size_t bytes, bool mapped) : bytes_(bytes) {
    if (bytes) JP_CUDA(cudaHostAlloc(&ptr_, bytes, mapped ? cudaHostAllocMapped : cudaHostAllocDefault));
  }
  ~PinnedBuffer() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept { *this = std::move(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFreeHost(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  template <class T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  // The device pointer of a mapped buffer.
  template <class T = void>
  T* device() const {
    void* d = nullptr;
    JP_CUDA(cudaHostGetDevicePointer(&d, ptr_, 0));
    return static_cast<T*>(d);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Copies between host and device views of one shape (cudaMemcpy2DAsync; the caller synchronizes).
inline void copy_image_async(const ImageView& src, const ImageView& dst, cudaStream_t stream) {
  JP_CUDA(cudaMemcpy2DAsync(dst.data, dst.pitch, src.data, src.pitch, src.row_bytes(),
                            static_cast<std::size_t>(src.height), cudaMemcpyDefault, stream));
}

}  // namespace jetpipe
