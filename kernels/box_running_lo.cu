// SPDX-License-Identifier: MIT
// The running box's launches (kernels/filters/running_box_launch.cuh) for radii 1..8 (ksize 3..17;
// box_running_hi.cu has 9..15).
// Two files beside box.cu, so that a build compiles them at once: box.cu with every radius was
// the build's longest compile (684 s of a 1,111 s build on 2 cores, 3 architectures).
#include "kernels/filters/running_box_launch.cuh"

namespace jetpipe::dev {

template cudaError_t launch_running_box_r<1>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<2>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<3>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<4>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<5>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<6>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<7>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);
template cudaError_t launch_running_box_r<8>(const GlobalSrc&, const RunBoxArgs&, const RunBoxArgs&,
                                             const BoxEpilogue&, cudaStream_t);

}  // namespace jetpipe::dev
