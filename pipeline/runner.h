// SPDX-License-Identifier: MIT
// One run of a pipeline over its inputs (one or several, each read on its own thread:
// pipeline/source_set.h), writing the contract files into an output folder:
//   results.jsonl   one JSON object per input frame, each input's in that input's order (several
//                   inputs interleave), flushed as it is written
//   summary.json    counts, wall time, fps, latency and per-stage p50/p99, platform, and per
//                   input its counts, fps, latencies and how it ended; on a Jetson the board's
//                   power mode, clocks and temperatures over the run
//   images/<name>_<frame:06>.<ext>   with save_images (several inputs: images/<input>/...)
//   --timeline FILE: a Chrome trace (chrome://tracing, ui.perfetto.dev) of every frame's copies and
//   stages per stream (CUDA executor)
//   a video (output_video: FILE.mp4|mkv, display://, rtp://HOST:PORT, rtsp://[HOST]:PORT/PATH) of
//   one image per frame (output_image, default the frame), annotated when asked
// Config, platform and output-target errors are thrown before anything is written.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace jetpipe {

struct RunOptions {
  std::string config;      // path of the YAML config
  // Replace the config's input or inputs when given (relative paths: the cwd): each "URI" or
  // "NAME=URI" (parse_input_arg, pipeline/config.h; unnamed: input<position>).
  std::vector<std::string> inputs;
  std::string output_dir = "out";
  std::string platform;    // overrides the config's platform when set
  // ≥ 0: overrides the profile's `threads` (cpu backend: threads running a frame's strips; 0: one
  // per CPU); a CUDA profile refuses it (config error).
  int threads = -1;
  std::int64_t max_frames = -1;  // per input
  bool save_images = false;
  bool strict = false;     // stop at the first failed frame
  bool progress = false;   // frames done/total and fps on stderr
  std::string output_video;            // "" none; else a target (pipeline/io/gst_pipeline.h)
  std::string output_image = "frame";  // the image the video shows
  bool annotate = false;               // draw detections, histogram and stats on the video
  int output_fps = 30;                 // the video's frame rate
  std::string timeline;                // a Chrome-trace JSON of the GPU spans (CUDA executor)
  // Where the Jetson's power and thermal state is read for summary.json's "board"
  // (pipeline/board_state.h): the file system's root; a fake tree in tests.
  std::string board_root = "/";
  // Set (non-zero, e.g. to a signal's number) by another thread or a signal handler to stop the
  // run: no more frames are read, the frames in flight get their records, the summary is written
  // with "stopped_by" (the CLI's SIGINT, SIGTERM and SIGHUP; nullptr: never). A source blocked
  // waiting for a frame (a stalled camera or stream) looks at it every 50 ms (SourceOptions::stop).
  const std::atomic<int>* stop = nullptr;
};

// One input of a run: its counts and how it ended.
struct InputSummary {
  std::string name, uri;
  std::int64_t read = 0, processed = 0, failed = 0, dropped = 0;
  std::string ended;  // "end", "error", "open_failed", "stopped", "max_frames" (InputEnd)
  std::string error;  // why it failed ("" unless ended is error or open_failed)
};

struct RunSummary {
  std::int64_t read = 0, processed = 0, failed = 0, dropped = 0;  // every input's together
  double wall_s = 0;
  bool stopped_early = false;  // --strict stopped the run, or an input failed
  // An input could not go on (or be opened while others ran): its error, after "NAME: " when
  // the run has several inputs; the first such input's.
  std::string source_error;
  std::vector<InputSummary> inputs;  // in the order given
  std::int64_t video_frames = 0;
  std::string output_error;  // the video output failed (the results are complete)
  int stopped_by = 0;        // RunOptions::stop's value when it ended the run; 0 otherwise
};

RunSummary run_pipeline(const RunOptions& options);

}  // namespace jetpipe
