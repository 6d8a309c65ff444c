// SPDX-License-Identifier: MIT
// launch_running_box_r (declared in running_box.cuh): the running box's kernel launches for one
// radius. Included only by the files that instantiate it (kernels/box_running_lo.cu, _hi.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/filters/running_box.cuh"
#include "kernels/launch/device_info.h"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/launch/launch_config.cuh"
#include "kernels/launch/pdl_launch.cuh"
#include "kernels/launch/strips.h"
#include "kernels/tuning_filters.h"

namespace jetpipe::dev {

// One kernel of a running-box launch: a.strips.segs column strips of rows_per_warp rows a warp;
// rows_per_warp 0 (the split's edge kernel): as many as fit its warps in one wave of this kernel's
// resident blocks on device_info()'s SMs (run_box_edge_rows, at least kRunBoxEdgeRowsMin).
template <int R, bool kEdge>
cudaError_t launch_run_box_part(const GlobalSrc& s, const RunBoxArgs& args, const BoxEpilogue& epi,
                                cudaStream_t stream) {
  const DeviceInfo& d = device_info();
  const std::size_t smem = run_box_smem_bytes(R);
  static KernelSlot slot;
  auto* kernel = running_box_kernel<R, kEdge, GlobalSrc>;
  if (cudaError_t e = allow_dynamic_smem(kernel, slot, d, static_cast<int>(smem))) return e;
  // All of the SM's shared memory to the rings (3 blocks of 72 KB at 31 × 31).
  if (cudaError_t e = prefer_max_shared(kernel, slot, d)) return e;
  RunBoxArgs a = args;
  if (a.rows_per_warp <= 0) {
    int blocks = 1;
    if (cudaError_t e =
            blocks_per_sm(kernel, slot, d, kRunBoxThreads, static_cast<int>(smem), &blocks)) {
      return e;
    }
    const long long resident = static_cast<long long>(d.sm_count) * blocks * (kRunBoxThreads / 32);
    a.rows_per_warp = run_box_edge_rows(a.strips.segs, a.y1 - a.y0, resident, kRunBoxEdgeRowsMin);
  }
  const long long warps = static_cast<long long>(a.strips.segs) *
                          div_up(static_cast<long long>(a.y1 - a.y0), a.rows_per_warp);
  const unsigned grid = div_up(warps, static_cast<long long>(kRunBoxThreads / 32));
  return launch_pdl(kernel, grid, kRunBoxThreads, smem, stream, s, a, epi);
}

template <int R>
cudaError_t launch_running_box_r(const GlobalSrc& s, const RunBoxArgs& inner,
                                 const RunBoxArgs& edge, const BoxEpilogue& epi,
                                 cudaStream_t stream) {
  if (inner.strips.segs > 0) {
    if (cudaError_t e = launch_run_box_part<R, false>(s, inner, epi, stream)) return e;
  }
  if (edge.strips.segs == 0) return cudaSuccess;
  return launch_run_box_part<R, true>(s, edge, epi, stream);
}

}  // namespace jetpipe::dev
