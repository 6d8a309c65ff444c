// SPDX-License-Identifier: MIT
#include "pipeline/gpu_slot.h"

#if JETPIPE_HAVE_CUDA
#include "core/cuda_check.h"
#include "core/environment.h"
#include "core/error.h"

namespace jetpipe {

GraphExec::GraphExec(cudaGraph_t g) {
  const cudaError_t err = cudaGraphInstantiate(&exec_, g, 0);
  cudaGraphDestroy(g);
  JP_CUDA(err);
}

GraphExec::~GraphExec() {
  if (exec_) cudaGraphExecDestroy(exec_);
}

ImageView Slot::device_image(const std::string& name, int w, int h, PixelFormat f, bool* changed,
                             std::size_t pitch) {
  SlotImage& img = images[name];
  const ImageView& v = img.device.view();
  if (v.data == nullptr || v.width != w || v.height != h || v.format != f ||
      (pitch != 0 && v.pitch != pitch)) {
    img.device = DeviceImage(w, h, f, pitch);
    if (debug_options().poison) {
      const ImageView& n = img.device.view();
      JP_CUDA(cudaMemset(n.data, 0xCD, n.pitch * static_cast<std::size_t>(h)));
      JP_CUDA(cudaDeviceSynchronize());
    }
    *changed = true;
  }
  img.view = img.device.view();
  return img.view;
}

std::unique_ptr<Slot> make_slot(const PipelinePlan& plan, const ExecSettings& s, int index) {
  auto slot = std::make_unique<Slot>();
  slot->index = index;
  for (int k = 0; k < s.strip_streams(); ++k) slot->streams.emplace_back();
  if (s.poll) {
    const std::size_t words = static_cast<std::size_t>(s.chunks) + 1;
    slot->landed = DeviceBuffer(words * sizeof(std::uint32_t));
    JP_CUDA(cudaMemset(slot->landed.get(), 0, words * sizeof(std::uint32_t)));
  }
  for (int k = 0; k < s.chunks; ++k) {
    slot->h2d_done.emplace_back(false);
    slot->t_start.emplace_back(true);
    slot->t_h2d.emplace_back(true);
    slot->t_d2h0.emplace_back(true);
    slot->t_d2h.emplace_back(true);
  }
  std::vector<StageGpu*> twins;
  for (const StagePlan& sp : plan.stages) {
    StageSlot ss;
    ss.gpu = sp.stage->make_gpu();
    if (!ss.gpu) throw Error(sp.stage->label() + ": no GPU implementation");
    for (int k = 0; k < s.chunks; ++k) {
      ss.done.emplace_back(false);
      ss.t_end.emplace_back(true);
    }
    twins.push_back(ss.gpu.get());
    slot->stages.push_back(std::move(ss));
  }
  apply_fusions(plan, twins);
  return slot;
}

cudaError_t copy_rows(const ImageView& dst, const ImageView& src, int y0, int y1,
                      cudaMemcpyKind kind, cudaStream_t s) {
  const std::size_t rows = static_cast<std::size_t>(y1 - y0);
  if (rows == 0) return cudaSuccess;
  if (dst.pitch == src.pitch && src.pitch == src.row_bytes()) {
    return cudaMemcpyAsync(dst.row<std::uint8_t>(y0), src.row<std::uint8_t>(y0), rows * src.pitch,
                           kind, s);
  }
  return cudaMemcpy2DAsync(dst.row<std::uint8_t>(y0), dst.pitch, src.row<std::uint8_t>(y0),
                           src.pitch, src.row_bytes(), rows, kind, s);
}

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
