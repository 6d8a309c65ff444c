// SPDX-License-Identifier: MIT
#include "pipeline/board_state.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

namespace jetpipe {

namespace fs = std::filesystem;

namespace {

// The file's text without trailing white space and NULs (device-tree strings end in one), or
// nothing when it cannot be read.
std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream os;
  os << in.rdbuf();
  std::string s = os.str();
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) {
    s.pop_back();
  }
  return s;
}

std::optional<std::int64_t> read_int(const fs::path& p) {
  const std::optional<std::string> s = read_text(p);
  if (!s || s->empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const long long v = std::stoll(*s, &used);
    if (used != s->size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The entries of a folder, sorted (an unreadable folder: none).
std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> v;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    v.push_back(it->path());
  }
  std::sort(v.begin(), v.end());
  return v;
}

// The integrated GPU's devfreq folder (its device-tree node is named gpu, ga10b, gv11b or gp10b).
std::optional<fs::path> gpu_devfreq(const fs::path& root) {
  for (const fs::path& e : entries(root / "sys/class/devfreq")) {
    const std::optional<std::string> n = read_text(e / "device/of_node/name");
    if (n && (*n == "gpu" || *n == "ga10b" || *n == "gv11b" || *n == "gp10b")) return e;
  }
  return std::nullopt;
}

std::optional<std::int64_t> emc_hz(const fs::path& root) {
  if (auto v = read_int(root / "sys/kernel/debug/bpmp/debug/clk/emc/rate")) return v;
  for (const fs::path& e : entries(root / "sys/class/devfreq")) {
    if (e.filename().string().find("emc") != std::string::npos) {
      if (auto v = read_int(e / "cur_freq")) return v;
    }
  }
  return std::nullopt;
}

// "R36.4.3" from "# R36 (release), REVISION: 4.3, GCID: ...".
std::string l4t_release(const fs::path& root) {
  const std::optional<std::string> s = read_text(root / "etc/nv_tegra_release");
  if (!s) return "";
  std::smatch m;
  static const std::regex re(R"(R(\d+) \(release\), REVISION: ([0-9.]+))");
  return std::regex_search(*s, m, re) ? "R" + m[1].str() + "." + m[2].str() : "";
}

// The nvpmodel mode id ("pmode:0002") and its name from nvpmodel.conf.
nlohmann::ordered_json nvpmodel(const fs::path& root) {
  const std::optional<std::string> status = read_text(root / "var/lib/nvpmodel/status");
  std::smatch m;
  static const std::regex pmode(R"(pmode:0*(\d+))");
  if (!status || !std::regex_search(*status, m, pmode)) return nullptr;
  const int id = std::stoi(m[1].str());
  nlohmann::ordered_json j = {{"id", id}};
  if (const std::optional<std::string> conf = read_text(root / "etc/nvpmodel.conf")) {
    const std::regex model("<\\s*POWER_MODEL\\s+ID=" + std::to_string(id) + R"(\s+NAME=([^\s>]+))");
    if (std::regex_search(*conf, m, model)) j["name"] = m[1].str();
  }
  return j;
}

}  // namespace

bool is_jetson(const fs::path& root) {
  std::error_code ec;
  return fs::exists(root / "etc/nv_tegra_release", ec) || gpu_devfreq(root).has_value();
}

BoardSample read_board_sample(const fs::path& root) {
  BoardSample s;
  if (const std::optional<fs::path> gpu = gpu_devfreq(root)) s.gpu_hz = read_int(*gpu / "cur_freq");
  s.emc_hz = emc_hz(root);
  for (const fs::path& z : entries(root / "sys/class/thermal")) {
    if (z.filename().string().rfind("thermal_zone", 0) != 0) continue;
    const std::optional<std::string> type = read_text(z / "type");
    const std::optional<std::int64_t> milli = read_int(z / "temp");
    if (!type || !milli) continue;
    s.temps_c[*type] = static_cast<double>(*milli) / 1000.0;
    for (int t = 0; t < 32; ++t) {
      const std::string trip = "trip_point_" + std::to_string(t) + "_";
      const std::optional<std::string> kind = read_text(z / (trip + "type"));
      if (!kind) break;
      const std::optional<std::int64_t> at = read_int(z / (trip + "temp"));
      if (*kind != "passive" || !at) continue;
      const double c = static_cast<double>(*at) / 1000.0;
      auto it = s.passive_c.find(*type);
      if (it == s.passive_c.end() || c < it->second) s.passive_c[*type] = c;
    }
  }
  return s;
}

BoardMonitor::BoardMonitor(fs::path root, double period_s)
    : root_(std::move(root)), period_s_(period_s), active_(is_jetson(root_)) {}

void BoardMonitor::sample(double now_s, bool force) {
  if (!active_ || (!force && last_s_ >= 0 && now_s - last_s_ < period_s_)) return;
  last_s_ = now_s;
  ++samples_;
  last_ = read_board_sample(root_);
  auto widen = [](std::optional<std::int64_t>& lo, std::optional<std::int64_t>& hi,
                  const std::optional<std::int64_t>& v) {
    if (!v) return;
    lo = lo ? std::min(*lo, *v) : *v;
    hi = hi ? std::max(*hi, *v) : *v;
  };
  widen(gpu_lo_, gpu_hi_, last_.gpu_hz);
  widen(emc_lo_, emc_hi_, last_.emc_hz);
  for (const auto& [zone, c] : last_.temps_c) {
    auto it = temp_max_.find(zone);
    temp_max_[zone] = it == temp_max_.end() ? c : std::max(it->second, c);
    auto trip = last_.passive_c.find(zone);
    if (trip != last_.passive_c.end() && c >= trip->second) throttled_[zone] = true;
  }
}

nlohmann::ordered_json BoardMonitor::summary() const {
  if (!active_) return nullptr;
  nlohmann::ordered_json j;
  const std::string l4t = l4t_release(root_);
  if (!l4t.empty()) j["l4t"] = l4t;
  nlohmann::ordered_json mode = nvpmodel(root_);
  if (!mode.is_null()) j["nvpmodel"] = std::move(mode);
  auto clock = [](const std::optional<std::int64_t>& lo, const std::optional<std::int64_t>& hi,
                  const std::optional<std::int64_t>& last) {
    return nlohmann::ordered_json{{"min", *lo}, {"max", *hi}, {"last", last ? *last : *hi}};
  };
  if (gpu_lo_) {
    j["gpu_hz"] = clock(gpu_lo_, gpu_hi_, last_.gpu_hz);
    if (const std::optional<fs::path> gpu = gpu_devfreq(root_)) {
      const auto lo = read_int(*gpu / "min_freq"), hi = read_int(*gpu / "max_freq");
      if (lo && hi) j["gpu_hz"]["range"] = {*lo, *hi};
    }
  }
  if (emc_lo_) j["emc_hz"] = clock(emc_lo_, emc_hi_, last_.emc_hz);
  nlohmann::ordered_json temps = nlohmann::ordered_json::object();
  for (const auto& [zone, c] : temp_max_) {
    temps[zone] = {{"max", c}};
    auto it = last_.temps_c.find(zone);
    if (it != last_.temps_c.end()) temps[zone]["last"] = it->second;
  }
  if (!temps.empty()) j["temperature_c"] = std::move(temps);
  nlohmann::ordered_json throttled = nlohmann::ordered_json::array();
  for (const auto& [zone, on] : throttled_) {
    if (on) throttled.push_back(zone);
  }
  j["throttled"] = std::move(throttled);
  j["samples"] = samples_;
  return j;
}

}  // namespace jetpipe
