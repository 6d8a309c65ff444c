// SPDX-License-Identifier: MIT
// A live source that comes back: open_source() wraps cameras (v4l2://, csi://), network streams
// (rtsp://, rtp://), videotestsrc with live=true and gst:// descriptions that turn out live in it,
// when SourceOptions::reconnect.attempts > 0 (the default). Files, frame folders, y4m and the
// built-in patterns are never wrapped.
//   - A stall (SourceOptions::timeout_s without a frame) or an input error of the stream closes it;
//     after delay_s it is opened again. A try that fails (it cannot be opened, or it gives no frame
//     before the stall limit) doubles the wait, up to max_delay_s. After `attempts` failed tries in
//     a row the source gives up: next() throws the last error (kInput), saying so. A frame ends the
//     outage and resets the count.
//   - A source that cannot be opened at first (a camera that comes up late) is retried the same
//     way: open_source() returns after one try, next() goes on trying.
//   - A stop request (SourceOptions::stop) ends a wait within 50 ms: next() returns false.
//   - The end of the stream (EOS: a test pattern's frames=N) ends the source; it is not reopened.
//     But for rtsp://: a server that stops or restarts its stream ends it, which is an outage like
//     a stall (reopened; a stop request still ends it).
//   - Frame.index keeps counting across reconnects: the first frame after one follows the last
//     before it (frames never received have no index and no record; drops still show as gaps), and
//     Frame.source's "#N" says the same number.
//   - One line on stderr per event, naming the source: the loss and each try, the return.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "pipeline/io/gst_source.h"
#include "pipeline/io/source.h"

namespace jetpipe {

// Counters of a reconnecting source (reconnect_stats), for summaries and tests.
struct ReconnectStats {
  ReconnectPolicy policy;        // the policy it runs under
  std::int64_t reconnects = 0;   // outages ended by a frame after a reopen
  std::int64_t tries = 0;        // reopens tried, failed or not (a late first open's included)
  std::int64_t frames_lost = 0;  // estimated: each outage's time away × the stream's frame rate,
                                 // less the frame that ended it; outages of a known rate only
  std::int64_t outages_without_rate = 0;  // outages whose frames lost are unknown (no frame rate)
  double seconds_away = 0;  // from the last frame before each outage to the first after it (one
                            // going on: until now); a late first open's wait is not counted
  bool away = false;        // an outage is going on (or the source has given no frame yet)
  bool gave_up = false;     // `attempts` tries failed in a row: the source ended with last_error
  std::string last_error;   // the error that began the last outage, or its last failed try
};

// The counters of `source` when open_source() made it reconnecting, else nullopt. Thread-safe
// against the thread reading frames.
std::optional<ReconnectStats> reconnect_stats(const Source& source);

// What the wrapper takes from its surroundings, replaceable in tests (empty: the real ones).
struct ReconnectHooks {
  std::function<void(const std::string&)> log;  // one event a line; default: stderr "jetpipe: "
  std::function<double()> now;                  // seconds, monotonic; default: steady_clock
  // Waits this many seconds; false: a stop was requested first. Default: sleeps, looking at
  // SourceOptions::stop every 50 ms.
  std::function<bool(double)> wait;
};

// Opens the wrapped source afresh: throws jetpipe::Error (kInput: worth another try; any other
// kind ends the source at once).
using SourceOpener = std::function<std::unique_ptr<Source>()>;

// A reconnecting source over what `open` opens, with options.reconnect and options.stop. `first`:
// the source already opened; null: tried now through `open` (an input error is the first outage).
// `uri` names the source in messages.
std::unique_ptr<Source> reconnecting_source(const std::string& uri, SourceOpener open,
                                            const SourceOptions& options,
                                            std::unique_ptr<Source> first = nullptr,
                                            ReconnectHooks hooks = {});

namespace reconnect_detail {
// gst_source_stats() of a reconnecting source: its GStreamer source's, counted over every
// connection; nullopt for any other source.
std::optional<GstSourceStats> inner_gst_stats(const Source& source);
}  // namespace reconnect_detail

}  // namespace jetpipe
