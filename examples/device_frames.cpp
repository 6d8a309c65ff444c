// SPDX-License-Identifier: MIT
// device_frames: frames that are already in GPU memory, handed to the pipeline without a copy
// (pipeline/io/source.h, DeviceFrame). A producer (here: an upload on a stream of ours; in an
// application: a decoder, a camera's mapped surface, a CUDA kernel) writes each frame into one of
// a few device buffers; the pipeline waits for the producer's stream, reads the buffer in place,
// and releases it (the owner's callback) once the frame's GPU work has completed, so the buffer
// can be written again. Each record is checked against the same frame given from host memory.
//   device_frames [CONFIG]        (default: config/default.yaml's stages, platform auto)
// Exit 0: every record equal; 1: a difference or an error; 77: no CUDA device (skipped).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "pipeline/api.h"
#include "pipeline/results_json.h"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "device_frames: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// A 1280x720 BGR test picture, different for each frame.
jetpipe::HostImage picture(int i) {
  jetpipe::HostImage img(1280, 720, jetpipe::PixelFormat::kBgr8);
  const jetpipe::ImageView v = img.view();
  for (int y = 0; y < v.height; ++y) {
    std::uint8_t* r = v.row<std::uint8_t>(y);
    for (int x = 0; x < v.width; ++x) {
      const bool square = ((x + 8 * i) / 80 + y / 80) % 2 != 0;
      r[3 * x] = static_cast<std::uint8_t>(square ? 200 : 40);
      r[3 * x + 1] = static_cast<std::uint8_t>((x * 7 + y * 3 + i) & 0xff);
      r[3 * x + 2] = static_cast<std::uint8_t>(square ? 90 : 220);
    }
  }
  return img;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "device_frames: no CUDA device: skipped\n");
    return 77;
  }
  try {
    const char* config = argc > 1 ? argv[1] : JETPIPE_EXAMPLE_CONFIG;
    jetpipe::Pipeline pipeline = jetpipe::Pipeline::from_file(config, "auto");
    std::fprintf(stderr, "device_frames: %s on %s\n", config, pipeline.platform().name.c_str());

    // Three device buffers, reused as the pipeline gives them back.
    constexpr int kBuffers = 3;
    std::vector<void*> buffers(kBuffers);
    std::size_t pitch = 0;
    for (void*& b : buffers) check(cudaMallocPitch(&b, &pitch, 1280 * 3, 720), "cudaMallocPitch");
    std::mutex m;
    std::vector<int> free_buffers = {0, 1, 2};
    cudaStream_t producer = nullptr;
    check(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), "cudaStreamCreate");

    int differ = 0;
    for (int i = 0; i < 10; ++i) {
      int b = 0;
      {
        std::lock_guard<std::mutex> lock(m);
        b = free_buffers.back();
        free_buffers.pop_back();
      }
      const jetpipe::HostImage host = picture(i);
      const jetpipe::ImageView hv = host.view();
      // The producer writes the frame on its stream; the pipeline waits for that stream.
      check(cudaMemcpy2DAsync(buffers[b], pitch, hv.data, hv.pitch, hv.row_bytes(), 720,
                              cudaMemcpyHostToDevice, producer),
            "upload");
      jetpipe::DeviceFrame d;
      d.view = {static_cast<std::uint8_t*>(buffers[b]), 1280, 720, pitch,
                jetpipe::PixelFormat::kBgr8};
      d.ready_stream = producer;
      d.owner = jetpipe::DeviceFrame::release_with([&m, &free_buffers, b] {
        std::lock_guard<std::mutex> lock(m);
        free_buffers.push_back(b);  // the pipeline is done with it
      });
      const jetpipe::FrameRecord on_gpu = pipeline.process(std::move(d), i, "device");
      const jetpipe::FrameRecord from_host = pipeline.process(host, i, "device");
      const std::string line = jetpipe::record_to_json(on_gpu).dump();
      std::printf("%s\n", line.c_str());
      if (line != jetpipe::record_to_json(from_host).dump()) {
        std::fprintf(stderr, "device_frames: frame %d differs from the host frame's record\n", i);
        ++differ;
      }
    }
    check(cudaStreamSynchronize(producer), "cudaStreamSynchronize");
    if (free_buffers.size() != kBuffers) {
      std::fprintf(stderr, "device_frames: %zu buffers not given back\n",
                   kBuffers - free_buffers.size());
      return 1;
    }
    for (void* b : buffers) cudaFree(b);
    cudaStreamDestroy(producer);
    return differ == 0 ? 0 : 1;
  } catch (const jetpipe::Error& e) {
    std::fprintf(stderr, "device_frames: %s\n", e.what());
    return 1;
  }
}
