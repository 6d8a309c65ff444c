// SPDX-License-Identifier: MIT
// A Jetson board's power and thermal state during a run, for summary.json's "board": the L4T
// release, the nvpmodel power mode, the GPU and EMC clocks, the thermal zones' temperatures and
// whether any reached a passive (throttling) trip point. Read from the files L4T provides, under a
// root folder ("/" on the board, a fake tree in tests); whatever cannot be read is left out, and on
// a machine that is not a Jetson (no /etc/nv_tegra_release and no integrated-GPU devfreq node)
// nothing is reported at all. Reading needs no root, except the EMC rate in debugfs (else the
// EMC's devfreq node where the kernel has one).
//
// Files read (L4T r35/r36):
//   etc/nv_tegra_release                 "# R36 (release), REVISION: 4.3, ..." → "R36.4.3"
//   var/lib/nvpmodel/status              "pmode:0002" (what nvpmodel writes) → mode 2
//   etc/nvpmodel.conf                    "< POWER_MODEL ID=2 NAME=MAXN_SUPER >" → its name
//   sys/class/devfreq/*/device/of_node/name in {gpu, ga10b, gv11b, gp10b}: cur_freq, min_freq,
//                                        max_freq (Hz) of the integrated GPU
//   sys/kernel/debug/bpmp/debug/clk/emc/rate, else sys/class/devfreq/*emc*/cur_freq (Hz)
//   sys/class/thermal/thermal_zone*/{type,temp} (m°C) and trip_point_*_{type,temp} (passive)
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace jetpipe {

struct BoardSample {
  std::optional<std::int64_t> gpu_hz, emc_hz;
  std::map<std::string, double> temps_c;    // thermal zone type → °C
  std::map<std::string, double> passive_c;  // thermal zone type → its lowest passive trip, °C
};

// Whether `root` looks like a Jetson's file system (L4T release file or integrated-GPU devfreq).
bool is_jetson(const std::filesystem::path& root);

BoardSample read_board_sample(const std::filesystem::path& root);

// Samples over a run (at its start, then at most once a `period_s`, and at its end) and their
// summary. Inactive (samples nothing, summary null) where is_jetson(root) is false.
class BoardMonitor {
 public:
  explicit BoardMonitor(std::filesystem::path root = "/", double period_s = 1.0);
  bool active() const { return active_; }
  // Takes a sample if `period_s` has passed since the last one (now_s: seconds since any fixed
  // origin), or always with force.
  void sample(double now_s, bool force = false);
  // {"l4t": "R36.4.3", "nvpmodel": {"id": 2, "name": "MAXN_SUPER"}, "gpu_hz": {"min": ..,
  //  "max": .., "last": .., "range": [min_freq, max_freq]}, "emc_hz": {...}, "temperature_c":
  //  {"<zone>": {"max": .., "last": ..}}, "throttled": ["<zone>", ...], "samples": n};
  // null when inactive.
  nlohmann::ordered_json summary() const;

 private:
  std::filesystem::path root_;
  double period_s_;
  bool active_ = false;
  double last_s_ = -1;
  int samples_ = 0;
  BoardSample last_;
  std::optional<std::int64_t> gpu_lo_, gpu_hi_, emc_lo_, emc_hi_;
  std::map<std::string, double> temp_max_;
  std::map<std::string, bool> throttled_;
};

}  // namespace jetpipe
