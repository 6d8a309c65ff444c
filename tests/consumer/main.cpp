// SPDX-License-Identifier: MIT
// consumer CONFIG URI: runs CONFIG over URI through the installed C++ API and prints one JSON line
// per frame, then "consumer: N frames, platform NAME (REASON)". Exit 0 when every frame was
// processed.
#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "pipeline/api.h"
#include "pipeline/results_json.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer CONFIG URI\n");
    return 2;
  }
  try {
    jetpipe::Pipeline pipeline = jetpipe::Pipeline::from_file(argv[1], "auto");
    std::unique_ptr<jetpipe::Source> source = pipeline.open(argv[2]);
    const jetpipe::RunStats stats = pipeline.run(*source, [](const jetpipe::FrameRecord& r) {
      std::cout << jetpipe::record_to_json(r).dump() << "\n";
      return true;
    });
    std::printf("consumer: %lld frames, platform %s from %s\n",
                static_cast<long long>(stats.processed), pipeline.platform().name.c_str(),
                pipeline.platform().file.c_str());
    return stats.processed > 0 && stats.failed == 0 ? 0 : 1;
  } catch (const jetpipe::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
