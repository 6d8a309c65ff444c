// SPDX-License-Identifier: MIT
// convolve: OpenCV filter2D (correlation, anchor at the centre) on GRAY8 with a rows × cols kernel
// (odd sizes up to 15 × 15), plus delta, saturated to GRAY8.
// Arithmetic, which a GPU twin can repeat bit for bit: a float accumulator starts at float(delta)
// and adds tap · pixel for the taps in row-major order (product and sum each rounded to float, no
// fused multiply-add), then cvRound and saturate. A constant border is
// saturate_cast<uchar>(border.value).
#pragma once

#include <vector>

#include "core/border.h"
#include "core/image.h"

namespace jetpipe {

struct ConvolveParams {
  int rows = 3, cols = 3;
  std::vector<float> taps;  // rows · cols, row-major
  double delta = 0;
  Border border;
};

inline int convolve_halo(const ConvolveParams& p) { return p.rows / 2; }

enum class ConvolveArith { kInteger, kFused, kGeneral, kNone };

void convolve_ref(const ConvolveParams& p, const ImageView& src, const ImageView& dst, int y0,
                  int y1);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>

#include "kernels/texture.h"

namespace jetpipe {

// The arithmetic the CUDA twin's strip kernel (square 3, 5, 7) uses for these taps and delta, each
// equal to the twin bit for bit (kernels/filters/conv_strip.cuh): kInteger where every partial sum
// of the twin is exact (integer and dyadic taps), kFused where every product is exact, kGeneral for
// other finite taps; kNone (a tap or delta not finite, a tap of 2^100 or more, another shape): the
// tile engine only.
ConvolveArith convolve_arith(const ConvolveParams& p);
const char* to_string(ConvolveArith a);

// CUDA twin of convolve_ref, bit for bit: output rows [y0, y1) of dst (GRAY8, src's size) from the
// whole src (GRAY8). rows, cols odd, 1..15, taps.size() == rows · cols. Per pixel, in the twin's
// order: acc = float(delta), then acc = acc + tap · pixel over the taps in row-major order, each
// product and sum rounded to float (no fused multiply-add), then saturate_cast<uchar>. Any size,
// pitch, ROI. Asynchronous on `stream`; no allocation; returns the launch's error. options: rows a
// warp of the strip kernel (benchmarks, tests; results never depend on it).
cudaError_t launch_convolve(const ConvolveParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, cudaStream_t stream,
                            FilterPath path = FilterPath::kAuto,
                            const FilterLaunchOptions& options = {});

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
