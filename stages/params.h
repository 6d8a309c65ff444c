// SPDX-License-Identifier: MIT
// One parameter, one declaration: key, type, default, range and doc in one place, used for parsing,
// validation, error messages and `jetpipe stages`. Errors name the file, line, column and key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace jetpipe {

enum class ParamType {
  kInt,      // integer in [min, max]
  kNumber,   // real in [min, max]
  kBool,     // true / false
  kChoice,   // one of choices
  kNumberOrChoice,  // a real in [min, max] or one of choices ("otsu")
  kRange,    // [lo, hi] with lo < hi, each in [min, max]
  kMatrix,   // rows of numbers (odd rows and columns, at most max each)
};

struct ParamSpec {
  std::string key;
  ParamType type;
  std::string default_value;  // YAML text; empty = no default (optional, or required if below)
  double min = 0, max = 0;
  std::vector<std::string> choices;
  std::string doc;
  bool required = false;
};

// "file:line:column" of a YAML node (1-based), or just the file when the node has no mark.
std::string yaml_where(const std::string& file, const YAML::Node& node);

// The names a config gives (stage `name`, `output` and `input`, `outputs.results`, image names
// in `outputs.images`) become file names in the output folder, so they are kept to 1 to 64
// letters, digits, '_', '-' and '.', not starting with '.' or '-': no '/', no "..", nothing
// outside the folder. Returns the node's text, or throws a config error at its place that shows
// the name (cut to 40 characters, unprintable bytes as \xNN).
std::string safe_name(const std::string& file, const YAML::Node& node, const std::string& key);
bool is_safe_name(const std::string& name);

// An unknown key as an error message shows it: quoted when it is a plain name, else "(a key that
// is not a plain name)", so an error never echoes a line of a file that is not a jetpipe file (a
// password hash given as --platform or --config).
std::string shown_key(const std::string& key);

// A map key's text; a key that is not a plain scalar (`? [a, b]: 1`) is a config error at its
// position.
std::string yaml_key(const std::string& file, const YAML::Node& key);

// Parses YAML text (a config or a platform profile) named `file` in messages. Throws a config
// error "file:line:column: YAML syntax error: ..." or, for lists and maps nested past yaml-cpp's
// depth limit (which it reports as "bad file"), "file:line:column: YAML nesting too deep ...".
YAML::Node load_yaml(const std::string& text, const std::string& file);

// The parameters of one stage, parsed against its specs. Construction rejects unknown keys and
// values of the wrong type or out of range; getters return the value or its default.
class Params {
 public:
  Params(std::string file, std::string stage_label, const YAML::Node& node,
         const std::vector<ParamSpec>* specs, const std::vector<std::string>& common_keys);

  bool has(const std::string& key) const;  // given in the YAML
  int get_int(const std::string& key) const;
  double get_number(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  std::string get_string(const std::string& key) const;  // kChoice, or kNumberOrChoice's choice
  bool is_choice(const std::string& key) const;           // kNumberOrChoice holds a choice
  std::vector<double> get_range(const std::string& key) const;
  std::vector<std::vector<double>> get_matrix(const std::string& key) const;

  // Throws a config error at the key's (or the stage's) position: "<where>: stage 'x' (type):
  // key: <message>".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  const std::string& file() const { return file_; }
  const std::string& label() const { return label_; }

 private:
  const ParamSpec& spec(const std::string& key) const;
  YAML::Node value(const std::string& key) const;  // given or default

  std::string file_;
  std::string label_;
  YAML::Node node_;
  const std::vector<ParamSpec>* specs_;
};

// Human-readable description of what a spec accepts ("an odd integer in 3..31").
std::string describe_spec(const ParamSpec& spec);

}  // namespace jetpipe
