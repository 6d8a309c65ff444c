// SPDX-License-Identifier: MIT
// JSON forms of the results contract (README "Results").
#pragma once

#include <nlohmann/json.hpp>

#include "core/results.h"
#include "pipeline/executor.h"
#include "pipeline/io/reconnect.h"

namespace jetpipe {

nlohmann::ordered_json result_to_json(const StageResult& r);
nlohmann::ordered_json record_to_json(const FrameRecord& rec);
// summary.json's `reconnects` (and Python's Inputs.inputs'): what a live source's reconnecting
// did (pipeline/io/reconnect.h).
nlohmann::ordered_json reconnects_json(const ReconnectStats& r);

}  // namespace jetpipe

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace jetpipe {

// JSON text of `j` with any invalid UTF-8 (a file name, a stage name or an error message holding
// bytes that are not UTF-8) replaced by U+FFFD instead of throwing: a record is always written.
std::string json_text(const nlohmann::ordered_json& j, int indent = -1);

// results.jsonl: one JSON object a line, each line written whole and flushed. A write that fails
// (disk full, a file size limit) throws a jetpipe::Error naming the file and the system's reason,
// after cutting the file back to its last whole line, so it never ends in a torn line.
class JsonLinesWriter {
 public:
  explicit JsonLinesWriter(const std::filesystem::path& path);
  void write(const nlohmann::ordered_json& j);
  std::uint64_t lines() const { return lines_; }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
  std::uint64_t bytes_ = 0, lines_ = 0;
};

// Writes `text` to `path` whole or not at all: into "<path>.tmp" beside it, flushed and closed
// with every step checked, then renamed over `path`. Throws jetpipe::Error naming the file and
// the reason (the temporary file is removed; an earlier `path` stays as it was).
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace jetpipe
