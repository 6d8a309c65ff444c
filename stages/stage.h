// SPDX-License-Identifier: MIT
// The Stage interface: what the engine (pipeline/) knows of a stage. A stage reads one named image,
// and writes one named image (image stages) or returns a small result (reductions, detection).
//
// Host execution of one frame, for K row strips: begin_frame(); then for each pass p in
// [0, passes()): run_cpu(p, strip k, rows [y0, y1)) for every strip in order, then end_pass(p);
// then result(). Strip outputs cover disjoint rows; inputs are whole frames, so halos read the real
// neighbouring rows and the border applies at the image's own edges only. Partials merge in strip
// order in end_pass, so results do not depend on K.
#pragma once

#include <memory>
#include <string>

#include "pipeline/core/image.h"
#include "pipeline/core/results.h"

namespace jetpipe {

class Stage {
 public:
  virtual ~Stage() = default;

  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  const std::string& input() const { return input_; }
  const std::string& output() const { return output_; }  // empty for stages without an image
  bool has_output() const { return !output_.empty(); }
  std::string label() const { return "stage '" + name_ + "' (" + type_ + ")"; }

  // Whether the stage reads images of this format; if not, *why says what it accepts.
  virtual bool accepts(PixelFormat in, std::string* why) const = 0;
  // The format of the output image for an accepted input format (image stages).
  virtual PixelFormat output_format(PixelFormat in) const { return in; }
  // Input rows needed above and below each output row.
  virtual int halo() const { return 0; }

  virtual int passes() const { return 1; }
  virtual void begin_frame(const ImageView& /*in*/, int /*strips*/) {}
  virtual void run_cpu(int pass, const ImageView& in, const ImageView& out, int strip, int y0,
                       int y1) = 0;
  virtual void end_pass(int /*pass*/) {}
  virtual StageResult result() const { return {}; }

  // Set once by the registry when the stage is built from its declaration.
  void set_identity(std::string type, std::string name, std::string input, std::string output) {
    type_ = std::move(type);
    name_ = std::move(name);
    input_ = std::move(input);
    output_ = std::move(output);
  }

 private:
  std::string type_, name_, input_, output_;
};

// "gray8 only" style helper for accepts().
bool accept_formats(PixelFormat in, std::initializer_list<PixelFormat> ok, std::string* why);

}  // namespace jetpipe
