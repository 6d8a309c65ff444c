// SPDX-License-Identifier: MIT
// CUDA twin of box: exact integer window sums, then the rounded mean or the saturated sum. Kernel
// bodies in kernels/filters/: fast_kernel.cuh (ksize ≤ 9 below the policy's box_running_min_ksize,
// or in launches of at most box_window_px), tile_box.cuh (launches of at most box_tile_px above
// that; ksize > 31 at every size; the running kernel's edge columns), running_box.cuh (running
// sums, ksize 3..31, larger launches; its launches compiled in box_running_lo.cu and _hi.cu);
// separable.cuh (ksize > 9 through BoxEngine::kWindow, for benchmarks).
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>

#include "kernels/box.h"
#include "kernels/filters/box_mean.h"
#include "kernels/filters/fast_dispatch.cuh"
#include "kernels/filters/running_box.cuh"
#include "kernels/filters/separable.cuh"
#include "kernels/filters/tile_box.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/launch/launch_config.cuh"
#include "kernels/launch/pdl_launch.cuh"
#include "kernels/launch/strips.h"

namespace jetpipe {

namespace {

// ksize > 9 (separable engine): BoxMean64's output.
struct BoxStore {
  std::uint8_t* dst;
  std::size_t pitch;
  dev::BoxMean64 mean;
  __device__ void operator()(int x, int y, int sum) const {
    dst[static_cast<std::size_t>(y) * pitch + x] =
        static_cast<std::uint8_t>(mean(static_cast<std::uint32_t>(sum)));
  }
};

static_assert(2 * kRunBoxMaxRadius + 1 <= dev::kBoxMagic32MaxKsize &&
                  2 * kFastMaxRadius + 1 <= dev::kBoxMagic32MaxKsize,
              "the fast and running kernels' mean takes the 32-bit box_magic");

cudaError_t launch_tile_box(const dev::GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                            int y0, int y1, const LaunchContext& ctx, cudaStream_t stream);
cudaError_t launch_tile_box_edges(const dev::GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                                  int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                                  int left_cols, int right_x0);

// Rows a warp of the running kernel: the policy's for the ksize, fewer (down to run_box_rows_min)
// where the launch would otherwise not fill the device.
int run_box_rows(int ksize, int width, int rows, int sm_count, const FilterPolicy& p) {
  return dev::rows_to_fill(
      rows, (width + kRunBoxWarpOut - 1) / kRunBoxWarpOut, sm_count, p.run_box_warps_per_sm,
      ksize >= p.run_box_wide_ksize ? p.run_box_rows_wide : p.run_box_rows, p.run_box_rows_min);
}

// The running kernel over [y0, y1). Launches above options.box_split_px of 16-byte aligned views
// at least 512 wide (unless options.box_edge_rows asks for the edge kernel): every strip from
// column 16 in the interior kernel, the last one moved left onto a 16-byte boundary (place_strips),
// then the tile engine over the columns left at both ends. Other launches above
// options.box_split_px: the interior strips (strips 1 .. n − 1 whose 496 columns lie inside the
// image, 16-byte aligned views: cp.async alone) with the policy's rows a warp, then the edge strips
// (the first, the last ones) with the rows a warp that fit them in one wave (options.box_edge_rows
// where > 0). The interior kernel triggers its dependent at its end, so the second kernel's blocks
// do not sit waiting in its SMs. Smaller launches and unaligned views: the edge kernel takes every
// strip with the policy's rows. The last kernel triggers the stage after as ctx says.
cudaError_t launch_running_box(const dev::GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                               int y0, int y1, const dev::BoxEpilogue& epi,
                               const LaunchContext& ctx, cudaStream_t stream,
                               const FilterLaunchOptions& options) {
  const dev::DeviceInfo& d = dev::device_info();
  const long long split_px = options.box_split_px < 0 ? kRunBoxSplitPx : options.box_split_px;
  const long long px = static_cast<long long>(dst.width) * (y1 - y0);
  const bool large = px > split_px;
  const bool tile_edges =
      large && s.vec && dst.width >= kRunBoxWarpOut + 32 && options.box_edge_rows <= 0;
  dev::RunBoxArgs a{};
  a.dst = dst.data;
  a.dst_pitch = dst.pitch;
  a.width = dst.width;
  a.x_first = 0;
  a.x_last = std::numeric_limits<int>::max();
  a.y0 = y0;
  a.y1 = y1;
  a.vec_out = dev::aligned16(dst);
  dev::RunBoxArgs ai = a, ae = a;  // ae.strips.segs 0: no edge kernel
  ai.rows_per_warp = dev::launch_rows(
      options.rows_per_warp,
      run_box_rows(p.ksize, dst.width, y1 - y0, d.sm_count, dev::current_filter_policy()));
  ai.early = false;
  dev::StripPlacement pl;
  if (tile_edges) {
    // Strips from column 16, the last one moved left onto a 16-byte boundary, so that each reads
    // 16 aligned columns either side inside the row; the tile engine the columns left.
    pl = dev::place_strips(dst.width, kRunBoxWarpOut, kRunBoxWarpOut + 16, 16, kTileBoxW);
    ai.strips = {pl.strips, pl.strips, 0};
    ai.x_first = 16;
    ai.x_last = pl.x0_last;
  } else {
    const dev::RunBoxParts parts =
        dev::run_box_parts(dev::run_box_split(dst.width, kRunBoxWarpOut, s.vec && large));
    ai.strips = parts.inner;  // segs 0: no interior kernel
    ae.strips = parts.edge;
    ae.rows_per_warp =
        parts.inner.segs == 0 ? ai.rows_per_warp : options.box_edge_rows;  // 0: one wave
    ae.early = ctx.early_trigger;
  }
  if (cudaError_t e = dev::with_run_box_radius(p.ksize / 2, [&](auto rc) {
        return dev::launch_running_box_r<decltype(rc)::value>(s, ai, ae, epi, stream);
      })) {
    return e;
  }
  return tile_edges ? launch_tile_box_edges(s, p, dst, y0, y1, ctx, stream, 16, pl.edge_x0)
                    : cudaSuccess;
}

// The tile engine over every column of [y0, y1): tiles of kTileBoxH rows × kTileBoxW columns, any
// radius (the running kernel's edge columns: launch_tile_box_edges).
cudaError_t launch_tile_box(const dev::GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                            int y0, int y1, const LaunchContext& ctx, cudaStream_t stream) {
  const dev::BoxMean64 mean = dev::BoxMean64::make(p.normalize, p.ksize);
  dev::TileBoxArgs a{};
  a.dst = dst.data;
  a.dst_pitch = dst.pitch;
  a.width = dst.width;
  a.r = p.ksize / 2;
  a.vec_out = dev::aligned16(dst);
  // gridDim.y ≤ 65535: taller launches go in parts of 65535 tiles (the early trigger on the last).
  constexpr int kPartRows = 65535 * kTileBoxH;
  for (int ys = y0; ys < y1; ys = a.y1) {
    a.y0 = ys;
    a.y1 = y1 - ys > kPartRows ? ys + kPartRows : y1;
    a.early = ctx.early_trigger && a.y1 == y1;
    const dim3 grid(dev::div_up(static_cast<long long>(dst.width), kTileBoxW),
                    dev::div_up(static_cast<long long>(a.y1 - a.y0), kTileBoxH));
    if (cudaError_t e = dev::launch_pdl(dev::tile_box_kernel, grid, kTileBoxThreads,
                                        dev::tile_box_smem_bytes(a.r), stream, s, a, mean)) {
      return e;
    }
  }
  return cudaSuccess;
}

// The tile engine over columns [0, left_cols) and [right_x0, width) of [y0, y1) (the running
// kernel's edges), each part in tiles of its own shape (tile_box_part), one launch.
cudaError_t launch_tile_box_edges(const dev::GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                                  int y0, int y1, const LaunchContext& ctx, cudaStream_t stream,
                                  int left_cols, int right_x0) {
  dev::TileBoxPartsArgs a{};
  a.dst = dst.data;
  a.dst_pitch = dst.pitch;
  a.y0 = y0;
  a.y1 = y1;
  a.r = p.ksize / 2;
  a.vec_out = dev::aligned16(dst);
  a.early = ctx.early_trigger;
  const int rows = y1 - y0;
  a.part[0] = dev::tile_box_part(0, std::min(left_cols, dst.width), rows, a.r);
  a.part[1] = dev::tile_box_part(right_x0, std::max(right_x0, dst.width), rows, a.r);
  std::size_t smem = 0;
  long long blocks = 0;
  for (const dev::TileBoxPart& part : a.part) {
    if (part.tiles == 0) continue;
    smem = std::max(smem, dev::tile_box_smem_bytes(part.tw, part.th, a.r));
    blocks += part.tiles;
  }
  if (blocks == 0) return cudaSuccess;
  return dev::launch_pdl(dev::tile_box_parts_kernel, dim3(static_cast<unsigned>(blocks)),
                         kTileBoxThreads, smem, stream, s, a,
                         dev::BoxMean64::make(p.normalize, p.ksize));
}

}  // namespace

cudaError_t launch_box(const BoxParams& p, const FilterSource& src, const ImageView& dst, int y0,
                       int y1, const LaunchContext& ctx, cudaStream_t stream, FilterPath path,
                       const FilterLaunchOptions& options) {
  if (cudaError_t e = dev::check_filter_views(src.view, dst, PixelFormat::kGray8, y0, y1)) return e;
  if (p.ksize < 1 || p.ksize % 2 == 0 || p.ksize > 2 * kSepMaxRadius + 1) {
    return cudaErrorInvalidValue;
  }
  bool tex = false;
  const FilterPolicy& pol = dev::current_filter_policy();
  if (cudaError_t e = dev::resolve_path(src, p.border, path, pol.box, &tex)) return e;
  if (y0 == y1) return cudaSuccess;
  if (p.ksize == 1) {  // the sum (and mean) of one pixel is the pixel
    return cudaMemcpy2DAsync(dst.row<std::uint8_t>(y0), dst.pitch, src.view.row<std::uint8_t>(y0),
                             src.view.pitch, src.view.row_bytes(),
                             static_cast<std::size_t>(y1 - y0), cudaMemcpyDefault, stream);
  }
  int ones[2 * kSepMaxRadius + 1];
  for (int& t : ones) t = 1;
  const int w = src.view.width;
  dev::BoxEpilogue epi;
  epi.normalize = p.normalize;
  epi.area = static_cast<std::uint32_t>(p.ksize * p.ksize);
  epi.magic = dev::box_magic(2u * epi.area);
  // kAuto: the fast kernel up to box_running_min_ksize (to 9 in launches of at most
  // box_window_px), above it the tile engine in launches of at most box_tile_px and the running
  // kernel in larger ones; above 31 the tile engine. kWindow: the sliding windows (fast kernel ≤ 9,
  // separable engine above), for benchmarks.
  const long long px = static_cast<long long>(dst.width) * (y1 - y0);
  const int r = p.ksize / 2;
  BoxEngine engine = options.box_engine;
  if (engine == BoxEngine::kAuto) {
    const bool fast = r <= kFastMaxRadius &&
                      (p.ksize < pol.box_running_min_ksize || px <= pol.box_window_px);
    engine = fast                                              ? BoxEngine::kWindow
             : px <= pol.box_tile_px || r > kRunBoxMaxRadius ? BoxEngine::kTile
                                                               : BoxEngine::kRunning;
  }
  if (engine == BoxEngine::kRunning && r > kRunBoxMaxRadius) engine = BoxEngine::kWindow;
  // The running and tile engines read through global loads whatever the path (the view is the
  // texture's own linear memory): the running kernel's texture instantiations spilled, and each
  // reads an input pixel once into shared memory anyway.
  if (engine == BoxEngine::kRunning) {
    return launch_running_box(dev::make_global_src(src.view, p.border), p, dst, y0, y1, epi, ctx,
                              stream, options);
  }
  if (engine == BoxEngine::kTile) {
    return launch_tile_box(dev::make_global_src(src.view, p.border), p, dst, y0, y1, ctx, stream);
  }
  return dev::with_source(src, p.border, tex, [&](const auto& s) {
    if (r <= kFastMaxRadius) {
      return dev::launch_fast_separable(s, ones, ones, p.ksize, w, src.view.height, y0, y1, dst,
                                        epi, false, ctx, stream, options.rows_per_warp);
    }
    const BoxStore store{dst.data, dst.pitch, dev::BoxMean64::make(p.normalize, p.ksize)};
    return dev::launch_separable_tile(s, ones, p.ksize, ones, p.ksize, w, y0, y1, store, stream);
  });
}

}  // namespace jetpipe
