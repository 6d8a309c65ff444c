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
#include "stages/registry.h"

namespace jetpipe {

namespace {

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
