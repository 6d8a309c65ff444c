// SPDX-License-Identifier: MIT
#include "pipeline/api.h"

#include <algorithm>

#include "core/error.h"
#include "pipeline/interleaver.h"

namespace jetpipe {

SourceOptions source_options_for(const PipelineConfig& config) {
  bool reads_frame = false, gray_only = true;
  for (const auto& stage : config.stages) {
    if (stage->input() != kFrameImage) continue;
    reads_frame = true;
    std::string why;
    if (stage->accepts(PixelFormat::kBgr8, &why)) gray_only = false;
  }
  SourceOptions o;
  o.colour = !(reads_frame && gray_only);
  o.max_frame_bytes = config.max_frame_mb << 20;
  return config.input_defaults().options(o);  // queue, timeout_s, reconnect
}

struct Pipeline::State {
  std::unique_ptr<PipelineConfig> config;  // the executor refers to it: its address stays put
  PlatformProfile profile;
  std::vector<std::string> keep, keep_device;
  std::unique_ptr<Executor> exec;
};

namespace {

std::unique_ptr<Pipeline::State> make_state(PipelineConfig cfg, const std::string& platform) {
  auto st = std::make_unique<Pipeline::State>();
  st->config = std::make_unique<PipelineConfig>(std::move(cfg));
  std::string reason;
  st->profile = resolve_platform(platform.empty() ? st->config->platform : platform, &reason);
  st->exec = make_executor(*st->config, st->profile, st->keep);
  return st;
}

}  // namespace

Pipeline::Pipeline(std::unique_ptr<State> state) : state_(std::move(state)) {}
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::~Pipeline() = default;

Pipeline Pipeline::from_file(const std::string& path, const std::string& platform) {
  return Pipeline(make_state(load_config(path), platform));
}

Pipeline Pipeline::from_yaml(const std::string& yaml, const std::string& base_dir,
                             const std::string& platform) {
  return Pipeline(make_state(parse_config(yaml, "<yaml>", base_dir), platform));
}

PipelineBuilder Pipeline::builder() { return PipelineBuilder(); }

const PipelineConfig& Pipeline::config() const { return *state_->config; }
const PlatformProfile& Pipeline::platform() const { return state_->profile; }

void Pipeline::keep_images(std::vector<std::string> names, bool on_device) {
  const std::vector<std::string> valid = state_->config->image_names();
  for (const auto& n : names) {
    if (n != kFrameImage && std::find(valid.begin(), valid.end(), n) == valid.end()) {
      std::string list = kFrameImage;
      for (const auto& v : valid) list += ", " + v;
      throw config_error("keep_images: no image named '" + n + "' (valid: " + list + ")");
    }
  }
  std::vector<std::string> keep = state_->keep, device = state_->keep_device;
  (on_device ? device : keep) = std::move(names);
  state_->exec = make_executor(*state_->config, state_->profile, keep, device);  // may throw
  state_->keep = std::move(keep);
  state_->keep_device = std::move(device);
}

std::unique_ptr<Source> Pipeline::open(const std::string& uri, const std::atomic<int>* stop) const {
  const PipelineConfig& cfg = *state_->config;
  if (uri.empty() && cfg.inputs.size() != 1) {
    throw config_error(cfg.file + (cfg.inputs.empty()
                                       ? ": no input: set `input:` or pass a URI to open()"
                                       : ": several inputs: open them with open_inputs()"));
  }
  SourceOptions o = source_options_for(cfg);
  o.device_frames = state_->profile.backend == Backend::kCuda;  // the executor reads them in place
  if (uri.empty()) o = cfg.inputs[0].options(o);  // its queue, timeout_s and reconnect
  o.stop = stop;
  return open_source(uri.empty() ? cfg.inputs[0].uri : uri, o);
}

std::unique_ptr<SourceSet> Pipeline::open_inputs(std::vector<InputConfig> inputs,
                                                 std::int64_t max_frames,
                                                 const std::atomic<int>* stop) const {
  const PipelineConfig& cfg = *state_->config;
  if (inputs.empty()) inputs = cfg.inputs;
  if (inputs.empty()) {
    throw config_error(cfg.file +
                       ": no input: set `input:` or `inputs:`, or pass inputs to "
                       "open_inputs()");
  }
  SourceOptions base = source_options_for(cfg);
  base.device_frames = state_->profile.backend == Backend::kCuda;  // read in place
  std::vector<SourceSet::Input> set = SourceSet::inputs_of(inputs, base);
  for (SourceSet::Input& in : set) in.tag = true;  // the API's records always name their input
  SourceSet::Options o;
  o.max_frames = max_frames;
  o.stop = stop;
  return std::make_unique<SourceSet>(std::move(set), o);
}

RunStats Pipeline::run(SourceSet& inputs,
                       const std::function<bool(const FrameRecord&)>& on_record) {
  InputStream s = stream(inputs);
  FrameRecord rec;
  bool wanted = true;
  while (s.next(&rec)) {
    if (wanted && !on_record(rec)) {
      wanted = false;
      s.stop(true);  // the frames in flight are taken and dropped
    }
  }
  return s.stats();
}

Pipeline::InputStream::InputStream(Pipeline* p, SourceSet* s)
    : inputs_(s), run_(std::make_unique<Interleaver>(*s, *p->state_->exec)) {}
Pipeline::InputStream::InputStream(InputStream&&) noexcept = default;
Pipeline::InputStream::~InputStream() = default;

Pipeline::InputStream Pipeline::stream(SourceSet& inputs) {
  inputs.wait_open();
  return InputStream(this, &inputs);
}

bool Pipeline::InputStream::next(FrameRecord* record, std::size_t* input) {
  std::size_t from = 0;
  while (run_->next(record, &from)) {
    if (discard_) continue;
    ++(record->error.empty() ? stats_.processed : stats_.failed);
    if (input != nullptr) *input = from;
    return true;
  }
  inputs_->join();
  return false;
}

void Pipeline::InputStream::stop(bool discard) {
  discard_ = discard_ || discard;
  run_->stop(discard);
}

RunStats Pipeline::InputStream::stats() const {
  RunStats st = stats_;
  for (std::size_t i = 0; i < inputs_->size(); ++i) {
    const InputState in = inputs_->state(i);
    st.read += in.taken;
    st.dropped += in.dropped;
  }
  st.source_error = inputs_->first_error();
  return st;
}

bool Pipeline::Stream::next(FrameRecord* record) {
  Executor& ex = *pipeline_->state_->exec;
  for (;;) {
    if (ex.take(record, source_done_)) {
      ++(record->error.empty() ? stats_.processed : stats_.failed);
      return true;
    }
    if (source_done_ && ex.in_flight() == 0) {
      stats_.dropped = source_->dropped();
      return false;
    }
    if (!source_done_) {
      Frame frame;
      bool got = false;
      if (max_ < 0 || stats_.read < max_) {
        try {
          got = source_->next(&frame);
        } catch (const Error& e) {
          stats_.source_error = e.what();
        }
      }
      stats_.dropped = source_->dropped();
      if (!got) {
        source_done_ = true;
        continue;
      }
      ++stats_.read;
      ex.submit(std::move(frame));
    }
  }
}

Pipeline::Stream Pipeline::stream(Source& source, std::int64_t max_frames) {
  return Stream(this, &source, max_frames);
}

RunStats Pipeline::run(Source& source, const std::function<bool(const FrameRecord&)>& on_record,
                       std::int64_t max_frames) {
  Stream s = stream(source, max_frames);
  FrameRecord rec;
  while (s.next(&rec)) {
    if (!on_record(rec)) break;
  }
  drain();  // stopped early: the next run starts clean
  return s.stats();
}

void Pipeline::drain() {
  FrameRecord rest;
  while (state_->exec->in_flight() > 0 && state_->exec->take(&rest, true)) {
  }
}

FrameRecord Pipeline::process(const HostImage& image, std::int64_t index,
                              const std::string& source_name) {
  Frame f;
  f.index = index;
  f.source = source_name;
  f.image = image;
  state_->exec->submit(std::move(f));
  FrameRecord rec;
  state_->exec->take(&rec, true);
  return rec;
}

FrameRecord Pipeline::process(DeviceFrame frame, std::int64_t index,
                              const std::string& source_name) {
  Frame f;
  f.index = index;
  f.source = source_name;
  f.device = std::make_shared<const DeviceFrame>(std::move(frame));
  state_->exec->submit(std::move(f));
  FrameRecord rec;
  state_->exec->take(&rec, true);
  return rec;
}

// ---- Builder
// ----------------------------------------------------------------------------------------

namespace {

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

PipelineBuilder& PipelineBuilder::input(const std::string& uri) {
  input_ = uri;
  return *this;
}

PipelineBuilder& PipelineBuilder::platform(const std::string& name) {
  platform_ = name;
  return *this;
}

PipelineBuilder& PipelineBuilder::stage(
    const std::string& type, const std::vector<std::pair<std::string, std::string>>& keys) {
  std::string s = "{type: " + type;
  for (const auto& [k, v] : keys) s += ", " + k + ": " + v;
  stages_.push_back(s + "}");
  return *this;
}

std::string PipelineBuilder::yaml() const {
  std::string y;
  if (!input_.empty()) y += "input: " + yaml_quoted(input_) + "\n";
  y += "platform: " + yaml_quoted(platform_) + "\nstages:\n";
  for (const auto& s : stages_) y += "  - " + s + "\n";
  return y;
}

Pipeline PipelineBuilder::build() const {
  if (stages_.empty()) throw config_error("<builder>: no stages (add one with stage(type, keys))");
  return Pipeline(make_state(parse_config(yaml(), "<builder>", "."), ""));
}

}  // namespace jetpipe
