// SPDX-License-Identifier: MIT
// to_gray: BGR8 / RGB8, BGRx / RGBx / RGBA (byte 3 ignored, as cvtColor's BGRA2GRAY), GRAY8 and
// NV12 (its luma plane, copied) → GRAY8 with OpenCV cvtColor's fixed-point weights and rounding
// (OpenCV 4.x: 15 fractional bits; the older 14-bit weights 4899/9617/1868 differ by 1 on ~0.3% of
// colours, checked over all 2^24 against OpenCV 4.6):
//   Y = (R·9798 + G·19235 + B·3735 + 2^14) >> 15   (exact; GRAY8 input is copied).
#pragma once

#include "core/hd.h"
#include "core/image.h"

namespace jetpipe {

// The weights (OpenCV 4.x color.hpp: R2Y = 0.299, G2Y = 0.587, B2Y = 0.114 in 1/2^15, sum 2^15),
// shared by the CPU twin, the GPU kernel and the filters that read a colour frame as its gray
// image.
inline constexpr unsigned kToGrayR = 9798, kToGrayG = 19235, kToGrayB = 3735, kToGrayShift = 15;

// Y of one pixel (channels 0..255): the CPU twin's and the GPU kernel's one formula.
JP_HD unsigned to_gray_y(unsigned r, unsigned g, unsigned b) {
  return (r * kToGrayR + g * kToGrayG + b * kToGrayB + (1u << (kToGrayShift - 1))) >> kToGrayShift;
}

// The doubled weights' high and low bytes (2c = 256·hi + lo) for a pixel's bytes 0, 1, 2 in
// bytes 0, 1, 2 of a word, byte 3 zero: the GPU's conversion with dp4a (kernels/block/gray16.cuh).
// w0, w2: the weights of a pixel's bytes 0 and 2 (B and R for BGR, swapped for RGB).
struct GrayWeights {
  unsigned hi, lo;
};
JP_HD constexpr GrayWeights gray_weights(unsigned w0, unsigned w2) {
  return {(2 * w0 >> 8) | (2 * kToGrayG >> 8) << 8 | (2 * w2 >> 8) << 16,
          (2 * w0 & 0xffu) | (2 * kToGrayG & 0xffu) << 8 | (2 * w2 & 0xffu) << 16};
}
JP_HD constexpr GrayWeights gray_weights(bool rgb) {
  return rgb ? gray_weights(kToGrayR, kToGrayB) : gray_weights(kToGrayB, kToGrayR);
}

// Writes output rows [y0, y1) of dst (GRAY8, same size as src).
void to_gray_ref(const ImageView& src, const ImageView& dst, int y0, int y1);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>  // cudaStream_t, cudaError_t only: no device headers

namespace jetpipe {

// GPU to_gray: rows [y0, y1) of src (any format to_gray_ref takes) into the same rows of dst
// (GRAY8, same size; device or mapped memory; any pitch or ROI), bit-equal to to_gray_ref. 16
// pixels per thread with 16-byte loads and stores where source and destination rows line up
// (pitched images, equal ROI offsets), per pixel otherwise; GRAY8 and NV12 input is a 2D async copy
// of the (luma) rows. Never synchronizes.
cudaError_t launch_to_gray(const ImageView& src, const ImageView& dst, int y0, int y1,
                           cudaStream_t stream);

}  // namespace jetpipe
#endif
