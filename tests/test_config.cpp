// SPDX-License-Identifier: MIT
// Config validation: every bad case gives one config error naming file, line, column and key.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "pipeline/api.h"
#include "pipeline/config.h"
#include "pipeline/platform.h"
#include "pipeline/runner.h"
#include "stages/params.h"
#include "tests/test_util.h"

namespace jetpipe {
namespace {

// Parses and returns the config error's message ("" if it parsed).
std::string config_error_of(const std::string& yaml) {
  try {
    parse_config(yaml, "bad.yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig) << e.what();
    return e.what();
  }
  return "";
}

// Writes `yaml` to `file`, loads it as a platform profile and returns the error's message (""
// if it loaded).
std::string profile_error_of(const std::filesystem::path& file, const std::string& yaml) {
  std::ofstream(file) << yaml;
  try {
    load_platform(file.string());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct BadCase {
  const char* name;
  const char* yaml;
  const char* where;     // "file:line:column"
  const char* expected;  // a fragment of the message
};

class ConfigErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigErrors, NamesFileLineColumnAndKey) {
  const BadCase& c = GetParam();
  const std::string msg = config_error_of(c.yaml);
  ASSERT_FALSE(msg.empty()) << c.name << " was accepted";
  EXPECT_NE(msg.find(c.where), std::string::npos) << msg;
  EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
}

const BadCase kBad[] = {
    {"unknown_top_key", "input: x\nstagse: []\n", "bad.yaml:2:1", "unknown key 'stagse'"},
    {"no_stages", "input: x\n", "bad.yaml", "stages: must be a non-empty list"},
    {"unknown_type", "stages:\n  - {type: blurr}\n", "bad.yaml:2:12", "unknown stage type 'blurr'"},
    {"unknown_stage_key", "stages:\n  - {type: gaussian, ksise: 5}\n", "bad.yaml:2:22",
     "unknown key 'ksise'"},
    {"wrong_type", "stages:\n  - {type: gaussian, ksize: five}\n", "bad.yaml:2:29",
     "ksize: must be an integer"},
    {"even_ksize", "stages:\n  - {type: gaussian, ksize: 4}\n", "bad.yaml:2:29", "must be odd"},
    {"out_of_range", "stages:\n  - {type: histogram, bins: 300}\n", "bad.yaml:2:29",
     "bins: must be an integer in 1..256"},
    {"bad_border", "stages:\n  - {type: box, border: mirror}\n", "bad.yaml:2:25",
     "border: must be one of constant | replicate | reflect | reflect101 | wrap"},
    {"bad_bool", "stages:\n  - {type: box, normalize: yes please}\n", "bad.yaml:2:28",
     "normalize: must be true or false"},
    {"bad_range", "stages:\n  - {type: histogram, range: [100, 50]}\n", "bad.yaml:2:30",
     "range: must be [lo, hi]"},
    {"bad_kernel", "stages:\n  - {type: convolve, kernel: [[1, 2], [3, 4]]}\n", "bad.yaml:2:30",
     "is 2x2: must be rows of numbers (odd"},
    {"ragged_kernel", "stages:\n  - {type: convolve, kernel: [[1, 2, 3], [4]]}\n", "bad.yaml:2:30",
     "rows differ in length"},
    {"missing_kernel", "stages:\n  - {type: convolve}\n", "bad.yaml:2:5", "kernel: is required"},
    {"no_earlier_input", "stages:\n  - {type: to_gray}\n  - {type: stats, input: blurred}\n",
     "bad.yaml:3:26", "input 'blurred' is not an earlier image (valid: frame, to_gray)"},
    {"later_input", "stages:\n  - {type: stats, input: g}\n  - {type: to_gray, name: g}\n",
     "bad.yaml:2:26", "input 'g' is not an earlier image"},
    {"histogram_on_float",
     "stages:\n  - {type: to_gray}\n  - {type: harris, name: r}\n  - {type: histogram}\n",
     "bad.yaml:4:5", "input 'r' is f32 (from stage 'r' (harris)), but histogram accepts gray8"},
    {"duplicate_name", "stages:\n  - {type: to_gray, name: a}\n  - {type: stats, name: a}\n",
     "bad.yaml:3:5", "name 'a' is used by an earlier stage"},
    {"duplicate_output",
     "stages:\n  - {type: to_gray, name: a}\n  - {type: box, name: b, output: a}\n", "bad.yaml:3:5",
     "output 'a' is already written"},
    {"detect_both", "stages:\n  - {type: detect, threshold: 1, quality: 0.1}\n", "bad.yaml:2:43",
     "either threshold (absolute) or quality"},
    {"sobel_orders", "stages:\n  - {type: sobel, dx: 0, dy: 0}\n", "bad.yaml:2:23",
     "dx + dy must be at least 1"},
    {"yaml_syntax", "stages:\n  - {type: box, ksize: [3\n", "bad.yaml:3", "YAML syntax error"},
    {"stage_not_map", "stages:\n  - gaussian\n", "bad.yaml:2:5", "a stage must be a map"},
    {"unknown_output_key", "stages: [{type: to_gray}]\noutputs: {resluts: x.jsonl}\n",
     "bad.yaml:2:11", "unknown key 'resluts' in outputs"},
    {"unknown_output_image", "stages: [{type: to_gray}]\noutputs: {images: [blur]}\n",
     "bad.yaml:2:20", "no image named 'blur' (valid: frame, to_gray)"},
    // Names become file names in the output folder (the reproducers wrote outside it).
    {"name_escapes", "stages:\n  - {type: to_gray, name: ../../../x}\n", "bad.yaml:2:27",
     "name: '../../../x' is not a valid name"},
    {"output_with_slash", "stages:\n  - {type: box, output: a/b}\n", "bad.yaml:2:25",
     "output: 'a/b' is not a valid name"},
    {"input_absolute", "stages:\n  - {type: stats, input: /etc/passwd}\n", "bad.yaml:2:26",
     "input: '/etc/passwd' is not a valid name"},
    {"results_absolute", "stages: [{type: to_gray}]\noutputs: {results: /tmp/r.jsonl}\n",
     "bad.yaml:2:20", "outputs.results: '/tmp/r.jsonl' is not a valid name"},
    {"results_up", "stages: [{type: to_gray}]\noutputs: {results: ../r.jsonl}\n", "bad.yaml:2:20",
     "outputs.results: '../r.jsonl' is not a valid name"},
    {"name_nul", "stages:\n  - {type: to_gray, name: \"a\\0b\"}\n", "bad.yaml:2:27",
     "name: 'a\\x00b' is not a valid name"},
    // A NUL byte no longer ends the message (what() is a C string): it is shown as \x00.
    {"type_nul", "stages:\n  - {type: \"gauss\\0ian\"}\n", "bad.yaml:2:12",
     "unknown stage type 'gauss\\x00ian' (valid: to_gray,"},
    {"border_nul", "stages:\n  - {type: box, border: \"wrap\\0\"}\n", "bad.yaml:2:25",
     "border: must be one of"},
    {"frame_limit_range", "max_frame_mb: 0\nstages: [{type: to_gray}]\n", "bad.yaml:1:15",
     "max_frame_mb: must be an integer in 1..65536"},
    {"reconnect_not_map", "reconnect: 3\nstages: [{type: to_gray}]\n", "bad.yaml:1:12",
     "reconnect: must be a map"},
    {"reconnect_key", "reconnect: {attempt: 3}\nstages: [{type: to_gray}]\n", "bad.yaml:1:13",
     "unknown key 'attempt' in reconnect (valid keys: attempts, delay_ms, max_delay_ms)"},
    {"reconnect_attempts", "reconnect: {attempts: -1}\nstages: [{type: to_gray}]\n",
     "bad.yaml:1:23", "reconnect.attempts: must be an integer in 0..1000000"},
    {"reconnect_delay", "reconnect: {delay_ms: 0.5}\nstages: [{type: to_gray}]\n", "bad.yaml:1:23",
     "reconnect.delay_ms: must be an integer in 1..3600000"},
    {"reconnect_max_below_delay",
     "reconnect: {delay_ms: 1000, max_delay_ms: 500}\nstages: [{type: to_gray}]\n", "bad.yaml:1:43",
     "reconnect.max_delay_ms: must be an integer in 1000..3600000"},
    // Keys that are not plain names (the reproducer `? [a, b]: 1` escaped as a yaml-cpp exception).
    {"list_key_top", "? [a, b]\n: 1\nstages: [{type: to_gray}]\n", "bad.yaml:1:3",
     "a key must be a plain name, not a list"},
    {"map_key_stage", "stages:\n  - {type: box, {x: 1}: 2}\n", "bad.yaml:2:17",
     "a key must be a plain name, not a map"},
    {"list_key_outputs", "stages: [{type: to_gray}]\noutputs: {[a]: 1}\n", "bad.yaml:2:11",
     "a key must be a plain name, not a list"},
    // Several inputs (`inputs:`): names become folder names and record keys.
    {"input_and_inputs", "input: a\ninputs: [{name: x, uri: b}]\nstages: [{type: to_gray}]\n",
     "bad.yaml:2:9", "inputs: and input: (line 1) together"},
    {"inputs_empty", "inputs: []\nstages: [{type: to_gray}]\n", "bad.yaml:1:9",
     "inputs: must be a non-empty list"},
    {"inputs_not_list", "inputs: frames://a\nstages: [{type: to_gray}]\n", "bad.yaml:1:9",
     "inputs: must be a non-empty list"},
    {"input_not_map", "inputs:\n  - frames://a\nstages: [{type: to_gray}]\n", "bad.yaml:2:5",
     "inputs[0]: must be a map with name and uri"},
    {"input_no_name", "inputs:\n  - {uri: a}\nstages: [{type: to_gray}]\n", "bad.yaml:2:5",
     "inputs[0]: name: is required"},
    {"input_no_uri", "inputs:\n  - {name: a}\nstages: [{type: to_gray}]\n", "bad.yaml:2:5",
     "inputs[0]: uri: is required"},
    {"input_bad_name", "inputs:\n  - {name: ../cam, uri: a}\nstages: [{type: to_gray}]\n",
     "bad.yaml:2:12", "inputs[0].name: '../cam' is not a valid name"},
    {"input_duplicate_name",
     "inputs:\n  - {name: cam, uri: a}\n  - {name: b, uri: b}\n  - {name: cam, uri: c}\n"
     "stages: [{type: to_gray}]\n",
     "bad.yaml:4:12", "inputs[2].name: 'cam' is already the name of the input at bad.yaml:2:5"},
    {"input_unknown_key", "inputs:\n  - {name: a, uri: a, qeue: 2}\nstages: [{type: to_gray}]\n",
     "bad.yaml:2:23", "inputs[0]: unknown key 'qeue' (valid keys: name, uri, reconnect, queue,"},
    {"input_queue_range", "inputs:\n  - {name: a, uri: a, queue: 0}\nstages: [{type: to_gray}]\n",
     "bad.yaml:2:30", "inputs[0]: queue: must be an integer in 1..64"},
    {"input_timeout_type",
     "inputs:\n  - {name: a, uri: a, timeout_s: soon}\nstages: [{type: to_gray}]\n",
     "bad.yaml:2:34", "inputs[0]: timeout_s: must be a number in 0.1..3600"},
    {"top_timeout_range", "timeout_s: 0\ninput: a\nstages: [{type: to_gray}]\n", "bad.yaml:1:12",
     "the config: timeout_s: must be a number in 0.1..3600"},
    {"top_queue_type", "queue: many\ninput: a\nstages: [{type: to_gray}]\n", "bad.yaml:1:8",
     "the config: queue: must be an integer in 1..64"},
    {"input_reconnect_not_map",
     "inputs:\n  - {name: a, uri: a, reconnect: 3}\nstages: [{type: to_gray}]\n", "bad.yaml:2:34",
     "inputs[0].reconnect: must be a map"},
    {"input_reconnect_key",
     "inputs:\n  - {name: a, uri: a, reconnect: {tries: 3}}\nstages: [{type: to_gray}]\n",
     "bad.yaml:2:35", "unknown key 'tries' in inputs[0].reconnect (valid keys: attempts,"},
    {"input_reconnect_delays",
     "inputs:\n  - {name: a, uri: a, reconnect: {delay_ms: 900, max_delay_ms: 100}}\n"
     "stages: [{type: to_gray}]\n",
     "bad.yaml:2:64", "inputs[0].reconnect.max_delay_ms: must be an integer in 900..3600000"},
};

// The reproducer: a 100 kB config whose kernel rows are 5,000 aliases of one 5,000-entry row
// (25 M entries once expanded) was still being expanded after 60 s at 580 MB. The sizes are
// checked first.
TEST(ConfigParse, AliasedKernelRowsAreRefusedBeforeExpansion) {
  std::string row = "[1";
  for (int i = 1; i < 5000; ++i) row += ", 1";
  row += "]";
  std::string yaml = "stages:\n  - {type: convolve, kernel: [&r " + row;
  for (int i = 0; i < 5000; ++i) yaml += ", *r";
  yaml += "]}\n";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = config_error_of(yaml);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(msg.find("kernel: is 5001x5000: must be rows of numbers"), std::string::npos) << msg;
  EXPECT_LT(s, 5.0) << "the sizes must be checked before the rows are read";
}

// Lists and maps nested past yaml-cpp's depth limit were "YAML syntax error: bad file" at the end
// of the file; now the message says what, and where the nesting goes past 100 levels.
TEST(ConfigParse, DeepNestingIsNamedWithItsPlace) {
  const std::string flow = "stages:\n  - {type: convolve, kernel: " + std::string(3000, '[') +
                           std::string(3000, ']') + "}\n";
  std::string msg = config_error_of(flow);
  EXPECT_EQ(msg.rfind("bad.yaml:2:129: YAML nesting too deep", 0), 0u) << msg;
  std::string block = "stages:\n";
  for (int i = 1; i < 1500; ++i) block += std::string(2 * i, ' ') + "-\n";
  msg = config_error_of(block);
  EXPECT_EQ(msg.rfind("bad.yaml:", 0), 0u) << msg;
  EXPECT_NE(msg.find(": YAML nesting too deep"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("bad file"), std::string::npos) << msg;
  // A profile goes through the same loader.
  test::TempDir dir;
  msg = profile_error_of(dir.path() / "deep.yaml", "chunks: " + std::string(1000, '{'));
  EXPECT_NE(msg.find("deep.yaml:1:109: YAML nesting too deep"), std::string::npos) << msg;
  // Brackets in quoted scalars and comments do not count.
  msg = config_error_of("input: \"" + std::string(500, '[') + "\"  # " + std::string(500, '{') +
                        "\n" + flow);
  EXPECT_EQ(msg.rfind("bad.yaml:3:129: YAML nesting too deep", 0), 0u) << msg;
}

// Every message keeps its text after a NUL byte (a config's or a URI's).
TEST(ConfigParse, NulBytesDoNotCutMessages) {
  const Error e(std::string("input 'a\0b' is bad", sizeof "input 'a\0b' is bad" - 1));
  EXPECT_STREQ(e.what(), "input 'a\\x00b' is bad");
  const std::string msg = config_error_of("platform: cpu\ninput: x\nstages: [{type: \"a\\0b\"}]\n");
  EXPECT_NE(msg.find("'a\\x00b' (valid:"), std::string::npos) << msg;
}

// A 5,000-character name: refused, the message shows 40 characters and the length.
TEST(ConfigParse, LongNamesAreRefusedShortly) {
  const std::string msg =
      config_error_of("stages:\n  - {type: to_gray, name: " + std::string(5000, 'n') + "}\n");
  EXPECT_NE(msg.find(std::string(40, 'n') + "... (5000 characters)"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 400u);
  EXPECT_TRUE(is_safe_name("blur_1.v-2"));
  EXPECT_FALSE(is_safe_name(".hidden"));
  EXPECT_FALSE(is_safe_name(std::string(65, 'a')));
}

INSTANTIATE_TEST_SUITE_P(Bad, ConfigErrors, ::testing::ValuesIn(kBad),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ConfigParse, DefaultsAndWiring) {
  const PipelineConfig c = parse_config(
      "input: frames://x\nstages:\n  - {type: to_gray}\n  - {type: gaussian, name: blur}\n"
      "  - {type: histogram}\n  - {type: sobel, name: sx, input: to_gray, output: abs8}\n",
      "ok.yaml", "/base");
  ASSERT_EQ(c.stages.size(), 4u);
  EXPECT_EQ(c.input, "frames:///base/x");
  EXPECT_EQ(c.stages[0]->input(), "frame");
  EXPECT_EQ(c.stages[1]->input(), "to_gray");
  EXPECT_EQ(c.stages[1]->output(), "blur");
  EXPECT_EQ(c.stages[2]->input(), "blur");
  EXPECT_FALSE(c.stages[2]->has_output());
  EXPECT_EQ(c.stages[3]->output(), "sx");  // sobel's `output` key is its format
  EXPECT_EQ(c.stages[3]->output_format(PixelFormat::kGray8), PixelFormat::kGray8);
}

// reconnect: the keys given, the defaults (ReconnectPolicy's) for the rest, and on to the source.
TEST(ConfigParse, ReconnectKeys) {
  const std::string stages = "stages: [{type: stats}]\n";
  const ReconnectPolicy d;
  const PipelineConfig none = parse_config(stages, "a.yaml");
  EXPECT_EQ(none.reconnect.attempts, d.attempts);
  EXPECT_EQ(none.reconnect.delay_s, d.delay_s);
  EXPECT_EQ(none.reconnect.max_delay_s, d.max_delay_s);
  const PipelineConfig all = parse_config(
      "reconnect: {attempts: 3, delay_ms: 250, max_delay_ms: 1500}\n" + stages, "b.yaml");
  EXPECT_EQ(all.reconnect.attempts, 3);
  EXPECT_EQ(all.reconnect.delay_s, 0.25);
  EXPECT_EQ(all.reconnect.max_delay_s, 1.5);
  const SourceOptions o = source_options_for(all);
  EXPECT_EQ(o.reconnect.attempts, 3);
  EXPECT_EQ(o.reconnect.delay_s, 0.25);
  EXPECT_EQ(o.reconnect.max_delay_s, 1.5);
  const PipelineConfig off = parse_config("reconnect: {attempts: 0}\n" + stages, "c.yaml");
  EXPECT_EQ(off.reconnect.attempts, 0);
  EXPECT_EQ(off.reconnect.delay_s, d.delay_s);
  // A first wait longer than the default maximum raises the maximum with it.
  const PipelineConfig slow = parse_config("reconnect: {delay_ms: 20000}\n" + stages, "d.yaml");
  EXPECT_EQ(slow.reconnect.delay_s, 20);
  EXPECT_EQ(slow.reconnect.max_delay_s, 20);
  // The top level is every input's policy; an input's own keys override it key by key.
  const PipelineConfig in = parse_config(
      "reconnect: {attempts: 3, delay_ms: 250}\n"
      "inputs:\n  - {name: a, uri: a}\n  - {name: b, uri: b, reconnect: {attempts: 7}}\n" +
          stages,
      "e.yaml");
  ASSERT_EQ(in.inputs.size(), 2u);
  EXPECT_EQ(in.inputs[0].reconnect.attempts, 3);
  EXPECT_EQ(in.inputs[0].reconnect.delay_s, 0.25);
  EXPECT_EQ(in.inputs[1].reconnect.attempts, 7);
  EXPECT_EQ(in.inputs[1].reconnect.delay_s, 0.25);
  const PipelineConfig one = parse_config("reconnect: {attempts: 2}\ninput: x\n" + stages, "f.yaml");
  EXPECT_EQ(one.inputs.at(0).reconnect.attempts, 2);
}

TEST(ConfigParse, InputsAreNamedWithTheirKeys) {
  const PipelineConfig c = parse_config(
      "inputs:\n"
      "  - {name: cam0, uri: \"frames://a\"}\n"
      "  - {name: cam.1, uri: \"rtsp://h/s\", queue: 8, timeout_s: 2.5,\n"
      "     reconnect: {attempts: 3, delay_ms: 250, max_delay_ms: 1000}}\n"
      "  - {name: clip, uri: b.y4m, reconnect: {attempts: 0}}\n"
      "stages: [{type: to_gray}]\n",
      "ok.yaml", "/base");
  EXPECT_TRUE(c.input.empty());
  ASSERT_EQ(c.inputs.size(), 3u);
  const SourceOptions d;
  const ReconnectPolicy r;
  EXPECT_EQ(c.inputs[0].name, "cam0");
  EXPECT_EQ(c.inputs[0].uri, "frames:///base/a");  // relative to the config's folder
  EXPECT_TRUE(c.inputs[0].named);
  EXPECT_EQ(c.inputs[0].where, "ok.yaml:2:5");
  EXPECT_EQ(c.inputs[0].queue, d.queue);  // left out: SourceOptions' defaults
  EXPECT_EQ(c.inputs[0].timeout_s, d.timeout_s);
  EXPECT_EQ(c.inputs[0].reconnect.attempts, r.attempts);
  EXPECT_EQ(c.inputs[0].reconnect.delay_s, r.delay_s);
  EXPECT_EQ(c.inputs[0].reconnect.max_delay_s, r.max_delay_s);
  EXPECT_EQ(c.inputs[1].uri, "rtsp://h/s");  // not a path: as given
  EXPECT_EQ(c.inputs[1].queue, 8);
  EXPECT_EQ(c.inputs[1].timeout_s, 2.5);
  EXPECT_EQ(c.inputs[1].reconnect.attempts, 3);
  EXPECT_EQ(c.inputs[1].reconnect.delay_s, 0.25);
  EXPECT_EQ(c.inputs[1].reconnect.max_delay_s, 1.0);
  EXPECT_EQ(c.inputs[2].uri, "/base/b.y4m");
  EXPECT_EQ(c.inputs[2].reconnect.attempts, 0);
  EXPECT_EQ(c.inputs[2].reconnect.delay_s, r.delay_s);
  // Per-input keys reach the source's options; the rest of the base stays.
  SourceOptions base;
  base.colour = false;
  const SourceOptions o = c.inputs[1].options(base);
  EXPECT_EQ(o.queue, 8);
  EXPECT_EQ(o.timeout_s, 2.5);
  EXPECT_EQ(o.reconnect.attempts, 3);
  EXPECT_FALSE(o.colour);

  // Top-level queue, timeout_s and reconnect: every input's, unless it has its own; also the
  // inputs given as URIs (--input) and `input:`.
  const PipelineConfig top = parse_config(
      "timeout_s: 1.5\nqueue: 2\nreconnect: {attempts: 4}\n"
      "inputs:\n  - {name: a, uri: x}\n  - {name: b, uri: y, timeout_s: 3, queue: 9,\n"
      "     reconnect: {delay_ms: 100}}\nstages: [{type: to_gray}]\n",
      "top.yaml", "/b");
  EXPECT_EQ(top.inputs[0].timeout_s, 1.5);
  EXPECT_EQ(top.inputs[0].queue, 2);
  EXPECT_EQ(top.inputs[0].reconnect.attempts, 4);
  EXPECT_EQ(top.inputs[1].timeout_s, 3);
  EXPECT_EQ(top.inputs[1].queue, 9);
  EXPECT_EQ(top.inputs[1].reconnect.attempts, 4);  // key by key
  EXPECT_EQ(top.inputs[1].reconnect.delay_s, 0.1);
  const std::vector<InputConfig> args =
      parse_input_args({"cam=rtsp://h/s", "v4l2:///dev/video0"}, top.input_defaults());
  for (const InputConfig& in : args) {
    EXPECT_EQ(in.timeout_s, 1.5);
    EXPECT_EQ(in.queue, 2);
    EXPECT_EQ(in.reconnect.attempts, 4);
  }
  EXPECT_TRUE(args[0].named);
  EXPECT_FALSE(args[1].named);
  const PipelineConfig one_top =
      parse_config("timeout_s: 0.5\ninput: x\nstages: [{type: to_gray}]\n", "o.yaml", "/b");
  EXPECT_EQ(one_top.inputs[0].timeout_s, 0.5);

  // `input:` is the one input, named by its position and not named by the user.
  const PipelineConfig one =
      parse_config("input: x\nstages: [{type: to_gray}]\n", "one.yaml", "/b");
  ASSERT_EQ(one.inputs.size(), 1u);
  EXPECT_EQ(one.inputs[0].name, default_input_name(0));
  EXPECT_EQ(one.inputs[0].name, "input0");
  EXPECT_EQ(one.inputs[0].uri, "/b/x");
  EXPECT_FALSE(one.inputs[0].named);
  EXPECT_TRUE(parse_config("stages: [{type: to_gray}]\n", "none.yaml").inputs.empty());
}

TEST(ConfigParse, CommandLineInputsAreNamedOrNumbered) {
  const std::vector<InputConfig> in = parse_input_args(
      {"cam=v4l2:///dev/video0", "test://noise?w=64&h=48", "dir/a=b", "x.y-1=frames://f", "c=d=e"});
  ASSERT_EQ(in.size(), 5u);
  EXPECT_EQ(in[0].name, "cam");
  EXPECT_EQ(in[0].uri, "v4l2:///dev/video0");
  EXPECT_TRUE(in[0].named);
  EXPECT_EQ(in[1].name, "input1");  // '=' in the query: the whole is the URI
  EXPECT_EQ(in[1].uri, "test://noise?w=64&h=48");
  EXPECT_FALSE(in[1].named);
  EXPECT_EQ(in[2].name, "input2");  // "dir/a" is no name
  EXPECT_EQ(in[2].uri, "dir/a=b");
  EXPECT_EQ(in[3].name, "x.y-1");
  EXPECT_EQ(in[4].name, "c");
  EXPECT_EQ(in[4].uri, "d=e");
  auto error_of = [](const std::vector<std::string>& args) -> std::string {
    try {
      parse_input_args(args);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kConfig);
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({"a=x", "a=y"}).find("the name 'a' is given twice"), std::string::npos);
  EXPECT_NE(error_of({"input1=x", "y"}).find("the name 'input1' is given twice"),
            std::string::npos);
  EXPECT_NE(error_of({"cam="}).find("--input 'cam=': no URI"), std::string::npos);
  EXPECT_NE(error_of({""}).find("no URI"), std::string::npos);
}

TEST(ConfigParse, ShippedConfigsAreValid) {
  for (const auto& e : std::filesystem::directory_iterator(JETPIPE_SOURCE_DIR "/config")) {
    EXPECT_NO_THROW(load_config(e.path().string())) << e.path();
  }
  for (const auto& e :
       std::filesystem::directory_iterator(JETPIPE_SOURCE_DIR "/tests/regression/configs")) {
    EXPECT_NO_THROW(load_config(e.path().string())) << e.path();
  }
}

TEST(ConfigRun, BadConfigWritesNothing) {
  const test::TempDir tmp;
  const std::filesystem::path& dir = tmp.path();
  const auto cfg = dir / "bad.yaml";
  std::ofstream(cfg) << "input: test://noise\nstages:\n  - {type: histogram, bins: 0}\n";
  RunOptions o;
  o.config = cfg.string();
  o.output_dir = (dir / "out").string();
  try {
    run_pipeline(o);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_NE(std::string(e.what()).find("bad.yaml:3:"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

TEST(Platform, ProfilesLoadAndValidate) {
  for (const char* name : {"cpu", "discrete", "discrete-latency", "jetson-orin-nano",
                           "jetson-orin-nx", "jetson-agx-orin", "jetson-thor"}) {
    std::string why;
    const PlatformProfile p = resolve_platform(name, &why);
    EXPECT_EQ(p.name, name);
  }
  // The latency profile: four strips in two copies, polled, one frame in flight.
  const PlatformProfile latency = resolve_platform("discrete-latency", nullptr);
  EXPECT_EQ(latency.chunks, 4);
  EXPECT_EQ(latency.strip_copies, 2);
  EXPECT_EQ(latency.copy_wait, CopyWait::kPoll);
  EXPECT_EQ(latency.frames_in_flight, 1);
  std::string why;
  const PlatformProfile a = resolve_platform("auto", &why);
  EXPECT_FALSE(why.empty());
  EXPECT_NO_THROW(check_runnable(a)) << why;
  try {
    resolve_platform("nonesuch", &why);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_NE(std::string(e.what()).find("valid: auto"), std::string::npos) << e.what();
  }
  const test::TempDir tmp;
  const auto f = tmp.path() / "bad_platform.yaml";
  std::ofstream(f) << "backend: cpu\nmemory: zero-copy\n";
  EXPECT_THROW(load_platform(f.string()), Error);
  // A file that is not a profile (a password line whose ': ' makes it a YAML key): refused
  // without echoing its content.
  const std::string shadow =
      profile_error_of(f, "root:$6$saltsalt$hashhashhash:19000:0:99999:7:: x\n");
  EXPECT_NE(shadow.find("unknown key (a key that is not a plain name)"), std::string::npos)
      << shadow;
  EXPECT_EQ(shadow.find("hashhash"), std::string::npos) << shadow;
  EXPECT_EQ(config_error_of("root:$6$saltsalt$hashhashhash:1:: x\n").find("hashhash"),
            std::string::npos);
  const std::string list_key = profile_error_of(f, "backend: cuda\n? [a, b]\n: 1\n");
  EXPECT_NE(list_key.find(":2:3: a key must be a plain name, not a list"), std::string::npos)
      << list_key;
  // name and description are strings (`name: [a]` escaped as yaml-cpp's bad conversion: exit 1;
  // found by tests/fuzz/fuzz_config's oracle).
  for (const std::string key : {"name", "description"}) {
    const std::string e = profile_error_of(f, "backend: cpu\n" + key + ": [a]\n");
    EXPECT_NE(e.find(":2:" + std::to_string(key.size() + 3) + ": " + key + ": must be a string"),
              std::string::npos)
        << e;
  }
  const std::string pinned = profile_error_of(f, "backend: cuda\nmemory: pinned\n");
  EXPECT_NE(pinned.find(":2:9: memory: must be one of"), std::string::npos) << pinned;
  std::ofstream(f) << "backend: cuda\nmemory: pinned-chunked\nchunks: 4\nmin_strip_mb: 4\n";
  EXPECT_EQ(load_platform(f.string()).min_strip_mb, 4);
  const std::string min_strip =
      profile_error_of(f, "backend: cuda\nmemory: pinned-chunked\nmin_strip_mb: -1\n");
  EXPECT_NE(min_strip.find(":3:"), std::string::npos) << min_strip;
  EXPECT_NE(min_strip.find("min_strip_mb"), std::string::npos) << min_strip;
  std::ofstream(f) << "backend: cpu\nmemory: host\nchunks: 2\nthreads: 3\n";
  EXPECT_EQ(load_platform(f.string()).threads, 3);
  EXPECT_EQ(load_platform_text("backend: cpu\n", "p.yaml").threads, 0);  // 0: one per CPU
  for (const char* bad : {"-1", "1025", "two"}) {
    const std::string e = profile_error_of(f, std::string("backend: cpu\nthreads: ") + bad + "\n");
    EXPECT_NE(e.find(":2:"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("threads"), std::string::npos) << bad << ": " << e;
  }
  std::ofstream(f) << "backend: cuda\nmemory: pinned-chunked\nchunks: 4\nstrip_ratio: 0.6\n";
  EXPECT_DOUBLE_EQ(load_platform(f.string()).strip_ratio, 0.6);
  for (const char* bad : {"0", "1.5", "half"}) {
    const std::string e = profile_error_of(
        f, std::string("backend: cuda\nmemory: pinned-chunked\nstrip_ratio: ") + bad + "\n");
    EXPECT_NE(e.find(":3:"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("strip_ratio: must be a number in 0.05..1"), std::string::npos)
        << bad << ": " << e;
  }
  std::ofstream(f) << "backend: cuda\nmemory: pinned-chunked\ncopy_wait: poll\n";
  EXPECT_EQ(load_platform(f.string()).copy_wait, CopyWait::kPoll);
  const std::string in_flight = profile_error_of(
      f, "backend: cuda\nmemory: pinned-chunked\ncopy_wait: poll\nframes_in_flight: 2\n");
  EXPECT_NE(in_flight.find("frames_in_flight: 1"), std::string::npos) << in_flight;
  const std::string spin =
      profile_error_of(f, "backend: cuda\nmemory: pinned-chunked\ncopy_wait: spin\n");
  EXPECT_NE(spin.find(":3:"), std::string::npos) << spin;
  EXPECT_NE(spin.find("copy_wait"), std::string::npos) << spin;
  EXPECT_NE(spin.find("poll"), std::string::npos) << spin;
  std::ofstream(f) << "backend: cuda\nmemory: pinned-chunked\nchunks: 4\nstrip_copies: 2\n";
  EXPECT_EQ(load_platform(f.string()).strip_copies, 2);
  for (const char* bad : {"-1", "two", "1.5"}) {
    const std::string e = profile_error_of(
        f, std::string("backend: cuda\nmemory: pinned-chunked\n\nstrip_copies: ") + bad + "\n");
    EXPECT_NE(e.find(":4:"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("strip_copies"), std::string::npos) << bad << ": " << e;
  }
  std::filesystem::remove(f);
}

}  // namespace
}  // namespace jetpipe
