// SPDX-License-Identifier: MIT
// The running box kernel's launch (kernels/filters/running_box.cuh), for kernels/box.cu. Its 15
// radii are compiled in two translation units, box_running_lo.cu (radius 1..kRunBoxSplitRadius)
// and box_running_hi.cu (the rest), so that a build compiles them side by side: in one unit they
// were the longest compile of the 3-architecture build (401 s, alone for its last 130 s, of the
// 735 s build on the 2-core CI machine).
#pragma once

#include <cuda_runtime.h>

#include <atomic>

#include "kernels/box.h"
#include "kernels/filters/fast_dispatch.cuh"  // launch_rows; before launch_config.cuh's div_up
#include "kernels/filters/running_box.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/launch/launch_config.cuh"
#include "kernels/launch/pdl_launch.cuh"

namespace jetpipe::dev {

// The larger radii compile longer (sm_90, nvcc 13.0, the 2-core machine: 1..10 in 59 s against
// 11..15 in 29; 1..8 in 35 against 9..15 in 49): 9 halves it about evenly.
constexpr int kRunBoxSplitRadius = 9;

// Radius 1..kRunBoxSplitRadius / kRunBoxSplitRadius + 1..kRunBoxMaxRadius (p.ksize / 2).
cudaError_t launch_running_box_lo(const GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                                  int y0, int y1, const BoxEpilogue& epi, const LaunchContext& ctx,
                                  cudaStream_t stream, int rows_per_warp);
cudaError_t launch_running_box_hi(const GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                                  int y0, int y1, const BoxEpilogue& epi, const LaunchContext& ctx,
                                  cudaStream_t stream, int rows_per_warp);

// Rows a warp of the running kernel: the policy's, fewer (down to run_box_rows_min) where the
// launch would otherwise not fill the device.
inline int run_box_rows(int width, int rows, int sm_count, const FilterPolicy& p) {
  return rows_to_fill(rows, (width + kRunBoxWarpOut - 1) / kRunBoxWarpOut, sm_count,
                      p.run_box_warps_per_sm, p.run_box_rows, p.run_box_rows_min);
}

template <int kLo, int kHi, class Src>
cudaError_t launch_running_box_in(const Src& s, const BoxParams& p, const ImageView& dst, int y0,
                                  int y1, const BoxEpilogue& epi, const LaunchContext& ctx,
                                  cudaStream_t stream, int rows_per_warp) {
  const DeviceInfo& d = device_info();
  RunBoxArgs a{};
  a.dst = dst.data;
  a.dst_pitch = dst.pitch;
  a.width = dst.width;
  a.y0 = y0;
  a.y1 = y1;
  a.segs = static_cast<int>(div_up(static_cast<long long>(dst.width), kRunBoxWarpOut));
  a.rows_per_warp = launch_rows(
      rows_per_warp, run_box_rows(dst.width, y1 - y0, d.sm_count, current_filter_policy()));
  a.vec_out = aligned16(dst);
  a.early = ctx.early_trigger;
  const long long warps =
      static_cast<long long>(a.segs) * div_up(static_cast<long long>(y1 - y0), a.rows_per_warp);
  const unsigned grid = div_up(warps, static_cast<long long>(kRunBoxThreads / 32));
  const int r = p.ksize / 2;
  const std::size_t smem = run_box_smem_bytes(r);
  return with_run_box_radius_in<kLo, kHi>(r, [&](auto rc) {
    constexpr int kR = decltype(rc)::value;
    static KernelSlot slot;
    auto* kernel = running_box_kernel<kR, Src>;
    if (cudaError_t e = allow_dynamic_smem(kernel, slot, d, static_cast<int>(smem))) return e;
    // All of the SM's shared memory to the rings (3 blocks of 72 KB at 31 × 31), once a device.
    static std::atomic<unsigned> carved{0};
    const unsigned bit = 1u << (d.device % 32);
    if ((carved.load(std::memory_order_acquire) & bit) == 0) {
      if (cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                               cudaFuncAttributePreferredSharedMemoryCarveout,
                                               cudaSharedmemCarveoutMaxShared)) {
        return e;
      }
      carved.fetch_or(bit, std::memory_order_acq_rel);
    }
    return launch_pdl(kernel, grid, kRunBoxThreads, smem, stream, s, a, epi);
  });
}

}  // namespace jetpipe::dev
