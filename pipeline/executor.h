// SPDX-License-Identifier: MIT
// Executors run the stages on frames. The interface is a stream: submit frames in input order, take
// records back in the same order (an executor may hold several frames in flight; flush() ends the
// stream so every submitted frame yields its record).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/config.h"
#include "pipeline/io/source.h"
#include "pipeline/platform.h"

namespace jetpipe {

// One span of GPU work of a frame, for timelines and overlap figures: times in ms on the
// executor's clock (CUDA events, from an origin recorded when the executor started).
struct Span {
  enum Kind : std::uint8_t { kH2D, kCompute, kD2H };
  Kind kind = kCompute;
  std::string name;   // "h2d", "d2h", a stage's name, or "<stage> merge"
  std::string track;  // the stream: "frame slot 0 strip 1", "frame slot 0 main"
  double start_ms = 0, end_ms = 0;
};

// An image left in device memory for the caller (make_executor's device_images): its own buffer,
// written before the record is handed over (no stream to wait on), valid while `owner` is held
// (freed stream-ordered after the last holder lets go).
struct KeptDeviceImage {
  ImageView view;  // device pointers, the image's format and pitch
  int device = 0;  // the CUDA device
  std::shared_ptr<void> owner;
};

struct FrameRecord {
  std::int64_t index = 0;
  std::string source;
  std::string input;            // the input's name (Frame::input; "" when unnamed)
  std::optional<double> pts_s;  // the frame's time in its stream (Frame::pts_s)
  int width = 0, height = 0;
  std::string error;  // the frame failed (read or process); results are then empty
  std::vector<std::pair<std::string, StageResult>> results;  // result stages, in stage order
  std::vector<double> stage_ms;                              // per stage, in stage order
  double latency_ms = 0;                                     // submit → record ready
  // capture → record ready, for frames with a capture time (Frame::capture: live sources)
  std::optional<double> capture_latency_ms;
  std::map<std::string, HostImage> images;                   // images asked for (for sinks)
  std::map<std::string, KeptDeviceImage> device_images;      // images asked for on the device
  std::vector<Span> spans;  // GPU executors: the frame's copies and stages per strip (timed frames)
  double gpu_start_ms = 0;  // GPU executors: the frame's first event, on the spans' clock
  double gpu_ms = 0;        // GPU executors: first to last event of the frame
  std::optional<std::chrono::steady_clock::time_point> capture;  // Frame::capture
};

// A frame's record as an executor starts it: index, source, input, stream time and the frame's
// read error (the capture time is kept for stamp_ready).
FrameRecord record_for(const Frame& frame);
// Sets the record's latencies as it becomes ready: submit → now and, for a frame with a capture
// time, capture → now.
void stamp_ready(FrameRecord* record, std::chrono::steady_clock::time_point submitted);

class Executor {
 public:
  virtual ~Executor() = default;
  // Queues a frame (a frame with .error set passes straight through as an error record).
  virtual void submit(Frame frame) = 0;
  // Takes the next record in input order; with wait = false returns false if none is ready.
  virtual bool take(FrameRecord* record, bool wait) = 0;
  // Frames submitted and not yet taken.
  virtual std::size_t in_flight() const = 0;
  // Where sources should put frames (the frame pool); empty: ordinary host memory.
  virtual ImageAllocator allocator() const { return {}; }
  // One line: the strategy and its shape ("pinned-chunked, 4 strips on 4 streams, 2 frames ...").
  virtual std::string describe() const = 0;
  // Milliseconds the calling thread has spent blocked on the device inside submit() and take()
  // (waiting for a frame slot or a record), so far: the rest of their time is host work.
  virtual double blocked_ms() const { return 0; }
};

// `keep_images`: names of images copied into each record's `images` (for sinks that save them);
// `device_images`: names of images each record gets in device memory (`device_images`, the CUDA
// backend only: a config error on the CPU backend). The config must outlive the executor. Throws a
// config error when the profile cannot run here.
std::unique_ptr<Executor> make_executor(const PipelineConfig& config,
                                        const PlatformProfile& profile,
                                        std::vector<std::string> keep_images,
                                        std::vector<std::string> device_images = {});
// The CUDA executor (pipeline/cuda_executor.cpp) for profiles with backend cuda; throws a config
// error in builds without CUDA.
std::unique_ptr<Executor> make_cuda_executor(const PipelineConfig& config,
                                             const PlatformProfile& profile,
                                             std::vector<std::string> keep_images,
                                             std::vector<std::string> device_images = {});

// Throws the frame error for a stage that cannot read its input image's format (the hint names
// to_gray when the stage reads the frame itself). Both executors check every frame with it.
void check_stage_input(const Stage& stage, PixelFormat in);

// The q-quantile (0..1) of the samples, nearest rank (v[round(q·(n−1))]); 0 when empty.
double percentile(std::vector<double> v, double q);

// Row boundaries of K strips over `height` rows: strip k is [b[k], b[k+1]). K is clamped to height.
// ratio (0, 1]: each strip holds `ratio` times the rows of the one before it (1: equal strips;
// every strip at least one row).
std::vector<int> strip_bounds(int height, int strips, double ratio = 1.0);
// A stage's strips when the frame's are b: moved up by `skew` rows (the first starting at 0, the
// last ending at b.back()), every strip keeping at least one row. The CUDA executor skews each
// stage by its producer's skew plus its own halo, so that strip k of a chain of stages reads only
// rows that strips 0..k of the stage before it write.
std::vector<int> skewed_bounds(const std::vector<int>& b, int skew);

}  // namespace jetpipe
