// SPDX-License-Identifier: MIT
// detect: non-maximum suppression on a single-channel response (F32, S16 or GRAY8). A pixel is a
// candidate when its score > threshold and no pixel of its (2r+1)² window (clipped to the image)
// has a larger score. With quality q, threshold = q · (the frame's maximum), like
// goodFeaturesToTrack. The best max_detections candidates in the contract's order are reported; the
// rest are counted as overflow.
#pragma once

#include <cstdint>
#include <vector>

#include "core/image.h"
#include "core/results.h"

namespace jetpipe {

// Which candidates kernel a GPU launch uses (the CPU twin ignores it): 64 × 32 tiles in shared
// memory (any format, radius and layout), or rows streamed by warps (F32 with 16-byte aligned rows,
// radius ≤ 4; otherwise the tiles). kAuto: the rows for launches of at least
// kDetectRowsMinPixels pixels, where they are faster (docs/decisions/010-detect-rows-path.md).
enum class DetectPath { kAuto, kTiles, kRows };
inline constexpr long long kDetectRowsMinPixels = 1ll << 25;

struct DetectParams {
  DetectPath path = DetectPath::kAuto;
  bool use_quality = false;
  double threshold = 0;   // absolute, when !use_quality
  double quality = 0.01;  // relative to the frame's maximum, when use_quality
  int nms_radius = 1;
  int max_detections = 1000;
  // GPU strips (quality, the maximum gathered by the response's writer): some launch_detect_
  // candidates ran before every strip's maximum was in, with a lower threshold; the finish then
  // keeps only the candidates above the frame's own (see "Strips" below). Set alike for the
  // candidates' launches (no dense-frame bounds then: their keys may lie below the frame's
  // threshold) and the finish. Costs the finish one more pass over the candidates and dense frames
  // their fast path; harmless to results when set without need.
  bool candidates_ahead = false;
};

inline int detect_halo(const DetectParams& p) { return p.nms_radius; }

// Whether the rows kernel can take a GPU launch over `response`: F32 rows 16-byte aligned (data and
// pitch), radius ≤ 4. Where it cannot, every path runs the tiles.
inline constexpr int kDetectRowsMaxRadius = 4;
inline bool detect_f32_aligned(const ImageView& response) {  // also the tiles' 16-byte loads
  return response.format == PixelFormat::kF32 &&
         reinterpret_cast<std::uintptr_t>(response.data) % 16 == 0 && response.pitch % 16 == 0;
}
inline bool detect_rows_apply(const DetectParams& p, const ImageView& response) {
  return detect_f32_aligned(response) && p.nms_radius >= 0 && p.nms_radius <= kDetectRowsMaxRadius;
}

// Maximum score over rows [y0, y1) (−infinity for no rows).
float detect_max_ref(const ImageView& src, int y0, int y1);

// Appends the candidates of rows [y0, y1) (raster order) with score > thresh.
void detect_candidates_ref(const DetectParams& p, float thresh, const ImageView& src, int y0,
                           int y1, std::vector<Detection>* out);

// Sorts all candidates in the contract's order and keeps the best max_detections.
DetectResult detect_finish(std::vector<Detection> candidates, int max_detections);

}  // namespace jetpipe

#if JETPIPE_HAVE_CUDA
#include <driver_types.h>

#include <cstddef>
#include <cstdint>

#include "kernels/launch_context.h"
#include "kernels/max_feed.h"

namespace jetpipe {

// ---- GPU twin (kernels/detect/) ----------------------------------------------------------------
// The result in device memory (or mapped host memory, the caller's choice): this header, then
// max_detections points of which the first `count` are valid, in the contract's order. One
// contiguous block of detect_result_bytes(p) bytes: copy it back in one cudaMemcpyAsync (or only
// the first sizeof(DetectDeviceResult) + count · sizeof(Detection) bytes).
struct DetectDeviceResult {
  std::uint64_t count;     // points reported (= min(candidates, max_detections))
  std::uint64_t overflow;  // candidates beyond max_detections
  // Detection points[max_detections] follow.
};
inline std::size_t detect_result_bytes(const DetectParams& p) {
  return sizeof(DetectDeviceResult) +
         static_cast<std::size_t>(p.max_detections > 0 ? p.max_detections : 0) * sizeof(Detection);
}
inline Detection* detect_result_points(DetectDeviceResult* r) {
  return reinterpret_cast<Detection*>(r + 1);
}
inline const Detection* detect_result_points(const DetectDeviceResult* r) {
  return reinterpret_cast<const Detection*>(r + 1);
}
// A host copy of the result block as the host-side result type.
inline DetectResult to_detect_result(const DetectDeviceResult* host_copy) {
  DetectResult r;
  r.count = host_copy->count;
  r.overflow = host_copy->overflow;
  const Detection* p = detect_result_points(host_copy);
  r.points.assign(p, p + host_copy->count);
  return r;
}

// Launch shape overrides for benchmarks and tests; zeros follow the target's policy
// (kernels/detect/tuning.h). Results never depend on them.
struct DetectLaunchOptions {
  int finish_blocks_per_sm = 0;  // detect_finish's cooperative grid (at most the blocks that fit)
};

// Device scratch for one frame of a (response size, params): candidate buffer of
// min(W·H, max(65536, 4·max_detections, W·H / 8)) entries of 8 bytes, a sort area of
// max(4096, max_detections) entries (twice when max_detections > 4096, plus CUB's radix sort
// storage) and a 12 KiB header: about W·H bytes + 8 to 32 bytes per max_detections. Allocate it
// once; zero it once with detect_workspace_init. Every finish leaves it ready for the next frame.
std::size_t detect_workspace_bytes(const DetectParams& p, int width, int height);
// Zeroes the header and the feed's bands (detect_feed) of a workspace for a response of this size.
cudaError_t detect_workspace_init(void* workspace, int width, int height, cudaStream_t stream);

// Whole frame (or one range of rows): detection over rows [y0, y1) of `response` (F32, S16 or
// GRAY8, any pitch), the NMS window reading the real rows around the range (clipped to the
// image); with quality, the threshold is quality · (the maximum over rows [y0, y1)), computed on
// the device. Equals detect_max_ref + detect_candidates_ref + detect_finish over the same rows, bit
// for bit. `out` receives detect_result_bytes(p) bytes. Limits: W·H ≤ 2^32, nms_radius ≤ 64 (else
// cudaErrorInvalidValue). Queues 2 kernels (3 with quality; the last a cooperative launch), plus
// CUB's radix sort and one more kernel when max_detections > 4096; graph-capturable; never
// synchronizes or allocates; returns the first launch error.
cudaError_t launch_detect(const DetectParams& p, const ImageView& response, int y0, int y1,
                          void* workspace, DetectDeviceResult* out, const LaunchContext& ctx,
                          cudaStream_t stream, const DetectLaunchOptions& options = {});

// Strips: how partial results merge. For the strips [a0, a1), [a1, a2), … that partition the rows
// [y0, y1) of one frame, all with one workspace:
//   1. launch_detect_max for every strip (quality only; a no-op otherwise), or the response's
//      maximum gathered into detect_max_slot(workspace) by the kernels writing it,
//   2. after ALL of step 1: launch_detect_candidates for every strip (any order, any streams: the
//      strips append to one candidate set),
//   3. after ALL of step 2: launch_detect_finish once, over [y0, y1).
// Where the maximum is gathered by the response's writer, step 2 for a strip may also run as soon
// as the response rows it reads are written, before the other strips' maxima are in: it then uses
// quality · (the maximum gathered so far), a lower bound of the frame's threshold, so it appends a
// superset of its candidates; with p.candidates_ahead (for those candidates' launches and the
// finish alike) the finish counts and keeps only the keys
// above the frame's own (one more pass over the buffer, or over the image where the buffer
// overflowed).
// The result equals launch_detect over [y0, y1). The caller orders the steps (one stream, or
// events) and keeps the response unchanged until the finish has run (it reads scores back and, when
// the candidates overflowed the buffer, re-runs the NMS over [y0, y1)).
cudaError_t launch_detect_max(const DetectParams& p, const ImageView& response, int y0, int y1,
                              void* workspace, cudaStream_t stream);
// Where launch_detect_max gathers the maximum in the workspace (an order key, kernels/block/
// max_key.cuh; reset by each finish): the kernel that writes the response may gather it there
// itself as it writes every row of the frame (launch_harris_max), in place of step 1.
std::uint32_t* detect_max_slot(void* workspace);
// The whole feed for launch_harris_max (kernels/max_feed.h): the maximum slot above, and the bands
// of band maxima for a response of width × height (the workspace's size), which let the candidates
// skip the tiles with no pixel above the threshold without reading them. Each finish zeroes the
// bands for the next frame.
MaxFeed detect_feed(void* workspace, int width, int height);
cudaError_t launch_detect_candidates(const DetectParams& p, const ImageView& response, int y0,
                                     int y1, void* workspace, const LaunchContext& ctx,
                                     cudaStream_t stream);
cudaError_t launch_detect_finish(const DetectParams& p, const ImageView& response, int y0, int y1,
                                 void* workspace, DetectDeviceResult* out, cudaStream_t stream,
                                 const DetectLaunchOptions& options = {});

}  // namespace jetpipe
#endif  // JETPIPE_HAVE_CUDA
