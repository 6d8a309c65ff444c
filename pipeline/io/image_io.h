// SPDX-License-Identifier: MIT
// Reading and writing single image files. PGM/PPM always; PNG, JPEG, BMP, TIFF through OpenCV when
// built with it. Float images are written as PFM without OpenCV, as TIFF with it.
#pragma once

#include <string>

#include "core/image.h"

namespace jetpipe {

bool have_opencv_codecs();

// Reads a GRAY8 or BGR8 image (colour PPM/PNG/JPEG are returned as BGR8; alpha is dropped). Throws
// jetpipe::Error (kind kInput) naming the file and what is wrong (missing, truncated, not an image,
// unsupported: 16-bit unsigned, PNM maxval > 255). Files write_image made of S16/F32 read back too:
// .pfm as F32, single-channel .tiff as S16 or F32. The image is allocated through `alloc` (a frame
// pool; empty: ordinary host memory), whose pitch may be padded.
HostImage read_image(const std::string& path, const ImageAllocator& alloc = {});

// Writes the image; the extension picks the codec (.pgm/.ppm/.pfm built in; others need OpenCV).
// GRAY8 → pgm/png; the colour layouts (BGR8, RGB8, BGRx, RGBx, RGBA: byte 3 dropped) and NV12 (as
// OpenCV's COLOR_YUV2BGR_NV12 converts it, convert.h) → ppm/png; S16 and F32 → tiff (OpenCV) or
// pfm. Throws on failure.
void write_image(const std::string& path, const ImageView& image);

// The extension write_image should use for this format on this build ("png", "pgm", "tiff", ...).
std::string preferred_extension(PixelFormat format);

// Natural ("human") order: "frame2" < "frame10". Digit runs compare by value, text byte by byte;
// on a tie, the first digit run of different length decides, shorter first ("f10" < "f010").
bool natural_less(const std::string& a, const std::string& b);

}  // namespace jetpipe
