// SPDX-License-Identifier: MIT
// The GStreamer source (gst_source.cpp): a pipeline from gst_pipeline.h ending in an appsink whose
// samples are copied once into HostImage frames (see source.h for the behaviour). open_source()
// dispatches here; these entry points are for the dispatcher and for tests.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/source.h"

namespace jetpipe {

// Whether this build has the GStreamer sources and sinks.
bool have_gstreamer();

// Opens a parsed GStreamer source. Throws jetpipe::Error (kInput) naming the URI and GStreamer's
// message when it cannot be opened (or, without GStreamer, saying so).
std::unique_ptr<Source> open_gst_source(const SourceSpec& spec, const SourceOptions& options);

// Counters of a GStreamer source, for tests and summaries.
struct GstSourceStats {
  std::int64_t captured = 0;   // samples that reached the appsink
  std::int64_t delivered = 0;  // frames returned by next()
  std::int64_t dropped = 0;    // frames dropped (oldest first) from a full live queue
  std::size_t queue_capacity = 0, peak_queue = 0;
  bool live = false;
  std::string pipeline;  // the gst-launch description run
  std::string warning;   // GStreamer's first warning, if any
  std::string memory;    // where frames come: system, nvmm or cuda (device_memory.h)
  std::string memory_note;  // why, and the notes so far (a decoder that gave system memory...)
};
// The counters of `source` when it is a GStreamer source, else nullopt. A reconnecting source
// (reconnect.h) around one gives captured, delivered and dropped summed over its connections, and
// the current connection's pipeline, queue and memory.
std::optional<GstSourceStats> gst_source_stats(const Source& source);

}  // namespace jetpipe
