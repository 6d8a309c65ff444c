// SPDX-License-Identifier: MIT
// several_inputs: one pipeline over several inputs at once, each read on its own thread
// (Pipeline::open_inputs, Pipeline::run). Prints each record as a JSON line (its `input` names the
// input; each input's records in that input's order, the inputs' interleaved) and, per input, how
// many frames it gave and how it ended.
//   several_inputs                             two synthetic inputs of different sizes
//   several_inputs NAME=URI NAME=URI ...       these (csi://0, v4l2:///dev/video1, rtsp://...)
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/api.h"
#include "pipeline/results_json.h"

int main(int argc, char** argv) {
  try {
    jetpipe::Pipeline pipeline = jetpipe::Pipeline::builder()
                                     .platform("auto")
                                     .stage("to_gray", {{"name", "gray"}})
                                     .stage("histogram", {{"bins", "16"}})
                                     .stage("stats")
                                     .build();
    // Inputs as `jetpipe run --input` takes them: NAME=URI, or a URI named by its position.
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
      args = {"small=test://blobs?w=320&h=240&frames=6",
              "large=test://checker?w=1280&h=720&frames=4&format=nv12"};
    }
    std::unique_ptr<jetpipe::SourceSet> inputs =
        pipeline.open_inputs(jetpipe::parse_input_args(args, pipeline.config().input_defaults()));

    std::map<std::string, long long> records;
    const jetpipe::RunStats stats = pipeline.run(*inputs, [&](const jetpipe::FrameRecord& r) {
      std::cout << jetpipe::record_to_json(r).dump() << "\n";
      ++records[r.input];
      return true;  // false stops every input
    });
    for (std::size_t i = 0; i < inputs->size(); ++i) {
      const jetpipe::InputState s = inputs->state(i);
      std::fprintf(stderr, "several_inputs: %s: %lld records, ended: %s%s%s\n", s.name.c_str(),
                   records[s.name], jetpipe::name(s.end), s.error.empty() ? "" : ": ",
                   s.error.c_str());
    }
    // An input that failed ended alone; the others ran to their end.
    if (!stats.source_error.empty()) return 3;
    return stats.failed > 0 ? 3 : 0;
  } catch (const jetpipe::Error& e) {
    std::fprintf(stderr, "several_inputs: %s\n", e.what());
    return e.kind() == jetpipe::ErrorKind::kConfig  ? 2
           : e.kind() == jetpipe::ErrorKind::kInput ? 3
                                                    : 1;
  }
}
