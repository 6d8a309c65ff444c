// SPDX-License-Identifier: MIT
#include "pipeline/results_json.h"

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
  j["source"] = rec.source;
  if (!rec.error.empty()) {
    j["error"] = rec.error;
    return j;
  }
  j["width"] = rec.width;
  j["height"] = rec.height;
  nlohmann::ordered_json results = nlohmann::ordered_json::object();
  for (const auto& [name, r] : rec.results) results[name] = result_to_json(r);
  j["results"] = std::move(results);
  return j;
}

}  // namespace jetpipe
