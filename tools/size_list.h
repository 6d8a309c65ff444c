// SPDX-License-Identifier: MIT
// "1920x1080,3840x2160" → sizes, for the tools' --sizes options.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace jetpipe::tools {

// Parses a comma-separated WxH list (each side ≥ 1). On failure returns false and *bad holds the
// item that is not WxH.
inline bool parse_size_list(const std::string& list, std::vector<std::pair<int, int>>* sizes,
                            std::string* bad) {
  sizes->clear();
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t end = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, end - pos);
    int w = 0, h = 0;
    if (std::sscanf(item.c_str(), "%dx%d", &w, &h) != 2 || w < 1 || h < 1) {
      *bad = item;
      return false;
    }
    sizes->emplace_back(w, h);
    pos = end + 1;
  }
  return true;
}

}  // namespace jetpipe::tools
