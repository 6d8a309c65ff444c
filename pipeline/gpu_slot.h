// SPDX-License-Identifier: MIT
// A frame slot of the CUDA executor (CUDA builds only): what one frame in flight owns — streams,
// events, device images, the stages' GPU twins and the captured graphs — built from a plan
// (pipeline/planner.h), and the frame in it.
#pragma once

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda_memory.h"
#include "pipeline/executor.h"
#include "pipeline/planner.h"

namespace jetpipe {

class GraphExec {
 public:
  explicit GraphExec(cudaGraph_t g);
  ~GraphExec();
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// One stage in one slot.
struct StageSlot {
  std::unique_ptr<StageGpu> gpu;
  std::vector<CudaEvent> done;   // per strip: its rows of the current pass written
  std::vector<CudaEvent> t_end;  // per strip (timing): after the stage's last pass
  CudaEvent joined{false};       // between passes: all strips (and the merge) done
  CudaEvent t_merge0{true}, t_merge1{true};
  CudaEvent t_side{true};  // a stage beside the others: its start on the side stream (timing)
  bool merged = false;     // the current frame ran a merge (timing)
};

// An image buffer of a slot: device memory, or (images asked for) pool memory.
struct SlotImage {
  DeviceImage device;
  ImageView view;  // what the kernels use
};

struct Slot {
  int index = 0;
  CudaStream main;
  std::vector<CudaStream> streams;  // strip streams (empty: everything on main)
  CudaEvent fork{false};
  std::vector<CudaEvent> h2d_done;  // per strip
  CudaEvent join{false};            // each strip stream's end, waited on by main in turn
  CudaStream copy_in, copy_out;     // pinned-chunked with strip streams: the strips' copies
  CudaStream side;                  // the stages that run beside the others (StagePlan::beside)
  std::vector<CudaEvent> t_start, t_h2d, t_d2h0, t_d2h;  // per strip (timing)
  CudaEvent t_begin{true}, t_finish{true}, complete{false};
  // With the copies polled (ExecSettings::polls): [0] written by main before the frame's graph,
  // [1 + k] by the copy stream after the copy ending with strip k; each the frame's number in the
  // slot.
  DeviceBuffer landed;
  std::uint32_t landed_seq = 0;
  std::vector<StageSlot> stages;
  std::map<std::string, SlotImage> images;  // device images by name (the frame included)
  std::map<std::vector<std::uintptr_t>, std::unique_ptr<GraphExec>> graphs;

  // The frame in this slot.
  bool busy = false;
  std::size_t pending = 0;  // its entry in the executor's pending queue (sequence number)

  // Strip k's stream: its strip stream, or main.
  cudaStream_t strip_stream(int k) const {
    return streams.empty() ? main.get() : streams[k % streams.size()].get();
  }
  // A device image of the slot with this shape (reallocated only when the shape changes; *changed
  // set then). With a pitch (the pool's, for images copied to or from pool memory), rows are laid
  // out as in the host buffer, so a strip crosses the bus as one contiguous copy. With the
  // JETPIPE_POISON debug option each new image is filled with 0xCD, so a stage reading rows before
  // they are written reads that instead of a freed buffer's old contents.
  ImageView device_image(const std::string& name, int w, int h, PixelFormat f, bool* changed,
                         std::size_t pitch = 0);
};

// Streams, events and twins for a slot of this plan; the twins take the plan's fusions.
std::unique_ptr<Slot> make_slot(const PipelinePlan& plan, const ExecSettings& s, int index);

// A frame submitted to the executor, from submit to its record.
struct InFlight {
  std::size_t seq = 0;
  FrameRecord record;
  bool ready = false;
  int slot = -1;
  Frame frame;                               // keeps the host frame alive while it runs
  std::map<std::string, HostImage> outputs;  // host images the frame's outputs land in
  std::map<std::string, ImageView> device_views;  // images to hand over in device memory
  FramePlan plan;                            // its strips, waits, deferral
  std::chrono::steady_clock::time_point submitted;
  bool timed = false;  // stage and copy events recorded (timing_every)
};

// Rows [y0, y1) of src into dst (same size and format): one linear copy when both are unpadded
// rows of the same pitch (the DMA engines move a contiguous range faster than the rows of a 2D
// copy; padding is never copied: nothing wrote it), else 2D.
cudaError_t copy_rows(const ImageView& dst, const ImageView& src, int y0, int y1,
                      cudaMemcpyKind kind, cudaStream_t s);

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
