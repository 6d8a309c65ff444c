// SPDX-License-Identifier: MIT
// `jetpipe bench source`: the CPU time a GStreamer source spends per frame between the decoder's
// buffer and the frame the executor reads (no GPU needed).
//
// Copy rows: a decoder's buffer laid out as GStreamer lays it (rows rounded up to 4 bytes) copied
// into a frame laid out as the frame pool lays it (pitch a multiple of 128 bytes) by the code the
// source runs (core copy_image over the mapped buffer's planes). Per frame, the calling thread's
// CPU time (CLOCK_THREAD_CPUTIME_ID) and the wall time around the copy; medians of --frames after
// --warmup frames. Buffers and frames rotate over 4 of each (at 4K, 133 MB for BGRx), so no copy
// reads or writes what the one before left in the cache. The `before` row is the per-pixel
// BGRx → BGR loop the sources ran until 0089255 (copy_frame in 9d9c7e2's gst_source.cpp), kept
// here as the baseline only.
//
// GStreamer rows (GStreamer builds): the whole source, videotestsrc's I420 (pattern black, as a
// software decoder hands it) through a caps filter into frames by the GStreamer source; the
// process's CPU time per frame (all of GStreamer's threads), median of 3 runs of --frames frames.
// I420 → BGR was the software decoders' colour path before 0089255, I420 → NV12 is it now, and
// I420 → GRAY8 (the luma rows alone) is the gray path, so its row is videotestsrc's share.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/io/gst_pipeline.h"
#include "pipeline/io/gst_source.h"
#include "pipeline/io/source.h"
#include "tools/cli/bench_util.h"
#include "tools/cli/commands.h"

#if JETPIPE_HAVE_CUDA
#include "pipeline/frame_pool.h"
#endif

namespace jetpipe::cli {

namespace {

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

double wall_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The per-pixel loop of copy_frame (9d9c7e2:pipeline/io/gst_source.cpp) for BGRx/BGRA/RGB*, as it
// was: the layout's flags known only at run time. The benchmark's baseline; no source runs it.
[[gnu::noinline]] void bgrx_to_bgr_per_pixel(const std::uint8_t* src, int stride, bool rgb,
                                             int step, const ImageView& v) {
  for (int y = 0; y < v.height; ++y) {
    const std::uint8_t* s = src + y * stride;
    std::uint8_t* d = v.row<std::uint8_t>(y);
    for (int x = 0; x < v.width; ++x, s += step, d += 3) {
      d[0] = rgb ? s[2] : s[0];
      d[1] = s[1];
      d[2] = rgb ? s[0] : s[2];
    }
  }
}

// A decoder's buffer of one layout as GStreamer lays it out: planes one after the other, rows
// rounded up to 4 bytes; filled with a pattern so that no page is left untouched.
struct RawBuffer {
  std::vector<std::uint8_t> bytes;
  ImageView view;  // planes and strides of the buffer (NV12: uv after the luma plane)
};

RawBuffer raw_buffer(int w, int h, PixelFormat f, int seed) {
  RawBuffer b;
  const std::size_t stride = (min_pitch(w, f) + 3) / 4 * 4;
  b.bytes.resize(image_bytes(w, h, f, stride));
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    b.bytes[i] = static_cast<std::uint8_t>((i * 131 + static_cast<std::size_t>(seed) * 7) >> 3);
  }
  b.view = make_view(b.bytes.data(), w, h, f, stride);
  return b;
}

// A frame as the frame pool lays it out (rows padded to 128 bytes; in host memory here).
constexpr std::size_t kPoolPitchAlign = 128;
#if JETPIPE_HAVE_CUDA
static_assert(kPoolPitchAlign == FramePool::kPitchAlign, "the pool's row alignment");
#endif
HostImage pool_frame(int w, int h, PixelFormat f) {
  const std::size_t a = kPoolPitchAlign;
  return HostImage(w, h, f, (min_pitch(w, f) + a - 1) / a * a);
}

struct Timed {
  double cpu_ms = 0, wall_ms = 0, p90_cpu_ms = 0;
};

double median(std::vector<double> v, double q = 0.5) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// copy(buffer, frame) over rotating buffers and frames: per-frame CPU and wall medians.
Timed time_copies(int w, int h, PixelFormat in, PixelFormat out, int warmup, int frames,
                  const std::function<void(const ImageView&, const ImageView&)>& copy) {
  constexpr int kRing = 4;
  std::vector<RawBuffer> bufs;
  std::vector<HostImage> dst;
  for (int i = 0; i < kRing; ++i) {
    bufs.push_back(raw_buffer(w, h, in, i));
    dst.push_back(pool_frame(w, h, out));
    std::memset(dst.back().view().data, 0, image_bytes(w, h, out, dst.back().view().pitch));
  }
  std::vector<double> cpu, wall;
  for (int i = -warmup; i < frames; ++i) {
    const int k = (i + warmup) % kRing;
    const double c0 = thread_cpu_ms(), w0 = wall_ms();
    copy(bufs[k].view, dst[k].view());
    const double c1 = thread_cpu_ms(), w1 = wall_ms();
    if (i >= 0) {
      cpu.push_back(c1 - c0);
      wall.push_back(w1 - w0);
    }
  }
  return {median(cpu), median(wall), median(cpu, 0.9)};
}

// Process CPU time per frame of a GStreamer source reading `frames` frames of `uri`.
double time_gst_source(const std::string& uri, bool colour, int frames, std::string* negotiated) {
  SourceOptions o;
  o.colour = colour;
  o.queue = 4;
  o.allocator = [](int w, int h, PixelFormat f) { return pool_frame(w, h, f); };
  const double c0 = process_cpu_ms();
  std::unique_ptr<Source> src = open_source(uri, o);
  Frame f;
  int n = 0;
  while (src->next(&f)) ++n;
  const double c1 = process_cpu_ms();
  if (n != frames) throw Error("bench source: " + uri + ": " + std::to_string(n) + " frames");
  *negotiated = src->describe();
  return (c1 - c0) / n;
}

}  // namespace

int cmd_bench_source(const SourceBenchOptions& o) {
  std::printf(
      "CPU: %s; %d frames after %d warm-up frames, medians; frames laid out as the frame "
      "pool lays them\n\n",
      cpu_model().c_str(), o.frames, o.warmup);
  nlohmann::ordered_json j;
  j["cpu"] = cpu_model();
  j["runs"] = nlohmann::ordered_json::array();
  struct CopyRow {
    const char* label;
    PixelFormat in, out;
    std::function<void(const ImageView&, const ImageView&)> copy;
  };
  const auto memcpy_rows = [](const ImageView& in, const ImageView& out) {
    ImageView v = in;
    v.format = out.format;  // I420 / NV12 read as their luma plane for GRAY8
    if (out.format != PixelFormat::kNv12) v.uv = nullptr;
    copy_image(v, out);
  };
  const CopyRow rows[] = {
      {"BGRx -> bgr8, per pixel (before)", PixelFormat::kBgrx8, PixelFormat::kBgr8,
       [](const ImageView& in, const ImageView& out) {
         volatile bool rgb = false;  // known at run time only, as in copy_frame
         volatile int step = 4;
         bgrx_to_bgr_per_pixel(in.data, static_cast<int>(in.pitch), rgb, step, out);
       }},
      {"BGRx -> bgrx8, memcpy rows (after)", PixelFormat::kBgrx8, PixelFormat::kBgrx8, memcpy_rows},
      {"NV12 -> nv12, memcpy rows of both planes", PixelFormat::kNv12, PixelFormat::kNv12,
       memcpy_rows},
      {"BGR -> bgr8, memcpy rows", PixelFormat::kBgr8, PixelFormat::kBgr8, memcpy_rows},
      {"NV12 / I420 -> gray8, luma rows (gray path)", PixelFormat::kNv12, PixelFormat::kGray8,
       memcpy_rows},
  };
  std::printf("the source's copy, one buffer into one frame:\n");
  std::printf("  %-10s %-46s %10s %10s %10s %9s\n", "size", "row", "cpu ms", "cpu p90", "wall ms",
              "GB/s");
  for (const auto& [w, h] : o.sizes) {
    for (const CopyRow& r : rows) {
      const Timed t = time_copies(w, h, r.in, r.out, o.warmup, o.frames, r.copy);
      // Bytes written plus bytes read (the whole buffer when converted, else what is copied).
      const double written = static_cast<double>(image_bytes(w, h, r.out, min_pitch(w, r.out)));
      const bool converted = is_colour(r.out) && r.in != r.out;
      const double bytes =
          written +
          (converted ? static_cast<double>(image_bytes(w, h, r.in, min_pitch(w, r.in))) : written);
      const std::string size = std::to_string(w) + "x" + std::to_string(h);
      std::printf("  %-10s %-46s %10.3f %10.3f %10.3f %9.1f\n", size.c_str(), r.label, t.cpu_ms,
                  t.p90_cpu_ms, t.wall_ms, bytes / (t.cpu_ms * 1e6));
      j["runs"].push_back({{"size", size},
                           {"row", r.label},
                           {"cpu_ms", t.cpu_ms},
                           {"cpu_p90_ms", t.p90_cpu_ms},
                           {"wall_ms", t.wall_ms}});
    }
  }
  if (have_gstreamer()) {
    std::printf(
        "\nthe whole GStreamer source (videotestsrc I420, pattern black), process CPU per "
        "frame, median of 3 runs:\n");
    std::printf("  %-10s %-46s %10s   %s\n", "size", "caps", "cpu ms", "negotiated");
    struct GstRow {
      const char* label;
      const char* tail;
      bool colour;
    };
    const GstRow grows[] = {
        {"I420 -> BGR (before: software decoders)", "videoconvert ! video/x-raw,format=BGR ! ",
         true},
        {"I420 -> NV12 (after: the colour caps)", "videoconvert ! ", true},
        {"I420 -> gray8 luma rows (gray path)", "videoconvert ! ", false},
    };
    const int n = std::max(10, o.frames / 2);
    for (const auto& [w, h] : o.sizes) {
      for (const GstRow& r : grows) {
        const std::string uri =
            "gst://videotestsrc pattern=black num-buffers=" + std::to_string(n) +
            " ! video/x-raw,format=I420,width=" + std::to_string(w) +
            ",height=" + std::to_string(h) + " ! " + r.tail + "appsink";
        std::vector<double> runs;
        std::string negotiated;
        for (int k = 0; k < 3; ++k) runs.push_back(time_gst_source(uri, r.colour, n, &negotiated));
        const std::size_t a = negotiated.find("(negotiated ");
        negotiated = a == std::string::npos
                         ? std::string()
                         : negotiated.substr(a + 12, negotiated.find(')', a) - a - 12);
        const std::string size = std::to_string(w) + "x" + std::to_string(h);
        std::printf("  %-10s %-46s %10.3f   %s\n", size.c_str(), r.label, median(runs),
                    negotiated.c_str());
        j["runs"].push_back({{"size", size},
                             {"row", std::string("gst ") + r.label},
                             {"cpu_ms", median(runs)},
                             {"negotiated", negotiated}});
      }
    }
  }
  if (!o.json.empty()) std::ofstream(o.json) << j.dump(2) << '\n';
  return 0;
}

}  // namespace jetpipe::cli
