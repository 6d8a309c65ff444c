// SPDX-License-Identifier: MIT
// The application-facing API: a pipeline built from YAML (a file or text) or in code, run over any
// source opened by URI, handing back one FrameRecord per input frame, in input order.
//
//   jetpipe::Pipeline p = jetpipe::Pipeline::from_file("config/default.yaml");
//   auto source = p.open("file://clip.mp4");           // or p.open() for the config's input
//   p.run(*source, [](const jetpipe::FrameRecord& r) {
//     std::cout << jetpipe::record_to_json(r).dump() << "\n";   // results_json.h
//     return true;                                               // false stops
//   });
//
//   auto q = jetpipe::Pipeline::builder()                       // the same in code
//                .stage("to_gray").stage("histogram", {{"bins", "16"}}).stage("stats").build();
//   jetpipe::Pipeline::Stream s = q.stream(*source);            // or pull the records
//   for (jetpipe::FrameRecord r; s.next(&r);) { ... }
//
//   auto inputs = p.open_inputs({{"cam0", "csi://0"}, {"cam1", "csi://1"}});  // or the config's
//   p.run(*inputs, [](const jetpipe::FrameRecord& r) { ...; return true; });  // r.input: "cam0"
//
// Errors: jetpipe::Error; kConfig for the YAML or the stages (naming file, line, key), kInput for
// a source that cannot be opened. A Pipeline runs one source, or one set of inputs, at a time
// (stages keep per-frame state); use one Pipeline per thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/io/source.h"
#include "pipeline/platform.h"
#include "pipeline/source_set.h"

namespace jetpipe {

// How a pipeline wants its frames: GRAY8 (the luma plane, no colour conversion) when every stage
// reading the frame reads gray only, else in colour, in the decoder's own layout (colour = true);
// the config's frame size limit and its top-level queue, timeout_s and reconnect.
SourceOptions source_options_for(const PipelineConfig& config);

struct RunStats {
  std::int64_t read = 0, processed = 0, failed = 0, dropped = 0;
  std::string source_error;  // why the source stopped early ("" when it ended normally)
};

class PipelineBuilder;
class Interleaver;

class Pipeline {
 public:
  // From a YAML config file (relative inputs resolve against its folder) or text. `platform`
  // overrides the config's (auto, a profile name, or a file).
  static Pipeline from_file(const std::string& path, const std::string& platform = "");
  static Pipeline from_yaml(const std::string& yaml, const std::string& base_dir = ".",
                            const std::string& platform = "");
  static PipelineBuilder builder();

  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  ~Pipeline();

  const PipelineConfig& config() const;
  const PlatformProfile& platform() const;

  // Images copied into each record's `images` (names from config().image_names(), or "frame").
  // on_device: into each record's `device_images` instead, each in a device buffer of its own
  // that lives as long as its owner is held (the CUDA backend only; "frame" is the image the
  // stages read: NV12's luma plane). Each list is replaced by its own call. Throws kConfig for an
  // unknown name, or for on_device on the CPU backend.
  void keep_images(std::vector<std::string> names, bool on_device = false);

  // Opens `uri` with source_options_for(config()); empty: the config's one input, with its own
  // keys (queue, timeout_s, reconnect). `stop` (nullptr: never): another thread's or a signal
  // handler's stop request, which the source looks at every 50 ms while it waits for a frame, a
  // stalled stream or a reconnect (SourceOptions::stop); it must outlive the source.
  std::unique_ptr<Source> open(const std::string& uri = "",
                               const std::atomic<int>* stop = nullptr) const;
  // Several inputs at once, each opened and read on its own thread (pipeline/source_set.h):
  // `inputs` ({name, uri} and optionally queue, timeout_s, reconnect), or, empty, the config's
  // `inputs:` (or `input:`); at most max_frames frames each when ≥ 0; `stop` as for open(), for
  // every input. Throws kConfig for two inputs of one name or none at all; an input that cannot
  // be opened shows in run().
  std::unique_ptr<SourceSet> open_inputs(std::vector<InputConfig> inputs = {},
                                         std::int64_t max_frames = -1,
                                         const std::atomic<int>* stop = nullptr) const;

  // Runs every frame of `source` (at most max_frames when ≥ 0); `on_record` gets each record in
  // input order and returns false to stop. A source failing mid-stream ends the run with
  // RunStats::source_error set (records already handed over stay valid).
  RunStats run(Source& source, const std::function<bool(const FrameRecord&)>& on_record,
               std::int64_t max_frames = -1);

  // Every frame of every input of `inputs` (open_inputs(); a set runs once): `on_record` gets each
  // record as it completes, FrameRecord::input naming its input, each input's records in that
  // input's order (the inputs' records interleave); false stops. An input that stalls does not
  // hold back the others' records. One that fails (at open or later) ends alone and the others
  // go on: RunStats::source_error names the first ("cam1: ..."), inputs.state(i) says how each
  // ended. Throws kInput when no input can be opened. The counts are every input's together.
  RunStats run(SourceSet& inputs, const std::function<bool(const FrameRecord&)>& on_record);

  // The pull form of run(SourceSet&): next() gives the records one by one (*input: the index of
  // the record's input in the set), false once every input has ended. stop() takes no more
  // frames; the frames in flight still give their records (or, `discard`, are dropped).
  class InputStream {
   public:
    ~InputStream();
    InputStream(InputStream&&) noexcept;
    InputStream& operator=(InputStream&&) = delete;
    bool next(FrameRecord* record, std::size_t* input = nullptr);
    void stop(bool discard = false);
    // Counts of every input together; source_error: the first failed input's error.
    RunStats stats() const;

   private:
    friend class Pipeline;
    InputStream(Pipeline* p, SourceSet* s);
    SourceSet* inputs_;
    std::unique_ptr<Interleaver> run_;
    RunStats stats_;
    bool discard_ = false;
  };
  // Waits until an input has opened (SourceSet::wait_open: throws kInput when none can be); the
  // InputStream refers to this Pipeline and to `inputs`: both must outlive it. A set runs once.
  InputStream stream(SourceSet& inputs);

  // The pull form of run(): next() gives the records one by one, false at the end.
  class Stream {
   public:
    bool next(FrameRecord* record);
    const RunStats& stats() const { return stats_; }

   private:
    friend class Pipeline;
    Stream(Pipeline* p, Source* s, std::int64_t max) : pipeline_(p), source_(s), max_(max) {}
    Pipeline* pipeline_;
    Source* source_;
    std::int64_t max_;
    RunStats stats_;
    bool source_done_ = false;
  };
  // The Stream refers to this Pipeline and to `source`: both must outlive it.
  Stream stream(Source& source, std::int64_t max_frames = -1);
  // Takes and drops the records still in flight (a Stream left before its end), so the next
  // stream or process() starts clean. run() does it itself.
  void drain();

  // One image through the stages (a record with index `index`); throws nothing for a failing
  // frame: the record's error says why.
  FrameRecord process(const HostImage& image, std::int64_t index = 0,
                      const std::string& source_name = "");
  // One frame already in device memory, read in place (no copy; pipeline/io/source.h, DeviceFrame):
  // move the owner in, and it is released once the frame's GPU work has completed (before this
  // returns). The CPU backend copies the frame to the host first. A bad frame (pageable memory,
  // another device's, a format no stage reads) gives a record with its error.
  FrameRecord process(DeviceFrame frame, std::int64_t index = 0,
                      const std::string& source_name = "");

  struct State;  // opaque

 private:
  friend class PipelineBuilder;
  explicit Pipeline(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Stages added in code, validated exactly as a config file is (errors name "<builder>").
class PipelineBuilder {
 public:
  PipelineBuilder& input(const std::string& uri);
  PipelineBuilder& platform(const std::string& name);
  // A stage of `type` with its keys (name, input, output and parameters) as YAML values:
  // {{"ksize", "5"}, {"border", "reflect"}, {"range", "[0, 256]"}}.
  PipelineBuilder& stage(const std::string& type,
                         const std::vector<std::pair<std::string, std::string>>& keys = {});
  std::string yaml() const;  // the config it stands for
  Pipeline build() const;

 private:
  std::string input_, platform_ = "auto";
  std::vector<std::string> stages_;
};

}  // namespace jetpipe
