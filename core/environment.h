// SPDX-License-Identifier: MIT
// The only environment variables the library reads, all in one place (README, "Environment").
// Behaviour comes from configs, profiles and arguments; these are debugging aids and the one
// documented search path, each read once, at first use, with one parse rule for flags: unset or
// empty → the default; "0", "false", "off", "no" → false; anything else → true.
#pragma once

#include <string>

namespace jetpipe {

struct DebugOptions {
  // JETPIPE_POISON: every new device image of the CUDA executor is filled with 0xCD, so a stage
  // that reads rows before they are written shows in the results.
  bool poison = false;
  // JETPIPE_PDL=0: every programmatic dependent launch becomes a plain one (to rule PDL out).
  bool pdl = true;
};

const DebugOptions& debug_options();

// $JETPIPE_PLATFORMS: a folder of platform profiles searched before the installed ones; empty
// when unset.
std::string platforms_dir_from_environment();

// The flag rule above, for `value` (nullptr: unset).
bool parse_flag(const char* value, bool fallback);

}  // namespace jetpipe
