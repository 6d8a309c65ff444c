// SPDX-License-Identifier: MIT
// Several inputs read at once (DESIGN.md, "Several sources in one run"): each input's thread opens
// its source and reads its frames into a small bounded queue (kDepth frames); the consumer, the
// one thread that owns the executor, takes frames from whichever queue has one, each input in
// turn, so an input that is slow, stalled or still opening never holds back the others. Frames
// keep their input's order; each is tagged with its input's name (Frame::input).
//
//   SourceSet inputs({{"cam0", "csi://0", options}, {"cam1", "csi://1", options}});
//   inputs.wait_open();                        // throws when no input could be opened
//   Frame f;  std::size_t i;
//   while (inputs.take(&f, &i, std::chrono::milliseconds(50)) != SourceSet::Take::kEnd) { ... }
//
// A file source blocks on a full queue (it never drops); a live source's own queue
// (SourceOptions::queue) drops its oldest frame while it waits. An input that fails, at open or
// later, ends alone: the others go on; state() says how each ended.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "pipeline/config.h"
#include "pipeline/io/source.h"

namespace jetpipe {

// How an input ended.
enum class InputEnd {
  kRunning,     // still reading
  kEnd,         // the end of its frames
  kError,       // its source failed after opening (InputState::error)
  kOpenFailed,  // it could not be opened (InputState::error)
  kStopped,     // a stop request (a signal, --strict, the consumer's stop())
  kMaxFrames,   // it gave the frames asked for (max_frames)
};
// "running", "end", "error", "open_failed", "stopped", "max_frames" (summary.json's "ended").
const char* name(InputEnd end);

// One input as the consumer sees it (a copy, taken under the set's lock).
struct InputState {
  std::string name, uri;
  bool opened = false;
  std::string describe;               // Source::describe(), once open
  std::optional<std::int64_t> total;  // Source::total(), once open
  bool live = false;                  // Source::live(), once open
  std::int64_t taken = 0;             // frames handed to the consumer
  std::int64_t dropped = 0;           // Source::dropped(), as last seen by its thread
  InputEnd end = InputEnd::kRunning;
  std::string error;  // kError, kOpenFailed: why
  ErrorKind error_kind = ErrorKind::kInput;
};

class SourceSet {
 public:
  static constexpr std::size_t kDepth = 2;  // frames queued per input beyond its source's own

  struct Input {
    std::string name;  // Frame::input of its frames (unless !tag)
    std::string uri;
    SourceOptions options;  // its `stop` is replaced by the set's own (stop(), Options::stop)
    // Opens the source, on the input's thread; empty: open_source(uri, options). May throw
    // jetpipe::Error as open_source does.
    std::function<std::unique_ptr<Source>(const SourceOptions&)> open;
    bool tag = true;  // false: its frames' Frame::input stays empty (InputConfig::named)
  };
  struct Options {
    std::int64_t max_frames = -1;  // per input; < 0: all
    // Another thread's or a signal handler's stop request (RunOptions::stop); take() and
    // wait_open() look at it and stop every input once it is non-zero.
    const std::atomic<int>* stop = nullptr;
  };

  // The inputs of a run: each InputConfig's name and URI, with `base` and its own keys (queue,
  // timeout_s, reconnect) as options; `tag` unless the run has one input it did not name (its
  // records are written as before there were several). Throws a config error for two inputs of
  // one name.
  static std::vector<Input> inputs_of(const std::vector<InputConfig>& inputs,
                                      const SourceOptions& base);

  // Starts one thread per input at once.
  SourceSet(std::vector<Input> inputs, Options options);
  explicit SourceSet(std::vector<Input> inputs) : SourceSet(std::move(inputs), Options()) {}
  ~SourceSet();  // stops and joins every thread
  SourceSet(const SourceSet&) = delete;
  SourceSet& operator=(const SourceSet&) = delete;

  // Waits until an input has opened, or every input has failed to open, or a stop request. Throws
  // when none could be opened: one input's own error, or for several each input's, named.
  void wait_open();

  enum class Take {
    kFrame,  // *frame is the next frame of input *input
    kNone,   // none within `wait`
    kEnd,    // every input has ended and every frame has been taken
  };
  // The next frame of whichever input has one, the inputs taken in turn, waiting up to `wait`.
  Take take(Frame* frame, std::size_t* input, std::chrono::milliseconds wait);

  // No more reading: each input ends (kStopped) once its source returns (a source waiting for a
  // frame looks every 50 ms). Frames already queued are still taken, unless `discard_queued`.
  void stop(bool discard_queued = false);
  // The stop request's value (Options::stop) that stopped the inputs; 0 if none did.
  int stopped_by() const;
  // The first failed input's error ("NAME: why" with several inputs, "why" with one); "" if none.
  std::string first_error() const;

  std::size_t size() const { return inputs_.size(); }
  InputState state(std::size_t i) const;
  // Stops and joins every input's thread; afterwards source(i) may be read (stats).
  void join();
  // Input i's source once join() has returned; null when it was never opened.
  const Source* source(std::size_t i) const;

 private:
  struct Slot {
    Input input;
    InputState state;
    std::unique_ptr<Source> source;  // written by its thread before `opened`
    std::deque<Frame> queue;
    std::thread thread;
  };
  void read(Slot& slot);
  bool poll_stop();  // the external stop request, passed on; under mu_

  Options options_;
  std::vector<std::unique_ptr<Slot>> inputs_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // frames queued or taken, inputs opened or ended, stop
  std::atomic<int> stop_{0};    // every source's SourceOptions::stop
  bool discard_ = false;
  int stopped_by_ = 0;
  std::size_t next_ = 0;  // the input whose turn it is
  bool joined_ = false;
};

}  // namespace jetpipe
