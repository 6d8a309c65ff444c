// SPDX-License-Identifier: MIT
// Host dispatch of the fast separable filter (gaussian, box, sobel up to 9 taps): the strip kernel
// (fast_kernel.cuh), the staged kernel for a colour source (staged_kernel.cuh), or the separable
// tile engine for views neither takes; rows a warp from the target's policy
// (kernels/tuning_filters.h) unless the caller's launch options say otherwise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "kernels/filters/fast_kernel.cuh"
#include "kernels/filters/staged_kernel.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/launch/pdl_launch.cuh"
#include "kernels/launch_context.h"

namespace jetpipe::dev {

template <class Src, class Epi>
cudaError_t launch_fast_staged(const Src& src, const FastArgs& f, int radius, int y0, int y1,
                               const Epi& epi, const LaunchContext& ctx, cudaStream_t stream,
                               int rows_per_warp) {
  StagedArgs a{};
  a.f = f;
  a.y0 = y0;
  a.y1 = y1;
  a.rows_per_warp = std::min(std::max(rows_per_warp, 1), kStagedMaxRows);
  a.strips = static_cast<int>(div_up(f.width, kFastWarpOut));
  a.early = ctx.early_trigger;
  const unsigned grid =
      static_cast<unsigned>(a.strips) * div_up(y1 - y0, kStagedWarps * a.rows_per_warp);
  const std::size_t smem = staged_smem_bytes(radius, a.rows_per_warp);
  return with_radius(radius, [&](auto r) {
    return launch_pdl(fast_staged_kernel<decltype(r)::value, Src, Epi>, grid, kStagedThreads, smem,
                      stream, src, a, epi);
  });
}

// Rows per warp for a launch of `rows` output rows and `width` columns: the policy's rows for the
// radius, fewer (down to rows_min) where the launch would otherwise not fill the device.
inline int fast_rows_per_warp(int radius, int width, int rows, int sm_count,
                              const FilterPolicy& p) {
  return rows_to_fill(rows, (width + kFastWarpOut - 1) / kFastWarpOut, sm_count,
                      p.fast_warps_per_sm, p.fast_rows[radius - 1], p.fast_rows_min);
}

// The rows a warp of a launch: the caller's (> 0, FilterLaunchOptions), else `policy`.
inline int launch_rows(int asked, int policy) { return asked > 0 ? asked : policy; }

// The separable engine's store for the fast kernel's epilogues (views the fast kernel does not
// take).
template <class Epi>
struct EpilogueStore {
  std::uint8_t* dst;
  std::size_t pitch;
  Epi epi;
  __device__ void operator()(int x, int y, int sum) const {
    epi.store1(dst + static_cast<std::size_t>(y) * pitch, x, sum);
  }
};

// Whether the fast kernel takes a launch: a 16-byte aligned output, an input read with 16-byte
// loads or texels, at least one strip wide (512) and 16 rows high (rows outside are then near
// ones).
template <class Src>
bool fast_kernel_fits(const Src& src, int width, int height, const ImageView& dst) {
  return src.fast_ok() && aligned16(dst) && width >= 512 && height >= 16;
}

// Filters rows [y0, y1) of dst with kx[0 .. ksize) along x and ky[0 .. ksize) along y (3 ≤ ksize ≤
// 2·kFastMaxRadius + 1, odd; integers) through epi, gaussian's rounding 2^15 folded in when
// `round_q16`: the fast kernel where it fits, else the separable tile engine (same sums, same
// epilogue). Needs every vertical sum in [0, 2^16) after the bias 255·Σ(negative ky), and
// horizontal taps that fit bytes (unsigned ≤ 255, or signed with Epi::kSignedTaps).
template <class Src, class Epi>
cudaError_t launch_fast_separable(const Src& src, const int* kx, const int* ky, int ksize,
                                  int width, int height, int y0, int y1, const ImageView& dst,
                                  const Epi& epi, bool round_q16, const LaunchContext& ctx,
                                  cudaStream_t stream, int rows_per_warp = 0) {
  if (ksize < 3 || ksize % 2 == 0 || ksize / 2 > kFastMaxRadius) return cudaErrorInvalidValue;
  bool symmetric = true;
  for (int k = 0; k < ksize; ++k) symmetric = symmetric && ky[k] == ky[ksize - 1 - k];
  // The epilogues of kSymmetricY take vertical taps the same from both ends (gaussian's, box's).
  if (!fast_kernel_fits(src, width, height, dst) || (kSymmetricY<Epi> && !symmetric)) {
    return launch_separable_tile(src, kx, ksize, ky, ksize, width, y0, y1,
                                 EpilogueStore<Epi>{dst.data, dst.pitch, epi}, stream);
  }
  FastArgs a{};
  int bias = 0, sum_kx = 0;
  for (int k = 0; k < ksize; ++k) {
    a.vtap[k] = static_cast<std::uint32_t>(ky[k]);
    a.xtap[k] = kx[k];
    a.ytap[k] = ky[k];
    if (ky[k] < 0) bias -= 255 * ky[k];
    sum_kx += kx[k];
  }
  for (int g = 0; 2 * g < ksize; ++g) {
    const int hi = 2 * g + 1 < ksize ? kx[2 * g + 1] : 0;
    a.htap[g] = (static_cast<std::uint32_t>(kx[2 * g]) & 0xffu) |
                ((static_cast<std::uint32_t>(hi) & 0xffu) << 8);
  }
  const int lane_init = bias + (round_q16 ? 128 : 0);
  a.vinit = static_cast<std::uint32_t>(lane_init) * 0x00010001u;
  a.hinit = static_cast<std::uint32_t>(-bias * sum_kx);
  a.ksize = ksize;
  a.width = width;
  a.dst = dst.data;
  a.dst_pitch = dst.pitch;
  const FilterPolicy& pol = current_filter_policy();
  if constexpr (kIsColourSrc<Src>) {  // docs/decisions/002-gaussian-staged-colour.md
    static_assert(std::is_same_v<Epi, GaussQ16Epilogue>, "colour sources: the gaussian only");
    return launch_fast_staged(src, a, ksize / 2, y0, y1, epi, ctx, stream,
                              launch_rows(rows_per_warp, pol.staged_rows));
  } else {
    // Strips of 480 outputs reading 496 columns from x0 (launch/strips.h); the right edge tile
    // takes ≤ 64 columns, or one more strip moved left leaves it ≤ 31.
    const StripPlacement sp = place_strips(width, kFastWarpOut, kFastWarpOut + 16, 16, kSepTileW);
    a.warps_fast = sp.strips;
    a.x0_last = sp.x0_last;
    a.grid = StripGrid(y0, y1, static_cast<int>(div_up(a.warps_fast, kFastThreads / 32)),
                       launch_rows(rows_per_warp, fast_rows_per_warp(ksize / 2, width, y1 - y0,
                                                                     device_info().sm_count, pol)),
                       kSepTileH);
    const unsigned grid = a.grid.blocks();
    a.grid.early = ctx.early_trigger;
    const int r = ksize / 2;
    std::size_t smem = separable_smem_bytes(r, r);
    if constexpr (kFastUsesRing<Src, Epi>) {
      smem = std::max<std::size_t>(smem, (kFastThreads / 32) * kFastRingWarpBytes);
    }
    return with_radius(r, [&](auto rc) {
      return launch_pdl(fast_separable_kernel<decltype(rc)::value, Src, Epi>, grid, kFastThreads,
                        smem, stream, src, a, epi);
    });
  }
}

}  // namespace jetpipe::dev
