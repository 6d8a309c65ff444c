// SPDX-License-Identifier: MIT
// What the GPU twins of the stages share (CUDA builds only): launch checks that name the stage,
// result memory (mapped, or device + copy back) and textures kept per input view.
#pragma once

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/cuda_memory.h"
#include "kernels/texture.h"
#include "stages/stage.h"

namespace jetpipe {

// Throws jetpipe::Error "<label>: CUDA error ... in <what>" when err is not cudaSuccess.
void check_stage_launch(cudaError_t err, const std::string& label, const char* what);

// A small result the kernels write and the host reads after the frame completed: mapped host
// memory the kernels write directly, or device memory that copy_back() brings into pinned memory.
class ResultBuffer {
 public:
  // (Re)allocates when the size or the mode changed; returns true if it did.
  bool ensure(std::size_t bytes, ResultMemory mode);
  template <class T>
  T* device() const {
    return static_cast<T*>(device_);
  }
  template <class T>
  const T* host() const {
    return host_.get<const T>();
  }
  std::size_t bytes() const { return bytes_; }
  // Queues the copy of the first `bytes` (all when 0) to the host; a no-op for mapped memory.
  void copy_back(cudaStream_t stream, std::size_t bytes = 0) const;

 private:
  PinnedBuffer host_;
  DeviceBuffer dev_;
  void* device_ = nullptr;
  std::size_t bytes_ = 0;
  ResultMemory mode_ = ResultMemory::kCopy;
};

// Textures over the input views a filter has seen (the frame's buffers may rotate, e.g. a
// zero-copy ring), at most kCapacity, the oldest replaced.
class TextureCache {
 public:
  static constexpr std::size_t kCapacity = 8;
  // The texture serving `view` with `border` (possibly empty when the view does not qualify);
  // *changed is set when one was made or replaced.
  const UniqueTexture& get(const ImageView& view, const Border& border, bool* changed);

 private:
  struct Entry {
    ImageView view;
    Border border;
    UniqueTexture texture;
  };
  std::vector<Entry> cache_;
  std::size_t next_ = 0;
};

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
