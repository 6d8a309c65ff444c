// SPDX-License-Identifier: MIT
// Device frames (pipeline/io/source.h, DeviceFrame) as the executors take them: the checks that
// turn a bad one into one frame error, and the host copy for where the pixels must reach the CPU
// (the host executor, a sink that keeps the frame).
#pragma once

#include "core/image.h"
#include "pipeline/io/source.h"

namespace jetpipe {

// Throws jetpipe::Error (kInput) saying what is wrong with `d` for the current CUDA device: its
// view (a frame format, positive size, pitches at least a row, the planes present) and its memory
// (pageable host memory or another device's is refused). Needs a CUDA build: throws otherwise.
void check_device_frame(const DeviceFrame& d);

// A host copy of the frame's pixels (both planes of NV12), after its ready event or stream; the
// calling thread waits for the copy. Throws in builds without CUDA.
HostImage download_device_frame(const DeviceFrame& d);

}  // namespace jetpipe
