// SPDX-License-Identifier: MIT
// One exception type for stage and pipeline boundaries; kinds map to exit codes in the CLI.
#pragma once

#include <stdexcept>
#include <string>

namespace jetpipe {

enum class ErrorKind {
  kRuntime,  // a failure while running (exit 1)
  kConfig,   // a bad configuration or command line: nothing was run (exit 2)
  kInput,    // a bad input (missing source, corrupt frame): per frame, or exit 3 for the source
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ErrorKind kind = ErrorKind::kRuntime)
      : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

inline Error config_error(const std::string& what) { return Error(what, ErrorKind::kConfig); }
inline Error input_error(const std::string& what) { return Error(what, ErrorKind::kInput); }

}  // namespace jetpipe
