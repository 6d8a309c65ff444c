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

// A message as what() can return it whole: each NUL byte (from a name in a config, a URI or a
// file) becomes the four characters \x00, where a C string would otherwise end.
inline std::string escape_nul(const std::string& text) {
  if (text.find('\0') == std::string::npos) return text;
  std::string out;
  out.reserve(text.size() + 8);
  for (const char c : text) {
    if (c == '\0') {
      out += "\\x00";
    } else {
      out += c;
    }
  }
  return out;
}

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ErrorKind kind = ErrorKind::kRuntime)
      : std::runtime_error(escape_nul(what)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

inline Error config_error(const std::string& what) { return Error(what, ErrorKind::kConfig); }
inline Error input_error(const std::string& what) { return Error(what, ErrorKind::kInput); }

}  // namespace jetpipe
