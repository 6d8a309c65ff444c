// SPDX-License-Identifier: MIT
// The Stage interface: what the engine (pipeline/) knows of a stage. A stage reads one named image,
// and writes one named image (image stages) or returns a small result (reductions, detection).
//
// Host execution of one frame, for K row strips: begin_frame(); then for each pass p in
// [0, passes()): run_cpu(p, strip k, rows [y0, y1)) for every strip in order, then end_pass(p);
// then result(). Strip outputs cover disjoint rows; inputs are whole frames, so halos read the real
// neighbouring rows and the border applies at the image's own edges only. Partials merge in strip
// order in end_pass, so results do not depend on K.
//
// GPU execution (CUDA builds): make_gpu() gives a StageGpu, one per frame in flight. For each frame
// the executor binds every stage to that frame's device-accessible views, then, per pass, launches
// the pass on every strip (strip k on its stream, after the rows it reads have been written), then
// the pass's merge on the frame's main stream after all strips of the pass. After the frame's
// completion event, result() reads the host copy. Same strips, same merges: results equal the CPU
// twin whatever the strip count, streams or frames in flight.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/image.h"
#include "core/results.h"
#include "kernels/launch_context.h"
#include "kernels/max_feed.h"

struct CUstream_st;

namespace jetpipe {

using GpuStream = CUstream_st*;  // cudaStream_t without the CUDA headers

class Stage;

// Where a GPU stage's small results live: written by the kernels straight into mapped host memory,
// or into device memory and copied back by the stage's last merge.
enum class ResultMemory : std::uint8_t { kMapped, kCopy };

struct GpuBinding {
  ImageView in;   // the input image (device, mapped or managed memory)
  ImageView out;  // the output image (image stages)
  int strips = 1;
  ResultMemory results = ResultMemory::kCopy;
  // The frame's main stream, which runs before every launch of the frame: bind() queues the
  // one-time initialization of what it (re)allocates (zeroed workspaces) here.
  GpuStream stream = nullptr;
  // The stage's launches run on a side stream beside other stages' kernels (a result-only stage
  // on one stream): a launch shape that leaves them SMs is the better one.
  bool beside = false;
};

class StageGpu {
 public:
  virtual ~StageGpu() = default;
  // Before each frame's launches and outside any graph capture: makes workspaces, textures and
  // result memory fit the binding (allocating only when it changed). Returns true when it made or
  // replaced something a captured graph refers to. Throws jetpipe::Error on CUDA failures.
  virtual bool bind(const GpuBinding& b) = 0;
  // Pass `pass` over rows [y0, y1) of strip `strip`, asynchronously on `stream`, as `ctx` says
  // (kernels/launch_context.h); throws on a launch error.
  virtual void launch(int pass, int strip, int y0, int y1, const LaunchContext& ctx,
                      GpuStream stream) = 0;
  // Whether the pass ends with a merge (per-frame work after all its strips, e.g. Otsu's threshold,
  // the detection's finish, the results' copy back).
  virtual bool merges_after(int /*pass*/) const { return false; }
  virtual void merge(int /*pass*/, GpuStream /*stream*/) {}
  // Whether a strip's launch of pass `pass` (≥ 1) waits for every strip of the pass before it (the
  // default). false: it waits only for the input rows it reads, as pass 0 does (the detection whose
  // maximum its producer gathers: a strip's candidates run with the maximum gathered so far).
  virtual bool joins_before(int pass) const { return pass > 0; }
  // After the frame completed: its result, from host memory.
  virtual StageResult result() const { return {}; }
  // Fusion: `later`, a later stage reading the same image, may be computed by this stage's
  // launches; returns true if so (the executor then never launches `later`, but asks it for its
  // result). Called once, before the first bind.
  virtual bool absorb(StageGpu& /*later*/) { return false; }
  // Fusion with the producer: `producer` writes this stage's input, an image nothing else reads or
  // keeps; this stage may read the producer's input instead and compute the producer's work as it
  // reads (to_gray into the filter after it). Returns true if so: the executor then never launches
  // the producer, never allocates its output, and binds this stage to the producer's input. Called
  // once, before the first bind.
  virtual bool fuse_producer(const Stage& /*producer*/) { return false; }
  // Maximum feeding: `reader`, a later stage reading this stage's output image, uses that image's
  // maximum (wants_maximum); this stage may gather it as it writes the image, into the reader's
  // maximum_feed(), sparing the reader a pass over the image (harris into a detection with
  // quality). Returns true if so; the executor then calls reader.set_maximum_fed(). Called once,
  // before the first bind.
  virtual bool feed_maximum(StageGpu& /*reader*/) { return false; }
  virtual bool wants_maximum() const { return false; }
  virtual void set_maximum_fed() {}
  // Where a producer gathers this stage's input maximum (kernels/max_feed.h: the maximum's order
  // key and, optionally, band maxima), valid from this stage's bind for the frame until the next
  // bind; max_key null when not wanted.
  virtual MaxFeed maximum_feed() { return {}; }
};

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
  // Whether rows near one edge read rows near the opposite edge (a wrap border): a strip at the top
  // then also waits for the bottom rows of its input.
  virtual bool wraps() const { return false; }

  virtual int passes() const { return 1; }
  virtual void begin_frame(const ImageView& /*in*/, int /*strips*/) {}
  virtual void run_cpu(int pass, const ImageView& in, const ImageView& out, int strip, int y0,
                       int y1) = 0;
  virtual void end_pass(int /*pass*/) {}
  virtual StageResult result() const { return {}; }

  // The GPU twin for one frame in flight; nullptr in builds without CUDA.
  virtual std::unique_ptr<StageGpu> make_gpu() const = 0;

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
