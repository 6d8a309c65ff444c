// SPDX-License-Identifier: MIT
// The host executor (memory: host): stages run on the CPU twins, each frame in max(chunks, threads)
// row strips. The strips of one pass run at once on a thread pool; every strip of a pass finishes
// before the next pass or stage starts, so a strip's halo reads the real neighbouring rows. Stages
// keep per-strip partials and merge them in strip order (stages/stage.h), so results equal
// whole-frame processing whatever the thread or strip count.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <sstream>

#include "core/error.h"
#include "pipeline/device_frame.h"
#include "pipeline/executor.h"
#include "pipeline/thread_pool.h"

namespace jetpipe {

std::vector<int> strip_bounds(int height, int strips, double ratio) {
  if (strips < 1) strips = 1;
  if (strips > height) strips = height;
  std::vector<int> b(static_cast<std::size_t>(strips) + 1);
  if (!(ratio > 0.0 && ratio < 1.0)) {
    for (int k = 0; k <= strips; ++k) {
      b[k] = static_cast<int>(static_cast<long long>(height) * k / strips);
    }
    return b;
  }
  // Strip k's share ∝ ratio^k; rounded cumulatively, then kept at ≥ 1 row each.
  double total = 0;
  std::vector<double> upto(static_cast<std::size_t>(strips) + 1, 0.0);
  for (int k = 0; k < strips; ++k) upto[k + 1] = total += std::pow(ratio, k);
  for (int k = 0; k <= strips; ++k) {
    const int ideal = static_cast<int>(std::lround(height * (upto[k] / total)));
    b[k] = std::clamp(ideal, k == 0 ? 0 : b[k - 1] + 1, height - (strips - k));
  }
  return b;
}

std::vector<int> skewed_bounds(const std::vector<int>& b, int skew) {
  std::vector<int> out = b;
  const int n = static_cast<int>(b.size()) - 1, h = b.back();
  for (int k = 1; k < n; ++k) out[k] = std::clamp(b[k] - skew, out[k - 1] + 1, h - (n - k));
  return out;
}

void check_stage_input(const Stage& stage, PixelFormat in) {
  std::string why;
  if (stage.accepts(in, &why)) return;
  throw Error(stage.label() + ": image '" + stage.input() + "' is " + to_string(in) + ", but " +
              stage.type() + " " + why +
              (stage.input() == kFrameImage ? " (add {type: to_gray} first)" : ""));
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

FrameRecord record_for(const Frame& frame) {
  FrameRecord rec;
  rec.index = frame.index;
  rec.source = frame.source;
  rec.input = frame.input;
  rec.pts_s = frame.pts_s;
  rec.capture = frame.capture;
  rec.error = frame.error;
  return rec;
}

void stamp_ready(FrameRecord* record, std::chrono::steady_clock::time_point submitted) {
  const auto now = std::chrono::steady_clock::now();
  record->latency_ms = std::chrono::duration<double, std::milli>(now - submitted).count();
  if (record->capture) {
    record->capture_latency_ms =
        std::chrono::duration<double, std::milli>(now - *record->capture).count();
  }
}

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

class HostExecutor : public Executor {
 public:
  HostExecutor(const PipelineConfig& cfg, const PlatformProfile& profile,
               std::vector<std::string> keep)
      : cfg_(cfg),
        pool_(profile.threads > 0 ? profile.threads : hardware_threads()),
        strips_(std::max(profile.chunks, pool_.threads())),
        ratio_(profile.strip_ratio),
        keep_(std::move(keep)) {}

  void submit(Frame frame) override {
    const auto t0 = Clock::now();
    FrameRecord rec = record_for(frame);
    if (rec.error.empty()) {
      rec.width = frame.view().width;
      rec.height = frame.view().height;
      const std::string label = "frame " + std::to_string(frame.index) + " (" + frame.source + ")";
      try {
        // A device frame comes to the host first; the owner goes back once copied.
        if (frame.device) {
          frame.image = download_device_frame(*frame.device);
          frame.device.reset();
        }
        run(frame.image, &rec);
      } catch (const Error& e) {
        rec.error = label + ": " + e.what();
      } catch (const std::bad_alloc&) {
        // Out of memory inside a stage: this frame's error; the next frame starts with its
        // buffers freed and the run goes on.
        images_.clear();
        rec.error = label + ": out of memory in " + (current_ ? current_->label() : "the pipeline");
      }
      if (!rec.error.empty()) {
        rec.results.clear();
        rec.stage_ms.clear();
      }
      current_ = nullptr;
    }
    stamp_ready(&rec, t0);
    done_.push_back(std::move(rec));
  }

  bool take(FrameRecord* record, bool) override {
    if (done_.empty()) return false;
    *record = std::move(done_.front());
    done_.pop_front();
    return true;
  }

  std::size_t in_flight() const override { return done_.size(); }
  std::string describe() const override {
    std::ostringstream os;  // as the CUDA executor writes its strips
    os << "host (CPU twins), " << strips_ << " strip" << (strips_ == 1 ? "" : "s");
    if (strips_ > 1 && ratio_ < 1.0) os << ", each " << ratio_ << " of the one before";
    os << " on " << pool_.threads() << " thread" << (pool_.threads() == 1 ? "" : "s");
    return os.str();
  }

 private:
  // The image buffers, reallocated only when a frame's size or format changes.
  ImageView buffer(const std::string& name, int w, int h, PixelFormat f) {
    HostImage& img = images_[name];
    if (img.empty() || img.width() != w || img.height() != h || img.format() != f) {
      img = HostImage(w, h, f);
    }
    return img.view();
  }

  void run(const HostImage& frame, FrameRecord* rec) {
    // The stages read NV12's luma plane as the frame; a kept frame keeps both planes.
    std::map<std::string, ImageView> views = {{kFrameImage, luma_plane(frame.view())}};
    const std::vector<int> bounds = strip_bounds(frame.height(), strips_, ratio_);
    const int strips = static_cast<int>(bounds.size()) - 1;
    for (const auto& stage : cfg_.stages) {
      current_ = stage.get();
      const ImageView in = views.at(stage->input());
      check_stage_input(*stage, in.format);
      ImageView out;
      if (stage->has_output()) {
        out = buffer(stage->output(), in.width, in.height, stage->output_format(in.format));
        views[stage->output()] = out;
      }
      const auto t0 = Clock::now();
      stage->begin_frame(in, strips);
      for (int pass = 0; pass < stage->passes(); ++pass) {
        Stage* s = stage.get();
        pool_.run(strips, [&](int k) { s->run_cpu(pass, in, out, k, bounds[k], bounds[k + 1]); });
        stage->end_pass(pass);
      }
      StageResult r = stage->result();
      rec->stage_ms.push_back(ms_since(t0));
      if (!std::holds_alternative<std::monostate>(r)) {
        rec->results.emplace_back(stage->name(), std::move(r));
      }
    }
    for (const auto& name : keep_) {
      if (name == kFrameImage) {
        HostImage copy(frame.width(), frame.height(), frame.format());
        copy_image(frame.view(), copy.view());
        rec->images[name] = std::move(copy);
        continue;
      }
      auto it = views.find(name);
      if (it == views.end()) continue;
      HostImage copy(it->second.width, it->second.height, it->second.format);
      copy_image(it->second, copy.view());
      rec->images[name] = std::move(copy);
    }
  }

  const PipelineConfig& cfg_;
  ThreadPool pool_;
  int strips_;
  double ratio_;
  std::vector<std::string> keep_;
  std::map<std::string, HostImage> images_;
  const Stage* current_ = nullptr;  // the stage running (for an out-of-memory error)
  std::deque<FrameRecord> done_;
};

}  // namespace

std::unique_ptr<Executor> make_executor(const PipelineConfig& config,
                                        const PlatformProfile& profile,
                                        std::vector<std::string> keep_images,
                                        std::vector<std::string> device_images) {
  check_runnable(profile);
  if (profile.backend == Backend::kCuda) {
    return make_cuda_executor(config, profile, std::move(keep_images), std::move(device_images));
  }
  if (!device_images.empty()) {
    throw config_error(profile.file + ": images kept in device memory need backend cuda (this " +
                       "profile, '" + profile.name + "', runs on the CPU)");
  }
  return std::make_unique<HostExecutor>(config, profile, std::move(keep_images));
}

}  // namespace jetpipe
