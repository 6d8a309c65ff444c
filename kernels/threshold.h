// SPDX-License-Identifier: MIT
// threshold: OpenCV THRESH_BINARY on GRAY8: dst = src > floor(t) ? round(max_value) : 0, with t given
// or Otsu's from the image's 256-bin histogram (OpenCV's getThreshVal_Otsu_8u, exact).
#pragma once

#include <cstdint>

#include "core/image.h"

namespace jetpipe {

int otsu_threshold(const std::uint64_t hist[256]);

void threshold_ref(double thresh, double max_value, const ImageView& src, const ImageView& dst,
                   int y0, int y1);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>  // cudaStream_t, cudaError_t only: no device headers

namespace jetpipe {

// Otsu's threshold of a 256-bin histogram in device memory (e.g. launch_histogram with default
// HistogramParams), computed on the device by one block: *threshold (device or mapped memory)
// receives otsu_threshold's result, bit-equal, as a double, ready for launch_threshold_from and
// readable as the stage's result. No host round trip; never synchronizes. The level is certified
// from error bounds on every level's sigma where the best one stands clear of the others; where it
// does not (near-ties, e.g. levels with zero counts after the best one) the kernel runs
// otsu_threshold's recurrences step for step (slower: docs/decisions/044-otsu-certified-argmax.md).
// Tests: mu1_trace, when not null, forces the step-for-step path and receives the class mean mu1
// after each level that the loop does not skip (256 doubles; skipped levels untouched); path, when
// not null, receives 1 if the certified path decided, 0 if the step-for-step one did.
cudaError_t launch_otsu_threshold(const std::uint64_t* hist256, double* threshold,
                                  cudaStream_t stream, double* mu1_trace = nullptr,
                                  int* path = nullptr);

// THRESH_BINARY on GRAY8, rows [y0, y1) of src into the same rows of dst (same size; any pitch or
// ROI; src == dst allowed): dst = src > floor(thresh) ? round(max_value) : 0, as threshold_ref.
cudaError_t launch_threshold(double thresh, double max_value, const ImageView& src,
                             const ImageView& dst, int y0, int y1, cudaStream_t stream);

// The same with the threshold read on the device from *thresh (device or mapped memory), e.g. the
// output of launch_otsu_threshold earlier in the stream.
cudaError_t launch_threshold_from(const double* thresh, double max_value, const ImageView& src,
                                  const ImageView& dst, int y0, int y1, cudaStream_t stream);

}  // namespace jetpipe
#endif
