// SPDX-License-Identifier: MIT
#include "pipeline/source_set.h"

#include <utility>

namespace jetpipe {

const char* name(InputEnd end) {
  switch (end) {
    case InputEnd::kRunning:
      return "running";
    case InputEnd::kEnd:
      return "end";
    case InputEnd::kError:
      return "error";
    case InputEnd::kOpenFailed:
      return "open_failed";
    case InputEnd::kStopped:
      return "stopped";
    case InputEnd::kMaxFrames:
      return "max_frames";
  }
  return "?";
}

std::vector<SourceSet::Input> SourceSet::inputs_of(const std::vector<InputConfig>& inputs,
                                                   const SourceOptions& base) {
  std::vector<Input> out;
  for (const InputConfig& in : inputs) {
    for (const Input& earlier : out) {
      if (earlier.name == in.name) {
        throw config_error("two inputs are named '" + in.name + "'; give each a unique name");
      }
    }
    out.push_back({in.name, in.uri, in.options(base), {}, inputs.size() > 1 || in.named});
  }
  return out;
}

SourceSet::SourceSet(std::vector<Input> inputs, Options options) : options_(options) {
  for (Input& in : inputs) {
    auto slot = std::make_unique<Slot>();
    slot->state.name = in.name;
    slot->state.uri = in.uri;
    slot->input = std::move(in);
    slot->input.options.stop = &stop_;
    inputs_.push_back(std::move(slot));
  }
  try {
    for (auto& slot : inputs_) {
      Slot* s = slot.get();
      s->thread = std::thread([this, s] { read(*s); });
    }
  } catch (...) {  // no thread to be had: the ones started end before the error goes on
    join();
    throw;
  }
}

SourceSet::~SourceSet() { join(); }

void SourceSet::read(Slot& slot) {
  auto end = [&](InputEnd how, const std::string& error = "", ErrorKind kind = ErrorKind::kInput) {
    std::lock_guard<std::mutex> lock(mu_);
    slot.state.end = how;
    slot.state.error = error;
    slot.state.error_kind = kind;
    if (slot.source) slot.state.dropped = slot.source->dropped();
    cv_.notify_all();
  };
  const Input& in = slot.input;
  try {
    slot.source = in.open ? in.open(in.options) : open_source(in.uri, in.options);
  } catch (const Error& e) {
    return end(InputEnd::kOpenFailed, e.what(), e.kind());
  } catch (const std::exception& e) {
    return end(InputEnd::kOpenFailed, "source '" + in.uri + "': " + e.what());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot.state.opened = true;
    slot.state.describe = slot.source->describe();
    slot.state.total = slot.source->total();
    slot.state.live = slot.source->live();
    cv_.notify_all();
  }
  for (std::int64_t n = 0;; ++n) {
    if (stop_.load() != 0) return end(InputEnd::kStopped);
    if (options_.max_frames >= 0 && n >= options_.max_frames) return end(InputEnd::kMaxFrames);
    Frame f;
    bool got = false;
    try {
      got = slot.source->next(&f);
    } catch (const Error& e) {
      return end(InputEnd::kError, e.what(), e.kind());
    } catch (const std::exception& e) {
      return end(InputEnd::kError, e.what(), ErrorKind::kRuntime);
    }
    if (!got) return end(stop_.load() != 0 ? InputEnd::kStopped : InputEnd::kEnd);
    if (in.tag) f.input = in.name;
    std::unique_lock<std::mutex> lock(mu_);
    slot.state.dropped = slot.source->dropped();
    cv_.wait(lock, [&] { return slot.queue.size() < kDepth || stop_.load() != 0; });
    // A frame read as a stop came is still handed over (its record is written), unless the
    // stop discards what was read.
    if (stop_.load() != 0 && discard_) {
      lock.unlock();
      return end(InputEnd::kStopped);
    }
    slot.queue.push_back(std::move(f));
    cv_.notify_all();
  }
}

bool SourceSet::poll_stop() {
  if (stop_.load() == 0 && options_.stop != nullptr) {
    const int v = options_.stop->load(std::memory_order_relaxed);
    if (v != 0) {
      stopped_by_ = v;
      stop_.store(v);
      cv_.notify_all();
    }
  }
  return stop_.load() != 0;
}

void SourceSet::wait_open() {
  std::unique_lock<std::mutex> lock(mu_);
  auto settled = [&] {
    if (poll_stop()) return true;
    bool all_failed = true;
    for (const auto& s : inputs_) {
      if (s->state.opened) return true;
      all_failed = all_failed && s->state.end == InputEnd::kOpenFailed;
    }
    return all_failed;
  };
  while (!settled()) cv_.wait_for(lock, std::chrono::milliseconds(50));
  for (const auto& s : inputs_) {
    if (s->state.end != InputEnd::kOpenFailed) return;
  }
  if (inputs_.size() == 1) {
    throw Error(inputs_[0]->state.error, inputs_[0]->state.error_kind);
  }
  std::string why = "no input could be opened:";
  ErrorKind kind = ErrorKind::kInput;
  for (const auto& s : inputs_) {
    why += " " + s->state.name + ": " + s->state.error + ";";
    if (s->state.error_kind == ErrorKind::kConfig) kind = ErrorKind::kConfig;
  }
  why.pop_back();
  throw Error(why, kind);
}

SourceSet::Take SourceSet::take(Frame* frame, std::size_t* input, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    poll_stop();
    bool running = false;
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
      const std::size_t i = (next_ + k) % inputs_.size();
      Slot& s = *inputs_[i];
      if (!s.queue.empty()) {
        *frame = std::move(s.queue.front());
        s.queue.pop_front();
        ++s.state.taken;
        *input = i;
        next_ = i + 1;
        cv_.notify_all();  // room in its queue
        return Take::kFrame;
      }
      running = running || s.state.end == InputEnd::kRunning;
    }
    if (!running) return Take::kEnd;
    // Waits in steps, so that a stop request (a flag a signal handler sets) is seen.
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return Take::kNone;
    cv_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(50)));
  }
}

void SourceSet::stop(bool discard_queued) {
  std::lock_guard<std::mutex> lock(mu_);
  if (discard_queued) {
    discard_ = true;
    for (auto& s : inputs_) s->queue.clear();
  }
  if (stop_.load() == 0) stop_.store(-1);
  cv_.notify_all();
}

int SourceSet::stopped_by() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_by_;
}

std::string SourceSet::first_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : inputs_) {
    if (!s->state.error.empty()) {
      return (inputs_.size() > 1 ? s->state.name + ": " : "") + s->state.error;
    }
  }
  return "";
}

InputState SourceSet::state(std::size_t i) const {
  std::lock_guard<std::mutex> lock(mu_);
  return inputs_.at(i)->state;
}

void SourceSet::join() {
  if (joined_) return;
  stop();
  for (auto& s : inputs_) {
    if (s->thread.joinable()) s->thread.join();
  }
  joined_ = true;
}

const Source* SourceSet::source(std::size_t i) const {
  return joined_ ? inputs_.at(i)->source.get() : nullptr;
}

}  // namespace jetpipe
