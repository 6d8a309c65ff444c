// SPDX-License-Identifier: MIT
// Frame sources, opened by URI:
//   frames://DIR            every frame file in DIR (natural sort order)
//   frames://DIR/*.png      a glob (the pattern's directory, '*' and '?' in the file name)
//   DIR or a glob           the same, without the scheme
//   file://clip.y4m         YUV4MPEG2 (built in; 4:2:0 / 4:2:2 / 4:4:4 / 4:1:1 / mono, 8-bit)
//   file://clip.avi         any video OpenCV's VideoCapture opens (when built with OpenCV)
//   FILE                    a plain path to a file: the same as file://FILE
//   test://NAME[?w=W&h=H&frames=N&format=gray8|bgr8]   synthetic moving patterns, deterministic
// Frame files: PGM / PPM (P2, P3, P5, P6; 8-bit) built in; PNG / JPEG / BMP / TIFF through OpenCV.
// Folders list files by extension (case-insensitive), skip hidden files, sort with natural_less;
// glob wildcards are case-sensitive. Frame.source is the file name.
// y4m frames are GRAY8, read from the luma plane (chroma skipped; the stages work on gray);
// Frame.source "clip.y4m#3". A truncated last frame comes with .error set, then the end.
// Video (VideoCapture) frames are BGR8, Frame.source "clip.avi#3 t=120" (ms); a read failure ends.
// test:// patterns: gradient (scrolling ramps), checker (moving checkerboard), noise (seeded by the
// frame index), blobs (four Gaussian spots, sigma min(w,h)/32, bouncing); defaults 640x480, 30
// frames, bgr8; Frame.source "test:blobs#3".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "pipeline/core/image.h"

namespace jetpipe {

struct Frame {
  std::int64_t index = 0;  // 0-based position in the input
  std::string source;      // the frame file's name, or a timestamp / position for video and tests
  HostImage image;         // empty when error is set
  std::string error;       // why this frame could not be read (the run goes on)
};

class Source {
 public:
  virtual ~Source() = default;
  // Reads the next frame into *frame. Returns false at the end of the input. A frame that cannot be
  // decoded is returned with frame->error set (never skipped); a source that cannot go on at all
  // throws jetpipe::Error.
  virtual bool next(Frame* frame) = 0;
  // Frames in the input when known beforehand (frame folders, y4m files), else nullopt.
  virtual std::optional<std::int64_t> total() const { return std::nullopt; }
  // One line saying what this source is ("frames: tests/regression/frames (3 files)").
  virtual std::string describe() const = 0;
  // Whether the source produces frames in real time (camera, network): may drop when behind.
  virtual bool live() const { return false; }
};

// Opens a source; throws jetpipe::Error (kind kInput) naming the URI when it cannot be opened.
std::unique_ptr<Source> open_source(const std::string& uri);

}  // namespace jetpipe
