// SPDX-License-Identifier: MIT
// The running box kernel, radius kRunBoxSplitRadius + 1 .. kRunBoxMaxRadius
// (kernels/filters/box_running.cuh).
#include "kernels/filters/box_running.cuh"

namespace jetpipe::dev {

cudaError_t launch_running_box_hi(const GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                                  int y0, int y1, const BoxEpilogue& epi, const LaunchContext& ctx,
                                  cudaStream_t stream, int rows_per_warp) {
  return launch_running_box_in<kRunBoxSplitRadius + 1, kRunBoxMaxRadius>(
      s, p, dst, y0, y1, epi, ctx, stream, rows_per_warp);
}

}  // namespace jetpipe::dev
