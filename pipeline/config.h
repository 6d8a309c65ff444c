// SPDX-License-Identifier: MIT
// The pipeline configuration (one YAML file), validated in full before the first frame:
//   input:    URI of the frames (relative paths are relative to the config file's folder)
//   inputs:   several inputs instead, each read on its own thread:
//             [{name: cam0, uri: ..., queue: 4, timeout_s: 10,
//               reconnect: {attempts: 10, delay_ms: 500, max_delay_ms: 8000}}, ...]
//   platform: auto | NAME | FILE (a profile in platforms/)
//   stages:   [{type: ..., name: ..., input: ..., output: ..., <parameters>}, ...]
//   outputs:  {results: results.jsonl, images: [names saved with --save-images],
//              save_images: bool}
//   reconnect: {attempts: 10, delay_ms: 500, max_delay_ms: 8000}   live inputs (ReconnectPolicy):
//             every input's, unless an entry of inputs: has its own
//   queue, timeout_s: every input's too (InputConfig), unless an entry of inputs: has its own
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/image.h"
#include "pipeline/io/source.h"
#include "stages/stage.h"

namespace jetpipe {

struct OutputsConfig {
  std::string results = "results.jsonl";
  std::vector<std::string> images;  // empty: every image output when saving
  bool save_images = false;
};

// One input of a run: an entry of `inputs:`, or `input:` as the one input named
// default_input_name(0). Per-input keys left out take SourceOptions' defaults.
struct InputConfig {
  std::string name;  // 1 to 64 file-name-safe characters, unique among the run's inputs
  std::string uri;   // resolved against the config's folder
  int queue = SourceOptions{}.queue;             // live sources: frames held before dropping
  double timeout_s = SourceOptions{}.timeout_s;  // no first frame / a stall this long: an error
  ReconnectPolicy reconnect;                     // live sources: SourceOptions::reconnect
  std::string where;  // "file:line:column" of its entry (messages), or "" (--input)
  // Given its name (`inputs:`, --input NAME=URI), not default_input_name()'s. A run of one input
  // that was not named writes its records as before there were several (no `input` key).
  bool named = true;

  // `base` (colour, allocator, stop, ...) with this input's keys.
  SourceOptions options(SourceOptions base) const;
};

// The name of an input that was given none (`input:`, an unnamed --input): "input<position>".
std::string default_input_name(std::size_t position);
// Inputs given on the command line (--input, repeated), each "URI" or "NAME=URI": NAME= is taken
// as a name when the text before the first '=' is a valid name (1 to 64 letters, digits, '_', '-'
// or '.': no ':' or '/', so neither a URI's query "?w=640" nor a path "dir/a=b" is one); else the
// whole is the URI, and the input is named default_input_name(its position). Relative paths stay
// as given (the current folder); queue, timeout_s and reconnect are `defaults`' (a config's
// PipelineConfig::input_defaults()). Throws a config error for an empty URI or a name given twice.
std::vector<InputConfig> parse_input_args(const std::vector<std::string>& args,
                                          const InputConfig& defaults = InputConfig());

struct PipelineConfig {
  std::string file;      // as given (for messages)
  std::string input;     // `input:`, resolved against the config's folder; empty with `inputs:`
  std::vector<InputConfig> inputs;  // `inputs:`, or `input:` as one; empty: neither given
  std::string platform = "auto";
  // max_frame_mb: a frame larger than this is refused by every source before any memory is
  // allocated for it (1 to 65536 MiB; 1024 by default).
  std::uint64_t max_frame_mb = 1024;
  // reconnect: what a live input does on a stall or an error (pipeline/io/reconnect.h): attempts
  // 0..1000000 (0: never reopen), delay_ms 1..3600000 before the first try, doubling up to
  // max_delay_ms (delay_ms..3600000).
  ReconnectPolicy reconnect;
  // queue (1..64) and timeout_s (0.1..3600) at the top level: every input's (InputConfig), unless
  // an entry of inputs: has its own; also the inputs given as URIs (--input, Pipeline::open(uri)).
  int queue = SourceOptions{}.queue;
  double timeout_s = SourceOptions{}.timeout_s;
  std::vector<std::unique_ptr<Stage>> stages;
  OutputsConfig outputs;

  // Names of the images the stages write, in stage order.
  std::vector<std::string> image_names() const;
  // An input with the top-level queue, timeout_s and reconnect (no name or URI yet).
  InputConfig input_defaults() const;
};

// The image every pipeline starts from.
inline constexpr const char* kFrameImage = "frame";

// Loads and validates a config file. Throws jetpipe::Error (kind kConfig) naming the file, line,
// column and key, and what would be valid.
PipelineConfig load_config(const std::string& path);
// The same from text (tests); `file` names it in messages, `base_dir` resolves relative inputs.
PipelineConfig parse_config(const std::string& yaml, const std::string& file,
                            const std::string& base_dir = ".");

// Resolves a relative URI or path against a folder ("frames://x" → "frames://<dir>/x").
std::string resolve_uri(const std::string& uri, const std::string& base_dir);

}  // namespace jetpipe
