// SPDX-License-Identifier: MIT
// CUDA twin of convolve (filter2D in float, the twin's order, no contraction). Square kernels of 3,
// 5 and 7 taps a side over aligned views of at least 544 × 16 run the strip kernel
// (kernels/filters/conv_strip.cuh) with the cheapest arithmetic that the taps allow and that still
// equals the twin bit for bit (classify below); everything else runs the tile engine
// (kernels/filters/conv_tile.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/convolve.h"
#include "kernels/filters/conv_strip.cuh"
#include "kernels/filters/conv_tile.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/launch/pdl_launch.cuh"

namespace jetpipe {

namespace dev {
namespace {

template <class Src>
cudaError_t launch_convolve_tile(int cols, const Src& src, const ConvArgs& a, dim3 grid,
                                 std::size_t smem, cudaStream_t stream) {
  switch (cols) {
    case 1:
      convolve_tile_kernel<1><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 3:
      convolve_tile_kernel<3><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 5:
      convolve_tile_kernel<5><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 7:
      convolve_tile_kernel<7><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 9:
      convolve_tile_kernel<9><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 11:
      convolve_tile_kernel<11><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 13:
      convolve_tile_kernel<13><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    case 15:
      convolve_tile_kernel<15><<<grid, kConvThreads, smem, stream>>>(src, a);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaPeekAtLastError();
}

// The exponent of v's lowest set bit (v finite, ≠ 0): v = odd · 2^lsb_exponent.
int lsb_exponent(float v, std::uint32_t* odd) {
  int ex = 0;
  const double m = std::frexp(static_cast<double>(std::fabs(v)), &ex);  // [0.5, 1) · 2^ex
  auto mi = static_cast<std::uint32_t>(std::ldexp(m, 24));              // exact: 24 bits
  int e = ex - 24;
  while ((mi & 1u) == 0) mi >>= 1, ++e;
  *odd = mi;
  return e;
}

// The cheapest arithmetic of the strip kernel that equals the twin for these taps and delta (see
// conv_strip.cuh), and its constants in *a; false: none (a tap or delta not finite, or too large).
bool classify(const ConvolveParams& p, ConvolveArith* arith, ConvStripArgs* a) {
  const int k = p.rows;
  const float d = static_cast<float>(p.delta);
  if (!std::isfinite(d)) return false;
  // Exact products: tap · p for p ≤ 255 fits 24 bits when the tap's odd part is ≤ 65793
  // (65793 · 255 = 2^24 − 1); no overflow below 2^100 (−tap · 2^23 and the sums stay finite too).
  bool fused = true;
  int e = std::numeric_limits<int>::max();
  for (float t : p.taps) {
    if (!std::isfinite(t) || std::fabs(t) > 0x1p100f) return false;
    if (t == 0.f) continue;
    std::uint32_t odd = 0;
    e = std::min(e, lsb_exponent(t, &odd));
    if (odd > 65793u) fused = false;
  }
  if (d != 0.f) {
    std::uint32_t odd = 0;
    e = std::min(e, lsb_exponent(d, &odd));
  }
  if (e == std::numeric_limits<int>::max()) e = 0;  // taps and delta all zero
  // Exact sums: every partial sum of the twin a multiple of 2^e below 2^22 units (the integer
  // path's epilogue reads the sum's bits + 1.5 · 2^23 as a float), taps signed bytes in units.
  bool integer = e >= -22 && e <= 22;
  double bound = std::fabs(std::ldexp(static_cast<double>(d), -e));
  for (int i = 0; i < k * k && integer; ++i) {
    const double t = std::ldexp(static_cast<double>(p.taps[static_cast<std::size_t>(i)]), -e);
    if (std::fabs(t) > 127) integer = false;
    bound += 255 * std::fabs(t);
  }
  if (bound >= 0x1p22) integer = false;
  for (int i = 0; i < k * k; ++i) a->tap[i] = p.taps[static_cast<std::size_t>(i)];
  a->delta = d;
  if (integer) {
    for (int i = 0; i < k; ++i) {
      for (int al = 0; al < 4; ++al) {
        for (int w = 0; w < 3; ++w) {
          std::uint32_t v = 0;
          for (int b = 0; b < 4; ++b) {
            const int j = 4 * w + b - al;
            if (j < 0 || j >= k) continue;
            const auto t = static_cast<int>(
                std::ldexp(static_cast<double>(p.taps[static_cast<std::size_t>(i * k + j)]), -e));
            v |= (static_cast<std::uint32_t>(t) & 0xffu) << (8 * b);
          }
          a->itap[i][al][w] = v;
        }
      }
    }
    a->idelta = static_cast<std::int32_t>(std::ldexp(static_cast<double>(d), -e)) + kConvMagicBits;
    a->iscale = std::ldexp(1.f, e);
    // 1.5·2^23 − 1.5·2^23 · 2^e = 3 · 2^(22+e) · (2^−e − 1) (e < 0), exact for |e| ≤ 22.
    a->ioffset = static_cast<float>(12582912.0 - std::ldexp(12582912.0, e));
  }
  *arith = integer ? ConvolveArith::kInteger
           : fused ? ConvolveArith::kFused
                   : ConvolveArith::kGeneral;
  return true;
}

template <int K, class Src>
cudaError_t launch_strip_k(ConvolveArith arith, const Src& src, const ConvStripArgs& a,
                           unsigned grid, std::size_t smem, cudaStream_t stream) {
  switch (arith) {
    case ConvolveArith::kInteger:
      return launch_pdl(convolve_strip_kernel<K, ConvolveArith::kInteger, Src>, grid, kFastThreads,
                        smem, stream, src, a);
    case ConvolveArith::kFused:
      return launch_pdl(convolve_strip_kernel<K, ConvolveArith::kFused, Src>, grid, kFastThreads,
                        smem, stream, src, a);
    default:
      return launch_pdl(convolve_strip_kernel<K, ConvolveArith::kGeneral, Src>, grid, kFastThreads,
                        smem, stream, src, a);
  }
}

// Rows a warp for `rows` output rows of `warps_per_row` strips: the policy's, fewer (down to
// conv_rows_min) where the launch would otherwise have fewer than conv_warps_per_sm warps an SM.
int conv_rows_per_warp(int rows, int warps_per_row, const FilterPolicy& p) {
  return rows_to_fill(rows, warps_per_row, device_info().sm_count, p.conv_warps_per_sm, p.conv_rows,
                      p.conv_rows_min);
}

}  // namespace
}  // namespace dev

ConvolveArith convolve_arith(const ConvolveParams& p) {
  if (p.rows < 1 || p.rows > dev::kConvStripMax ||
      p.taps.size() != static_cast<std::size_t>(p.rows) * static_cast<std::size_t>(p.rows)) {
    return ConvolveArith::kNone;
  }
  ConvolveArith arith = ConvolveArith::kNone;
  dev::ConvStripArgs a{};
  return dev::classify(p, &arith, &a) ? arith : ConvolveArith::kNone;
}

const char* to_string(ConvolveArith a) {
  switch (a) {
    case ConvolveArith::kInteger:
      return "integer";
    case ConvolveArith::kFused:
      return "fused";
    case ConvolveArith::kGeneral:
      return "general";
    default:
      return "none";
  }
}

cudaError_t launch_convolve(const ConvolveParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, cudaStream_t stream, FilterPath path,
                            const FilterLaunchOptions& options) {
  if (cudaError_t e = dev::check_filter_views(src.view, dst, PixelFormat::kGray8, y0, y1)) return e;
  if (p.rows < 1 || p.cols < 1 || p.rows % 2 == 0 || p.cols % 2 == 0 || p.rows > dev::kConvMax ||
      p.cols > dev::kConvMax ||
      p.taps.size() != static_cast<std::size_t>(p.rows) * static_cast<std::size_t>(p.cols)) {
    return cudaErrorInvalidValue;
  }
  bool tex = false;
  const FilterPolicy& pol = dev::current_filter_policy();
  if (cudaError_t e = dev::resolve_path(src, p.border, path, pol.convolve, &tex)) return e;
  if (y0 == y1) return cudaSuccess;
  dev::ConvArgs a{};
  for (std::size_t i = 0; i < p.taps.size(); ++i) a.taps[i] = p.taps[i];
  a.rows = p.rows;
  a.delta = static_cast<float>(p.delta);
  a.width = src.view.width;
  a.y0 = y0;
  a.y1 = y1;
  a.dst = dst.data;
  a.pitch = dst.pitch;
  const int width = src.view.width;
  const std::size_t smem = dev::conv_smem_bytes(p.rows);
  return dev::with_source(src, p.border, tex, [&](const auto& s) -> cudaError_t {
    dev::ConvStripArgs sa{};
    ConvolveArith arith = ConvolveArith::kGeneral;
    if (p.rows != p.cols || p.rows < 3 || p.rows > dev::kConvStripMax || !s.fast_ok() ||
        !dev::aligned16(dst) || width < dev::kConvWarpOut + 32 || src.view.height < 16 ||
        !dev::classify(p, &arith, &sa)) {
      const dim3 grid(dev::div_up(width, kConvTileW), dev::div_up(y1 - y0, kConvTileH));
      return dev::launch_convolve_tile(p.cols, s, a, grid, smem, stream);
    }
    // Strips of 512 outputs reading 528 columns from X0 (launch/strips.h); the right edge tile
    // takes ≤ 64 columns, or one more strip moved left leaves it 16..31.
    const dev::StripPlacement sp =
        dev::place_strips(width, dev::kConvWarpOut, dev::kConvWarpOut + 16, 16, kConvTileW);
    sa.warps_fast = sp.strips;
    sa.x0_last = sp.x0_last;
    const int rows = options.rows_per_warp > 0
                         ? options.rows_per_warp
                         : dev::conv_rows_per_warp(y1 - y0, sa.warps_fast, pol);
    sa.grid = dev::StripGrid(
        y0, y1, static_cast<int>(dev::div_up(sa.warps_fast, kFastThreads / 32)), rows, kConvTileH);
    sa.dst = dst.data;
    sa.dst_pitch = dst.pitch;
    sa.tile = a;
    const unsigned grid = sa.grid.blocks();
    const std::size_t strip_smem = dev::conv_strip_smem_bytes(
        p.rows, std::is_same_v<std::decay_t<decltype(s)>, dev::GlobalSrc>);
    switch (p.rows) {
      case 3:
        return dev::launch_strip_k<3>(arith, s, sa, grid, strip_smem, stream);
      case 5:
        return dev::launch_strip_k<5>(arith, s, sa, grid, strip_smem, stream);
      default:
        return dev::launch_strip_k<7>(arith, s, sa, grid, strip_smem, stream);
    }
  });
}

}  // namespace jetpipe
