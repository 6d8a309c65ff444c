// SPDX-License-Identifier: MIT
// jetpipe-bench [--filter NAME] [--reps N] [--sizes 640x480,1920x1080,...] [--json FILE]
#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/error.h"
#include "tools/bench/bench.h"
#include "tools/size_list.h"

int main(int argc, char** argv) {
  CLI::App app{"jetpipe-bench: kernel benchmarks against CUB, NPP and OpenCV (CPU)"};
  std::string filter, json, sizes_arg = "640x480,1920x1080,3840x2160,16384x16384";
  int reps = 25;
  std::string area = "all";
  app.add_option("--filter", filter, "Only kernels whose name contains this");
  app.add_option("--reps", reps, "Timed runs per case (median reported)")->check(CLI::Range(3, 10000));
  app.add_option("--sizes", sizes_arg, "Comma-separated WxH list")->capture_default_str();
  app.add_option("--json", json, "Also write the rows as JSON");
  app.add_option("--area", area, "all | reductions | filters | detect | pipeline")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::vector<std::pair<int, int>> parsed;
  std::string bad;
  if (!jetpipe::tools::parse_size_list(sizes_arg, &parsed, &bad)) {
    std::fprintf(stderr, "jetpipe-bench: bad size '%s' (want WxH)\n", bad.c_str());
    return 2;
  }
  std::vector<jetpipe::bench::Size> sizes;
  for (const auto& [w, h] : parsed) sizes.push_back({w, h});
  try {
    jetpipe::bench::Bench b(reps, filter, sizes);
    if (area == "all" || area == "reductions") jetpipe::bench::bench_reductions(b);
    if (area == "all" || area == "filters") jetpipe::bench::bench_filters(b);
    if (area == "all" || area == "detect") jetpipe::bench::bench_detect(b);
    if (area == "all" || area == "pipeline") jetpipe::bench::bench_pipeline(b);
    b.print_table();
    if (!json.empty()) b.write_json(json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jetpipe-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
