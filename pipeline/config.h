// SPDX-License-Identifier: MIT
// The pipeline configuration (one YAML file), validated in full before the first frame:
//   input:    URI of the frames (relative paths are relative to the config file's folder)
//   platform: auto | NAME | FILE (a profile in platforms/)
//   stages:   [{type: ..., name: ..., input: ..., output: ..., <parameters>}, ...]
//   outputs:  {results: results.jsonl, images: [names --save-images writes], save_images: bool}
//   reconnect: {attempts: 10, delay_ms: 500, max_delay_ms: 8000}   live inputs (ReconnectPolicy)
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

struct PipelineConfig {
  std::string file;      // as given (for messages)
  std::string input;     // URI, resolved against the config's folder; may be empty
  std::string platform = "auto";
  // max_frame_mb: a frame larger than this is refused by every source before any memory is
  // allocated for it (1 to 65536 MiB; 1024 by default).
  std::uint64_t max_frame_mb = 1024;
  // reconnect: what a live input does on a stall or an error (pipeline/io/reconnect.h): attempts
  // 0..1000000 (0: never reopen), delay_ms 1..3600000 before the first try, doubling up to
  // max_delay_ms (delay_ms..3600000).
  ReconnectPolicy reconnect;
  std::vector<std::unique_ptr<Stage>> stages;
  OutputsConfig outputs;

  // Names of the images the stages write, in stage order.
  std::vector<std::string> image_names() const;
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
