// SPDX-License-Identifier: MIT
// Private to pipeline/io, GStreamer builds only: start-up and message helpers shared by the source
// (gst_source.cpp) and the video sink (video_sink.cpp).
#pragma once

#if JETPIPE_HAVE_GSTREAMER

#include <gst/gst.h>

#include <string>

namespace jetpipe::gst_detail {

// gst_init once per process; throws jetpipe::Error when GStreamer cannot start.
void ensure_init();

// "GStreamer's message (element: the useful part of the debug text)" for ERROR / WARNING messages.
std::string message_text(GstMessage* message);

// gst_parse_launch, always returning a pipeline (a lone element is put into one). Throws
// jetpipe::Error of `kind` with `where` and GStreamer's reason when the description is invalid.
GstElement* parse_launch(const std::string& description, const std::string& where, bool input);

}  // namespace jetpipe::gst_detail

#endif  // JETPIPE_HAVE_GSTREAMER
