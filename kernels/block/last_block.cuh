// SPDX-License-Identifier: MIT
// "Last block finishes" for reductions that accumulate a whole image over one or several launches
// (row strips, possibly on several streams) into one workspace (the CUDA programming guide's
// threadFenceReduction pattern, counted in work items instead of blocks):
//
//   ... each thread publishes its partials (global atomics or stores) ...
//   if (dev::frame_complete(&ws->items_done, my_block_items, items_of_whole_image)) {
//     ... read the totals (atomicExch(·, 0) or __ldcg), write the outputs, reset the workspace,
//     ... including ws->items_done = 0
//   }
//
// Exactly one block over all launches sees true: the one whose items complete the image. The
// workspace is left zeroed for the next frame, so it must be zero-filled once after allocation.
#pragma once

namespace jetpipe::dev {

// Call with every thread of the block, after its publishing writes. True in every thread of the
// block that completed the image; its reads after this see all other blocks' published writes.
__device__ __forceinline__ bool frame_complete(unsigned long long* items_done,
                                               unsigned long long block_items,
                                               unsigned long long items_total) {
  __shared__ bool s_last;
  __threadfence();  // this thread's partials are visible device-wide before the ticket is taken
  __syncthreads();
  if (threadIdx.x == 0) {
    bool last = false;
    if (block_items) {
      const unsigned long long before = atomicAdd(items_done, block_items);
      last = before < items_total && before + block_items >= items_total;
    }
    s_last = last;
  }
  __syncthreads();
  const bool last = s_last;
  if (last) __threadfence();
  return last;
}

}  // namespace jetpipe::dev
