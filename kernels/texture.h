// SPDX-License-Identifier: MIT
// Textures over GRAY8 images for the filters (CUDA builds only), and the source a filter reads.
//
// UniqueTexture: a move-only owner of the texture objects over one image view with one border mode,
// made by the caller (a stage, when the pipeline is built) and handed to launchers through
// FilterSource. Never global texture state. It holds two objects over the same memory:
//   pixels  8-bit texels, the texture unit's addressing applying the border outside the image;
//   chunks  16-byte texels (uint4, width / 16 of them), for runs of 16 pixels inside the image.
// How each border mode maps onto the texture unit is the one table in texture_addressing().
//
// A view qualifies when its base is aligned to cudaDeviceProp::textureAlignment, its pitch is a
// multiple of texturePitchAlignment and it fits the device's pitched-2D texture limits (ROIs with
// an odd x offset and odd pitches do not). A texture made from a view that does not qualify is
// empty (valid() false, why() says why), and launchers then read through the tiled path: every
// launcher works for every view.
//
// FilterPath chooses what a launcher reads through; kAuto takes the target's policy
// (kernels/tuning_filters.h).
#pragma once

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>
#include <texture_types.h>

#include <cstdint>

#include "core/border.h"
#include "core/image.h"

namespace jetpipe {

enum class FilterPath {
  kAuto,     // the target's policy (kernels/tuning_filters.h)
  kTexture,  // tex2D fetches, the texture unit's addressing where it fits the border mode;
             // without a valid texture in the FilterSource the launcher reads through kTiled.
  kTiled,    // 16-byte global loads of tile + halo, border remapped in software at the image edges
};
const char* to_string(FilterPath p);

// Launch shape overrides of the filters' fast and staged kernels (gaussian, box, sobel), for
// benchmarks and tests; zeros follow the target's policy (kernels/tuning_filters.h). Results never
// depend on them.
// box: which engine takes ksize 3..31 (kAuto: the policy's box_running_min_ksize; kWindow: the
// sliding windows, the fast kernel up to 9 and the separable engine above, as before the running
// sums; kTile: the tile engine, kernels/filters/tile_box.cuh).
enum class BoxEngine { kAuto, kWindow, kRunning, kTile };
struct FilterLaunchOptions {
  int rows_per_warp = 0;  // output rows a warp (the staged kernel: 1 .. 4)
  BoxEngine box_engine = BoxEngine::kAuto;
  // The running box splits launches of more than this many output pixels into an interior and an
  // edge kernel; < 0: kRunBoxSplitPx (kernels/tuning_filters.h), 0: every launch.
  long long box_split_px = -1;
  // Output rows a warp of the split's edge kernel; 0: those that fit it in one wave, and the tile
  // engine for the edge columns where the view allows (kernels/box.cu); > 0 the edge kernel.
  int box_edge_rows = 0;
};

// How the texture unit serves a border mode (DESIGN.md, "Border modes", measured on an H200):
//   address     the cudaTextureAddressMode of both axes
//   normalized  coordinates in [0, 1) of the image size (wrap and mirror work only with these)
//   remap       the kernel maps coordinates with border_remap first and fetches inside the image
//               (or uses the constant itself): the unit has no equivalent.
struct TextureAddressing {
  cudaTextureAddressMode address;
  bool normalized;
  bool remap;
};
TextureAddressing texture_addressing(const Border& border);

// The pixel value of a constant border: saturate_cast<uchar>(border.value), as the CPU twins use.
std::uint8_t border_fill_u8(const Border& border);

// What kernels get of a UniqueTexture (trivially copyable; passed by value to kernels).
struct TextureRef {
  cudaTextureObject_t pixels = 0;  // 8-bit texels; 0: no texture
  cudaTextureObject_t chunks = 0;  // 16-byte texels; 0 when the width is under 16
  int width = 0, height = 0;
  float inv_width = 0, inv_height = 0, inv_chunks = 0;  // for normalized coordinates
  BorderMode mode = BorderMode::kReflect101;
  std::uint8_t fill = 0;  // constant border value
  bool normalized = false;
  bool remap = false;
};

class UniqueTexture {
 public:
  UniqueTexture() = default;
  // Textures over `view` (GRAY8, device-accessible memory) with `border` applied outside it. Empty
  // when the view does not qualify (see above); throws jetpipe::Error when CUDA fails.
  UniqueTexture(const ImageView& view, const Border& border);
  ~UniqueTexture();
  UniqueTexture(UniqueTexture&& o) noexcept;
  UniqueTexture& operator=(UniqueTexture&& o) noexcept;
  UniqueTexture(const UniqueTexture&) = delete;
  UniqueTexture& operator=(const UniqueTexture&) = delete;

  bool valid() const { return ref_.pixels != 0; }
  const char* why() const { return why_; }  // why it is empty ("" when valid)
  const TextureRef& ref() const { return ref_; }
  const ImageView& view() const { return view_; }
  const Border& border() const { return border_; }
  // Whether this texture serves `view` with `border` (same memory, shape, mode and fill value).
  bool serves(const ImageView& view, const Border& border) const;

  // Empty when a view qualifies for textures on the current device, else the reason.
  static const char* unsupported_reason(const ImageView& view);

 private:
  void reset();

  ImageView view_;
  Border border_;
  TextureRef ref_;
  const char* why_ = "no view";
};

// A filter's input: the whole image (the border applies at its edges) and, optionally, a texture
// made for that view and the filter's border.
struct FilterSource {
  FilterSource(const ImageView& v) : view(v) {}  // NOLINT: implicit, a view alone is a source
  FilterSource(const ImageView& v, const UniqueTexture& t) : view(v), texture(&t) {}
  ImageView view;
  const UniqueTexture* texture = nullptr;
};

// Test hook that proves the border handling of both paths: for each of the n queries (x, y) (device
// array d_xy of 2n ints, any coordinates, inside or outside the image) writes 17 bytes to d_out:
// the pixel at (x, y), then the 16 pixels from (x & ~15, y), each as the filters read them through
// `path` (kTexture needs src.texture). Same device code as the filters.
cudaError_t launch_border_probe(const FilterSource& src, const Border& border, FilterPath path,
                                const int* d_xy, int n, std::uint8_t* d_out, cudaStream_t stream);

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
