// SPDX-License-Identifier: MIT
#include "pipeline/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "core/error.h"
#include "pipeline/api.h"
#include "pipeline/board_state.h"
#include "pipeline/config.h"
#include "pipeline/executor.h"
#include "pipeline/interleaver.h"
#include "pipeline/io/image_io.h"
#include "pipeline/io/overlay.h"
#include "pipeline/io/reconnect.h"
#include "pipeline/io/source.h"
#include "pipeline/io/video_sink.h"
#include "pipeline/platform.h"
#include "pipeline/quantiles.h"
#include "pipeline/results_json.h"
#include "pipeline/source_set.h"
#include "pipeline/thread_pool.h"

namespace fs = std::filesystem;

namespace jetpipe {

namespace {

using Clock = std::chrono::steady_clock;

nlohmann::ordered_json spread(const QuantileSketch& v) {
  return {{"p50_ms", v.quantile(0.50)}, {"p99_ms", v.quantile(0.99)}, {"samples", v.count()}};
}

std::string frame_file_name(const std::string& image, std::int64_t index, PixelFormat f) {
  std::ostringstream os;
  os << image << '_' << std::setw(6) << std::setfill('0') << index << '.'
     << preferred_extension(f);
  return os.str();
}

// Busy time per kind of GPU work (copies in, compute, copies out), as unions of the frames' spans,
// and the overlap efficiency: (H2D + compute + D2H busy) / wall, wall from the first frame's GPU
// start to the last one's end. Above 1, copies and compute ran at the same time. When only every
// Nth frame was timed (timing_every), the busy times are the timed frames' scaled by frames / timed
// frames: an estimate (frames whose compute overlapped count twice).
class SpanAccounting {
 public:
  void add(const FrameRecord& rec) {
    if (rec.gpu_ms > 0) {
      ++frames_;
      first_ = std::min(first_, rec.gpu_start_ms);
      last_ = std::max(last_, rec.gpu_start_ms + rec.gpu_ms);
    }
    if (rec.spans.empty()) return;
    ++timed_;
    for (const Span& s : rec.spans) {
      if (!(s.end_ms >= s.start_ms)) continue;
      keep(s.kind, s.start_ms, s.end_ms);
      first_ = std::min(first_, s.start_ms);
      last_ = std::max(last_, s.end_ms);
    }
  }
  bool empty() const { return intervals_.empty(); }
  nlohmann::ordered_json summary() const {
    const double scale = timed_ > 0 && frames_ > timed_ ? static_cast<double>(frames_) / timed_ : 1;
    const double h2d = scale * busy(Span::kH2D), compute = scale * busy(Span::kCompute),
                 d2h = scale * busy(Span::kD2H);
    const double wall = last_ > first_ ? last_ - first_ : 0;
    nlohmann::ordered_json j = {{"h2d_busy_ms", h2d},
                                {"compute_busy_ms", compute},
                                {"d2h_busy_ms", d2h},
                                {"gpu_wall_ms", wall},
                                {"efficiency", wall > 0 ? (h2d + compute + d2h) / wall : 0.0}};
    if (scale > 1) j["timed_frames"] = timed_;
    return j;
  }

 private:
  // A kind's spans so far: the union of those kept, plus the busy time folded away.
  struct Busy {
    std::vector<std::pair<double, double>> kept;
    double folded_ms = 0;       // busy time of the union's intervals folded into a total
    double folded_to = -1e300;  // where the folded part ends: later spans are clipped to it
  };
  static constexpr std::size_t kCompactAt = 8192;  // spans kept before the union is compacted
  static constexpr std::size_t kKeep = 256;        // union intervals kept open for late spans

  // The union of v's intervals, sorted.
  static std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<double, double>> u;
    for (const auto& iv : v) {
      if (u.empty() || iv.first > u.back().second) {
        u.push_back(iv);
      } else {
        u.back().second = std::max(u.back().second, iv.second);
      }
    }
    return u;
  }

  void keep(Span::Kind k, double a, double b) {
    Busy& busy = intervals_[k];
    a = std::max(a, busy.folded_to);
    if (b <= a) return;
    busy.kept.emplace_back(a, b);
    if (busy.kept.size() < kCompactAt) return;
    // Bounded memory over an endless run: fold all but the last kKeep intervals of the union
    // (frames arrive in order; a late span reaching back past them is clipped, counting short).
    std::vector<std::pair<double, double>> u = merged(std::move(busy.kept));
    const std::size_t fold = u.size() > kKeep ? u.size() - kKeep : 0;
    for (std::size_t i = 0; i < fold; ++i) busy.folded_ms += u[i].second - u[i].first;
    if (fold > 0) busy.folded_to = u[fold - 1].second;
    busy.kept.assign(u.begin() + static_cast<std::ptrdiff_t>(fold), u.end());
  }

  double busy(Span::Kind k) const {
    auto it = intervals_.find(k);
    if (it == intervals_.end()) return 0;
    double total = it->second.folded_ms;
    for (const auto& [a, b] : merged(it->second.kept)) total += b - a;
    return total;
  }

  std::map<Span::Kind, Busy> intervals_;
  double first_ = 1e300, last_ = -1e300;
  std::size_t frames_ = 0, timed_ = 0;  // frames with a GPU span; of which timed per stage
};

// --timeline FILE: the spans of every frame as a Chrome trace (chrome://tracing, Perfetto), one
// row per stream, written as the frames come.
class TimelineWriter {
 public:
  explicit TimelineWriter(const std::string& path) : path_(path), out_(path, std::ios::trunc) {
    if (!out_) throw Error(path + ": cannot write the timeline");
    out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  }
  void add(const FrameRecord& rec) {
    for (const Span& s : rec.spans) {
      auto [it, fresh] = tids_.emplace(s.track, static_cast<int>(tids_.size()));
      nlohmann::ordered_json e;
      if (fresh) {
        e = {{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", it->second},
             {"args", {{"name", s.track}}}};
        out_ << (first_ ? "\n" : ",\n") << json_text(e);
        first_ = false;
      }
      static const char* const kinds[] = {"h2d", "compute", "d2h"};
      e = {{"name", s.name},
           {"cat", kinds[s.kind]},
           {"ph", "X"},
           {"pid", 1},
           {"tid", it->second},
           {"ts", s.start_ms * 1000.0},
           {"dur", (s.end_ms - s.start_ms) * 1000.0},
           {"args", {{"frame", rec.index}}}};
      if (!rec.input.empty()) e["args"]["input"] = rec.input;
      out_ << (first_ ? "\n" : ",\n") << json_text(e);
      first_ = false;
    }
  }
  void close() {
    out_ << "\n]}\n";
    out_.close();
    if (!out_) throw Error(path_ + ": write failed");
  }

 private:
  std::string path_;
  std::ofstream out_;
  std::map<std::string, int> tids_;
  bool first_ = true;
};

}  // namespace

RunSummary run_pipeline(const RunOptions& opt) {
  // Everything that can be wrong with the config, platform or inputs is found before writing.
  const PipelineConfig cfg = load_config(opt.config);
  std::string platform_reason;
  const std::string platform_spec = opt.platform.empty() ? cfg.platform : opt.platform;
  PlatformProfile profile = resolve_platform(platform_spec, &platform_reason);
  if (opt.threads >= 0) {
    if (profile.backend != Backend::kCpu) {
      throw config_error("--threads " + std::to_string(opt.threads) + ": platform '" +
                         profile.name + "' runs on the GPU (backend cuda); host threads are for " +
                         "backend cpu (e.g. --platform cpu)");
    }
    profile.threads = opt.threads;
  }
  if (!opt.timeline.empty() && profile.backend == Backend::kCuda) {
    profile.timing = TimingLevel::kStrips;  // every span of every frame
    profile.timing_every = 1;
  }
  const std::vector<InputConfig> inputs =
      opt.inputs.empty() ? cfg.inputs : parse_input_args(opt.inputs, cfg.input_defaults());
  if (inputs.empty()) {
    throw config_error(cfg.file +
                       ": no input: set `input:` or `inputs:` in the config or pass --input URI");
  }
  const bool several = inputs.size() > 1;
  const bool save = opt.save_images || cfg.outputs.save_images;
  std::vector<std::string> saved;
  if (save) saved = cfg.outputs.images.empty() ? cfg.image_names() : cfg.outputs.images;
  std::vector<std::string> keep = saved;
  std::unique_ptr<VideoSink> video;
  if (!opt.output_video.empty()) {
    const std::vector<std::string> names = cfg.image_names();
    if (opt.output_image != kFrameImage &&
        std::find(names.begin(), names.end(), opt.output_image) == names.end()) {
      std::string valid = kFrameImage;
      for (const auto& n : names) valid += ", " + n;
      throw config_error("--output-image " + opt.output_image + ": no image of that name in " +
                         cfg.file + " (valid: " + valid + ")");
    }
    if (std::find(keep.begin(), keep.end(), opt.output_image) == keep.end()) {
      keep.push_back(opt.output_image);
    }
    VideoSinkOptions vo;
    vo.fps = opt.output_fps > 0 ? opt.output_fps : 30;
    video = std::make_unique<VideoSink>(opt.output_video, vo);
  } else if (opt.annotate) {
    throw config_error("--annotate draws on the video output: add --output-video TARGET");
  }
  std::unique_ptr<Executor> exec = make_executor(cfg, profile, keep);
  SourceOptions base = source_options_for(cfg);
  base.allocator = exec->allocator();                      // decoders write into the frame pool
  base.device_frames = profile.backend == Backend::kCuda;  // read in place
  SourceSet::Options set_options;
  set_options.max_frames = opt.max_frames;
  set_options.stop = opt.stop;  // a blocked read wakes up to a stop request
  SourceSet sources(SourceSet::inputs_of(inputs, base), set_options);
  sources.wait_open();  // throws when no input can be opened
  std::unique_ptr<TimelineWriter> timeline;
  if (!opt.timeline.empty()) timeline = std::make_unique<TimelineWriter>(opt.timeline);

  const fs::path dir(opt.output_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create the output folder: " + ec.message());
  // Several inputs: each input's images in a folder of its name (names are file-name safe).
  auto images_dir = [&](const std::string& input) {
    return several ? dir / "images" / input : dir / "images";
  };
  if (save) {
    for (const InputConfig& in : inputs) fs::create_directories(images_dir(in.name));
  }
  JsonLinesWriter results(dir / cfg.outputs.results);

  RunSummary sum;
  // Bounded however long the run (pipeline/quantiles.h).
  std::vector<QuantileSketch> stage_ms(cfg.stages.size());
  QuantileSketch latency_ms, capture_ms, gpu_ms;
  struct PerInput {
    std::int64_t processed = 0, failed = 0;
    QuantileSketch latency_ms, capture_ms;
    double last_record_s = 0;
  };
  std::vector<PerInput> per_input(inputs.size());
  SpanAccounting spans;
  const bool progress = opt.progress && isatty(STDERR_FILENO);
  const auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  BoardMonitor board(opt.board_root);  // a Jetson's clocks and temperatures, once a second
  board.sample(0, true);

  // The video gets one image per processed frame of the first input; if it fails, the run goes
  // on without it.
  auto write_video = [&](const FrameRecord& rec) {
    auto it = rec.images.find(opt.output_image);
    if (it == rec.images.end()) return;
    try {
      HostImage img = to_video_image(it->second.view());
      if (opt.annotate) img = annotate(img.view(), rec.results, rec.index);
      video->write(img.view());
    } catch (const Error& e) {
      sum.output_error = e.what();
      sum.video_frames = video->frames();
      std::fprintf(stderr, "jetpipe: video output stopped: %s\n", e.what());
      video.reset();
    }
  };

  Interleaver run(sources, *exec);
  FrameRecord rec;
  std::size_t from = 0;
  while (run.next(&rec, &from)) {
    results.write(record_to_json(rec));
    PerInput& in = per_input[from];
    in.last_record_s = elapsed();
    if (rec.error.empty()) {
      ++sum.processed;
      ++in.processed;
      for (std::size_t i = 0; i < rec.stage_ms.size() && i < stage_ms.size(); ++i) {
        stage_ms[i].add(rec.stage_ms[i]);
      }
      latency_ms.add(rec.latency_ms);
      in.latency_ms.add(rec.latency_ms);
      if (rec.capture_latency_ms) {
        capture_ms.add(*rec.capture_latency_ms);
        in.capture_ms.add(*rec.capture_latency_ms);
      }
      if (rec.gpu_ms > 0) gpu_ms.add(rec.gpu_ms);
      if (!rec.spans.empty()) {
        if (timeline) timeline->add(rec);
      }
      spans.add(rec);
      for (const auto& [name, img] : rec.images) {
        if (std::find(saved.begin(), saved.end(), name) == saved.end()) continue;
        write_image((images_dir(inputs[from].name) / frame_file_name(name, rec.index, img.format()))
                        .string(),
                    img.view());
      }
      if (video && from == 0) write_video(rec);
    } else {
      ++sum.failed;
      ++in.failed;
      std::fprintf(stderr, "jetpipe: %s\n", rec.error.c_str());
      if (opt.strict && !sum.stopped_early) {
        sum.stopped_early = true;
        run.stop(true);  // the frames in flight still get their records
      }
    }
    if (progress) {
      std::optional<std::int64_t> total = 0;  // known when every input's is
      for (std::size_t i = 0; i < inputs.size() && total; ++i) {
        const std::optional<std::int64_t> t = sources.state(i).total;
        total = t ? std::optional<std::int64_t>(*total + *t) : std::nullopt;
      }
      const double s = elapsed();
      std::fprintf(stderr, "\r%lld/%s frames  %.1f fps ", static_cast<long long>(run.submitted()),
                   total ? std::to_string(*total).c_str() : "?", s > 0 ? run.submitted() / s : 0.0);
    }
    board.sample(elapsed());
  }
  sources.join();
  if (progress) std::fprintf(stderr, "\n");
  sum.stopped_by = sources.stopped_by();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const InputState st = sources.state(i);
    InputSummary is;
    is.name = st.name;
    is.uri = st.uri;
    is.read = st.taken;
    is.processed = per_input[i].processed;
    is.failed = per_input[i].failed;
    is.dropped = st.dropped;
    is.ended = name(st.end);
    is.error = st.error;
    sum.read += is.read;
    sum.dropped += is.dropped;
    sum.stopped_early = sum.stopped_early || !is.error.empty();
    sum.inputs.push_back(std::move(is));
  }
  sum.source_error = sources.first_error();
  std::string video_desc;
  if (video) {
    try {
      video->close();
    } catch (const Error& e) {
      sum.output_error = e.what();
      std::fprintf(stderr, "jetpipe: video output failed: %s\n", e.what());
    }
    sum.video_frames = video->frames();
    video_desc = video->describe();
  }
  sum.wall_s = elapsed();
  board.sample(sum.wall_s, true);

  nlohmann::ordered_json s;
  s["version"] = JETPIPE_VERSION;
  s["config"] = cfg.file;
  if (!several) {
    s["input"] = inputs[0].uri;
    s["source"] = sources.state(0).describe;
  }
  s["frames"] = {{"read", sum.read},
                 {"processed", sum.processed},
                 {"failed", sum.failed},
                 {"dropped", sum.dropped}};
  // A live input's reconnects (pipeline/io/reconnect.h): per input below; a run of one input also
  // at the top.
  auto reconnects_of = [&](std::size_t i) -> std::optional<ReconnectStats> {
    const Source* src = sources.source(i);
    return src ? reconnect_stats(*src) : std::nullopt;
  };
  if (!several) {
    if (const std::optional<ReconnectStats> r = reconnects_of(0)) {
      s["reconnects"] = reconnects_json(*r);
    }
  }
  s["wall_time_s"] = sum.wall_s;
  s["fps"] = sum.wall_s > 0 ? static_cast<double>(sum.read) / sum.wall_s : 0.0;
  s["latency"] = spread(latency_ms);
  if (capture_ms.count() > 0) s["capture_latency"] = spread(capture_ms);
  nlohmann::ordered_json per = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const InputSummary& is = sum.inputs[i];
    const InputState st = sources.state(i);
    const PerInput& in = per_input[i];
    nlohmann::ordered_json j;
    j["uri"] = is.uri;
    if (st.opened) j["source"] = st.describe;
    j["frames"] = {{"read", is.read},
                   {"processed", is.processed},
                   {"failed", is.failed},
                   {"dropped", is.dropped}};
    j["fps"] = in.last_record_s > 0 ? static_cast<double>(is.read) / in.last_record_s : 0.0;
    j["latency"] = spread(in.latency_ms);
    if (in.capture_ms.count() > 0) j["capture_latency"] = spread(in.capture_ms);
    if (const std::optional<ReconnectStats> r = reconnects_of(i)) {
      j["reconnects"] = reconnects_json(*r);
    }
    j["ended"] = is.ended;
    if (!is.error.empty()) j["error"] = is.error;
    per[is.name] = std::move(j);
  }
  s["inputs"] = std::move(per);
  s["executor"] = exec->describe();
  if (gpu_ms.count() > 0) s["gpu_time"] = spread(gpu_ms);
  if (board.active()) s["board"] = board.summary();
  if (!spans.empty()) s["overlap"] = spans.summary();
  if (timeline) {
    timeline->close();
    s["timeline"] = opt.timeline;
  }
  nlohmann::ordered_json stages = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < cfg.stages.size(); ++i) {
    stages[cfg.stages[i]->name()] = spread(stage_ms[i]);
    stages[cfg.stages[i]->name()]["type"] = cfg.stages[i]->type();
  }
  s["stages"] = stages;
  s["platform"] = {{"name", profile.name},
                   {"file", profile.file},
                   {"reason", platform_reason},
                   {"backend", name(profile.backend)},
                   {"memory", name(profile.memory)},
                   {"chunks", profile.chunks},
                   {"streams", profile.streams},
                   {"frames_in_flight", profile.frames_in_flight},
                   {"cuda_graphs", profile.cuda_graphs},
                   {"results", name(profile.results)},
                   {"timing", name(profile.timing)}};
  if (profile.backend == Backend::kCpu) {  // the threads that ran the strips
    s["platform"]["threads"] = profile.threads > 0 ? profile.threads : hardware_threads();
  }
  if (!opt.output_video.empty()) {
    s["output_video"] = {{"target", opt.output_video},
                         {"image", opt.output_image},
                         {"input", inputs[0].name},
                         {"annotate", opt.annotate},
                         {"frames", sum.video_frames}};
    if (!video_desc.empty()) s["output_video"]["pipeline"] = video_desc;
    if (!sum.output_error.empty()) s["output_video"]["error"] = sum.output_error;
  }
  if (!sum.source_error.empty()) s["source_error"] = sum.source_error;
  if (opt.strict && sum.failed > 0) s["stopped_by"] = "--strict";
  if (sum.stopped_by != 0) {
    const char* sig = sum.stopped_by == SIGINT    ? "SIGINT"
                      : sum.stopped_by == SIGTERM ? "SIGTERM"
                      : sum.stopped_by == SIGHUP  ? "SIGHUP"
                                                  : nullptr;
    s["stopped_by"] =
        sig != nullptr ? std::string(sig) : "signal " + std::to_string(sum.stopped_by);
  }
  write_file_atomically(dir / "summary.json", json_text(s, 2) + '\n');
  return sum;
}

}  // namespace jetpipe
