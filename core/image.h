// SPDX-License-Identifier: MIT
// Image views and owning host images. Every view has a pitch (bytes between row starts); code that
// walks an image goes through row(y), never through y * width.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/hd.h"

namespace jetpipe {

enum class PixelFormat : std::uint8_t { kGray8, kBgr8, kRgb8, kS16, kF32 };

JP_HD int channels(PixelFormat f) { return (f == PixelFormat::kBgr8 || f == PixelFormat::kRgb8) ? 3 : 1; }
JP_HD int bytes_per_pixel(PixelFormat f) {
  switch (f) {
    case PixelFormat::kBgr8:
    case PixelFormat::kRgb8: return 3;
    case PixelFormat::kS16: return 2;
    case PixelFormat::kF32: return 4;
    default: return 1;
  }
}
const char* to_string(PixelFormat f);

// A non-owning view of pixels in host, device, mapped or managed memory.
struct ImageView {
  std::uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  std::size_t pitch = 0;  // bytes
  PixelFormat format = PixelFormat::kGray8;

  template <class T>
  JP_HD T* row(int y) const {
    return reinterpret_cast<T*>(data + static_cast<std::size_t>(y) * pitch);
  }
  template <class T>
  JP_HD T& at(int x, int y) const {
    return row<T>(y)[x];
  }
  JP_HD bool empty() const { return data == nullptr || width <= 0 || height <= 0; }
  JP_HD std::size_t row_bytes() const {
    return static_cast<std::size_t>(width) * static_cast<std::size_t>(bytes_per_pixel(format));
  }
  // A view of the rectangle [x, x + w) × [y, y + h) inside this one (no bounds check).
  JP_HD ImageView roi(int x, int y, int w, int h) const {
    ImageView v = *this;
    v.data = data + static_cast<std::size_t>(y) * pitch +
             static_cast<std::size_t>(x) * static_cast<std::size_t>(bytes_per_pixel(format));
    v.width = w;
    v.height = h;
    return v;
  }
};

// An owning image in ordinary host memory. Rows may be padded (pitch ≥ row bytes).
class HostImage {
 public:
  HostImage() = default;
  HostImage(int width, int height, PixelFormat format, std::size_t pitch = 0);
  // An image over memory someone else owns (a frame pool's pinned, mapped or managed buffer):
  // `storage` keeps it alive (its deleter gives the buffer back), `view` describes the pixels.
  HostImage(std::shared_ptr<std::uint8_t[]> storage, const ImageView& view)
      : storage_(std::move(storage)), view_(view) {}

  ImageView view() const { return view_; }
  int width() const { return view_.width; }
  int height() const { return view_.height; }
  PixelFormat format() const { return view_.format; }
  bool empty() const { return view_.empty(); }

 private:
  std::shared_ptr<std::uint8_t[]> storage_;
  ImageView view_;
};

// Where sources put the frames they produce: the executor's frame pool (pinned, mapped or managed
// buffers the GPU reads without a staging copy) or, when empty, ordinary host memory. Returns an
// image of exactly this shape; its pitch may be padded.
using ImageAllocator = std::function<HostImage(int width, int height, PixelFormat format)>;
inline HostImage allocate_image(const ImageAllocator& alloc, int width, int height,
                                PixelFormat format) {
  return alloc ? alloc(width, height, format) : HostImage(width, height, format);
}

// Copies rows of equal size between two views of the same shape and format (host memory).
void copy_image(const ImageView& src, const ImageView& dst);

}  // namespace jetpipe
