// SPDX-License-Identifier: MIT
#include "pipeline/results_json.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/error.h"

namespace jetpipe {

namespace {

struct ToJson {
  nlohmann::ordered_json operator()(const std::monostate&) const { return nullptr; }
  nlohmann::ordered_json operator()(const HistogramResult& h) const {
    return {{"bins", h.bins}, {"range", {h.lo, h.hi}}};
  }
  nlohmann::ordered_json operator()(const StatsResult& s) const {
    nlohmann::ordered_json j;
    if (s.integral) {
      j["min"] = static_cast<long long>(s.min);
      j["max"] = static_cast<long long>(s.max);
    } else {
      j["min"] = s.min;
      j["max"] = s.max;
    }
    j["mean"] = s.mean;
    j["stddev"] = s.stddev;
    j["count"] = s.count;
    return j;
  }
  nlohmann::ordered_json operator()(const ThresholdResult& t) const { return {{"value", t.value}}; }
  nlohmann::ordered_json operator()(const DetectResult& d) const {
    nlohmann::ordered_json pts = nlohmann::ordered_json::array();
    for (const auto& p : d.points) pts.push_back({p.x, p.y, p.score});
    return {{"count", d.count}, {"overflow", d.overflow}, {"points", std::move(pts)}};
  }
};

}  // namespace

nlohmann::ordered_json result_to_json(const StageResult& r) { return std::visit(ToJson{}, r); }

nlohmann::ordered_json record_to_json(const FrameRecord& rec) {
  nlohmann::ordered_json j;
  j["frame"] = rec.index;
  if (!rec.input.empty()) j["input"] = rec.input;
  j["source"] = rec.source;
  if (rec.pts_s) j["pts_s"] = *rec.pts_s;
  if (!rec.error.empty()) {
    j["error"] = rec.error;
    return j;
  }
  j["width"] = rec.width;
  j["height"] = rec.height;
  if (rec.capture_latency_ms) j["capture_latency_ms"] = *rec.capture_latency_ms;
  nlohmann::ordered_json results = nlohmann::ordered_json::object();
  for (const auto& [name, r] : rec.results) results[name] = result_to_json(r);
  j["results"] = std::move(results);
  return j;
}

}  // namespace jetpipe

namespace jetpipe {

namespace fs = std::filesystem;

std::string json_text(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {

std::string reason() { return errno != 0 ? std::strerror(errno) : "unknown error"; }

}  // namespace

JsonLinesWriter::JsonLinesWriter(const fs::path& path) : path_(path) {
  errno = 0;
  out_.open(path, std::ios::binary | std::ios::trunc);
  if (!out_) throw Error(path.string() + ": cannot write the results file: " + reason());
}

void JsonLinesWriter::write(const nlohmann::ordered_json& j) {
  const std::string line = json_text(j) + '\n';
  errno = 0;
  out_.write(line.data(), static_cast<std::streamsize>(line.size()));
  out_.flush();
  if (!out_) {
    const std::string why = reason();
    out_.close();
    std::error_code ec;
    fs::resize_file(path_, bytes_, ec);  // back to the last whole line
    throw Error(path_.string() + ": writing the record of line " + std::to_string(lines_ + 1) +
                " failed: " + why + " (the file keeps the " + std::to_string(lines_) +
                " records before it)");
  }
  bytes_ += line.size();
  ++lines_;
}

void write_file_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  auto fail = [&](const std::string& what) {
    const std::string why = reason();
    std::error_code ec;
    fs::remove(tmp, ec);
    throw Error(path.string() + ": " + what + ": " + why);
  };
  errno = 0;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot create " + tmp.filename().string());
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) fail("write failed");
    out.close();
    if (!out) fail("close failed");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    errno = ec.value();
    fail("cannot rename " + tmp.filename().string() + " over it");
  }
}

nlohmann::ordered_json reconnects_json(const ReconnectStats& r) {
  nlohmann::ordered_json j = {
      {"count", r.reconnects},          {"tries", r.tries},
      {"frames_lost", r.frames_lost},   {"outages_without_rate", r.outages_without_rate},
      {"seconds_away", r.seconds_away}, {"gave_up", r.gave_up}};
  if (!r.last_error.empty()) j["last_error"] = r.last_error;
  j["policy"] = {{"attempts", r.policy.attempts},
                 {"delay_ms", std::llround(r.policy.delay_s * 1000)},
                 {"max_delay_ms", std::llround(r.policy.max_delay_s * 1000)}};
  return j;
}

}  // namespace jetpipe
