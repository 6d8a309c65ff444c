// SPDX-License-Identifier: MIT
// Warp-level streaming of an image's rows in 16-byte vectors, for reductions (histogram, stats).
//
// Each row splits into a scalar head (up to the first 16-byte aligned address), a middle of aligned
// 16-byte vectors and a scalar tail (< 16 bytes): any width, pitch and ROI offset; the vector loads
// never touch a byte outside the row. A warp's work item is (row, chunk): chunk c covers vectors
// [c·32·U, (c+1)·32·U) of the middle, lane l loading vectors c·32·U + l + 32·u (u < U: coalesced
// 512-byte rows of loads); chunk 0 also carries the head and tail, one element per lane (lanes
// 0..15 the head, 16..31 the tail). The split depends only on the row's address, never on the
// launch, so per-item arithmetic is the same for any grid.
//
// consume_items() walks a warp's items (first, first + stride, ...) double-buffered: the next item's
// U loads are issued before the current item is handed to the visitor, so every lane keeps U
// 16-byte loads in flight while it counts.
//
//   struct Visitor {                                // per lane
//     __device__ void begin_item();                 // before an item's elements (warp-uniform)
//     __device__ void vec(const uint4& v);          // 16 bytes of the middle
//     __device__ void scalar(unsigned e);           // one element of the head or tail
//     __device__ void end_item();                   // after them (warp-uniform)
//   };
//   dev::RowSource src{view.data, view.pitch, view.row_bytes(), y0, chunks};
//   dev::consume_items<kVectors, 1>(src, items, warp_global, warps_total, visitor);
#pragma once

#include <cstddef>
#include <cstdint>

namespace jetpipe::dev {

// The rows a launch streams: rows y0 + item / chunks of the view at data (pitch in bytes).
struct RowSource {
  const std::uint8_t* data;
  std::size_t pitch;
  int row_bytes;
  int y0;
  unsigned chunks;  // items per row
};

// Items per row for U vectors per lane: enough chunks for the widest middle a row of this width can
// have (row_bytes / 16), and one for rows of scalars only.
__host__ __device__ inline unsigned chunks_per_row(int row_bytes, int vectors_per_lane) {
  const unsigned per_chunk = 32u * static_cast<unsigned>(vectors_per_lane);
  const unsigned mid_max = static_cast<unsigned>(row_bytes) / 16u;
  const unsigned c = (mid_max + per_chunk - 1) / per_chunk;
  return c ? c : 1u;
}

// A row's head (bytes before the first aligned address, capped at the row), middle (whole aligned
// vectors) and tail (bytes after them).
struct RowSplit {
  const std::uint8_t* row;
  int head;  // bytes, < 16
  int mid;   // 16-byte vectors
  int tail;  // bytes, < 16
};

__device__ __forceinline__ RowSplit split_row(const std::uint8_t* row, int row_bytes) {
  RowSplit s;
  s.row = row;
  const int to_aligned = static_cast<int>((0u - static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(row))) & 15u);
  s.head = min(row_bytes, to_aligned);
  const int rest = row_bytes - s.head;
  s.mid = rest >> 4;
  s.tail = rest & 15;
  return s;
}

template <int U>
struct VecBatch {
  uint4 v[U];
  int nv;      // this lane's valid vectors: v[0, nv)
  unsigned s;  // this lane's head or tail element, zero-extended, when has_s
  bool has_s;
};

template <int E>
__device__ __forceinline__ unsigned load_element(const std::uint8_t* p) {
  if constexpr (E == 1) {
    return __ldg(p);
  } else if constexpr (E == 2) {
    return static_cast<unsigned short>(__ldg(reinterpret_cast<const unsigned short*>(p)));
  } else {
    return __ldg(reinterpret_cast<const unsigned*>(p));
  }
}

// Loads work item `item` (E: bytes per element, 1, 2 or 4; rows must be E-aligned).
template <int U, int E>
__device__ __forceinline__ void load_batch(const RowSource& src, unsigned item, int lane,
                                           VecBatch<U>& b) {
  const unsigned r = item / src.chunks;
  const unsigned c = item - r * src.chunks;
  const RowSplit s = split_row(
      src.data + static_cast<std::size_t>(src.y0 + static_cast<int>(r)) * src.pitch, src.row_bytes);
  const uint4* vec = reinterpret_cast<const uint4*>(s.row + s.head);
  const int first = static_cast<int>(c) * (32 * U) + lane;
  b.nv = min(max((s.mid - first + 31) >> 5, 0), U);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (u < b.nv) b.v[u] = __ldg(vec + first + 32 * u);
  }
  b.has_s = false;
  b.s = 0;
  if (c == 0) {
    int off = -1;
    if (lane < 16) {
      if (lane * E < s.head) off = lane * E;
    } else if ((lane - 16) * E < s.tail) {
      off = s.head + s.mid * 16 + (lane - 16) * E;
    }
    if (off >= 0) {
      b.s = load_element<E>(s.row + off);
      b.has_s = true;
    }
  }
}

template <int U, class Visitor>
__device__ __forceinline__ void visit_batch(const VecBatch<U>& b, Visitor& vis) {
  vis.begin_item();
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (u < b.nv) vis.vec(b.v[u]);
  }
  if (b.has_s) vis.scalar(b.s);
  vis.end_item();
}

// Items first, first + stride, ... below `items`, double-buffered (two register batches used in
// turn, so no copies between them). Call with all 32 lanes of the warp; first and stride
// warp-uniform, items + stride < 2^32.
template <int U, int E, class Visitor>
__device__ __forceinline__ void consume_items(const RowSource& src, unsigned items, unsigned first,
                                              unsigned stride, Visitor& vis) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  unsigned item = first;
  if (item >= items) return;
  VecBatch<U> a, b;
  load_batch<U, E>(src, item, lane, a);
  for (;;) {
    unsigned next = item + stride;
    bool more = next < items;
    if (more) load_batch<U, E>(src, next, lane, b);
    visit_batch(a, vis);
    if (!more) return;
    item = next;
    next = item + stride;
    more = next < items;
    if (more) load_batch<U, E>(src, next, lane, a);
    visit_batch(b, vis);
    if (!more) return;
    item = next;
  }
}

// How many of the items first + k·stride (k ≥ 0) lie below `items`.
__host__ __device__ inline unsigned items_of(unsigned items, unsigned first, unsigned stride) {
  return first < items ? (items - 1u - first) / stride + 1u : 0u;
}

}  // namespace jetpipe::dev
