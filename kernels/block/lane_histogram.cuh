// SPDX-License-Identifier: MIT
// Block-privatized 256-value histograms of bytes in shared memory: the counter tables of a block,
// the per-pixel counting (a row_stream visitor), and the block's publication of its 256 totals to
// global 64-bit counters. Counting raw byte values (not bins) keeps any bins/range free per pixel:
// values map to bins once per image.
//
// Two layouts, one interface (T = LaneStriped or WarpShared):
//   extern __shared__ uint4 smem[];                  // T::kTableBytes · tables + T::kTotBytes
//   T c(smem, warp, lane, tables);
//   c.zero_tables(); __syncthreads();
//   dev::consume_items<U, 1>(src, items, first, stride, c);
//   __syncthreads();
//   T::publish(smem, tables, global_counts);         // atomics, exact
//
// LaneStriped: s[table][value][lane], 32-bit, updated with red.shared.add. Lane l's counters all sit
//   in bank l, so the 32 lanes of one instruction never conflict whatever the values; the update is
//   atomic, so all warps of a block may share one table (warp w uses table w % tables). Per pixel:
//   PRMT (byte) + LEA (address) + ATOMS. Measured on an H100 (out/g1/count_bench.cu): ~31 pixels per
//   clock per SM with one 32 KB table per block of 8 warps, the same for uniform, 90%-skewed and
//   constant data; 25 with one private table per warp (7 warps × 32 KB); a warp-shared 256-bin table
//   gets 9.9 on uniform data (bank conflicts). Exact up to 2^32 pixels per counter.
// WarpShared: s[warp][value], 1 KB per warp, plain shared atomics: lanes that hit different values in
//   one bank serialize (the simple variant, for comparison).
#pragma once

#include <cstdint>

namespace jetpipe::dev {

// Adds to a 32-bit shared-memory word by its shared-window address (one ATOMS, nothing returned).
__device__ __forceinline__ void shared_add(unsigned addr, unsigned v) {
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Byte k of w, zero-extended (one PRMT).
template <int K>
__device__ __forceinline__ unsigned byte_of(unsigned w) {
  return __byte_perm(w, 0u, 0x4440u | K);
}

struct LaneStriped {
  static constexpr int kTableBytes = 256 * 32 * 4;
  static constexpr int kMaxThreads = 256;  // __launch_bounds__: ≤ 8 warps, 2 blocks per SM
  unsigned col;  // shared address of this lane's column (value 0) in this warp's table

  __device__ LaneStriped(uint4* smem, int warp, int lane, int tables) {
    col = shared_address(smem) + static_cast<unsigned>(warp % tables) * kTableBytes +
          static_cast<unsigned>(lane) * 4u;
  }
  static __device__ void zero_tables(uint4* smem, int tables) {
    for (int i = threadIdx.x; i < tables * (kTableBytes / 16); i += blockDim.x) {
      smem[i] = make_uint4(0, 0, 0, 0);
    }
  }
  __device__ __forceinline__ void count(unsigned v) const { shared_add(col + (v << 7), 1u); }
  __device__ __forceinline__ void word(unsigned w) const {
    count(byte_of<0>(w));
    count(byte_of<1>(w));
    count(byte_of<2>(w));
    count(byte_of<3>(w));
  }
  __device__ __forceinline__ void begin_item() {}
  __device__ __forceinline__ void end_item() {}
  __device__ __forceinline__ void vec(const uint4& q) const {
    word(q.x);
    word(q.y);
    word(q.z);
    word(q.w);
  }
  __device__ __forceinline__ void scalar(unsigned e) const { count(e); }

  // Sums each value over the tables and lanes; thread t reads the 8 quads of a value's row starting
  // at quad t mod 8, so the 8 threads of a quarter warp hit 8 different bank groups.
  static __device__ void publish(const uint4* smem, int tables, unsigned long long* counts) {
    for (int v = threadIdx.x; v < 256; v += blockDim.x) {
      unsigned long long total = 0;
      for (int t = 0; t < tables; ++t) {
        const uint4* row = smem + t * (kTableBytes / 16) + v * 8;
        unsigned s = 0;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          const uint4 x = row[(q + v) & 7];
          s += x.x + x.y + x.z + x.w;
        }
        total += s;
      }
      if (total) atomicAdd(&counts[v], total);
    }
  }
};

struct WarpShared {  // tables = warps per block
  static constexpr int kTableBytes = 256 * 4;
  static constexpr int kMaxThreads = 256;
  unsigned table;

  __device__ WarpShared(uint4* smem, int warp, int /*lane*/, int /*tables*/) {
    table = shared_address(smem) + static_cast<unsigned>(warp) * kTableBytes;
  }
  static __device__ void zero_tables(uint4* smem, int tables) {
    for (int i = threadIdx.x; i < tables * (kTableBytes / 16); i += blockDim.x) {
      smem[i] = make_uint4(0, 0, 0, 0);
    }
  }
  __device__ __forceinline__ void count(unsigned v) const { shared_add(table + (v << 2), 1u); }
  __device__ __forceinline__ void word(unsigned w) const {
    count(byte_of<0>(w));
    count(byte_of<1>(w));
    count(byte_of<2>(w));
    count(byte_of<3>(w));
  }
  __device__ __forceinline__ void begin_item() {}
  __device__ __forceinline__ void end_item() {}
  __device__ __forceinline__ void vec(const uint4& q) const {
    word(q.x);
    word(q.y);
    word(q.z);
    word(q.w);
  }
  __device__ __forceinline__ void scalar(unsigned e) const { count(e); }

  static __device__ void publish(const uint4* smem, int warps, unsigned long long* counts) {
    const unsigned* s = reinterpret_cast<const unsigned*>(smem);
    for (int v = threadIdx.x; v < 256; v += blockDim.x) {
      unsigned long long total = 0;
      for (int w = 0; w < warps; ++w) total += s[w * 256 + v];
      if (total) atomicAdd(&counts[v], total);
    }
  }
};

}  // namespace jetpipe::dev
