// SPDX-License-Identifier: MIT
#include "stages/gpu_util.h"

#if JETPIPE_HAVE_CUDA
#include <cstring>

namespace jetpipe {

void check_stage_launch(cudaError_t err, const std::string& label, const char* what) {
  if (err == cudaSuccess) return;
  throw Error(label + ": CUDA error " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
              ") in " + what);
}

bool ResultBuffer::ensure(std::size_t bytes, ResultMemory mode) {
  if (bytes == bytes_ && mode == mode_ && device_ != nullptr) return false;
  host_ = PinnedBuffer(bytes, mode == ResultMemory::kMapped);
  std::memset(host_.get(), 0, bytes);
  if (mode == ResultMemory::kMapped) {
    dev_.reset();
    device_ = host_.device();
  } else {
    dev_ = DeviceBuffer(bytes);
    device_ = dev_.get();
    // Defined bytes: copy_back copies the whole block, also the part a frame leaves unwritten
    // (detection points past the count).
    JP_CUDA(cudaMemset(device_, 0, bytes));
    JP_CUDA(cudaDeviceSynchronize());
  }
  bytes_ = bytes;
  mode_ = mode;
  return true;
}

void ResultBuffer::copy_back(cudaStream_t stream, std::size_t bytes) const {
  if (mode_ == ResultMemory::kMapped || bytes_ == 0) return;
  JP_CUDA(cudaMemcpyAsync(host_.get(), device_, bytes ? bytes : bytes_, cudaMemcpyDeviceToHost,
                          stream));
}

const UniqueTexture& TextureCache::get(const ImageView& view, const Border& border,
                                       bool* changed) {
  for (const Entry& e : cache_) {
    if (e.view.data == view.data && e.view.width == view.width && e.view.height == view.height &&
        e.view.pitch == view.pitch && e.view.format == view.format &&
        e.border.mode == border.mode && e.border.value == border.value) {
      return e.texture;
    }
  }
  *changed = true;
  Entry e{view, border, UniqueTexture(view, border)};
  if (cache_.size() < kCapacity) {
    cache_.push_back(std::move(e));
    return cache_.back().texture;
  }
  Entry& slot = cache_[next_];
  next_ = (next_ + 1) % kCapacity;
  slot = std::move(e);
  return slot.texture;
}

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
