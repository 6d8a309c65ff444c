// SPDX-License-Identifier: MIT
// The frame pool (CUDA builds): host frame buffers in the memory the strategy needs — pinned
// (page-locked, for asynchronous copies), mapped (pinned and visible to the GPU: zero-copy) or
// managed (cudaMallocManaged, attached to the host until a frame's stream takes it). Sources get
// the pool's allocator, so they decode straight into these buffers; a buffer goes back to the pool
// when the last HostImage over it is dropped (sinks may hold records' images as long as they like).
// Buffers are reused by size, allocated on demand and freed with the pool's last image. Rows are
// padded to kPitchAlign bytes (texture and vector-load alignment). Thread-safe.
#pragma once

#if JETPIPE_HAVE_CUDA
#include <cstddef>
#include <memory>

#include "core/image.h"

namespace jetpipe {

enum class PoolMemory { kPinned, kMapped, kManaged };

class FramePool {
 public:
  static constexpr std::size_t kPitchAlign = 128;

  explicit FramePool(PoolMemory memory);
  PoolMemory memory() const;

  HostImage allocate(int width, int height, PixelFormat format);
  // allocate() as an ImageAllocator for sources; it keeps the pool's buffers alive on its own.
  ImageAllocator allocator() const;

  // The view the GPU reads for an image from this pool (mapped: the device pointer; pinned and
  // managed: the same address). False when `image` is not from this pool.
  bool device_view(const ImageView& image, ImageView* device) const;

  std::size_t buffers() const;      // allocated so far (in use or free)
  std::size_t bytes() const;        // their total size
  std::size_t allocations() const;  // CUDA allocations made (a steady state makes none)

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
