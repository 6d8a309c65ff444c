// SPDX-License-Identifier: MIT
// The platform profiles built into the library: every platforms/*.yaml of the source tree, as
// text, generated at build time (cmake/embed_platforms.cmake), so a binary moved anywhere still
// has them. The last place locate_profile() looks (platform.h).
#pragma once

#include <cstddef>

namespace jetpipe {

struct BuiltinPlatform {
  const char* name;  // the file's stem: "jetson-orin-nano"
  const char* text;  // its YAML
};
extern const BuiltinPlatform kBuiltinPlatforms[];
extern const std::size_t kBuiltinPlatformCount;

}  // namespace jetpipe
