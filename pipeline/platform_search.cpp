// SPDX-License-Identifier: MIT
// Where platform profiles are found (DESIGN.md, Deployment): $JETPIPE_PLATFORMS, the installed
// share/jetpipe/platforms next to the running binary, then the copies built into the binary.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/environment.h"
#include "pipeline/builtin_platforms.h"
#include "pipeline/platform.h"

namespace fs = std::filesystem;

namespace jetpipe {

namespace {

constexpr const char* kBuiltinOrigin = "built into the binary";

// <prefix>/share/jetpipe/platforms for the running binary at <prefix>/bin/x (Linux: /proc/self/exe
// resolves symlinks, so a link in /usr/local/bin to an unpacked tree still finds its profiles).
std::string installed_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return "";
  return (exe.parent_path() / ".." / "share" / "jetpipe" / "platforms").lexically_normal().string();
}

}  // namespace

std::vector<ProfileDir> platform_search_dirs() {
  std::vector<ProfileDir> dirs;
  const std::string env = platforms_dir_from_environment();
  if (!env.empty()) dirs.push_back({env, "$JETPIPE_PLATFORMS"});
  const std::string installed = installed_dir();
  if (!installed.empty()) dirs.push_back({installed, "installed, next to the binary"});
  return dirs;
}

ProfileLocation locate_profile(const std::string& name, const std::vector<ProfileDir>& dirs) {
  ProfileLocation at;
  at.name = name;
  for (const ProfileDir& d : dirs) {
    const fs::path file = fs::path(d.dir) / (name + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(file, ec)) {
      at.path = file.string();
      at.origin = d.origin;
      return at;
    }
  }
  for (std::size_t i = 0; i < kBuiltinPlatformCount; ++i) {
    if (name == kBuiltinPlatforms[i].name) {
      at.origin = kBuiltinOrigin;
      at.text = kBuiltinPlatforms[i].text;
      return at;
    }
  }
  return at;
}

std::vector<ProfileLocation> list_profiles(const std::vector<ProfileDir>& dirs) {
  std::vector<std::string> names;
  for (const ProfileDir& d : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(d.dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".yaml") names.push_back(it->path().stem().string());
    }
  }
  for (std::size_t i = 0; i < kBuiltinPlatformCount; ++i)
    names.push_back(kBuiltinPlatforms[i].name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<ProfileLocation> out;
  for (const std::string& n : names) out.push_back(locate_profile(n, dirs));
  return out;
}

std::string describe_search(const std::vector<ProfileDir>& dirs) {
  std::string s = "searched:";
  for (const ProfileDir& d : dirs) {
    std::error_code ec;
    s += " " + d.dir + " (" + d.origin + (fs::is_directory(d.dir, ec) ? "" : ", absent") + "),";
  }
  return s + " the copies built into the binary";
}

}  // namespace jetpipe
