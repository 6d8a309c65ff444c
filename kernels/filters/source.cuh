// SPDX-License-Identifier: MIT
// Device-side readers of a GRAY8 filter input extended by its border, the two paths of a filter.
//   GlobalSrc  16-byte global loads (byte loads when the view is not 16-byte aligned),
//              border_remap in software outside the image;
//   TexSrc     tex2D fetches: 16-byte texels inside the image, 8-bit texels with the texture
//              unit's addressing outside it (or border_remap first, for the modes it lacks).
// Both have one interface, so kernels are templates over the source:
//   typename Src::Row r = src.row(y);           // once per row (warp-uniform): y may lie outside
//   uint4 c = src.template chunk<kEdge>(r, x);  // pixels x .. x+15 (x a multiple of 16); kEdge
//                                               // false promises 0 ≤ x ≤ width − 16 (no border
//                                               // columns; TexSrc then has its 16-byte texels);
//                                               // chunk<true, true>: a chunk outside the image
//                                               // with its loads at once (more registers)
//   uint8_t v = src.pixel(r, x);                // one pixel, any x
// the fast kernel's row_near() / chunk_in() (fast_kernel.cuh: no border columns, no division, no
// unaligned loads; usable when fast_ok()), and load_tile(), which fills a shared-memory tile:
//
//   __shared__ __align__(16) std::uint8_t tile[kRows * kCols];   // kCols a multiple of 16
//   dev::load_tile(src, tile, kCols, x0, y0, kRows, threadIdx.x, blockDim.x);  // x0 % 16 == 0
//   (load_tile<true>: the edge chunks' loads at once, for tiles at the image's left and right
//   edges)
//   __syncthreads();
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/border.h"
#include "kernels/block/gray16.cuh"
#include "kernels/texture.h"
#include "kernels/to_gray.h"

namespace jetpipe::dev {

__device__ __forceinline__ uint4 splat16(std::uint32_t fill4) {
  return make_uint4(fill4, fill4, fill4, fill4);
}

// Four bytes (each in the low 8 bits of its argument) into one word, b0 lowest.
__device__ __forceinline__ std::uint32_t pack4(std::uint32_t b0, std::uint32_t b1, std::uint32_t b2,
                                               std::uint32_t b3) {
  return __byte_perm(__byte_perm(b0, b1, 0x0040), __byte_perm(b2, b3, 0x0040), 0x5410);
}

// Chunks that straddle or lie outside the image's columns, pixel by pixel (tile loaders at the
// image's edges).
__device__ __forceinline__ uint4 global_edge_chunk(const std::uint8_t* r, int width,
                                                   BorderMode mode, std::uint32_t fill4, int x) {
  std::uint32_t w[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    std::uint32_t b[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int sx = border_remap(x + 4 * q + i, width, mode);
      b[i] = sx < 0 ? (fill4 & 0xffu) : r[sx];
    }
    w[q] = pack4(b[0], b[1], b[2], b[3]);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// global_edge_chunk with its loads in flight together: the 16 remaps first, then every load,
// unconditional (a constant border's column reads column 0 and is replaced after). With each load
// behind its remap's branches (above) they go one after another, and the fast kernels' edge blocks,
// made of such chunks, finished last (H100, a 1080p strip of 270 rows: gray + gaussian 10.0 µs,
// 6.6 with these). Only the fast kernels' edge blocks use it (load_tile<true>): it takes the 2-D
// tile engines, whose chunks are mostly inside the image, from 32 to 40 registers.
__device__ __forceinline__ uint4 global_edge_chunk_at_once(const std::uint8_t* r, int width,
                                                           BorderMode mode, std::uint32_t fill4,
                                                           int x) {
  int sx[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) sx[i] = border_remap(x + i, width, mode);
  std::uint32_t b[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) b[i] = __ldg(r + max(sx[i], 0));
#pragma unroll
  for (int i = 0; i < 16; ++i) b[i] = sx[i] < 0 ? (fill4 & 0xffu) : b[i];
  return make_uint4(pack4(b[0], b[1], b[2], b[3]), pack4(b[4], b[5], b[6], b[7]),
                    pack4(b[8], b[9], b[10], b[11]), pack4(b[12], b[13], b[14], b[15]));
}

__device__ __forceinline__ uint4 texture_edge_chunk(cudaTextureObject_t pixels, int width,
                                                    float inv_width, BorderMode mode,
                                                    std::uint32_t fill, bool normalized, bool remap,
                                                    float v, int x) {
  // Four fetches in flight at a time (a loop, not unrolled): sixteen would cost registers that the
  // whole kernel then has to reserve.
  uint4 c = make_uint4(0, 0, 0, 0);
#pragma unroll 1
  for (int q = 0; q < 4; ++q) {
    std::uint32_t b[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int sx = x + 4 * q + i;
      float u;
      if (remap) {
        sx = border_remap(sx, width, mode);
        u = static_cast<float>(sx) + 0.5f;
      } else {
        u = static_cast<float>(sx) + 0.5f;
        if (normalized) u *= inv_width;
      }
      b[i] = tex2D<unsigned char>(pixels, u, v);
      if (remap && sx < 0) b[i] = fill;
    }
    const std::uint32_t w = pack4(b[0], b[1], b[2], b[3]);
    if (q == 0) c.x = w;
    if (q == 1) c.y = w;
    if (q == 2) c.z = w;
    if (q == 3) c.w = w;
  }
  return c;
}

// border_remap for a coordinate a few pixels outside an image of len ≥ 2 (−len < p < 2·len − 1),
// without division: the fast kernel's rows (len ≥ 16, at most 4 rows out).
__device__ __forceinline__ int near_remap(int p, int len, BorderMode mode) {
  if (static_cast<unsigned>(p) < static_cast<unsigned>(len)) return p;
  const bool low = p < 0;
  switch (mode) {
    case BorderMode::kReplicate:
      return low ? 0 : len - 1;
    case BorderMode::kReflect:
      return low ? -1 - p : 2 * len - 1 - p;
    case BorderMode::kReflect101:
      return low ? -p : 2 * len - 2 - p;
    case BorderMode::kWrap:
      return low ? p + len : p - len;
    default:
      return -1;
  }
}

// A strip kernel's row outside the image (edge strips only, at most a few rows above or below):
// the remapped row's chunk at x, or row 0's for a constant border (the caller puts the constant in
// its place). Out of line: only edge strips call it, from their cp.async rings.
static __device__ __noinline__ const std::uint8_t* outside_row(const std::uint8_t* data,
                                                               std::size_t pitch, int height,
                                                               BorderMode mode, int y, int x) {
  y = near_remap(y, height, mode);
  return data + static_cast<std::size_t>(max(y, 0)) * pitch + x;
}

// Global memory, border remapped in software.
struct GlobalSrc {
  const std::uint8_t* data;
  std::size_t pitch;
  int width, height;
  BorderMode mode;
  std::uint32_t fill4;  // the constant border value in each byte
  bool vec;             // data and pitch are 16-byte aligned: 16-byte loads

  using Row = const std::uint8_t*;  // nullptr: a row of the constant border

  __device__ __forceinline__ Row row(int y) const {
    if (static_cast<unsigned>(y) >= static_cast<unsigned>(height)) {
      y = border_remap(y, height, mode);
      if (y < 0) return nullptr;
    }
    return data + static_cast<std::size_t>(y) * pitch;
  }

  // The fast kernel's reads: row() for y at most a few rows outside an image ≥ 16 rows high, and
  // 16 pixels inside the image with 16-byte loads (fast_ok(): the view is 16-byte aligned).
  __device__ __forceinline__ Row row_near(int y) const {
    y = near_remap(y, height, mode);
    return y < 0 ? nullptr : data + static_cast<std::size_t>(y) * pitch;
  }
  __device__ __forceinline__ uint4 chunk_in(Row r, int x) const {
    if (r == nullptr) return splat16(fill4);
    return __ldg(reinterpret_cast<const uint4*>(r + x));
  }
  __host__ __device__ bool fast_ok() const { return vec; }

  __device__ __forceinline__ std::uint8_t pixel(Row r, int x) const {
    if (r == nullptr) return static_cast<std::uint8_t>(fill4);
    if (static_cast<unsigned>(x) >= static_cast<unsigned>(width)) {
      x = border_remap(x, width, mode);
      if (x < 0) return static_cast<std::uint8_t>(fill4);
    }
    return r[x];
  }

  template <bool kEdge, bool kAtOnce = false>
  __device__ __forceinline__ uint4 chunk(Row r, int x) const {
    if (r == nullptr) return splat16(fill4);
    if (!kEdge || (x >= 0 && x <= width - 16)) {
      if (vec) return __ldg(reinterpret_cast<const uint4*>(r + x));
      const std::uint8_t* p = r + x;
      return make_uint4(pack4(__ldg(p + 0), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3)),
                        pack4(__ldg(p + 4), __ldg(p + 5), __ldg(p + 6), __ldg(p + 7)),
                        pack4(__ldg(p + 8), __ldg(p + 9), __ldg(p + 10), __ldg(p + 11)),
                        pack4(__ldg(p + 12), __ldg(p + 13), __ldg(p + 14), __ldg(p + 15)));
    }
    if constexpr (kAtOnce) {
      return global_edge_chunk_at_once(r, width, mode, fill4, x);
    } else {
      return global_edge_chunk(r, width, mode, fill4, x);
    }
  }
};

// A strip kernel's cp.async ring (AsyncRows, ConvAsyncRows), rows issued in order: the address of
// row yin + n's bytes from column x. Rows n ∈ [n_lo, n_hi) lie inside the image and come by
// stepping `next` by the pitch; the others through outside_row.
__device__ __forceinline__ const std::uint8_t* ring_row_chunk(const GlobalSrc& src,
                                                              const std::uint8_t*& next, int n,
                                                              int n_lo, int n_hi, int yin, int x) {
  const std::uint8_t* p = next;
  if (n >= n_lo && n < n_hi) {
    next += src.pitch;
  } else {
    p = outside_row(src.data, src.pitch, src.height, src.mode, yin + n, x);
  }
  return p;
}

// A colour image, BGR8 / RGB8 (kBpp 3) or BGRx / RGBx / RGBA (kBpp 4, byte 3 ignored), read as the
// GRAY8 image to_gray makes of it (kernels/to_gray.h: OpenCV's Y = (R·9798 + G·19235 + B·3735 +
// 2^14) >> 15, exact), border remapped in software outside it: a filter fused with the to_gray
// before it reads the colour frame once and never writes the gray image. Rows, the border and the
// alignment are GlobalSrc's over the colour view (its width in pixels, vec: data and pitch 16-byte
// aligned, so 16 pixels are kBpp 16-byte loads); the pixel reads below convert. The constant border
// applies to the gray image (fill4), as after to_gray.
template <int kBpp>
struct ColourSrc : GlobalSrc {
  static_assert(kBpp == 3 || kBpp == 4, "3- or 4-byte pixels");
  static constexpr int kPixelBytes = kBpp;
  static constexpr int kWords = 4 * kBpp;  // 32-bit words of 16 pixels
  std::uint32_t w0, w2;  // the weights of bytes 0 and 2 of a pixel (B and R for BGR; swapped: RGB)
  GrayWeights bytes;     // w0, kToGrayG, w2 as gray16 takes them (kernels/block/gray16.cuh)

  __device__ __forceinline__ std::uint32_t gray(std::uint32_t b0, std::uint32_t b1,
                                                std::uint32_t b2) const {
    return (b0 * w0 + b1 * kToGrayG + b2 * w2 + (1u << (kToGrayShift - 1))) >> kToGrayShift;
  }
  // 16 gray pixels from their colour bytes in kWords words (byte k of the run in word k / 4).
  __device__ __forceinline__ uint4 convert16(const std::uint32_t (&w)[kWords]) const {
    if constexpr (kBpp == 3) {
      return gray16(w, bytes);
    } else {
      return gray16_4(w, bytes);
    }
  }
  // Pixels x .. x + 15 of a row inside the image (0 ≤ x ≤ width − 16).
  __device__ __forceinline__ uint4 inside16(Row r, int x) const {
    const std::uint8_t* p = r + kBpp * x;
    std::uint32_t w[kWords];
    if (vec && (x & 15) == 0) {
      const uint4* q = reinterpret_cast<const uint4*>(p);
#pragma unroll
      for (int i = 0; i < kBpp; ++i) {
        const uint4 v = __ldg(q + i);
        w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < kWords; ++i) {
        w[i] = pack4(__ldg(p + 4 * i), __ldg(p + 4 * i + 1), __ldg(p + 4 * i + 2),
                     __ldg(p + 4 * i + 3));
      }
    }
    return convert16(w);
  }
  // Not the gray chunk_in of GlobalSrc: the strip kernel does not read colour sources.
  __device__ uint4 chunk_in(Row r, int x) const = delete;
  // A gray chunk in two steps (x a multiple of 16, vec), so that a thread has several chunks' loads
  // in flight before the first conversion waits (the staged kernel, kernels/filters/
  // staged_kernel.cuh): load_in issues the kBpp 16-byte loads (unconditionally: a constant
  // border's row reads row 0 and is replaced), convert_in makes the gray chunk of them.
  struct Raw {
    uint4 q[kBpp];
    bool fill;
  };
  __device__ __forceinline__ Raw load_in(Row r, int x) const {
    Raw v;
    v.fill = r == nullptr;
    const uint4* q = reinterpret_cast<const uint4*>((v.fill ? data : r) + kBpp * x);
#pragma unroll
    for (int i = 0; i < kBpp; ++i) v.q[i] = __ldg(q + i);
    return v;
  }
  __device__ __forceinline__ uint4 convert_in(const Raw& v) const {
    std::uint32_t w[kWords];
#pragma unroll
    for (int i = 0; i < kBpp; ++i) {
      w[4 * i] = v.q[i].x, w[4 * i + 1] = v.q[i].y, w[4 * i + 2] = v.q[i].z,
            w[4 * i + 3] = v.q[i].w;
    }
    const uint4 g = convert16(w);
    return v.fill ? splat16(fill4) : g;
  }

  __device__ __forceinline__ std::uint8_t pixel(Row r, int x) const {
    if (r == nullptr) return static_cast<std::uint8_t>(fill4);
    if (static_cast<unsigned>(x) >= static_cast<unsigned>(width)) {
      x = border_remap(x, width, mode);
      if (x < 0) return static_cast<std::uint8_t>(fill4);
    }
    const std::uint8_t* p = r + kBpp * x;
    return static_cast<std::uint8_t>(gray(p[0], p[1], p[2]));
  }

  template <bool kEdge, bool kAtOnce = false>
  __device__ __forceinline__ uint4 chunk(Row r, int x) const {
    if (r == nullptr) return splat16(fill4);
    if (!kEdge || (x >= 0 && x <= width - 16)) return inside16(r, x);
    // As global_edge_chunk_at_once: the 16 remaps, then the 24 loads of 8 pixels at a time.
    if constexpr (kAtOnce) {
      int sx[16];
#pragma unroll
      for (int i = 0; i < 16; ++i) sx[i] = border_remap(x + i, width, mode);
      std::uint32_t g[16];
#pragma unroll
      for (int h = 0; h < 16; h += 8) {
        std::uint32_t c[24];
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const std::uint8_t* p = r + kBpp * max(sx[h + i], 0);
          c[3 * i] = __ldg(p), c[3 * i + 1] = __ldg(p + 1), c[3 * i + 2] = __ldg(p + 2);
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          g[h + i] = sx[h + i] < 0 ? (fill4 & 0xffu) : gray(c[3 * i], c[3 * i + 1], c[3 * i + 2]);
        }
      }
      return make_uint4(pack4(g[0], g[1], g[2], g[3]), pack4(g[4], g[5], g[6], g[7]),
                        pack4(g[8], g[9], g[10], g[11]), pack4(g[12], g[13], g[14], g[15]));
    } else {
      std::uint32_t w[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        w[q] = pack4(pixel(r, x + 4 * q), pixel(r, x + 4 * q + 1), pixel(r, x + 4 * q + 2),
                     pixel(r, x + 4 * q + 3));
      }
      return make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
};
using BgrSrc = ColourSrc<3>;   // BGR8 / RGB8
using BgrxSrc = ColourSrc<4>;  // BGRx / RGBx / RGBA

template <class Src>
inline constexpr bool kIsColourSrc = std::is_same_v<Src, BgrSrc> || std::is_same_v<Src, BgrxSrc>;

// Texture fetches. Hardware modes: raw coordinates (normalized for mirror and wrap); remap modes:
// border_remap first, then an in-range fetch of a clamp-mode texture.
struct TexSrc {
  TextureRef t;

  struct Row {
    float v;    // the texture's y coordinate
    bool fill;  // a row of the constant border (remap modes only)
  };

  __device__ __forceinline__ Row row(int y) const {
    if (t.remap) {
      if (static_cast<unsigned>(y) >= static_cast<unsigned>(t.height)) {
        y = border_remap(y, t.height, t.mode);
        if (y < 0) return {0.f, true};
      }
      return {static_cast<float>(y) + 0.5f, false};
    }
    const float v = static_cast<float>(y) + 0.5f;
    return {t.normalized ? v * t.inv_height : v, false};
  }

  // As GlobalSrc's: rows a few outside an image ≥ 16 high, 16 pixels inside (16-byte texels).
  __device__ __forceinline__ Row row_near(int y) const {
    if (t.remap) {
      y = near_remap(y, t.height, t.mode);
      return y < 0 ? Row{0.f, true} : Row{static_cast<float>(y) + 0.5f, false};
    }
    const float v = static_cast<float>(y) + 0.5f;
    return {t.normalized ? v * t.inv_height : v, false};
  }
  __device__ __forceinline__ uint4 chunk_in(Row r, int x) const {
    if (r.fill) return splat16(t.fill * 0x01010101u);
    const float u = static_cast<float>(x >> 4) + 0.5f;
    return tex2D<uint4>(t.chunks, t.normalized ? u * t.inv_chunks : u, r.v);
  }
  __host__ __device__ bool fast_ok() const { return t.chunks != 0; }

  __device__ __forceinline__ std::uint8_t pixel(Row r, int x) const {
    if (r.fill) return t.fill;
    if (t.remap) {
      if (static_cast<unsigned>(x) >= static_cast<unsigned>(t.width)) {
        x = border_remap(x, t.width, t.mode);
        if (x < 0) return t.fill;
      }
      return tex2D<unsigned char>(t.pixels, static_cast<float>(x) + 0.5f, r.v);
    }
    const float u = static_cast<float>(x) + 0.5f;
    return tex2D<unsigned char>(t.pixels, t.normalized ? u * t.inv_width : u, r.v);
  }

  template <bool kEdge, bool kAtOnce = false>  // kAtOnce: no difference here
  __device__ __forceinline__ uint4 chunk(Row r, int x) const {
    if (r.fill) return splat16(t.fill * 0x01010101u);
    if (!kEdge || (t.chunks != 0 && x >= 0 && x <= t.width - 16)) {
      const float u = static_cast<float>(x >> 4) + 0.5f;
      return tex2D<uint4>(t.chunks, t.normalized ? u * t.inv_chunks : u, r.v);
    }
    return texture_edge_chunk(t.pixels, t.width, t.inv_width, t.mode, t.fill, t.normalized, t.remap,
                              r.v, x);
  }
};

// Fills tile[r · stride + c] (r < rows, c < stride; stride a multiple of 16) with the extended
// image's pixel (x0 + c, y0 + r), x0 a multiple of 16, one 16-byte chunk per thread at a time.
template <bool kAtOnce = false, class Src>
__device__ __forceinline__ void load_tile(const Src& src, std::uint8_t* tile, int stride, int x0,
                                          int y0, int rows, int tid, int nthreads) {
  const int per_row = stride >> 4;
  const int total = rows * per_row;
#pragma unroll 1
  for (int i = tid; i < total; i += nthreads) {
    const int r = i / per_row, c = i - r * per_row;
    const uint4 v = src.template chunk<true, kAtOnce>(src.row(y0 + r), x0 + 16 * c);
    *reinterpret_cast<uint4*>(tile + r * stride + 16 * c) = v;
  }
}

}  // namespace jetpipe::dev
