// SPDX-License-Identifier: MIT
// `jetpipe regress`: runs every configs/*.yaml over the committed frames and compares results.jsonl
// with golden/<config>.jsonl. Rules: integers and strings exact; other numbers within
// |a − b| ≤ 1e-6 · max(1, |golden|); detections ("points") matched as sets of (x, y) with the same
// score tolerance. --update rewrites the goldens from this run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/io/image_io.h"
#include "pipeline/runner.h"
#include "tools/cli/commands.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace jetpipe::cli {

namespace {

constexpr double kRelTol = 1e-6;

bool close(double got, double want) {
  return std::fabs(got - want) <= kRelTol * std::max(1.0, std::fabs(want));
}

std::string show(const json& j) {
  std::string s = j.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

void compare(const json& got, const json& want, const std::string& path,
             std::vector<std::string>* diffs);

// Points [[x, y, score], ...] as sets keyed by (x, y).
void compare_points(const json& got, const json& want, const std::string& path,
                    std::vector<std::string>* diffs) {
  auto key = [](const json& p) { return std::make_pair(p.at(0).get<long>(), p.at(1).get<long>()); };
  for (const auto& w : want) {
    auto it = std::find_if(got.begin(), got.end(), [&](const json& g) { return key(g) == key(w); });
    if (it == got.end()) {
      diffs->push_back(path + ": missing point " + show(w));
    } else if (!close((*it)[2].get<double>(), w[2].get<double>())) {
      diffs->push_back(path + ": point " + show(w) + " has score " + show((*it)[2]));
    }
  }
  for (const auto& g : got) {
    if (std::none_of(want.begin(), want.end(), [&](const json& w) { return key(g) == key(w); })) {
      diffs->push_back(path + ": extra point " + show(g));
    }
  }
}

void compare(const json& got, const json& want, const std::string& path,
             std::vector<std::string>* diffs) {
  if (want.is_number() && got.is_number()) {
    const bool ints = want.is_number_integer() && got.is_number_integer();
    const bool same = ints ? got.get<long long>() == want.get<long long>()
                           : close(got.get<double>(), want.get<double>());
    if (!same) diffs->push_back(path + ": " + show(got) + " (golden " + show(want) + ")");
    return;
  }
  if (got.type() != want.type()) {
    diffs->push_back(path + ": " + show(got) + " (golden " + show(want) + ")");
    return;
  }
  if (want.is_object()) {
    for (const auto& [k, v] : want.items()) {
      if (!got.contains(k)) {
        diffs->push_back(path + "." + k + ": missing");
      } else if (k == "points" && v.is_array()) {
        compare_points(got[k], v, path + "." + k, diffs);
      } else {
        compare(got[k], v, path + "." + k, diffs);
      }
    }
    for (const auto& [k, v] : got.items()) {
      if (!want.contains(k)) diffs->push_back(path + "." + k + ": not in the golden");
    }
  } else if (want.is_array()) {
    if (got.size() != want.size()) {
      diffs->push_back(path + ": " + std::to_string(got.size()) + " entries (golden " +
                       std::to_string(want.size()) + ")");
      return;
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      compare(got[i], want[i], path + "[" + std::to_string(i) + "]", diffs);
    }
  } else if (got != want) {
    diffs->push_back(path + ": " + show(got) + " (golden " + show(want) + ")");
  }
}

std::vector<json> read_jsonl(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw Error(p.string() + ": cannot read");
  std::vector<json> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    try {
      out.push_back(json::parse(line));
    } catch (const json::exception& e) {
      throw Error(p.string() + ":" + std::to_string(n) + ": not JSON: " + e.what());
    }
  }
  return out;
}

}  // namespace

int cmd_regress(const RegressOptions& o) {
  const fs::path dir(o.dir);
  std::vector<fs::path> configs;
  if (fs::is_directory(dir / "configs")) {
    for (const auto& e : fs::directory_iterator(dir / "configs")) {
      if (e.path().extension() == ".yaml") configs.push_back(e.path());
    }
  }
  std::sort(configs.begin(), configs.end(), [](const fs::path& a, const fs::path& b) {
    return natural_less(a.filename().string(), b.filename().string());
  });
  if (configs.empty()) throw config_error(o.dir + "/configs: no *.yaml regression configs");

  int regressions = 0;
  for (const auto& cfg : configs) {
    const std::string stem = cfg.stem().string();
    RunOptions run;
    run.config = cfg.string();
    run.output_dir = (fs::path(o.work_dir) / stem).string();
    run.platform = o.platform;
    const RunSummary s = run_pipeline(run);
    const fs::path got_path = fs::path(run.output_dir) / "results.jsonl";
    const fs::path golden = dir / "golden" / (stem + ".jsonl");
    if (o.update) {
      fs::create_directories(golden.parent_path());
      fs::copy_file(got_path, golden, fs::copy_options::overwrite_existing);
      std::printf("%-20s updated %s (%lld frames)\n", stem.c_str(), golden.string().c_str(),
                  static_cast<long long>(s.read));
      continue;
    }
    if (!fs::exists(golden)) {
      std::printf("%-20s FAIL: no golden %s (run with --update)\n", stem.c_str(),
                  golden.string().c_str());
      ++regressions;
      continue;
    }
    const std::vector<json> got = read_jsonl(got_path), want = read_jsonl(golden);
    std::vector<std::string> diffs;
    if (got.size() != want.size()) {
      diffs.push_back(std::to_string(got.size()) + " records (golden " +
                      std::to_string(want.size()) + ")");
    }
    for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
      compare(got[i], want[i], "frame " + std::to_string(i), &diffs);
    }
    if (diffs.empty()) {
      std::printf("%-20s ok   %zu frames\n", stem.c_str(), want.size());
    } else {
      ++regressions;
      std::printf("%-20s FAIL %zu differences:\n", stem.c_str(), diffs.size());
      for (std::size_t i = 0; i < std::min<std::size_t>(diffs.size(), 10); ++i) {
        std::printf("    %s\n", diffs[i].c_str());
      }
      if (diffs.size() > 10) std::printf("    ... %zu more\n", diffs.size() - 10);
    }
  }
  if (o.update) return 0;
  std::printf("regress: %zu configs, %d regressed\n", configs.size(), regressions);
  return regressions == 0 ? 0 : 1;
}

}  // namespace jetpipe::cli
