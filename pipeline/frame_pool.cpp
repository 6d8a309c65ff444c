// SPDX-License-Identifier: MIT
#include "pipeline/frame_pool.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <vector>

#include "core/cuda_check.h"

namespace jetpipe {

struct FramePool::State : std::enable_shared_from_this<FramePool::State> {
  struct Buffer {
    std::uint8_t* host = nullptr;
    std::uint8_t* device = nullptr;
    std::size_t bytes = 0;
  };

  explicit State(PoolMemory m) : memory(m) {}
  ~State() {
    // Only free buffers remain: every image holds the state alive.
    for (auto& [bytes, list] : free) {
      for (const Buffer& b : list) release_memory(b);
    }
  }

  void release_memory(const Buffer& b) const {
    if (memory == PoolMemory::kManaged) {
      cudaFree(b.host);
    } else {
      cudaFreeHost(b.host);
    }
  }

  Buffer take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = free.find(bytes);
      if (it != free.end() && !it->second.empty()) {
        Buffer b = it->second.back();
        it->second.pop_back();
        return b;
      }
    }
    Buffer b;
    b.bytes = bytes;
    void* p = nullptr;
    switch (memory) {
      case PoolMemory::kPinned:
        JP_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
        b.host = b.device = static_cast<std::uint8_t*>(p);
        break;
      case PoolMemory::kMapped: {
        JP_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocMapped));
        void* d = nullptr;
        JP_CUDA(cudaHostGetDevicePointer(&d, p, 0));
        b.host = static_cast<std::uint8_t*>(p);
        b.device = static_cast<std::uint8_t*>(d);
        break;
      }
      case PoolMemory::kManaged:
        // Attached to the host: the CPU may write it while kernels run on other streams (Jetson
        // without concurrent managed access); a frame's stream takes it with an attach.
        JP_CUDA(cudaMallocManaged(&p, bytes, cudaMemAttachHost));
        b.host = b.device = static_cast<std::uint8_t*>(p);
        break;
    }
    std::lock_guard<std::mutex> lock(mutex);
    all[b.host] = b;
    ++allocations;
    total_bytes += bytes;
    return b;
  }

  void give_back(std::uint8_t* host) {
    std::lock_guard<std::mutex> lock(mutex);
    const Buffer& b = all.at(host);
    free[b.bytes].push_back(b);
  }

  HostImage allocate(int width, int height, PixelFormat format) {
    if (width <= 0 || height <= 0) {
      throw Error("image size must be positive, got " + std::to_string(width) + "x" +
                  std::to_string(height));
    }
    const std::size_t row = min_pitch(width, format);
    const std::size_t pitch = (row + kPitchAlign - 1) / kPitchAlign * kPitchAlign;
    const Buffer b = take(image_bytes(width, height, format, pitch));
    std::shared_ptr<State> self = shared_from_this();
    std::shared_ptr<std::uint8_t[]> storage(b.host, [self](std::uint8_t* p) { self->give_back(p); });
    return HostImage(std::move(storage), make_view(b.host, width, height, format, pitch));
  }

  const PoolMemory memory;
  mutable std::mutex mutex;
  std::map<std::uint8_t*, Buffer> all;  // by host address
  std::map<std::size_t, std::vector<Buffer>> free;
  std::size_t allocations = 0, total_bytes = 0;
};

FramePool::FramePool(PoolMemory memory) : state_(std::make_shared<State>(memory)) {}

PoolMemory FramePool::memory() const { return state_->memory; }

HostImage FramePool::allocate(int width, int height, PixelFormat format) {
  return state_->allocate(width, height, format);
}

ImageAllocator FramePool::allocator() const {
  std::shared_ptr<State> s = state_;
  return [s](int w, int h, PixelFormat f) { return s->allocate(w, h, f); };
}

bool FramePool::device_view(const ImageView& image, ImageView* device) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->all.upper_bound(image.data);
  if (it == state_->all.begin()) return false;
  --it;
  const State::Buffer& b = it->second;
  const std::size_t offset = static_cast<std::size_t>(image.data - b.host);
  const std::size_t need =
      image.height > 0 ? (static_cast<std::size_t>(image.height) - 1) * image.pitch +
                             image.row_bytes()
                       : 0;
  if (offset + need > b.bytes) return false;
  *device = image;
  device->data = b.device + offset;
  if (image.uv != nullptr) {  // NV12's chroma plane: in the same buffer (allocate() puts it there)
    if (image.uv < b.host) return false;
    const std::size_t uv_offset = static_cast<std::size_t>(image.uv - b.host);
    const std::size_t uv_need =
        (static_cast<std::size_t>(chroma_rows(image.height)) - 1) * image.uv_pitch +
        image.chroma_row_bytes();
    if (uv_offset + uv_need > b.bytes) return false;
    device->uv = b.device + uv_offset;
  }
  return true;
}

std::size_t FramePool::buffers() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->all.size();
}
std::size_t FramePool::bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->total_bytes;
}
std::size_t FramePool::allocations() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->allocations;
}

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
