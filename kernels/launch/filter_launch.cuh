// SPDX-License-Identifier: MIT
// Host-side glue shared by the filter launchers (kernels/{gaussian,box,sobel,convolve}.cu,
// kernels/harris/dispatch.cu): argument checks, the device's policy, and the choice between the
// two sources.
//
//   if (cudaError_t e = dev::check_filter_views(src.view, dst, kGray8, y0, y1)) return e;
//   bool tex = false;
//   if (cudaError_t e = dev::resolve_path(src, p.border, path, policy.gaussian, &tex)) return e;
//   return dev::with_source(src, p.border, tex, [&](const auto& s) { return launch_it(s, ...); });
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/image.h"
#include "kernels/filters/source.cuh"
#include "kernels/launch/device_info.h"
#include "kernels/launch/strips.h"
#include "kernels/texture.h"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

inline const FilterPolicy& current_filter_policy() {
  const DeviceInfo& d = device_info();
  return filter_policy(d.cc_major, d.cc_minor);
}

inline bool aligned16(const ImageView& v) {
  return (reinterpret_cast<std::uintptr_t>(v.data) & 15u) == 0 && (v.pitch & 15u) == 0;
}
inline bool aligned_to(const ImageView& v, unsigned a) {
  return (reinterpret_cast<std::uintptr_t>(v.data) % a) == 0 && (v.pitch % a) == 0;
}

// src GRAY8, dst of `out` format and src's size, 0 ≤ y0 ≤ y1 ≤ height.
inline cudaError_t check_filter_views(const ImageView& src, const ImageView& dst, PixelFormat out,
                                      int y0, int y1) {
  if (src.empty() || dst.empty() || src.format != PixelFormat::kGray8 || dst.format != out ||
      src.width != dst.width || src.height != dst.height || y0 < 0 || y0 > y1 || y1 > src.height ||
      src.pitch < src.row_bytes() || dst.pitch < dst.row_bytes()) {
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

// Decides whether to read through the texture. kAuto takes the policy's choice; kTexture without a
// valid texture reads through kTiled. A texture made for another view or border is an error.
inline cudaError_t resolve_path(const FilterSource& src, const Border& border, FilterPath asked,
                                FilterPath policy, bool* use_texture) {
  *use_texture = false;
  if (src.texture != nullptr && src.texture->valid() && !src.texture->serves(src.view, border)) {
    return cudaErrorInvalidValue;
  }
  const FilterPath p = asked == FilterPath::kAuto ? policy : asked;
  *use_texture = p == FilterPath::kTexture && src.texture != nullptr && src.texture->valid();
  return cudaSuccess;
}

inline GlobalSrc make_global_src(const ImageView& v, const Border& border) {
  GlobalSrc s;
  s.data = v.data;
  s.pitch = v.pitch;
  s.width = v.width;
  s.height = v.height;
  s.mode = border.mode;
  s.fill4 = border_fill_u8(border) * 0x01010101u;
  s.vec = aligned16(v);
  return s;
}

// A colour view (BGR8 / RGB8: kBpp 3; BGRx / RGBx / RGBA: 4) read as its to_gray image (filters
// fused with the to_gray before them).
template <int kBpp>
inline ColourSrc<kBpp> make_colour_src(const ImageView& v, const Border& border) {
  ColourSrc<kBpp> s;
  static_cast<GlobalSrc&>(s) = make_global_src(v, border);
  const bool rgb = red_first(v.format);
  s.w0 = rgb ? kToGrayR : kToGrayB;  // byte 0: R of RGB, B of BGR
  s.w2 = rgb ? kToGrayB : kToGrayR;
  s.bytes = gray_weights(rgb);
  return s;
}
inline bool is_colour(const ImageView& v) { return jetpipe::is_colour(v.format); }

// Calls f(GlobalSrc) or f(TexSrc) and returns what it returns.
template <class F>
cudaError_t with_source(const FilterSource& src, const Border& border, bool use_texture, F&& f) {
  if (use_texture) return f(TexSrc{src.texture->ref()});
  return f(make_global_src(src.view, border));
}

inline unsigned div_up(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

// Output rows a warp for a launch of `rows` rows and `warps_per_row` warps a row: `most` (the
// policy's), fewer, down to `least`, where the launch would otherwise have fewer than
// `warps_per_sm` warps on each of `sm_count` SMs. The strip and running kernels' policies.
inline int rows_to_fill(int rows, long long warps_per_row, int sm_count, int warps_per_sm, int most,
                        int least) {
  const long long want = static_cast<long long>(sm_count) * warps_per_sm;
  long long r = static_cast<long long>(rows) * warps_per_row / (want > 0 ? want : 1);
  if (r > most) r = most;
  if (r < least) r = least;
  return static_cast<int>(r);
}

// The 1-D grid of the fast strip kernels (filter_fast.cuh, harris_fast.cuh) over output rows
// [y0, y1), in groups of edge_rows rows (bands_per_group bands of rows_per_warp rows, ≥ one tile
// of the tile engine): per group, its two edge blocks (the tile engine over the left and right
// columns the strips leave) and then fast_blocks blocks of strips per band. Every block has work,
// and the blocks run top to bottom as they are numbered, each group's edge blocks beside its
// strips. (A 2-D grid with two edge blocks per band left most of them empty, and at 1080p it held
// just over one wave of resident blocks: 810 of 792 for the gaussian, 540 of 528 for harris on an
// H100, so a few blocks started only after the others had finished.)
struct StripGrid {
  int y0 = 0, y1 = 0;
  int fast_blocks = 1, rows_per_warp = 1;
  int bands_per_group = 1;  // edge_rows = bands_per_group · rows_per_warp ≥ tile_h
  bool early = false;       // the kernel triggers its dependents at its start (LaunchContext)

  StripGrid() = default;
  StripGrid(int y0_, int y1_, int fast_blocks_, int rows_per_warp_, int tile_h)
      : y0(y0_),
        y1(y1_),
        fast_blocks(fast_blocks_),
        rows_per_warp(rows_per_warp_),
        bands_per_group((tile_h + rows_per_warp_ - 1) / rows_per_warp_) {}
  __host__ __device__ int edge_rows() const { return bands_per_group * rows_per_warp; }
  unsigned blocks() const {
    const unsigned bands = div_up(y1 - y0, rows_per_warp);
    return 2u * div_up(bands, bands_per_group) + bands * static_cast<unsigned>(fast_blocks);
  }
};

// What this block of a StripGrid does: rows [ys, ye); an edge block (left or right columns) or a
// block of strips (fast_block: its index within the band's fast_blocks).
struct StripBlock {
  bool edge, left;
  int fast_block, ys, ye;
};
__device__ __forceinline__ StripBlock strip_block(const StripGrid& g) {
  const int per_group = 2 + g.bands_per_group * g.fast_blocks;
  const int b = static_cast<int>(blockIdx.x);
  const int group = b / per_group, r = b - group * per_group;
  const int gy = g.y0 + group * g.edge_rows();
  StripBlock s;
  s.edge = r < 2;
  s.left = r == 0;
  if (s.edge) {
    s.fast_block = 0;
    s.ys = gy;
    s.ye = min(gy + g.edge_rows(), g.y1);
  } else {
    const int band = (r - 2) / g.fast_blocks;
    s.fast_block = r - 2 - band * g.fast_blocks;
    s.ys = gy + band * g.rows_per_warp;
    s.ye = min(s.ys + g.rows_per_warp, g.y1);
  }
  return s;
}

}  // namespace jetpipe::dev
