// SPDX-License-Identifier: MIT
#include "stages/params.h"

#include <yaml-cpp/depthguard.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <utility>

#include "core/error.h"

namespace jetpipe {

namespace {

std::string fmt_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

bool as_number(const YAML::Node& n, double* out) {
  if (!n.IsScalar()) return false;
  try {
    *out = n.as<double>();
    return std::isfinite(*out);
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::string scalar_text(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

// Where flow collections ('[', '{') first nest deeper than `limit`, skipping quoted scalars and
// comments: yaml-cpp's mark for a too-deep flow collection is where its scanner stopped (often the
// end of the file), so the opening bracket is the place to show. {-1, -1} when it never does.
std::pair<int, int> flow_depth_overflow(const std::string& text, int limit) {
  int depth = 0, line = 0, col = 0;
  char quote = 0;
  bool comment = false;
  for (std::size_t i = 0; i < text.size(); ++i, ++col) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      col = -1;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;
        ++col;
      } else if (c == quote) {
        quote = 0;
      }
    } else if ((c == '"' || c == '\'') && (i == 0 || std::strchr(" \t\n[{,:", text[i - 1]))) {
      quote = c;  // a quoted scalar starts after a separator; "don't" in a plain one is text
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      comment = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return {line, col};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {-1, -1};
}

}  // namespace

YAML::Node load_yaml(const std::string& text, const std::string& file) {
  auto at = [&](int line, int col) {
    return file + ":" + std::to_string(line + 1) + ":" + std::to_string(col + 1);
  };
  try {
    return YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    constexpr int kShownDepth = 100;  // yaml-cpp stops between ~250 and ~500 levels
    const auto [line, col] = flow_depth_overflow(text, kShownDepth);
    throw config_error((line >= 0 ? at(line, col) : at(e.mark.line, e.mark.column)) +
                       ": YAML nesting too deep: lists and maps nested hundreds of levels "
                       "(a config or profile needs a few)");
  } catch (const YAML::ParserException& e) {
    throw config_error(at(e.mark.line, e.mark.column) + ": YAML syntax error: " + e.msg);
  }
}

std::string yaml_where(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

bool is_safe_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.' || name[0] == '-') return false;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

std::string safe_name(const std::string& file, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    throw config_error(yaml_where(file, node) + ": " + key +
                       ": must be a name (a non-empty string)");
  }
  const std::string& name = node.Scalar();
  if (is_safe_name(name)) return name;
  std::string shown;
  for (std::size_t i = 0; i < name.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (std::isprint(c)) {
      shown += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      shown += hex;
    }
  }
  if (name.size() > 40) shown += "... (" + std::to_string(name.size()) + " characters)";
  throw config_error(yaml_where(file, node) + ": " + key + ": '" + shown +
                     "' is not a valid name: use 1 to 64 letters, digits, '_', '-' or '.', not "
                     "starting with '.' or '-' (names become file names in the output folder)");
}

std::string shown_key(const std::string& key) {
  return is_safe_name(key) ? "'" + key + "'" : "(a key that is not a plain name)";
}

std::string yaml_key(const std::string& file, const YAML::Node& key) {
  if (!key.IsScalar()) {
    throw config_error(yaml_where(file, key) + ": a key must be a plain name, not " +
                       scalar_text(key));
  }
  return key.Scalar();
}

std::string describe_spec(const ParamSpec& s) {
  auto range = [&] { return fmt_number(s.min) + ".." + fmt_number(s.max); };
  auto choices = [&] {
    std::string out;
    for (std::size_t i = 0; i < s.choices.size(); ++i) out += (i ? " | " : "") + s.choices[i];
    return out;
  };
  switch (s.type) {
    case ParamType::kInt: return "an integer in " + range();
    case ParamType::kNumber: return "a number in " + range();
    case ParamType::kBool: return "true or false";
    case ParamType::kChoice: return "one of " + choices();
    case ParamType::kNumberOrChoice: return "a number in " + range() + " or " + choices();
    case ParamType::kRange: return "[lo, hi] with lo < hi, in " + range();
    case ParamType::kMatrix:
      return "rows of numbers (odd rows and columns, up to " + fmt_number(s.max) + " each)";
  }
  return "?";
}

Params::Params(std::string file, std::string stage_label, const YAML::Node& node,
               const std::vector<ParamSpec>* specs, const std::vector<std::string>& common_keys)
    : file_(std::move(file)), label_(std::move(stage_label)), node_(node), specs_(specs) {
  for (const auto& kv : node_) {
    const std::string key = yaml_key(file_, kv.first);
    bool known = false;
    for (const auto& c : common_keys) known = known || c == key;
    for (const auto& s : *specs_) known = known || s.key == key;
    if (!known) {
      std::string valid;
      for (const auto& c : common_keys) valid += (valid.empty() ? "" : ", ") + c;
      for (const auto& s : *specs_) valid += (valid.empty() ? "" : ", ") + s.key;
      throw config_error(yaml_where(file_, kv.first) + ": " + label_ + ": unknown key " +
                         shown_key(key) + " (valid keys: " + valid + ")");
    }
  }
  // Validate every given value (and that required ones are present) now, before any frame.
  for (const auto& s : *specs_) {
    if (!has(s.key)) {
      if (s.required) fail(s.key, "is required: " + describe_spec(s));
      continue;
    }
    switch (s.type) {
      case ParamType::kInt: get_int(s.key); break;
      case ParamType::kNumber: get_number(s.key); break;
      case ParamType::kBool: get_bool(s.key); break;
      case ParamType::kChoice: get_string(s.key); break;
      case ParamType::kNumberOrChoice: is_choice(s.key) ? (void)get_string(s.key) : (void)get_number(s.key); break;
      case ParamType::kRange: get_range(s.key); break;
      case ParamType::kMatrix: get_matrix(s.key); break;
    }
  }
}

const ParamSpec& Params::spec(const std::string& key) const {
  for (const auto& s : *specs_) {
    if (s.key == key) return s;
  }
  throw Error("internal: stage " + label_ + " reads undeclared parameter '" + key + "'");
}

bool Params::has(const std::string& key) const { return node_[key].IsDefined(); }

YAML::Node Params::value(const std::string& key) const {
  const ParamSpec& s = spec(key);
  if (has(key)) return node_[key];
  if (s.default_value.empty()) fail(key, "has no value and no default");
  return YAML::Load(s.default_value);
}

void Params::fail(const std::string& key, const std::string& message) const {
  const YAML::Node n = node_[key];
  const std::string where = n.IsDefined() ? yaml_where(file_, n) : yaml_where(file_, node_);
  throw config_error(where + ": " + label_ + ": " + key + ": " + message);
}

int Params::get_int(const std::string& key) const {
  const ParamSpec& s = spec(key);
  const YAML::Node n = value(key);
  double v;
  if (!as_number(n, &v) || v != std::floor(v) || v < s.min || v > s.max) {
    fail(key, "must be " + describe_spec(s) + " (got " + scalar_text(n) + ")");
  }
  return static_cast<int>(v);
}

double Params::get_number(const std::string& key) const {
  const ParamSpec& s = spec(key);
  const YAML::Node n = value(key);
  double v;
  if (!as_number(n, &v) || v < s.min || v > s.max) {
    fail(key, "must be " + describe_spec(s) + " (got " + scalar_text(n) + ")");
  }
  return v;
}

bool Params::get_bool(const std::string& key) const {
  const ParamSpec& s = spec(key);
  const YAML::Node n = value(key);
  if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) return n.Scalar() == "true";
  fail(key, "must be " + describe_spec(s) + " (got " + scalar_text(n) + ")");
}

bool Params::is_choice(const std::string& key) const {
  const ParamSpec& s = spec(key);
  const YAML::Node n = value(key);
  if (!n.IsScalar()) return false;
  for (const auto& c : s.choices) {
    if (n.Scalar() == c) return true;
  }
  return false;
}

std::string Params::get_string(const std::string& key) const {
  const ParamSpec& s = spec(key);
  const YAML::Node n = value(key);
  if (is_choice(key)) return n.Scalar();
  fail(key, "must be " + describe_spec(s) + " (got " + scalar_text(n) + ")");
}

std::vector<double> Params::get_range(const std::string& key) const {
  const ParamSpec& s = spec(key);
  const YAML::Node n = value(key);
  double lo, hi;
  if (!n.IsSequence() || n.size() != 2 || !as_number(n[0], &lo) || !as_number(n[1], &hi) ||
      !(lo < hi) || lo < s.min || hi > s.max) {
    fail(key, "must be " + describe_spec(s));
  }
  return {lo, hi};
}

std::vector<std::vector<double>> Params::get_matrix(const std::string& key) const {
  const ParamSpec& s = spec(key);
  const YAML::Node n = value(key);
  const int limit = static_cast<int>(s.max);
  if (!n.IsSequence() || n.size() == 0) fail(key, "must be " + describe_spec(s));
  // Sizes before any element is read: rows that are YAML aliases of one long row
  // ([&r [1, ...], *r, *r, ...]) would otherwise be expanded in full first.
  auto bad_size = [&](std::size_t rows, std::size_t cols) {
    fail(key, "is " + std::to_string(rows) + "x" + std::to_string(cols) + ": must be " +
                  describe_spec(s));
  };
  for (const auto& r : n) {
    if (!r.IsSequence() || r.size() == 0) fail(key, "must be " + describe_spec(s));
    if (n.size() > static_cast<std::size_t>(limit) || r.size() > static_cast<std::size_t>(limit)) {
      bad_size(n.size(), r.size());
    }
  }
  std::vector<std::vector<double>> rows;
  for (const auto& r : n) {
    std::vector<double> row;
    for (const auto& e : r) {
      double v;
      if (!as_number(e, &v)) fail(key, "has a non-number entry " + scalar_text(e));
      row.push_back(v);
    }
    if (!rows.empty() && row.size() != rows[0].size()) {
      fail(key, "rows differ in length (" + std::to_string(rows[0].size()) + " and " +
                    std::to_string(row.size()) + ")");
    }
    rows.push_back(std::move(row));
  }
  const std::size_t nr = rows.size(), nc = rows[0].size();
  if (nr % 2 == 0 || nc % 2 == 0) bad_size(nr, nc);
  return rows;
}

}  // namespace jetpipe
