// SPDX-License-Identifier: MIT
// The running box's launches (kernels/filters/running_box_launch.cuh) for radii 9..15
// (ksize 19..31; box_running_lo.cu has 1..8). Two files beside box.cu, so that a build compiles
// them at once: box.cu with every radius was the build's longest compile (684 s of a 1,111 s build
// on 2 cores, 3 architectures).
#include "kernels/filters/running_box_launch.cuh"

namespace jetpipe::dev {

static_assert(kRunBoxMaxRadius == 15, "every radius has its instantiation here or in _lo");

template cudaError_t launch_running_box_r<9>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<10>(const GlobalSrc&, const RunBoxArgs&,
                                              const RunBoxArgs&, const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<11>(const GlobalSrc&, const RunBoxArgs&,
                                              const RunBoxArgs&, const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<12>(const GlobalSrc&, const RunBoxArgs&,
                                              const RunBoxArgs&, const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<13>(const GlobalSrc&, const RunBoxArgs&,
                                              const RunBoxArgs&, const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<14>(const GlobalSrc&, const RunBoxArgs&,
                                              const RunBoxArgs&, const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<15>(const GlobalSrc&, const RunBoxArgs&,
                                              const RunBoxArgs&, const BoxEpilogue&, cudaStream_t);

}  // namespace jetpipe::dev
