// SPDX-License-Identifier: MIT
#pragma once

#include <cuda_runtime_api.h>

namespace jetpipe::bench {

// Holds `stream` until *release (host-mapped) becomes nonzero; sets *timed_out (device-visible)
// and returns after about a second if it never does. Never synchronizes.
cudaError_t launch_stream_blocker(const volatile int* release, int* timed_out, cudaStream_t stream);

}  // namespace jetpipe::bench
