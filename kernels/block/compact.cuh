// SPDX-License-Identifier: MIT
// BlockCompact: a thread block's shared-memory stream compaction, CUB style. The block gathers its
// flagged items in shared memory (in thread, then item order: one BlockScan, no atomics, so the
// order is deterministic), reserves their range of a global array with ONE atomicAdd per block, and
// stores them with coalesced writes. Items at or beyond the array's capacity are dropped, but the
// counter still counts them: after the grid, *counter is the exact total.
//
//   using Compact = jetpipe::BlockCompact<std::uint64_t, 256, 8>;   // 1-D blocks of 256 threads
//   __shared__ typename Compact::TempStorage temp;                   // or aliased in dynamic smem
//   std::uint64_t items[8];                                          // this thread's items ...
//   bool flags[8];                                                   // ... and which survive
//   Compact compact(temp);
//   const int n = compact.gather(items, flags);     // block-wide; the same n in every thread
//   if (n > 0) compact.store(out, compact.reserve(counter), capacity);
//   __syncthreads();                                // before temp is used again
#pragma once

#include <cub/block/block_scan.cuh>
#include <cub/util_type.cuh>

namespace jetpipe {

template <class T, int kBlockThreads, int kItemsPerThread>
class BlockCompact {
  using Scan = cub::BlockScan<int, kBlockThreads>;
  struct Storage {
    typename Scan::TempStorage scan;
    T items[kBlockThreads * kItemsPerThread];
    unsigned long long base;
  };

 public:
  struct TempStorage : cub::Uninitialized<Storage> {};

  __device__ __forceinline__ explicit BlockCompact(TempStorage& temp) : s_(temp.Alias()) {}

  // Gathers the flagged items into shared memory; returns their number (in every thread). Ends with
  // a barrier.
  __device__ __forceinline__ int gather(const T (&items)[kItemsPerThread],
                                        const bool (&flags)[kItemsPerThread]) {
    int mine = 0;
#pragma unroll
    for (int j = 0; j < kItemsPerThread; ++j) mine += flags[j] ? 1 : 0;
    int offset = 0, total = 0;
    Scan(s_.scan).ExclusiveSum(mine, offset, total);
#pragma unroll
    for (int j = 0; j < kItemsPerThread; ++j) {
      if (flags[j]) s_.items[offset++] = items[j];
    }
    __syncthreads();
    total_ = total;
    return total;
  }

  // Thread 0 adds the gathered count to *counter (one global atomic); every thread gets the old
  // value, the start of the block's range. Contains a barrier.
  __device__ __forceinline__ unsigned long long reserve(unsigned long long* counter) {
    if (threadIdx.x == 0) {
      s_.base = atomicAdd(counter, static_cast<unsigned long long>(total_));
    }
    __syncthreads();
    return s_.base;
  }

  // out[base + i] = item i for i < count and base + i < capacity (coalesced).
  __device__ __forceinline__ void store(T* out, unsigned long long base,
                                        unsigned long long capacity) const {
    for (int i = threadIdx.x; i < total_; i += kBlockThreads) {
      if (base + static_cast<unsigned long long>(i) < capacity) out[base + i] = s_.items[i];
    }
  }

 private:
  Storage& s_;
  int total_ = 0;
};

}  // namespace jetpipe
