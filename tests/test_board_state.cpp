// SPDX-License-Identifier: MIT
// The Jetson power and thermal state (pipeline/board_state.h) read from a fake L4T file tree: what
// an Orin's sysfs, procfs and /etc hold, written into a temporary folder; and summary.json's
// "board" from a run over it, absent on a tree that is not a Jetson's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "pipeline/board_state.h"
#include "pipeline/runner.h"
#include "test_util.h"

namespace jetpipe {
namespace {

namespace fs = std::filesystem;

void put(const fs::path& root, const std::string& rel, const std::string& text) {
  const fs::path p = root / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// An Orin Nano on L4T R36.4.3 in MAXN_SUPER, its GPU at 612 MHz (306-1020), EMC at 2133 MHz, two
// thermal zones: cpu-thermal at 48.5 °C (passive trip 99 °C), gpu-thermal at 50.0 °C (passive
// trips 95 °C and 80 °C), and a zone without a temperature.
void write_orin(const fs::path& root) {
  put(root, "etc/nv_tegra_release",
      "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: ...\n");
  put(root, "var/lib/nvpmodel/status", "pmode:0002\n");
  put(root, "etc/nvpmodel.conf",
      "< POWER_MODEL ID=0 NAME=15W >\nCPU_ONLINE CORE_0 1\n"
      "< POWER_MODEL ID=1 NAME=25W >\n< POWER_MODEL ID=2 NAME=MAXN_SUPER >\n"
      "< PM_CONFIG DEFAULT=2 >\n");
  const std::string gpu = "sys/class/devfreq/17000000.gpu/";
  put(root, gpu + "device/of_node/name", std::string("gpu") + '\0');
  put(root, gpu + "cur_freq", "612000000\n");
  put(root, gpu + "min_freq", "306000000\n");
  put(root, gpu + "max_freq", "1020000000\n");
  put(root, "sys/class/devfreq/15a30000.nvdla0/device/of_node/name", std::string("nvdla0") + '\0');
  put(root, "sys/class/devfreq/15a30000.nvdla0/cur_freq", "1\n");
  put(root, "sys/kernel/debug/bpmp/debug/clk/emc/rate", "2133000000\n");
  const std::string cpu = "sys/class/thermal/thermal_zone0/";
  put(root, cpu + "type", "cpu-thermal\n");
  put(root, cpu + "temp", "48500\n");
  put(root, cpu + "trip_point_0_type", "passive\n");
  put(root, cpu + "trip_point_0_temp", "99000\n");
  put(root, cpu + "trip_point_1_type", "critical\n");
  put(root, cpu + "trip_point_1_temp", "40000\n");  // critical, not passive: not throttling
  const std::string gz = "sys/class/thermal/thermal_zone1/";
  put(root, gz + "type", "gpu-thermal\n");
  put(root, gz + "temp", "50000\n");
  put(root, gz + "trip_point_0_type", "passive\n");
  put(root, gz + "trip_point_0_temp", "95000\n");
  put(root, gz + "trip_point_1_type", "passive\n");
  put(root, gz + "trip_point_1_temp", "80000\n");
  put(root, "sys/class/thermal/thermal_zone2/type", "tj-thermal\n");
}

TEST(BoardState, ATreeThatIsNotAJetsonsReportsNothing) {
  test::TempDir dir;
  put(dir.path(), "sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n");
  put(dir.path(), "sys/class/thermal/thermal_zone0/temp", "45000\n");
  EXPECT_FALSE(is_jetson(dir.path()));
  BoardMonitor m(dir.path());
  m.sample(0, true);
  EXPECT_FALSE(m.active());
  EXPECT_TRUE(m.summary().is_null());
}

TEST(BoardState, OneSampleOfAnOrin) {
  test::TempDir dir;
  write_orin(dir.path());
  EXPECT_TRUE(is_jetson(dir.path()));
  const BoardSample s = read_board_sample(dir.path());
  ASSERT_TRUE(s.gpu_hz.has_value());
  EXPECT_EQ(*s.gpu_hz, 612000000);
  ASSERT_TRUE(s.emc_hz.has_value());
  EXPECT_EQ(*s.emc_hz, 2133000000);
  ASSERT_EQ(s.temps_c.size(), 2u);
  EXPECT_DOUBLE_EQ(s.temps_c.at("cpu-thermal"), 48.5);
  EXPECT_DOUBLE_EQ(s.passive_c.at("gpu-thermal"), 80.0);  // the lower passive trip
  EXPECT_DOUBLE_EQ(s.passive_c.at("cpu-thermal"), 99.0);
}

TEST(BoardState, MonitorSummarisesARunAndSeesThrottling) {
  test::TempDir dir;
  const fs::path root = dir.path();
  write_orin(root);
  BoardMonitor m(root, 1.0);
  ASSERT_TRUE(m.active());
  m.sample(0.0, true);
  // The GPU heats past its passive trip and its clock drops; a sample within the period is skipped.
  put(root, "sys/class/thermal/thermal_zone1/temp", "81500\n");
  put(root, "sys/class/devfreq/17000000.gpu/cur_freq", "408000000\n");
  m.sample(0.5);
  const nlohmann::ordered_json mid = m.summary();
  EXPECT_EQ(mid["samples"], 1);
  EXPECT_EQ(mid["throttled"].size(), 0u);
  m.sample(1.5);
  put(root, "sys/class/thermal/thermal_zone1/temp", "70000\n");
  put(root, "sys/class/devfreq/17000000.gpu/cur_freq", "918000000\n");
  m.sample(1.6, true);
  const nlohmann::ordered_json j = m.summary();
  EXPECT_EQ(j["l4t"], "R36.4.3");
  EXPECT_EQ(j["nvpmodel"]["id"], 2);
  EXPECT_EQ(j["nvpmodel"]["name"], "MAXN_SUPER");
  EXPECT_EQ(j["gpu_hz"]["min"], 408000000);
  EXPECT_EQ(j["gpu_hz"]["max"], 918000000);
  EXPECT_EQ(j["gpu_hz"]["last"], 918000000);
  EXPECT_EQ(j["gpu_hz"]["range"], nlohmann::ordered_json::array({306000000, 1020000000}));
  EXPECT_EQ(j["emc_hz"]["last"], 2133000000);
  EXPECT_DOUBLE_EQ(j["temperature_c"]["gpu-thermal"]["max"].get<double>(), 81.5);
  EXPECT_DOUBLE_EQ(j["temperature_c"]["gpu-thermal"]["last"].get<double>(), 70.0);
  EXPECT_EQ(j["throttled"], nlohmann::ordered_json::array({"gpu-thermal"}));
  EXPECT_EQ(j["samples"], 3);
}

TEST(BoardState, MissingFilesAreLeftOut) {
  test::TempDir dir;
  const fs::path root = dir.path();
  put(root, "etc/nv_tegra_release", "not a release line\n");
  put(root, "var/lib/nvpmodel/status", "pmode:0001\n");  // no nvpmodel.conf: the id alone
  BoardMonitor m(root);
  m.sample(0, true);
  const nlohmann::ordered_json j = m.summary();
  EXPECT_FALSE(j.contains("l4t"));
  EXPECT_EQ(j["nvpmodel"], nlohmann::ordered_json({{"id", 1}}));
  EXPECT_FALSE(j.contains("gpu_hz"));
  EXPECT_FALSE(j.contains("emc_hz"));
  EXPECT_FALSE(j.contains("temperature_c"));
}

TEST(BoardState, SummaryJsonHasTheBoardOnlyOnAJetson) {
  test::TempDir dir;
  write_orin(dir.path() / "orin");
  fs::create_directories(dir.path() / "pc");
  RunOptions o;
  o.config = std::string(JETPIPE_TEST_DATA) + "/regression/configs/pipeline.yaml";
  o.platform = "cpu";
  for (const char* board : {"orin", "pc"}) {
    o.board_root = (dir.path() / board).string();
    o.output_dir = (dir.path() / (std::string("out-") + board)).string();
    const RunSummary s = run_pipeline(o);
    EXPECT_GT(s.processed, 0);
    const auto sum = nlohmann::json::parse(test::slurp(fs::path(o.output_dir) / "summary.json"));
    EXPECT_EQ(sum.contains("board"), std::string(board) == "orin") << board;
    if (std::string(board) == "orin") {
      EXPECT_EQ(sum["board"]["nvpmodel"]["name"], "MAXN_SUPER");
      EXPECT_GE(sum["board"]["samples"].get<int>(), 2);  // the run's start and end
    }
  }
}

}  // namespace
}  // namespace jetpipe
