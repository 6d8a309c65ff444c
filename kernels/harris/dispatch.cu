// SPDX-License-Identifier: MIT
// CUDA twin of harris, bit for bit: the exact integer core (gradients, products, box sums) and the
// twin's one double evaluation (harris_response: __d*_rn in the twin's order, no contraction).
// ksize 3 with block_size 3 (the default pipeline's harris) runs the tiled kernel
// (tiled_kernel.cuh) on launches of at most the policy's harris_tiled_px pixels; ksize 3 with
// block_size 3..7 otherwise the fused register-tiled kernel (fast_kernel.cuh) where the views fit
// it; everything else the tile engine (tile_kernel.cuh).
#include <cuda_runtime.h>

#include <vector>

#include "kernels/filters/source.cuh"
#include "kernels/harris.h"
#include "kernels/harris/fast_kernel.cuh"
#include "kernels/harris/tile_kernel.cuh"
#include "kernels/harris/tiled_kernel.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/launch/pdl_launch.cuh"
#include "kernels/sobel.h"

namespace jetpipe {

namespace {

void fill_taps(int dx, int dy, int ksize, int* tx, int* nx, int* ty, int* ny) {
  SobelParams sp;
  sp.dx = dx;
  sp.dy = dy;
  sp.ksize = ksize;
  std::vector<float> kx, ky;
  sobel_taps(sp, &kx, &ky);
  *nx = static_cast<int>(kx.size());
  *ny = static_cast<int>(ky.size());
  for (int i = 0; i < *nx; ++i) tx[i] = static_cast<int>(kx[i]);
  for (int i = 0; i < *ny; ++i) ty[i] = static_cast<int>(ky[i]);
}

// Rows per warp of the fast kernel for a launch of `rows` output rows and `strips` strips: the
// policy's rows, fewer (down to harris_rows_min) where the launch would otherwise not fill the
// device.
int fast_rows_per_warp(int strips, int rows, int sm_count, const FilterPolicy& p) {
  return dev::rows_to_fill(rows, strips, sm_count, p.harris_warps_per_sm, p.harris_rows,
                           p.harris_rows_min);
}

template <int LC, class Src>
cudaError_t launch_fast(const Src& src, const dev::HarrisArgs& a, int rows_per_warp,
                        const LaunchContext& ctx, cudaStream_t stream) {
  using L = dev::HarrisLanes<LC>;
  dev::HarrisFastArgs fa{};
  fa.t = a;
  const int width = a.width;
  // Strips of kOut outputs reading kNeed columns from x0 (launch/strips.h); the right edge tile
  // takes ≤ kHarrisTileW columns from a 16-column boundary, or one more strip moved left.
  const dev::StripPlacement sp =
      dev::place_strips(width, L::kOut, L::kNeed, L::kAlign, kHarrisTileW);
  fa.warps_fast = sp.strips;
  fa.x0_last = sp.x0_last;
  fa.edge_x0 = sp.edge_x0;
  fa.grid = dev::StripGrid(a.y0, a.y1,
                           static_cast<int>(dev::div_up(fa.warps_fast, kHarrisFastThreads / 32)),
                           rows_per_warp > 0
                               ? rows_per_warp
                               : fast_rows_per_warp(fa.warps_fast, a.y1 - a.y0,
                                                    dev::device_info().sm_count,
                                                    dev::current_filter_policy()),
                           kHarrisTileH);
  const unsigned grid = fa.grid.blocks();
  fa.grid.early = ctx.early_trigger;
  const std::size_t smem = dev::HarrisGeom(a.bs, a.anchor, a.r).smem_bytes();
  switch (a.bs) {
    case 3:
      return dev::launch_pdl(dev::harris_fast_kernel<3, LC, Src>, grid, kHarrisFastThreads, smem,
                             stream, src, fa);
    case 4:
      return dev::launch_pdl(dev::harris_fast_kernel<4, LC, Src>, grid, kHarrisFastThreads, smem,
                             stream, src, fa);
    case 5:
      return dev::launch_pdl(dev::harris_fast_kernel<5, LC, Src>, grid, kHarrisFastThreads, smem,
                             stream, src, fa);
    case 6:
      return dev::launch_pdl(dev::harris_fast_kernel<6, LC, Src>, grid, kHarrisFastThreads, smem,
                             stream, src, fa);
    case 7:
      return dev::launch_pdl(dev::harris_fast_kernel<7, LC, Src>, grid, kHarrisFastThreads, smem,
                             stream, src, fa);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_tiled(const HarrisParams& p, const ImageView& src, const ImageView& dst, int y0,
                         int y1, const MaxFeed& feed, const LaunchContext& ctx,
                         cudaStream_t stream) {
  dev::HarrisTiledArgs a{};
  a.src = src.data;
  a.src_pitch = src.pitch;
  a.words = dev::aligned_to(src, 4);
  a.width = src.width;
  a.height = src.height;
  a.y0 = y0;
  a.y1 = y1;
  a.hmode = p.border.mode;
  a.hfill = border_fill_u8(p.border);
  a.resp = dst.data;
  a.resp_pitch = dst.pitch;
  a.resp_pairs = dev::aligned_to(dst, 8);
  a.s2 = harris_s2(p);  // as harris_ref has it
  a.k = p.k;
  a.max_key = feed.max_key;
  // Bands only where they start on the image's 8-row grid (the kernel writes those it covers
  // whole).
  if (y0 % kFeedBandRows == 0) {
    a.bands = feed.bands;
    a.band_pitch = feed.band_pitch;
  }
  a.early = ctx.early_trigger;
  const dim3 grid(dev::div_up(src.width, dev::kHtTile),
                  dev::div_up(static_cast<unsigned>(y1 - y0), static_cast<unsigned>(dev::kHtRows)));
  return dev::launch_pdl(dev::harris_tiled_kernel<dev::kHtRows, dev::kHtThreads>, grid,
                         dev::kHtThreads, 0, stream, a);
}

cudaError_t launch_impl(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                        int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                        FilterPath path, const HarrisLaunchOptions& options, const MaxFeed& feed) {
  const int rows_per_warp = options.rows_per_warp, lane_cols = options.lane_cols;
  std::uint32_t* const max_key = feed.max_key;
  if (cudaError_t e = dev::check_filter_views(src.view, dst, PixelFormat::kF32, y0, y1)) return e;
  if (p.block_size < 1 || p.block_size > kHarrisMaxBlock ||
      (p.ksize != 1 && p.ksize != 3 && p.ksize != 5 && p.ksize != 7)) {
    return cudaErrorInvalidValue;
  }
  bool tex = false;
  const FilterPolicy& pol = dev::current_filter_policy();
  if (cudaError_t e = dev::resolve_path(src, p.border, path, pol.harris, &tex)) return e;
  if (y0 == y1) return cudaSuccess;
  // The fast kernel's shape asked for: the fast kernel.
  const long long tiled_px = options.tiled_px >= 0 ? options.tiled_px : pol.harris_tiled_px;
  if (!tex && rows_per_warp <= 0 && lane_cols <= 0 &&
      static_cast<long long>(y1 - y0) * src.view.width <= tiled_px &&
      harris_tiled_fits(p, src.view, dst)) {
    return launch_tiled(p, src.view, dst, y0, y1, feed, ctx, stream);
  }
  // Taps per thread for the last params (sobel_taps allocates); the args themselves are per call.
  struct Cache {
    int ksize = -1;
    dev::HarrisArgs a{};
  };
  thread_local Cache cache;
  if (cache.ksize != p.ksize) {
    fill_taps(1, 0, p.ksize, cache.a.gx_x, &cache.a.gx_nx, cache.a.gx_y, &cache.a.gx_ny);
    fill_taps(0, 1, p.ksize, cache.a.gy_x, &cache.a.gy_nx, cache.a.gy_y, &cache.a.gy_ny);
    cache.ksize = p.ksize;
  }
  dev::HarrisArgs a = cache.a;
  a.r = p.ksize == 1 ? 1 : p.ksize / 2;
  a.bs = p.block_size;
  a.anchor = p.block_size / 2;
  a.s2 = harris_s2(p);  // as harris_ref has it
  a.k = p.k;
  a.mode = p.border.mode;
  a.width = src.view.width;
  a.height = src.view.height;
  a.y0 = y0;
  a.y1 = y1;
  a.dst = dst.data;
  a.pitch = dst.pitch;
  a.aligned4 = dev::aligned_to(dst, 4);
  a.max_key = max_key;
  const std::size_t smem = dev::HarrisGeom(a.bs, a.anchor, a.r).smem_bytes();
  if (smem > 48 * 1024) return cudaErrorInvalidValue;  // not reached for block_size ≤ 31
  // The fast kernel's lane width: the policy's by the launch's pixels (4 columns a lane for small
  // launches: twice the warps), 4 where 8 does not fit.
  int lc = lane_cols;
  if (lc != 4 && lc != 8) {
    lc = static_cast<long long>(y1 - y0) * a.width <= pol.harris_narrow_px ? 4 : 8;
  }
  return dev::with_source(src, p.border, tex, [&](const auto& s) {
    const int w = a.width, h = a.height;
    if (lc == 8 && dev::harris_fast_fits<8>(s, p.ksize, p.block_size, w, h, dst)) {
      return launch_fast<8>(s, a, rows_per_warp, ctx, stream);
    }
    if (dev::harris_fast_fits<4>(s, p.ksize, p.block_size, w, h, dst)) {
      return launch_fast<4>(s, a, rows_per_warp, ctx, stream);
    }
    const dim3 grid(dev::div_up(a.width, kHarrisTileW), dev::div_up(y1 - y0, kHarrisTileH));
    dev::harris_tile_kernel<<<grid, kHarrisThreads, smem, stream>>>(s, a);
    return cudaPeekAtLastError();
  });
}

}  // namespace

bool harris_tiled_fits(const HarrisParams& p, const ImageView& src, const ImageView& dst) {
  return p.ksize == 3 && p.block_size == 3 && p.border.mode != BorderMode::kWrap &&
         src.format == PixelFormat::kGray8 && src.data != nullptr && src.width >= 16 &&
         src.height >= 16 && src.pitch >= src.row_bytes() && dst.format == PixelFormat::kF32 &&
         dst.data != nullptr && dst.width == src.width && dst.height == src.height &&
         dst.pitch >= dst.row_bytes() && dev::aligned_to(dst, 4);
}

cudaError_t launch_harris_tiled(const HarrisParams& p, const ImageView& src, const ImageView& dst,
                                int y0, int y1, std::uint32_t* max_key, const LaunchContext& ctx,
                                cudaStream_t stream) {
  if (!harris_tiled_fits(p, src, dst) || y0 < 0 || y0 > y1 || y1 > src.height) {
    return cudaErrorInvalidValue;
  }
  if (y0 == y1) return cudaSuccess;
  return launch_tiled(p, src, dst, y0, y1, MaxFeed{max_key}, ctx, stream);
}

cudaError_t launch_harris(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                          int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                          FilterPath path, const HarrisLaunchOptions& options) {
  return launch_impl(p, src, dst, y0, y1, ctx, stream, path, options, MaxFeed{});
}

cudaError_t launch_harris_max(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                              int y0, int y1, std::uint32_t* max_key, const LaunchContext& ctx,
                              cudaStream_t stream, FilterPath path,
                              const HarrisLaunchOptions& options) {
  return launch_harris_max(p, src, dst, y0, y1, MaxFeed{max_key}, ctx, stream, path, options);
}

cudaError_t launch_harris_max(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                              int y0, int y1, const MaxFeed& feed, const LaunchContext& ctx,
                              cudaStream_t stream, FilterPath path,
                              const HarrisLaunchOptions& options) {
  if (feed.max_key == nullptr) return cudaErrorInvalidValue;
  return launch_impl(p, src, dst, y0, y1, ctx, stream, path, options, feed);
}

}  // namespace jetpipe
JP_BLOCK_TRACE_EXPORT(harris)
