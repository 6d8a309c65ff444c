// SPDX-License-Identifier: MIT
#include "core/environment.h"

#include <cstdlib>
#include <cstring>

namespace jetpipe {

bool parse_flag(const char* value, bool fallback) {
  if (value == nullptr || *value == '\0') return fallback;
  for (const char* off : {"0", "false", "off", "no"}) {
    if (std::strcmp(value, off) == 0) return false;
  }
  return true;
}

const DebugOptions& debug_options() {
  static const DebugOptions options = [] {
    DebugOptions o;
    o.poison = parse_flag(std::getenv("JETPIPE_POISON"), o.poison);
    o.pdl = parse_flag(std::getenv("JETPIPE_PDL"), o.pdl);
    return o;
  }();
  return options;
}

std::string platforms_dir_from_environment() {
  const char* dir = std::getenv("JETPIPE_PLATFORMS");
  return dir != nullptr ? dir : "";
}

}  // namespace jetpipe
