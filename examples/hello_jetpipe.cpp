// SPDX-License-Identifier: MIT
// hello_jetpipe: the C++ API in a few lines. Builds a pipeline (from a YAML file, or in code),
// opens a source by URI, and prints one JSON line per frame plus a summary.
//   hello_jetpipe                              stages built in code over test://blobs
//   hello_jetpipe config/default.yaml          the config's stages and input
//   hello_jetpipe config/default.yaml URI      ... over another input (file://clip.mp4,
//   test://ball,
//                                              v4l2:///dev/video0, rtsp://..., rtp://:5004)
#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "pipeline/api.h"
#include "pipeline/results_json.h"

int main(int argc, char** argv) {
  try {
    jetpipe::Pipeline pipeline =
        argc > 1 ? jetpipe::Pipeline::from_file(argv[1])
                 : jetpipe::Pipeline::builder()
                       .input("test://blobs?w=320&h=240&frames=5")
                       .platform("cpu")
                       .stage("to_gray", {{"name", "gray"}})
                       .stage("gaussian", {{"name", "blur"}, {"ksize", "5"}})
                       .stage("histogram", {{"bins", "16"}})
                       .stage("harris", {{"name", "response"}, {"input", "blur"}})
                       .stage("detect", {{"name", "corners"}, {"quality", "0.05"}})
                       .build();
    std::unique_ptr<jetpipe::Source> source = pipeline.open(argc > 2 ? argv[2] : "");
    std::cerr << "hello_jetpipe: " << source->describe() << "\n";

    const jetpipe::RunStats stats = pipeline.run(*source, [](const jetpipe::FrameRecord& r) {
      std::cout << jetpipe::record_to_json(r).dump() << "\n";
      return true;  // false would stop the run here
    });
    std::fprintf(stderr, "hello_jetpipe: %lld frames, %lld processed, %lld failed, %lld dropped\n",
                 static_cast<long long>(stats.read), static_cast<long long>(stats.processed),
                 static_cast<long long>(stats.failed), static_cast<long long>(stats.dropped));
    if (!stats.source_error.empty()) {
      std::fprintf(stderr, "hello_jetpipe: input stopped: %s\n", stats.source_error.c_str());
      return 3;
    }
    return stats.failed > 0 ? 3 : 0;
  } catch (const jetpipe::Error& e) {
    std::fprintf(stderr, "hello_jetpipe: %s\n", e.what());
    return e.kind() == jetpipe::ErrorKind::kConfig  ? 2
           : e.kind() == jetpipe::ErrorKind::kInput ? 3
                                                    : 1;
  }
}
