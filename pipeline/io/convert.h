// SPDX-License-Identifier: MIT
// 8-bit frame images converted for the outputs (image files, video, the --annotate overlay), never
// on the way from a source to the stages: BGR8 or GRAY8 from any frame layout.
//
//   HostImage bgr = convert_8bit(frame.view(), PixelFormat::kBgr8);  // nv12, rgba8, ... → bgr8
#pragma once

#include "core/image.h"

namespace jetpipe {

// NV12 → BGR8 as OpenCV's cvtColor(COLOR_YUV2BGR_NV12) computes it: BT.601 limited range in 20-bit
// fixed point, R = (1220542 max(Y - 16, 0) + 1673527 (V - 128) + 2^19) >> 20 saturated (G, B
// alike), each pixel with the chroma pair of its 2x2 block. Odd sizes too (OpenCV takes even
// ones only). `bgr`: a BGR8 view of the same size (host memory).
void nv12_to_bgr(const ImageView& nv12, const ImageView& bgr);

// `src` (gray8, bgr8, rgb8, bgrx8, rgbx8, rgba8 or nv12) as `to` (GRAY8 or BGR8): a copy where the
// formats match. BGR8: the colours with byte 3 dropped and R, B swapped where red comes first,
// NV12 through nv12_to_bgr, GRAY8 replicated. GRAY8: (29 B + 150 G + 77 R + 128) >> 8, NV12's
// luma plane as it is (the gray image the stages read). Throws jetpipe::Error for other formats.
HostImage convert_8bit(const ImageView& src, PixelFormat to);

// Whether `f` is a frame layout of 8-bit pixels convert_8bit takes.
bool is_8bit_frame(PixelFormat f);

}  // namespace jetpipe
