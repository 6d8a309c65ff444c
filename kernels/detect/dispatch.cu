// SPDX-License-Identifier: MIT
// GPU twin of detect (kernels/detect.h). Kernels, in launch order:
// - detect_max (quality only): the maximum over the rows, as an ordered float key, one atomicMax
//   per block (kernels/block/max_key.cuh). Not launched where the response's writer gathers it
//   into detect_max_slot() (launch_harris_max; H100, the 1080p default chain as a graph: 46.1 µs
//   against 49.4 with this kernel, jetpipe-bench --area pipeline).
// - detect_candidates: one 64×32 tile per block: the tile and its halo in shared memory, the window
//   maximum separably (rows, then columns), the test; the block's survivors (a bit mask a thread
//   for the compiled radii, compacted in shared memory by BlockCompact for the others) take their
//   places by one block scan and ONE atomicAdd per block reserving their range of the bounded
//   candidate buffer (capacity C). The counter counts every candidate, also those beyond C: N is
//   exact. Where the response's writer fed band maxima (detect_feed), a tile whose bands are all
//   below the threshold returns before reading the response.
//   Or detect_stream (DetectPath; F32, aligned rows, r ≤ 4): warps stream rows through shared
//   memory, survivors gathered per block in shared memory, one atomicAdd per block (below).
//   Dense candidates (a flat frame; docs/decisions/041-detect-dense-bounds.md): a tile with at
//   least max(a quarter of its pixels, K = max_detections) candidates, or a warp of the rows kernel
//   that turned dense (≥ 1 candidate per 4 pixels at a flush of its part), takes a separate
//   non-inlined routine: it drops its keys above the frame's bound so far (counted: N stays exact)
//   and, holding at least K kept keys, proposes the largest as the bound (atomicMax on its
//   complement, Header). Other tiles and warps run the plain code. Not where strips run ahead of
//   the maximum (their keys may lie below the frame's threshold), nor for r = 0 tiles.
// - detect_finish (a cooperative launch): the best K = max_detections in the contract's order;
//   with DetectParams::candidates_ahead (strips' candidates ran with a lower bound of the
//   threshold), only those above the frame's own threshold count: where the buffer holds few
//   enough keys for the finish by ranks, all of them are ranked at once (those below the frame's
//   threshold rank last and are never written); otherwise they are first counted and gathered.
// - K > 4096 only: CUB DeviceRadixSort of the K kept keys, then detect_write.
//
// Why it is exact. A candidate is the 64-bit key (~order(score) << 32) | (y·W + x), order() being
// the order-preserving map of a float to 32 bits (−0 taken as +0, NaN is never a candidate):
// ascending keys are exactly detection_before's order (score descending, then y, then x), and keys
// are distinct. The result is the K smallest keys, sorted. detect_finish keeps one invariant: the
// buffer holds every key ≤ some bound and at least min(N, K) keys, so the K smallest of the buffer
// are the K smallest of all. When no key was dropped and N ≤ C the buffer holds every candidate;
// keys are dropped only above a proposed bound, which has ≥ K keys at or below it, all kept. When
// the reserved keys exceed C, the rows up to the bound's fit C and the bound's score is the rows'
// largest (one read of the rows, no NMS: a flat frame), every key up to the bound lies in the rows
// up to the bound's row: one pass over those rows refills the buffer; or, where no NMS window of
// those rows leaves the launch's rows, the first K pixels of the bound's score in raster order are
// the result (each is a candidate): one ordered count writes them (plateau_write), no NMS pass,
// select or sort. Otherwise (e.g. dark noise of few levels: a bound's score below the best), the
// whole grid re-runs the NMS over the rows in passes (grid-wide barriers): one pass for the min and
// max key, then radix-select passes, each a histogram of 1024 bins over the remaining key range
// (the range narrows by 2^10 per pass, so ≤ 7 passes; keys are distinct, so a bin of width 1 holds
// one key), until the keys at or below the bound fit in C; then one compaction pass refills the
// buffer. With at most 8192 keys left (and 32 a block of the grid) the grid writes each key at its
// rank, counted against all keys in shared memory (no sort). Otherwise block 0 alone: ≤ 1024 keys
// are block-merge-sorted; with K ≤ 1024, up to 8192 keys go to shared memory and a block radix
// select (the same 1024-bin step) keeps ≤ 1024 of them first; with 1024 < K ≤ 4096, ≤ 4096 keys are
// sorted. Beyond those, a grid-wide select over the buffer narrows to 1024 / 4096 keys first; with
// K > 4096 it narrows to exactly K keys, which CUB sorts. Scores are read back from the response at
// (x, y), so even a −0 keeps its bits. The threshold is computed as the twin does: float(quality ·
// double(max)), or float(threshold).
//
// What bounds it: C = min(W·H, max(65536, 4K, W·H/8)) keys of 8 bytes; per frame 2 kernels (3 with
// quality, +2 when K > 4096); the finish's grid is co-resident (cooperative launch) and on the
// usual path all its blocks but block 0 exit at once. Beyond C, one NMS pass over the rows up to
// the bound's (flat frames: H100 16384² 768 µs against 13.8 ms), or ≤ 9 passes over all rows
// (min/max, ≤ 7 histograms, compaction) where the bound does not apply.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <numeric>
#include <type_traits>

#include "kernels/detect.h"
#include "kernels/detect/finish.cuh"
#include "kernels/detect/keys.cuh"
#include "kernels/detect/policy.cuh"
#include "kernels/detect/row_candidates.cuh"
#include "kernels/detect/tile_candidates.cuh"
#include "kernels/detect/tuning.h"
#include "kernels/launch/launch_config.cuh"
#include "kernels/launch/pdl_launch.cuh"

namespace jetpipe {
namespace {

// ---- Host side
// -----------------------------------------------------------------------------------------
bool valid_format(PixelFormat f) {
  return f == PixelFormat::kF32 || f == PixelFormat::kS16 || f == PixelFormat::kGray8;
}

cudaError_t check_args(const DetectParams& p, const ImageView& v, int y0, int y1,
                       const void* workspace) {
  if (v.data == nullptr || v.width < 1 || v.height < 1 || !valid_format(v.format) ||
      v.pitch < v.row_bytes() || workspace == nullptr || y0 < 0 || y1 > v.height || y0 > y1 ||
      p.nms_radius < 0 || p.nms_radius > Policy::kMaxRadius ||
      static_cast<u64>(v.width) * static_cast<u64>(v.height) > (1ull << 32)) {
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

ResponseView response_view(const ImageView& v) { return {v.data, v.pitch, v.width, v.height}; }

// early: the candidates kernel triggers its dependents at its start (LaunchContext).
CandArgs cand_args(const DetectParams& p, const ImageView& v, int y0, int y1, bool early) {
  CandArgs a{};
  a.nms.v = response_view(v);
  a.nms.y0 = y0;
  a.nms.y1 = y1;
  a.nms.r = p.nms_radius;
  a.nms.tiles_x = (v.width + Policy::kTileW - 1) / Policy::kTileW;
  a.nms.ntiles = a.nms.tiles_x * ((y1 - y0 + Policy::kTileH - 1) / Policy::kTileH);
  a.nms.vec = detect_f32_aligned(v);
  a.early = early;
  a.tile_stride = 1;
  a.use_quality = p.use_quality;
  a.quality = p.quality;
  a.thresh = static_cast<float>(p.threshold);
  // Bounds need every candidate above the frame's own threshold: none where strips run ahead.
  a.k = p.use_quality && p.candidates_ahead ? 0u : static_cast<u32>(std::max(p.max_detections, 0));
  a.dense_min = a.k > 0 ? std::max(kDenseBlock, p.max_detections) : INT_MAX;
  return a;
}

Header* header_of(void* ws) { return static_cast<Header*>(ws); }

template <class T>
cudaError_t launch_max_t(const ImageView& v, int y0, int y1, void* ws, cudaStream_t stream) {
  MaxArgs a{response_view(v), y0, y1, (v.width + Policy::kMaxCols - 1) / Policy::kMaxCols};
  const u64 blocks =
      static_cast<u64>(a.chunks_x) * ((y1 - y0 + Policy::kMaxRows - 1) / Policy::kMaxRows);
  return dev::launch_pdl(detect_max_kernel<T>, static_cast<unsigned>(blocks), Policy::kThreads, 0,
                         stream, a, header_of(ws));
}

// The candidates' dynamic shared memory stays within the 48 KiB every launch gets without opting
// in.
static_assert(nms_smem_floats(Policy::kMaxSmemTileRadius, true) * sizeof(float) <= 48 * 1024 &&
                  sizeof(Compact::TempStorage) <= 48 * 1024,
              "the candidates' tile fits the default dynamic shared memory");

template <class T, int R, bool kSmemTile>
cudaError_t launch_cand_rt(const CandArgs& a, const Layout& l, void* ws, cudaStream_t stream) {
  const std::size_t smem =
      std::max(static_cast<std::size_t>(nms_smem_floats(a.nms.r, kSmemTile)) * sizeof(float),
               sizeof(Compact::TempStorage));
  auto* base = static_cast<unsigned char*>(ws);
  return dev::launch_pdl(detect_candidates_kernel<T, R, kSmemTile>,
                         static_cast<unsigned>(a.nms.ntiles), Policy::kThreads, smem, stream, a,
                         header_of(ws), reinterpret_cast<u64*>(base + l.cand), l.cap);
}

// Rows per warp of the row-streaming kernel: enough warps for about kStreamWarpsPerSm per SM,
// between kStreamRowsMin (each warp re-reads 2R rows) and kStreamRowsMax; the grid's y extent stays
// under 65536. H100, 16384² harris response, the first version of the kernel (µs): 32 → 689,
// 64 → 630, 128 → 611.
constexpr int kStreamWarpsPerSm = 32, kStreamRowsMin = 8, kStreamRowsMax = 128;

int stream_rows_per_warp(int rows, int strips, int sms) {
  long long r = static_cast<long long>(rows) * strips /
                std::max<long long>(1, static_cast<long long>(sms) * kStreamWarpsPerSm);
  r = std::min<long long>(std::max<long long>(r, kStreamRowsMin), kStreamRowsMax);
  r = std::max<long long>(r, (rows + 65534) / 65535);
  return static_cast<int>(r);
}

template <int R>
cudaError_t launch_stream_r(const CandArgs& c, const Layout& l, void* ws, cudaStream_t stream) {
  dev::DeviceInfo d;
  if (const cudaError_t e = dev::current_device(&d)) return e;
  StreamArgs a{};
  a.v = c.nms.v;
  a.y0 = c.nms.y0;
  a.y1 = c.nms.y1;
  a.strips = (a.v.width + StreamPolicy::kOut - 1) / StreamPolicy::kOut;
  a.rows_per_warp = stream_rows_per_warp(a.y1 - a.y0, a.strips, d.sm_count);
  a.use_quality = c.use_quality;
  a.quality = c.quality;
  a.thresh = c.thresh;
  a.k = c.k;
  const dim3 grid(dev::div_up(a.strips, StreamPolicy::kWarps),
                  dev::div_up(a.y1 - a.y0, a.rows_per_warp));
  auto* base = static_cast<unsigned char*>(ws);
  return dev::launch_pdl(detect_stream_kernel<R>, grid, StreamPolicy::kThreads, 0, stream, a,
                         header_of(ws), reinterpret_cast<u64*>(base + l.cand), l.cap);
}

// Whether a launch takes the rows kernel: where it applies (detect_rows_apply), and on the path
// asked for (kAuto: large launches; H100, tiles / rows: 1920 × 1080 harris 10.7 / 16.8 µs,
// 3840 × 2160 26.7 / 34.6 µs, 16384² 721 / 479 µs; CUB DeviceSelect::If 17.5 / 30.3 / 527 µs).
bool use_rows(const DetectParams& p, const ImageView& response, int y0, int y1) {
  if (p.path == DetectPath::kTiles || !detect_rows_apply(p, response)) return false;
  return p.path == DetectPath::kRows ||
         static_cast<long long>(response.width) * (y1 - y0) >= kDetectRowsMinPixels;
}

template <class T>
cudaError_t launch_cand_t(const CandArgs& a, bool rows, const Layout& l, void* ws,
                          cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    if (rows) {
      switch (a.nms.r) {
        case 0:
          return launch_stream_r<0>(a, l, ws, stream);
        case 1:
          return launch_stream_r<1>(a, l, ws, stream);
        case 2:
          return launch_stream_r<2>(a, l, ws, stream);
        case 3:
          return launch_stream_r<3>(a, l, ws, stream);
        default:
          return launch_stream_r<4>(a, l, ws, stream);
      }
    }
  }
  switch (a.nms.r) {
    case 0:
      return launch_cand_rt<T, 0, true>(a, l, ws, stream);
    case 1:
      return launch_cand_rt<T, 1, true>(a, l, ws, stream);
    case 2:
      return launch_cand_rt<T, 2, true>(a, l, ws, stream);
    case 3:
      return launch_cand_rt<T, 3, true>(a, l, ws, stream);
    case 4:
      return launch_cand_rt<T, 4, true>(a, l, ws, stream);
    case 5:
      return launch_cand_rt<T, 5, true>(a, l, ws, stream);
    default:
      return a.nms.r <= Policy::kMaxSmemTileRadius ? launch_cand_rt<T, -1, true>(a, l, ws, stream)
                                                   : launch_cand_rt<T, -1, false>(a, l, ws, stream);
  }
}
static_assert(Policy::kMaxFixedRadius == 5, "launch_cand_t lists the fixed radii");

template <class T, bool kSmemTile>
cudaError_t launch_finish_rt(const FinishArgs& a, const Layout& l, int blocks_per_sm,
                             cudaStream_t stream) {
  auto kernel = detect_finish_kernel<T, kSmemTile>;
  const std::size_t smem = kFinishFixed + finish_work_bytes(a.c.nms.r, kSmemTile);
  cudaError_t e;
  if (smem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  dev::DeviceInfo d;
  if ((e = dev::current_device(&d)) != cudaSuccess) return e;
  const int sms = d.sm_count;
  int per_sm = 0;
  if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Policy::kThreads,
                                                         smem)) != cudaSuccess) {
    return e;
  }
  // Co-resident blocks (grid barriers), no more than the largest pass has chunks.
  const u64 chunks = std::max<u64>(
      {1, static_cast<u64>(a.c.nms.ntiles),
       (l.cap + Policy::kThreads * Policy::kItems - 1) / (Policy::kThreads * Policy::kItems)});
  // The policy's blocks an SM (docs/decisions/005-detect-finish-grid.md), or the options'.
  per_sm = std::min(per_sm, blocks_per_sm > 0
                                ? blocks_per_sm
                                : detect_policy(d.cc_major, d.cc_minor).finish_blocks_per_sm);
  const unsigned blocks = static_cast<unsigned>(
      std::min<u64>(chunks, static_cast<u64>(std::max(per_sm, 1)) * static_cast<u64>(sms)));
  // Programmatic too: its blocks are resident when the candidates before it end (they trigger at
  // their start), 0.6-0.7 µs off the 1080p chain on an H100
  // (docs/decisions/001-pdl-early-trigger.md).
  return dev::launch_cooperative_pdl(kernel, blocks, Policy::kThreads, smem, stream, a);
}

template <class T>
cudaError_t launch_finish_t(const DetectParams& p, const ImageView& v, int y0, int y1, void* ws,
                            DetectDeviceResult* out, const DetectLaunchOptions& o,
                            cudaStream_t stream) {
  const Layout l = make_layout(p, v.width, v.height);
  auto* base = static_cast<unsigned char*>(ws);
  FinishArgs a{};
  a.c = cand_args(p, v, y0, y1, /*early=*/false);  // the finish reads only its NMS fields
  a.ahead = p.candidates_ahead;
  a.h = header_of(ws);
  a.cand = reinterpret_cast<u64*>(base + l.cand);
  a.cap = l.cap;
  a.kept = reinterpret_cast<u64*>(base + l.kept);
  a.k = l.k;
  a.big = l.big;
  a.out = out;
  a.points = detect_result_points(out);
  a.bands = reinterpret_cast<u32*>(base + l.bands);
  a.band_words = static_cast<u32>(l.band_pitch) * static_cast<u32>(l.band_cols);
  const cudaError_t e = a.c.nms.r <= Policy::kMaxSmemTileRadius
                            ? launch_finish_rt<T, true>(a, l, o.finish_blocks_per_sm, stream)
                            : launch_finish_rt<T, false>(a, l, o.finish_blocks_per_sm, stream);
  if (e != cudaSuccess || !l.big) return e;
  auto* sorted = reinterpret_cast<u64*>(base + l.sorted);
  std::size_t cub_bytes = l.cub_bytes;
  const cudaError_t s = cub::DeviceRadixSort::SortKeys(base + l.cub, cub_bytes, a.kept, sorted,
                                                       static_cast<int>(l.k), 0, 64, stream);
  if (s != cudaSuccess) return s;
  const unsigned blocks = static_cast<unsigned>((l.k + Policy::kThreads - 1) / Policy::kThreads);
  detect_write_kernel<T><<<blocks, Policy::kThreads, 0, stream>>>(sorted, a.h, a.c.nms.v, a.points);
  return cudaPeekAtLastError();
}

}  // namespace

std::size_t detect_workspace_bytes(const DetectParams& p, int width, int height) {
  return make_layout(p, width, height).total;
}

cudaError_t detect_workspace_init(void* workspace, int width, int height, cudaStream_t stream) {
  if (workspace == nullptr) return cudaErrorInvalidValue;
  const BandLayout b = band_layout(width, height);
  return cudaMemsetAsync(workspace, 0, b.offset + b.bytes, stream);
}

MaxFeed detect_feed(void* workspace, int width, int height) {
  MaxFeed f;
  if (workspace == nullptr) return f;
  const BandLayout b = band_layout(width, height);
  f.max_key = &header_of(workspace)->max_key;
  f.bands = reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(workspace) + b.offset);
  f.band_pitch = b.pitch;
  return f;
}

std::uint32_t* detect_max_slot(void* workspace) { return &header_of(workspace)->max_key; }

cudaError_t launch_detect_max(const DetectParams& p, const ImageView& response, int y0, int y1,
                              void* workspace, cudaStream_t stream) {
  if (const cudaError_t e = check_args(p, response, y0, y1, workspace); e != cudaSuccess) return e;
  if (!p.use_quality || y0 == y1) return cudaSuccess;
  switch (response.format) {
    case PixelFormat::kF32:
      return launch_max_t<float>(response, y0, y1, workspace, stream);
    case PixelFormat::kS16:
      return launch_max_t<std::int16_t>(response, y0, y1, workspace, stream);
    default:
      return launch_max_t<std::uint8_t>(response, y0, y1, workspace, stream);
  }
}

cudaError_t launch_detect_candidates(const DetectParams& p, const ImageView& response, int y0,
                                     int y1, void* workspace, const LaunchContext& ctx,
                                     cudaStream_t stream) {
  if (const cudaError_t e = check_args(p, response, y0, y1, workspace); e != cudaSuccess) return e;
  if (y0 == y1) return cudaSuccess;
  const Layout l = make_layout(p, response.width, response.height);
  CandArgs a = cand_args(p, response, y0, y1, ctx.early_trigger);
  a.bands = reinterpret_cast<const u32*>(static_cast<unsigned char*>(workspace) + l.bands);
  a.band_pitch = l.band_pitch;
  // The tiles in a scattered order (block b takes tile b · stride mod ntiles, the stride coprime
  // near 0.618 · ntiles): the tiles with candidates, which the feed's bands leave to run, lie
  // together in the image, and in order they would crowd onto few SMs while the others sat idle.
  // H100, 1080p chain: 32.2-32.3 µs against 32.9 in order (docs/decisions/004-detect-band-feed.md).
  if (a.nms.ntiles > 2) {
    u32 st = static_cast<u32>(a.nms.ntiles * 0.618);
    while (std::gcd(st, static_cast<u32>(a.nms.ntiles)) != 1) ++st;
    a.tile_stride = st;
  }
  const bool rows = use_rows(p, response, y0, y1);
  switch (response.format) {
    case PixelFormat::kF32:
      return launch_cand_t<float>(a, rows, l, workspace, stream);
    case PixelFormat::kS16:
      return launch_cand_t<std::int16_t>(a, rows, l, workspace, stream);
    default:
      return launch_cand_t<std::uint8_t>(a, rows, l, workspace, stream);
  }
}

cudaError_t launch_detect_finish(const DetectParams& p, const ImageView& response, int y0, int y1,
                                 void* workspace, DetectDeviceResult* out, cudaStream_t stream,
                                 const DetectLaunchOptions& options) {
  if (const cudaError_t e = check_args(p, response, y0, y1, workspace); e != cudaSuccess) return e;
  if (out == nullptr) return cudaErrorInvalidValue;
  switch (response.format) {
    case PixelFormat::kF32:
      return launch_finish_t<float>(p, response, y0, y1, workspace, out, options, stream);
    case PixelFormat::kS16:
      return launch_finish_t<std::int16_t>(p, response, y0, y1, workspace, out, options, stream);
    default:
      return launch_finish_t<std::uint8_t>(p, response, y0, y1, workspace, out, options, stream);
  }
}

cudaError_t launch_detect(const DetectParams& p, const ImageView& response, int y0, int y1,
                          void* workspace, DetectDeviceResult* out, const LaunchContext& ctx,
                          cudaStream_t stream, const DetectLaunchOptions& options) {
  if (const cudaError_t e = check_args(p, response, y0, y1, workspace); e != cudaSuccess) return e;
  if (out == nullptr) return cudaErrorInvalidValue;
  cudaError_t e = launch_detect_max(p, response, y0, y1, workspace, stream);
  if (e == cudaSuccess) e = launch_detect_candidates(p, response, y0, y1, workspace, ctx, stream);
  if (e == cudaSuccess) {
    e = launch_detect_finish(p, response, y0, y1, workspace, out, stream, options);
  }
  return e;
}

}  // namespace jetpipe
JP_BLOCK_TRACE_EXPORT(detect)
