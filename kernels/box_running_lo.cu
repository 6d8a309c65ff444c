// SPDX-License-Identifier: MIT
// The running box kernel, radius 1 .. kRunBoxSplitRadius (kernels/filters/box_running.cuh).
#include "kernels/filters/box_running.cuh"

namespace jetpipe::dev {

cudaError_t launch_running_box_lo(const GlobalSrc& s, const BoxParams& p, const ImageView& dst,
                                  int y0, int y1, const BoxEpilogue& epi, const LaunchContext& ctx,
                                  cudaStream_t stream, int rows_per_warp) {
  return launch_running_box_in<1, kRunBoxSplitRadius>(s, p, dst, y0, y1, epi, ctx, stream,
                                                      rows_per_warp);
}

}  // namespace jetpipe::dev
