// SPDX-License-Identifier: MIT
// The reconnecting source (reconnect.h): one inner source at a time, closed on a stall or an input
// error and opened again with backoff. Only the reading thread replaces the inner source, under
// m_; other threads (stats, describe) read it under m_ too.
#include "pipeline/io/reconnect.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>
#include <utility>

#include "core/error.h"

namespace jetpipe {

namespace {

using Clock = std::chrono::steady_clock;
// How often a wait looks at SourceOptions::stop, as the GStreamer source's waits do.
constexpr auto kStopPoll = std::chrono::milliseconds(50);

std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, s < 100 ? "%.3g s" : "%.0f s", s);
  return b;
}

class ReconnectingSource final : public Source {
 public:
  ReconnectingSource(std::string uri, SourceOpener open, const SourceOptions& options,
                     std::unique_ptr<Source> first, ReconnectHooks hooks)
      : uri_(std::move(uri)),
        open_(std::move(open)),
        policy_(options.reconnect),
        stop_(options.stop),
        hooks_(std::move(hooks)) {
    if (!hooks_.log) {
      hooks_.log = [](const std::string& line) {
        std::fprintf(stderr, "jetpipe: %s\n", line.c_str());
      };
    }
    if (!hooks_.now) {
      hooks_.now = [] {
        return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
      };
    }
    if (!hooks_.wait) hooks_.wait = [this](double s) { return sleep(s); };
    stats_.policy = policy_;
    stats_.away = true;  // until the first frame
    away_since_ = hooks_.now();
    if (first) {
      inner_ = std::move(first);
      return;
    }
    try {
      inner_ = open_();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInput || policy_.attempts <= 0) throw;
      stats_.last_error = e.what();
    }
  }

  bool next(Frame* frame) override {
    if (ended_) return false;
    for (;;) {
      if (!inner_) {
        if (!reopen()) return false;  // a stop request during the wait
        continue;
      }
      bool got = false;
      try {
        got = inner_->next(frame);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kInput) throw;
        lose(e.what());
        continue;
      }
      if (!got && ends_as_outage() && !stop_requested()) {
        lose("source '" + uri_ + "': the stream ended (EOS): the server stopped sending it");
        continue;
      }
      if (!got) {  // the end of the stream, or a stop request: nothing to reopen
        end_outage(hooks_.now(), false);
        ended_ = true;
        return false;
      }
      took(frame);
      return true;
    }
  }

  std::string describe() const override {
    std::lock_guard<std::mutex> lk(m_);
    std::string d = inner_ ? inner_->describe()
                           : (last_describe_.empty() ? "source '" + uri_ + "'" : last_describe_) +
                                 " (closed: " + (stats_.gave_up ? "gave up" : "reconnecting") + ")";
    return d + "; reconnect: " + std::to_string(policy_.attempts) + " tries, " +
           seconds(policy_.delay_s) + " doubling to " + seconds(max_delay()) + " apart";
  }

  bool live() const override { return true; }

  std::int64_t dropped() const override {
    std::lock_guard<std::mutex> lk(m_);
    return closed_dropped_ + (inner_ ? inner_->dropped() : 0);
  }

  double frame_rate() const override {
    std::lock_guard<std::mutex> lk(m_);
    const double r = inner_ ? inner_->frame_rate() : 0;
    return r > 0 ? r : last_rate_;
  }

  ReconnectStats stats() const {
    std::lock_guard<std::mutex> lk(m_);
    ReconnectStats s = stats_;
    if (s.away && frames_seen_) s.seconds_away += std::max(0.0, hooks_.now() - away_since_);
    return s;
  }

  std::optional<GstSourceStats> gst_stats() const {
    std::lock_guard<std::mutex> lk(m_);
    std::optional<GstSourceStats> s = inner_ ? gst_source_stats(*inner_) : last_gst_;
    if (!s) return std::nullopt;
    s->captured += closed_gst_.captured;
    s->delivered += closed_gst_.delivered;
    s->dropped += closed_gst_.dropped;
    s->peak_queue = std::max(s->peak_queue, closed_gst_.peak_queue);
    if (s->warning.empty()) s->warning = closed_gst_.warning;
    return s;
  }

 private:
  double max_delay() const { return std::max(policy_.max_delay_s, policy_.delay_s); }

  // An RTSP stream's end is its server stopping or restarting (a camera's stream has no end of
  // its own): an outage like a stall. Other live sources' ends are theirs (a pattern's frames=N).
  bool ends_as_outage() const { return uri_.rfind("rtsp://", 0) == 0; }

  bool stop_requested() const {
    return stop_ != nullptr && stop_->load(std::memory_order_relaxed) != 0;
  }

  // The default wait: slices of kStopPoll, so that a stop request ends it at once.
  bool sleep(double s) const {
    const auto end = Clock::now() +
                     std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    for (;;) {
      if (stop_requested()) return false;
      const auto now = Clock::now();
      if (now >= end) return true;
      std::this_thread::sleep_for(std::min<Clock::duration>(end - now, kStopPoll));
    }
  }

  // An error's text without the "source 'URI': " the GStreamer source starts with (the log line
  // names the source itself).
  std::string reason(const std::string& error) const {
    const std::string prefix = "source '" + uri_ + "': ";
    return error.compare(0, prefix.size(), prefix) == 0 ? error.substr(prefix.size()) : error;
  }

  // The inner source failed (stalled, broke): closes it. A connection that came from a retry and
  // gave no frame is a failed try; otherwise an outage begins.
  void lose(const std::string& error) {
    std::unique_ptr<Source> old;
    {
      std::lock_guard<std::mutex> lk(m_);
      if (retrying_) {
        ++failures_;
      } else if (frames_seen_) {
        failures_ = 0;
        away_since_ = last_frame_at_;
        stats_.away = true;
      }
      retrying_ = false;
      stats_.last_error = error;
      closed_dropped_ += inner_->dropped();
      const double rate = inner_->frame_rate();
      if (rate > 0) last_rate_ = rate;
      last_describe_ = inner_->describe();
      if (std::optional<GstSourceStats> g = gst_source_stats(*inner_)) {
        closed_gst_.captured += g->captured;
        closed_gst_.delivered += g->delivered;
        closed_gst_.dropped += g->dropped;
        closed_gst_.peak_queue = std::max(closed_gst_.peak_queue, g->peak_queue);
        if (closed_gst_.warning.empty()) closed_gst_.warning = g->warning;
        last_gst_ = std::move(g);
      }
      old = std::move(inner_);
    }
    old.reset();  // closes the stream (GStreamer's teardown), outside the lock
  }

  // Waits, then opens the source again; false when a stop request ended the wait. Throws the last
  // error once `attempts` tries have failed in a row.
  bool reopen() {
    if (failures_ >= policy_.attempts) give_up();
    const double wait = std::min(policy_.delay_s * std::pow(2.0, failures_), max_delay());
    hooks_.log("source '" + uri_ + "': " + reason(stats_.last_error) + "; trying again in " +
               seconds(wait) + " (try " + std::to_string(failures_ + 1) + " of " +
               std::to_string(policy_.attempts) + ")");
    if (!hooks_.wait(wait)) {
      end_outage(hooks_.now(), false);
      return false;
    }
    std::unique_ptr<Source> fresh;
    std::string error;
    try {
      fresh = open_();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInput) throw;
      error = e.what();
    }
    std::lock_guard<std::mutex> lk(m_);
    ++stats_.tries;
    if (fresh) {
      inner_ = std::move(fresh);
      retrying_ = true;
      base_ = next_index_;
    } else {
      ++failures_;
      stats_.last_error = error;
    }
    return true;
  }

  [[noreturn]] void give_up() {
    const double t = hooks_.now();
    const double away = t - away_since_;
    std::string last;
    {
      std::lock_guard<std::mutex> lk(m_);
      stats_.gave_up = true;
      last = stats_.last_error;
    }
    end_outage(t, false);
    ended_ = true;
    if (policy_.attempts <= 0) throw input_error(last);  // never reopened: the error as it came
    throw input_error("source '" + uri_ + "': gave up after " + std::to_string(policy_.attempts) +
                      " failed tries in a row to " + (frames_seen_ ? "reopen" : "open") + " it (" +
                      seconds(away) + " without a frame): " + reason(last));
  }

  // A frame from the inner source: its index continues the count, and ends an outage.
  void took(Frame* frame) {
    const double t = hooks_.now();
    if (base_ > 0) {
      // "name#N..." (the GStreamer source's form) says the new index too.
      const std::string was = "#" + std::to_string(frame->index);
      const std::size_t at = frame->source.rfind(was);
      if (at != std::string::npos &&
          (at + was.size() == frame->source.size() || frame->source[at + was.size()] == ' ')) {
        frame->source.replace(at, was.size(), "#" + std::to_string(frame->index + base_));
      }
      frame->index += base_;
    }
    next_index_ = frame->index + 1;
    if (stats_.away) end_outage(t, true);
    std::lock_guard<std::mutex> lk(m_);
    retrying_ = false;
    failures_ = 0;
    frames_seen_ = true;
    last_frame_at_ = t;
  }

  // The outage going on ends at `t`: `back` with a frame (a reconnect), else by a stop or giving
  // up. Adds its time away and estimated loss; logs the return.
  void end_outage(double t, bool back) {
    std::string line;
    {
      std::lock_guard<std::mutex> lk(m_);
      if (!stats_.away) return;
      stats_.away = false;
      const double away = std::max(0.0, t - away_since_);
      if (!frames_seen_) {  // a late first open: no stream yet, nothing lost
        if (back && stats_.tries > 0) {
          line = "opened after " + seconds(away) + " (try " + std::to_string(failures_ + 1) + ")";
        }
      } else {
        stats_.seconds_away += away;
        double rate = last_rate_;
        if (rate <= 0 && inner_) rate = inner_->frame_rate();  // the new connection's
        std::string lost;
        if (rate > 0) {
          // Frames that would have come between the last frame and this one.
          const std::int64_t n = std::max<std::int64_t>(0, std::llround(away * rate) - 1);
          stats_.frames_lost += n;
          lost = "about " + std::to_string(n) + " frames lost";
        } else {
          ++stats_.outages_without_rate;
          lost = "frames lost unknown (no frame rate)";
        }
        if (back) {
          ++stats_.reconnects;
          line = "back after " + seconds(away) + " away (try " + std::to_string(failures_ + 1) +
                 ", reconnect " + std::to_string(stats_.reconnects) + "), " + lost;
        }
      }
    }
    if (!line.empty()) hooks_.log("source '" + uri_ + "': " + line);
  }

  const std::string uri_;
  const SourceOpener open_;
  const ReconnectPolicy policy_;
  const std::atomic<int>* stop_;
  ReconnectHooks hooks_;

  // The reading thread's own state.
  bool ended_ = false;
  bool retrying_ = false;     // inner_ came from a retry and has given no frame yet
  int failures_ = 0;          // failed tries in a row in the outage going on
  double away_since_ = 0;     // the last frame before the outage (or the first open)
  double last_frame_at_ = 0;  // when the last frame came
  std::int64_t base_ = 0;     // added to the inner source's frame indices
  std::int64_t next_index_ = 0;

  mutable std::mutex m_;  // guards inner_'s replacement and everything below
  std::unique_ptr<Source> inner_;
  bool frames_seen_ = false;
  ReconnectStats stats_;
  std::int64_t closed_dropped_ = 0;  // dropped by the connections closed so far
  double last_rate_ = 0;             // the frame rate of the last connection that knew it
  std::string last_describe_;
  GstSourceStats closed_gst_;  // counters of the closed connections (GStreamer sources)
  std::optional<GstSourceStats> last_gst_;
};

}  // namespace

std::unique_ptr<Source> reconnecting_source(const std::string& uri, SourceOpener open,
                                            const SourceOptions& options,
                                            std::unique_ptr<Source> first, ReconnectHooks hooks) {
  return std::make_unique<ReconnectingSource>(uri, std::move(open), options, std::move(first),
                                              std::move(hooks));
}

std::optional<ReconnectStats> reconnect_stats(const Source& source) {
  if (const auto* r = dynamic_cast<const ReconnectingSource*>(&source)) return r->stats();
  return std::nullopt;
}

namespace reconnect_detail {

std::optional<GstSourceStats> inner_gst_stats(const Source& source) {
  if (const auto* r = dynamic_cast<const ReconnectingSource*>(&source)) return r->gst_stats();
  return std::nullopt;
}

}  // namespace reconnect_detail

}  // namespace jetpipe
