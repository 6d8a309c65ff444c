// SPDX-License-Identifier: MIT
#include "pipeline/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "core/error.h"
#include "stages/registry.h"

namespace fs = std::filesystem;

namespace jetpipe {

namespace {

using FormatSet = std::set<PixelFormat>;

std::string format_list(const FormatSet& s) {
  std::string out;
  for (PixelFormat f : s) out += (out.empty() ? "" : " or ") + std::string(to_string(f));
  return out;
}

void check_keys(const std::string& file, const YAML::Node& map, const std::string& what,
                std::initializer_list<const char*> keys) {
  for (const auto& kv : map) {
    const std::string k = yaml_key(file, kv.first);
    bool ok = false;
    std::string valid;
    for (const char* v : keys) {
      ok = ok || k == v;
      valid += (valid.empty() ? "" : ", ") + std::string(v);
    }
    if (!ok) {
      throw config_error(yaml_where(file, kv.first) + ": unknown key " + shown_key(k) + " in " +
                         what + " (valid keys: " + valid + ")");
    }
  }
}

std::string scalar(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) throw config_error(yaml_where(file, n) + ": " + key + ": must be a string");
  return n.Scalar();
}

// Follows image formats through the stages: each stage's input must exist and be of a format the
// stage reads. The frame may be any frame format (kFrameFormats); a stage that reads only some of
// those is checked again on every frame.
void check_graph(const PipelineConfig& cfg, const YAML::Node& stages_node) {
  std::map<std::string, FormatSet> images = {
      {kFrameImage, FormatSet(std::begin(kFrameFormats), std::end(kFrameFormats))}};
  std::map<std::string, std::string> producer = {{kFrameImage, "the input frame"}};
  std::set<std::string> names;
  for (std::size_t i = 0; i < cfg.stages.size(); ++i) {
    const Stage& s = *cfg.stages[i];
    const YAML::Node node = stages_node[i];
    const std::string where = yaml_where(cfg.file, node);
    if (!names.insert(s.name()).second) {
      throw config_error(where + ": " + s.label() + ": name '" + s.name() +
                         "' is used by an earlier stage; give each stage a unique name");
    }
    auto it = images.find(s.input());
    if (it == images.end()) {
      std::string valid;
      for (const auto& kv : images) valid += (valid.empty() ? "" : ", ") + kv.first;
      const YAML::Node in = node["input"];
      throw config_error(yaml_where(cfg.file, in.IsDefined() ? in : node) + ": " + s.label() +
                         ": input '" + s.input() + "' is not an earlier image (valid: " + valid +
                         ")");
    }
    FormatSet out;
    std::string why;
    for (PixelFormat f : it->second) {
      std::string w;
      if (s.accepts(f, &w)) {
        out.insert(s.output_format(f));
      } else {
        why = w;
      }
    }
    if (out.empty()) {
      throw config_error(where + ": " + s.label() + ": input '" + s.input() + "' is " +
                         format_list(it->second) + " (from " + producer[s.input()] + "), but " +
                         s.type() + " " + why);
    }
    if (s.has_output()) {
      if (images.count(s.output())) {
        throw config_error(where + ": " + s.label() + ": output '" + s.output() +
                           "' is already written by " + producer[s.output()] +
                           "; give each image a unique name");
      }
      images[s.output()] = out;
      producer[s.output()] = s.label();
    }
  }
}

// An integer key in lo..hi, or a config error naming its place and the range.
long long integer_in(const std::string& file, const YAML::Node& n, const std::string& key,
                     long long lo, long long hi) {
  long long v = lo - 1;
  try {
    if (n.IsScalar()) v = n.as<long long>();
  } catch (const YAML::Exception&) {
    v = lo - 1;
  }
  if (v < lo || v > hi) {
    throw config_error(yaml_where(file, n) + ": " + key + ": must be an integer in " +
                       std::to_string(lo) + ".." + std::to_string(hi));
  }
  return v;
}

// `label`: {attempts, delay_ms, max_delay_ms} (the top-level reconnect:, or an input's); the keys
// left out keep `defaults` (ReconnectPolicy's, or the top level's for an input). A first wait
// longer than the default maximum raises the maximum with it.
ReconnectPolicy parse_reconnect(const std::string& file, const YAML::Node& node,
                                const std::string& label, const ReconnectPolicy& defaults) {
  if (!node.IsMap()) {
    throw config_error(yaml_where(file, node) + ": " + label +
                       ": must be a map, e.g. {attempts: 10, delay_ms: 500, max_delay_ms: 8000}");
  }
  check_keys(file, node, label, {"attempts", "delay_ms", "max_delay_ms"});
  constexpr long long kHourMs = 3600000;
  ReconnectPolicy p = defaults;
  if (const YAML::Node n = node["attempts"]) {
    p.attempts = static_cast<int>(integer_in(file, n, label + ".attempts", 0, 1000000));
  }
  long long delay_ms = std::llround(p.delay_s * 1000);
  if (const YAML::Node n = node["delay_ms"]) {
    delay_ms = integer_in(file, n, label + ".delay_ms", 1, kHourMs);
  }
  long long max_ms = std::max(delay_ms, std::llround(p.max_delay_s * 1000));
  if (const YAML::Node n = node["max_delay_ms"]) {
    max_ms = integer_in(file, n, label + ".max_delay_ms", delay_ms, kHourMs);
  }
  p.delay_s = static_cast<double>(delay_ms) / 1000;
  p.max_delay_s = static_cast<double>(max_ms) / 1000;
  return p;
}

std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// The keys of an entry of `inputs:` besides name, uri and reconnect, declared once; the defaults
// are SourceOptions'.
const std::vector<ParamSpec>& input_specs() {
  static const std::vector<ParamSpec> specs = [] {
    using T = ParamType;
    const SourceOptions d;
    const std::string queue = std::to_string(d.queue), timeout = number_text(d.timeout_s);
    return std::vector<ParamSpec>{
        {"queue", T::kInt, queue, 1, 64, {}, "live sources: frames held before dropping"},
        {"timeout_s", T::kNumber, timeout, 0.1, 3600, {}, "no frame this long: the input's error"},
    };
  }();
  return specs;
}

// `defaults`: the top-level queue, timeout_s and reconnect, which an entry's own keys override.
std::vector<InputConfig> parse_inputs(const std::string& file, const YAML::Node& list,
                                      const std::string& base_dir, const InputConfig& defaults) {
  if (!list.IsSequence() || list.size() == 0) {
    throw config_error(yaml_where(file, list) +
                       ": inputs: must be a non-empty list of inputs, e.g. "
                       "[{name: cam0, uri: \"csi://0\"}, {name: cam1, uri: \"csi://1\"}]");
  }
  std::vector<InputConfig> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    const std::string label = "inputs[" + std::to_string(i) + "]";
    if (!e.IsMap()) {
      throw config_error(yaml_where(file, e) + ": " + label +
                         ": must be a map with name and uri, e.g. {name: cam0, uri: \"csi://0\"}");
    }
    const Params p(file, label, e, &input_specs(), {"name", "uri", "reconnect"});
    InputConfig in;
    in.where = yaml_where(file, e);
    if (!e["name"]) {
      p.fail("name",
             "is required: 1 to 64 letters, digits, '_', '-' or '.' (it names the "
             "input's records and files)");
    }
    in.name = safe_name(file, e["name"], label + ".name");
    for (const InputConfig& earlier : out) {
      if (earlier.name == in.name) {
        throw config_error(yaml_where(file, e["name"]) + ": " + label + ".name: '" + in.name +
                           "' is already the name of the input at " + earlier.where +
                           "; give each input a unique name");
      }
    }
    if (!e["uri"]) p.fail("uri", "is required: where the frames come from (frames://DIR, ...)");
    in.uri = scalar(file, e["uri"], label + ".uri");
    if (in.uri.empty()) p.fail("uri", "must not be empty");
    in.uri = resolve_uri(in.uri, base_dir);
    in.queue = p.has("queue") ? p.get_int("queue") : defaults.queue;
    in.timeout_s = p.has("timeout_s") ? p.get_number("timeout_s") : defaults.timeout_s;
    in.reconnect = defaults.reconnect;  // the top-level reconnect:, unless the input has its own
    if (const YAML::Node r = e["reconnect"]) {
      in.reconnect = parse_reconnect(file, r, label + ".reconnect", defaults.reconnect);
    }
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace

std::string default_input_name(std::size_t position) { return "input" + std::to_string(position); }

std::vector<InputConfig> parse_input_args(const std::vector<std::string>& args,
                                          const InputConfig& defaults) {
  std::vector<InputConfig> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    InputConfig in = defaults;
    in.named = true;
    in.where.clear();
    const std::size_t eq = args[i].find('=');
    if (eq != std::string::npos && is_safe_name(args[i].substr(0, eq))) {
      in.name = args[i].substr(0, eq);
      in.uri = args[i].substr(eq + 1);
    } else {
      in.name = default_input_name(i);
      in.named = false;
      in.uri = args[i];
    }
    if (in.uri.empty()) {
      throw config_error("--input '" + args[i] + "': no URI (give URI or NAME=URI)");
    }
    for (const InputConfig& earlier : out) {
      if (earlier.name == in.name) {
        throw config_error("--input '" + args[i] + "': the name '" + in.name +
                           "' is given twice; give each input a unique name");
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

SourceOptions InputConfig::options(SourceOptions base) const {
  base.queue = queue;
  base.timeout_s = timeout_s;
  base.reconnect = reconnect;
  return base;
}

InputConfig PipelineConfig::input_defaults() const {
  InputConfig in;
  in.queue = queue;
  in.timeout_s = timeout_s;
  in.reconnect = reconnect;
  return in;
}

std::vector<std::string> PipelineConfig::image_names() const {
  std::vector<std::string> out;
  for (const auto& s : stages) {
    if (s->has_output()) out.push_back(s->output());
  }
  return out;
}

std::string resolve_uri(const std::string& uri, const std::string& base_dir) {
  const auto scheme_end = uri.find("://");
  std::string scheme, path = uri;
  if (scheme_end != std::string::npos) {
    scheme = uri.substr(0, scheme_end + 3);
    path = uri.substr(scheme_end + 3);
    if (scheme != "frames://" && scheme != "file://") return uri;  // not a local path
  }
  if (path.empty() || fs::path(path).is_absolute()) return uri;
  return scheme + (fs::path(base_dir) / path).lexically_normal().string();
}

PipelineConfig parse_config(const std::string& yaml, const std::string& file,
                            const std::string& base_dir) {
  const YAML::Node root = load_yaml(yaml, file);
  if (!root.IsMap()) {
    throw config_error(
        file + ": a config must be a map with keys input (or inputs), platform, stages, outputs");
  }
  check_keys(file, root, "the config",
             {"input", "inputs", "platform", "max_frame_mb", "reconnect", "queue", "timeout_s",
              "stages", "outputs"});

  PipelineConfig cfg;
  cfg.file = file;
  if (const YAML::Node r = root["reconnect"]) {
    cfg.reconnect = parse_reconnect(file, r, "reconnect", ReconnectPolicy());
  }
  // queue and timeout_s at the top level: every input's, unless an entry of inputs: has its own.
  {
    const Params p(
        file, "the config", root, &input_specs(),
        {"input", "inputs", "platform", "max_frame_mb", "reconnect", "stages", "outputs"});
    cfg.queue = p.get_int("queue");
    cfg.timeout_s = p.get_number("timeout_s");
  }
  if (root["input"] && root["inputs"]) {
    throw config_error(yaml_where(file, root["inputs"]) + ": inputs: and input: (line " +
                       std::to_string(root["input"].Mark().line + 1) +
                       ") together: use one (input: URI is the form for one input)");
  }
  if (root["input"]) {
    cfg.input = resolve_uri(scalar(file, root["input"], "input"), base_dir);
    if (!cfg.input.empty()) {
      InputConfig in = cfg.input_defaults();
      in.name = default_input_name(0);
      in.named = false;
      in.uri = cfg.input;
      in.where = yaml_where(file, root["input"]);
      cfg.inputs.push_back(std::move(in));
    }
  }
  if (root["inputs"]) {
    cfg.inputs = parse_inputs(file, root["inputs"], base_dir, cfg.input_defaults());
  }
  if (root["platform"]) cfg.platform = scalar(file, root["platform"], "platform");
  if (const YAML::Node m = root["max_frame_mb"]) {
    cfg.max_frame_mb = static_cast<std::uint64_t>(integer_in(file, m, "max_frame_mb", 1, 65536));
  }

  const YAML::Node stages = root["stages"];
  if (!stages.IsDefined() || !stages.IsSequence() || stages.size() == 0) {
    throw config_error(yaml_where(file, stages.IsDefined() ? stages : root) +
                       ": stages: must be a non-empty list of stages, e.g. "
                       "[{type: to_gray}, {type: histogram}] (types: " +
                       stage_type_names() + ")");
  }
  std::string previous = kFrameImage;
  for (const auto& node : stages) {
    cfg.stages.push_back(make_stage(file, node, previous));
    if (cfg.stages.back()->has_output()) previous = cfg.stages.back()->output();
  }
  check_graph(cfg, stages);

  if (const YAML::Node out = root["outputs"]) {
    if (!out.IsMap()) throw config_error(yaml_where(file, out) + ": outputs: must be a map");
    check_keys(file, out, "outputs", {"results", "images", "save_images"});
    if (out["results"]) cfg.outputs.results = safe_name(file, out["results"], "outputs.results");
    if (const YAML::Node imgs = out["images"]) {
      if (!imgs.IsSequence()) {
        throw config_error(yaml_where(file, imgs) + ": outputs.images: must be a list of names");
      }
      const auto names = cfg.image_names();
      for (const auto& n : imgs) {
        const std::string name = scalar(file, n, "outputs.images");
        if (name != kFrameImage && std::find(names.begin(), names.end(), name) == names.end()) {
          std::string valid = kFrameImage;
          for (const auto& v : names) valid += ", " + v;
          throw config_error(yaml_where(file, n) + ": outputs.images: no image named '" + name +
                             "' (valid: " + valid + ")");
        }
        cfg.outputs.images.push_back(name);
      }
    }
    if (const YAML::Node s = out["save_images"]) {
      if (!s.IsScalar() || (s.Scalar() != "true" && s.Scalar() != "false")) {
        throw config_error(yaml_where(file, s) + ": outputs.save_images: must be true or false");
      }
      cfg.outputs.save_images = s.Scalar() == "true";
    }
  }
  return cfg;
}

PipelineConfig load_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(path + ": cannot open the config file");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string dir = fs::path(path).parent_path().string();
  return parse_config(ss.str(), path, dir.empty() ? "." : dir);
}

}  // namespace jetpipe
