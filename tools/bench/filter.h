// SPDX-License-Identifier: MIT
// jetpipe-bench --filter: which groups of kernels run and which of their rows are kept, host-only
// (no CUDA headers) so the CPU tests cover it. A group (Bench::wants("gaussian")) runs where its
// name contains the filter (every row of it kept: "gauss", "box") or the filter starts with its
// name (only the rows whose kernel contains the filter kept: "gaussian5x5", "box15x15 r64").
#pragma once

#include <string>
#include <vector>

namespace jetpipe::tools {

struct FilterMatch {
  bool run = false;        // the group runs
  bool every_row = false;  // all its rows are kept; else only those containing the filter
};

inline FilterMatch match_filter(const std::string& filter, const std::string& group) {
  if (filter.empty() || group.find(filter) != std::string::npos) return {true, true};
  if (filter.compare(0, group.size(), group) == 0) return {true, false};
  return {};
}

inline bool keep_row(const std::string& filter, const FilterMatch& m, const std::string& kernel) {
  return m.every_row || kernel.find(filter) != std::string::npos;
}

// The error for a filter that kept no row: the filter, the area and the groups it could name.
inline std::string no_rows_message(const std::string& filter, const std::string& area,
                                   const std::vector<std::string>& groups) {
  std::string s = "--filter '" + filter + "' kept no row of --area " + area;
  if (groups.empty()) return s;
  s += " (its kernels: ";
  for (std::size_t i = 0; i < groups.size(); ++i) s += (i ? ", " : "") + groups[i];
  return s + "; a filter names one of them or part of a row's kernel column, e.g. '" +
         groups.front() + "'; some rows exist only at some --sizes)";
}

}  // namespace jetpipe::tools
