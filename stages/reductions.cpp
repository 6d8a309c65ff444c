// SPDX-License-Identifier: MIT
// Result stages: histogram, stats, detect, and threshold (an image stage whose Otsu variant reduces
// first). Per-strip partials merge in strip order; float partials are kept per row and merged in row
// order, so results are identical for any number of strips.
#include <algorithm>
#include <limits>

#include "kernels/detect.h"
#include "kernels/histogram.h"
#include "kernels/stats.h"
#include "kernels/threshold.h"
#include "stages/gpu_util.h"
#include "stages/registry.h"

namespace jetpipe {

namespace {

#if JETPIPE_HAVE_CUDA
// A device workspace of the launchers' kind: zero-filled (on the frame's main stream) whenever it
// is (re)allocated; every completed frame leaves it ready for the next.
class Workspace {
 public:
  // Returns true when it (re)allocated.
  bool ensure(std::size_t bytes, GpuStream stream) {
    if (bytes == buf_.bytes() && buf_.get() != nullptr) return false;
    buf_ = DeviceBuffer(bytes);
    JP_CUDA(cudaMemsetAsync(buf_.get(), 0, bytes, stream));
    return true;
  }
  void* get() const { return buf_.get(); }

 private:
  DeviceBuffer buf_;
};

class StatsGpu : public StageGpu {
 public:
  explicit StatsGpu(std::string label) : label_(std::move(label)) {}
  bool bind(const GpuBinding& b) override {
    in_ = b.in;
    mode_ = b.results;
    bool changed = accum_.ensure(sizeof(StatsAccum), b.results);
    if (!absorbed_) changed |= ws_.ensure(stats_workspace_bytes(b.in.format, b.in.height), b.stream);
    return changed;
  }
  void launch(int, int, int y0, int y1, const LaunchContext&, GpuStream stream) override {
    check_stage_launch(launch_stats(in_, accum_.device<StatsAccum>(), y0, y1, ws_.get(), stream),
                       label_, "launch_stats");
  }
  bool merges_after(int) const override { return mode_ == ResultMemory::kCopy; }
  void merge(int, GpuStream stream) override { accum_.copy_back(stream); }
  StageResult result() const override { return stats_finish(*accum_.host<StatsAccum>(), in_.format); }

  // A histogram of the same image computes these stats (launch_histogram_stats).
  void set_absorbed() { absorbed_ = true; }
  StatsAccum* device_accum() const { return accum_.device<StatsAccum>(); }
  const ResultBuffer& accum() const { return accum_; }

 private:
  std::string label_;
  ImageView in_;
  ResultMemory mode_ = ResultMemory::kCopy;
  ResultBuffer accum_;
  Workspace ws_;
  bool absorbed_ = false;
};

class HistogramGpu : public StageGpu {
 public:
  HistogramGpu(HistogramParams p, std::string label) : p_(p), label_(std::move(label)) {}
  bool absorb(StageGpu& later) override {
    auto* stats = dynamic_cast<StatsGpu*>(&later);
    if (stats == nullptr || stats_ != nullptr) return false;
    stats_ = stats;
    stats_->set_absorbed();
    return true;
  }
  bool bind(const GpuBinding& b) override {
    in_ = b.in;
    mode_ = b.results;
    // Beside other kernels: a grid of ≥ 8 rows a warp (H100, 1080p chain as a graph with the
    // histogram + stats on a branch beside harris and the detection: 50.0 µs with 16 blocks,
    // 54.1 µs with the persistent 135, 54.1 µs on one stream).
    options_.min_items_per_warp = b.beside ? 8 : 0;
    bool changed = bins_.ensure(sizeof(std::uint64_t) * p_.bins, b.results);
    changed |= ws_.ensure(histogram_workspace_bytes(), b.stream);
    return changed;
  }
  void launch(int, int, int y0, int y1, const LaunchContext&, GpuStream stream) override {
    auto* bins = bins_.device<std::uint64_t>();
    const cudaError_t err =
        stats_ ? launch_histogram_stats(p_, in_, bins, stats_->device_accum(), y0, y1, ws_.get(),
                                        stream, options_)
               : launch_histogram(p_, in_, bins, y0, y1, ws_.get(), stream, options_);
    check_stage_launch(err, label_, stats_ ? "launch_histogram_stats" : "launch_histogram");
  }
  bool merges_after(int) const override { return mode_ == ResultMemory::kCopy; }
  void merge(int, GpuStream stream) override {
    bins_.copy_back(stream);
    if (stats_) stats_->accum().copy_back(stream);
  }
  StageResult result() const override {
    HistogramResult r;
    r.lo = p_.lo;
    r.hi = p_.hi;
    const std::uint64_t* bins = bins_.host<std::uint64_t>();
    r.bins.assign(bins, bins + p_.bins);
    return r;
  }

 private:
  HistogramParams p_;
  std::string label_;
  ImageView in_;
  ResultMemory mode_ = ResultMemory::kCopy;
  ResultBuffer bins_;
  Workspace ws_;
  StatsGpu* stats_ = nullptr;
  HistogramLaunchOptions options_;
};

// Fixed value: one pass. Otsu: pass 0 counts the histogram, its merge computes the threshold on
// the device, pass 1 applies it (read on the device: no host round trip).
class ThresholdGpu : public StageGpu {
 public:
  ThresholdGpu(bool otsu, double value, double max_value, std::string label)
      : otsu_(otsu), value_(value), max_value_(max_value), label_(std::move(label)) {}
  bool bind(const GpuBinding& b) override {
    in_ = b.in;
    out_ = b.out;
    mode_ = b.results;
    if (!otsu_) return false;
    bool changed = value_buf_.ensure(sizeof(double), b.results);
    changed |= hist_.ensure(256 * sizeof(std::uint64_t), b.stream);
    changed |= ws_.ensure(histogram_workspace_bytes(), b.stream);
    return changed;
  }
  void launch(int pass, int, int y0, int y1, const LaunchContext&, GpuStream stream) override {
    if (!otsu_) {
      check_stage_launch(launch_threshold(value_, max_value_, in_, out_, y0, y1, stream), label_,
                         "launch_threshold");
    } else if (pass == 0) {
      check_stage_launch(launch_histogram(HistogramParams{}, in_,
                                          static_cast<std::uint64_t*>(hist_.get()), y0, y1,
                                          ws_.get(), stream),
                         label_, "launch_histogram");
    } else {
      check_stage_launch(launch_threshold_from(value_buf_.device<double>(), max_value_, in_, out_,
                                               y0, y1, stream),
                         label_, "launch_threshold_from");
    }
  }
  bool merges_after(int pass) const override {
    return otsu_ && (pass == 0 || mode_ == ResultMemory::kCopy);
  }
  void merge(int pass, GpuStream stream) override {
    if (pass == 0) {
      check_stage_launch(launch_otsu_threshold(static_cast<const std::uint64_t*>(hist_.get()),
                                               value_buf_.device<double>(), stream),
                         label_, "launch_otsu_threshold");
    } else {
      value_buf_.copy_back(stream);
    }
  }
  StageResult result() const override {
    return ThresholdResult{otsu_ ? *value_buf_.host<double>() : value_};
  }

 private:
  bool otsu_;
  double value_, max_value_;
  std::string label_;
  ImageView in_, out_;
  ResultMemory mode_ = ResultMemory::kCopy;
  ResultBuffer value_buf_;
  Workspace hist_, ws_;
};

// Quality: pass 0 finds the maximum per strip, pass 1 the candidates; without quality pass 0 finds
// the candidates. The last pass's merge sorts and compacts (launch_detect_finish).
class DetectGpu : public StageGpu {
 public:
  DetectGpu(DetectParams p, std::string label) : p_(p), label_(std::move(label)) {}
  bool bind(const GpuBinding& b) override {
    in_ = b.in;
    strips_ = b.strips;
    bool changed = out_.ensure(detect_result_bytes(p_), b.results);
    const std::size_t bytes = detect_workspace_bytes(p_, b.in.width, b.in.height);
    if (bytes != ws_.bytes() || ws_.get() == nullptr) {
      ws_ = DeviceBuffer(bytes);
      check_stage_launch(detect_workspace_init(ws_.get(), b.in.width, b.in.height, b.stream),
                         label_, "detect_workspace_init");
      changed = true;
    }
    return changed;
  }
  // With quality: the maximum of pass 0, or gathered by the response's producer (harris).
  bool wants_maximum() const override { return p_.use_quality; }
  void set_maximum_fed() override { max_fed_ = true; }
  MaxFeed maximum_feed() override {
    return p_.use_quality && ws_.get() != nullptr ? detect_feed(ws_.get(), in_.width, in_.height)
                                                  : MaxFeed{};
  }
  void launch(int pass, int, int y0, int y1, const LaunchContext& ctx, GpuStream stream) override {
    if (p_.use_quality && pass == 0) {
      if (max_fed_) return;  // the producer's launches gather it (pass 1 may run ahead of it)
      check_stage_launch(launch_detect_max(p_, in_, y0, y1, ws_.get(), stream), label_,
                         "launch_detect_max");
    } else {
      check_stage_launch(launch_detect_candidates(params(), in_, y0, y1, ws_.get(), ctx, stream),
                         label_, "launch_detect_candidates");
    }
  }
  bool merges_after(int pass) const override { return pass == (p_.use_quality ? 1 : 0); }
  // Fed: a strip's candidates start once the response rows they read are written, with the
  // maximum gathered so far; the finish applies the frame's threshold (kernels/detect.h, Strips).
  bool joins_before(int pass) const override { return pass > 0 && !max_fed_; }
  void merge(int, GpuStream stream) override {
    check_stage_launch(launch_detect_finish(params(), in_, 0, in_.height, ws_.get(),
                                            out_.device<DetectDeviceResult>(), stream),
                       label_, "launch_detect_finish");
    out_.copy_back(stream);
  }
  StageResult result() const override {
    return to_detect_result(out_.host<DetectDeviceResult>());
  }

 private:
  // The candidates' launches and the finish alike: strips run ahead of the maximum where it is fed
  // and the frame has several (joins_before), so their thresholds are lower bounds
  // (kernels/detect.h).
  DetectParams params() const {
    DetectParams p = p_;
    p.candidates_ahead = max_fed_ && strips_ > 1;
    return p;
  }
  DetectParams p_;
  std::string label_;
  bool max_fed_ = false;
  int strips_ = 1;  // the frame's strips (GpuBinding::strips)
  ImageView in_;
  ResultBuffer out_;
  DeviceBuffer ws_;
};
#endif  // JETPIPE_HAVE_CUDA


class HistogramStage : public Stage {
 public:
  explicit HistogramStage(HistogramParams p) : p_(p) {}
  bool accepts(PixelFormat in, std::string* why) const override {
    return accept_formats(in, {PixelFormat::kGray8}, why);
  }
  void begin_frame(const ImageView&, int strips) override {
    parts_.assign(static_cast<std::size_t>(strips), std::vector<std::uint64_t>(p_.bins, 0));
  }
  void run_cpu(int, const ImageView& in, const ImageView&, int strip, int y0, int y1) override {
    histogram_ref(p_, in, y0, y1, parts_[strip].data());
  }
  StageResult result() const override {
    HistogramResult r;
    r.lo = p_.lo;
    r.hi = p_.hi;
    r.bins.assign(p_.bins, 0);
    for (const auto& part : parts_) {
      for (int b = 0; b < p_.bins; ++b) r.bins[b] += part[b];
    }
    return r;
  }
  std::unique_ptr<StageGpu> make_gpu() const override {
#if JETPIPE_HAVE_CUDA
    return std::make_unique<HistogramGpu>(p_, label());
#else
    return nullptr;
#endif
  }

 private:
  HistogramParams p_;
  std::vector<std::vector<std::uint64_t>> parts_;
};

class StatsStage : public Stage {
 public:
  bool accepts(PixelFormat in, std::string* why) const override {
    return accept_formats(in, {PixelFormat::kGray8, PixelFormat::kS16, PixelFormat::kF32}, why);
  }
  void begin_frame(const ImageView& in, int) override {
    format_ = in.format;
    rows_.assign(static_cast<std::size_t>(in.height), StatsAccum{});
  }
  void run_cpu(int, const ImageView& in, const ImageView&, int, int y0, int y1) override {
    for (int y = y0; y < y1; ++y) stats_ref(in, y, y + 1, &rows_[y]);
  }
  StageResult result() const override {
    StatsAccum all;
    for (const auto& r : rows_) stats_merge(&all, r);
    return stats_finish(all, format_);
  }
  std::unique_ptr<StageGpu> make_gpu() const override {
#if JETPIPE_HAVE_CUDA
    return std::make_unique<StatsGpu>(label());
#else
    return nullptr;
#endif
  }

 private:
  PixelFormat format_ = PixelFormat::kGray8;
  std::vector<StatsAccum> rows_;
};

class ThresholdStage : public Stage {
 public:
  ThresholdStage(bool otsu, double value, double max_value)
      : otsu_(otsu), value_(value), max_value_(max_value) {}
  bool accepts(PixelFormat in, std::string* why) const override {
    return accept_formats(in, {PixelFormat::kGray8}, why);
  }
  int passes() const override { return otsu_ ? 2 : 1; }
  void begin_frame(const ImageView&, int strips) override {
    if (otsu_) parts_.assign(static_cast<std::size_t>(strips), std::vector<std::uint64_t>(256, 0));
    used_ = value_;
  }
  void run_cpu(int pass, const ImageView& in, const ImageView& out, int strip, int y0,
               int y1) override {
    if (pass + 1 < passes()) {
      histogram_ref(HistogramParams{}, in, y0, y1, parts_[strip].data());
    } else {
      threshold_ref(used_, max_value_, in, out, y0, y1);
    }
  }
  void end_pass(int pass) override {
    if (!otsu_ || pass != 0) return;
    std::uint64_t hist[256] = {};
    for (const auto& part : parts_) {
      for (int b = 0; b < 256; ++b) hist[b] += part[b];
    }
    used_ = otsu_threshold(hist);
  }
  StageResult result() const override { return ThresholdResult{used_}; }
  std::unique_ptr<StageGpu> make_gpu() const override {
#if JETPIPE_HAVE_CUDA
    return std::make_unique<ThresholdGpu>(otsu_, value_, max_value_, label());
#else
    return nullptr;
#endif
  }

 private:
  bool otsu_;
  double value_, max_value_, used_ = 0;
  std::vector<std::vector<std::uint64_t>> parts_;
};

class DetectStage : public Stage {
 public:
  explicit DetectStage(DetectParams p) : p_(p) {}
  bool accepts(PixelFormat in, std::string* why) const override {
    return accept_formats(in, {PixelFormat::kF32, PixelFormat::kS16, PixelFormat::kGray8}, why);
  }
  int halo() const override { return detect_halo(p_); }
  int passes() const override { return p_.use_quality ? 2 : 1; }
  void begin_frame(const ImageView&, int strips) override {
    maxima_.assign(static_cast<std::size_t>(strips), -std::numeric_limits<float>::infinity());
    cands_.assign(static_cast<std::size_t>(strips), {});
    thresh_ = static_cast<float>(p_.threshold);
  }
  void run_cpu(int pass, const ImageView& in, const ImageView&, int strip, int y0,
               int y1) override {
    if (pass + 1 < passes()) {
      maxima_[strip] = detect_max_ref(in, y0, y1);
    } else {
      detect_candidates_ref(p_, thresh_, in, y0, y1, &cands_[strip]);
    }
  }
  void end_pass(int pass) override {
    if (pass + 1 < passes()) {
      const float m = *std::max_element(maxima_.begin(), maxima_.end());
      thresh_ = static_cast<float>(p_.quality * static_cast<double>(m));
    }
  }
  StageResult result() const override {
    std::vector<Detection> all;
    for (const auto& c : cands_) all.insert(all.end(), c.begin(), c.end());
    return detect_finish(std::move(all), p_.max_detections);
  }
  std::unique_ptr<StageGpu> make_gpu() const override {
#if JETPIPE_HAVE_CUDA
    return std::make_unique<DetectGpu>(p_, label());
#else
    return nullptr;
#endif
  }

 private:
  DetectParams p_;
  float thresh_ = 0;
  std::vector<float> maxima_;
  std::vector<std::vector<Detection>> cands_;
};

}  // namespace

std::unique_ptr<Stage> make_histogram(const Params& p) {
  HistogramParams hp;
  hp.bins = p.get_int("bins");
  const auto range = p.get_range("range");
  hp.lo = range[0];
  hp.hi = range[1];
  return std::make_unique<HistogramStage>(hp);
}

std::unique_ptr<Stage> make_stats(const Params&) { return std::make_unique<StatsStage>(); }

std::unique_ptr<Stage> make_threshold(const Params& p) {
  const bool otsu = p.is_choice("value");
  return std::make_unique<ThresholdStage>(otsu, otsu ? 0.0 : p.get_number("value"),
                                          p.get_number("max_value"));
}

std::unique_ptr<Stage> make_detect(const Params& p) {
  DetectParams dp;
  if (p.has("threshold") && p.has("quality")) {
    p.fail("quality", "give either threshold (absolute) or quality (relative), not both");
  }
  dp.use_quality = !p.has("threshold");
  if (p.has("threshold")) dp.threshold = p.get_number("threshold");
  if (p.has("quality")) dp.quality = p.get_number("quality");
  dp.nms_radius = p.get_int("nms_radius");
  dp.max_detections = p.get_int("max_detections");
  return std::make_unique<DetectStage>(dp);
}

}  // namespace jetpipe
