// SPDX-License-Identifier: MIT
#include "core/border.h"

namespace jetpipe {

namespace {
struct Name {
  const char* name;
  BorderMode mode;
};
constexpr Name kNames[] = {{"constant", BorderMode::kConstant},
                           {"replicate", BorderMode::kReplicate},
                           {"reflect", BorderMode::kReflect},
                           {"reflect101", BorderMode::kReflect101},
                           {"wrap", BorderMode::kWrap}};
}  // namespace

const char* to_string(BorderMode m) {
  for (const auto& n : kNames) {
    if (n.mode == m) return n.name;
  }
  return "?";
}

bool parse_border_mode(const std::string& s, BorderMode* out) {
  for (const auto& n : kNames) {
    if (s == n.name) {
      *out = n.mode;
      return true;
    }
  }
  return false;
}

}  // namespace jetpipe
