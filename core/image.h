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

// Pixel formats. Frames come as GRAY8, BGR8 / RGB8, the decoders' own 4-byte layouts BGRx / RGBx /
// RGBA (byte 3 ignored) or NV12 (two planes: the luma plane, W x H bytes, is the gray image; the
// chroma plane, interleaved U and V at half resolution both ways, (W + 1) / 2 pairs by (H + 1) / 2
// rows, follows in ImageView::uv). S16 and F32 are stage outputs.
enum class PixelFormat : std::uint8_t {
  kGray8,
  kBgr8,
  kRgb8,
  kS16,
  kF32,
  kBgrx8,
  kRgbx8,
  kRgba8,
  kNv12,
};

// Formats that to_gray converts (3 or 4 bytes a pixel, B G R or R G B first).
JP_HD bool is_colour(PixelFormat f) {
  return f == PixelFormat::kBgr8 || f == PixelFormat::kRgb8 || f == PixelFormat::kBgrx8 ||
         f == PixelFormat::kRgbx8 || f == PixelFormat::kRgba8;
}

// The formats a frame may come in (sources, device frames, the Python module); s16 and f32 are
// stage outputs only.
inline constexpr PixelFormat kFrameFormats[] = {
    PixelFormat::kGray8, PixelFormat::kBgr8,  PixelFormat::kRgb8, PixelFormat::kBgrx8,
    PixelFormat::kRgbx8, PixelFormat::kRgba8, PixelFormat::kNv12};
// Red in byte 0 (RGB8, RGBx, RGBA); blue there otherwise.
JP_HD bool red_first(PixelFormat f) {
  return f == PixelFormat::kRgb8 || f == PixelFormat::kRgbx8 || f == PixelFormat::kRgba8;
}
JP_HD int channels(PixelFormat f) {
  return (f == PixelFormat::kBgr8 || f == PixelFormat::kRgb8) ? 3 : is_colour(f) ? 4 : 1;
}
// Bytes a pixel in the (first) plane: NV12's luma plane has one.
JP_HD int bytes_per_pixel(PixelFormat f) {
  switch (f) {
    case PixelFormat::kBgr8:
    case PixelFormat::kRgb8: return 3;
    case PixelFormat::kS16: return 2;
    case PixelFormat::kF32:
    case PixelFormat::kBgrx8:
    case PixelFormat::kRgbx8:
    case PixelFormat::kRgba8:
      return 4;
    default: return 1;
  }
}
// Rows of NV12's chroma plane for `height` luma rows.
JP_HD int chroma_rows(int height) { return (height + 1) / 2; }
const char* to_string(PixelFormat f);
// The name to_string gives (gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8, nv12, s16, f32); false when
// unknown.
bool parse_pixel_format(const std::string& name, PixelFormat* f);

// A non-owning view of pixels in host, device, mapped or managed memory.
struct ImageView {
  std::uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  std::size_t pitch = 0;  // bytes
  PixelFormat format = PixelFormat::kGray8;
  std::uint8_t* uv = nullptr;  // NV12: the chroma plane (its rows chroma_rows(height))
  std::size_t uv_pitch = 0;    // bytes; ≥ width rounded up to even

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
  // NV12: chroma row r (0 ≤ r < chroma_rows(height)), chroma_row_bytes() bytes of U, V pairs.
  JP_HD std::uint8_t* chroma_row(int r) const {
    return uv + static_cast<std::size_t>(r) * uv_pitch;
  }
  JP_HD std::size_t chroma_row_bytes() const {
    return (static_cast<std::size_t>(width) + 1) / 2 * 2;
  }
  // A view of the rectangle [x, x + w) × [y, y + h) inside this one (no bounds check; NV12: x and
  // y even, so the chroma plane's samples stay aligned with the luma's).
  JP_HD ImageView roi(int x, int y, int w, int h) const {
    ImageView v = *this;
    v.data = data + static_cast<std::size_t>(y) * pitch +
             static_cast<std::size_t>(x) * static_cast<std::size_t>(bytes_per_pixel(format));
    if (uv != nullptr) v.uv = uv + static_cast<std::size_t>(y / 2) * uv_pitch + (x / 2) * 2;
    v.width = w;
    v.height = h;
    return v;
  }
};

// The image the stages read as GRAY8: NV12's luma plane in place; any other view as it is.
JP_HD ImageView luma_plane(const ImageView& v) {
  if (v.format != PixelFormat::kNv12) return v;
  ImageView g = v;
  g.format = PixelFormat::kGray8;
  g.uv = nullptr;
  g.uv_pitch = 0;
  return g;
}

// Bytes of an image of this shape laid out as make_view() lays it (both planes of NV12).
std::size_t image_bytes(int width, int height, PixelFormat format, std::size_t pitch);
// The view of an image at `base` with rows `pitch` bytes apart (NV12: the chroma plane after the
// luma rows, same pitch). pitch ≥ the row's bytes (NV12: width rounded up to even).
ImageView make_view(std::uint8_t* base, int width, int height, PixelFormat format,
                    std::size_t pitch);
// The least pitch of a row (NV12: width rounded up to even, for the chroma pairs).
std::size_t min_pitch(int width, PixelFormat format);

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

// Copies rows of equal size between two views of the same shape and format (host memory; both
// planes of NV12).
void copy_image(const ImageView& src, const ImageView& dst);

}  // namespace jetpipe
