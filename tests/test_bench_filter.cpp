// SPDX-License-Identifier: MIT
// jetpipe-bench --filter (tools/bench/filter.h): groups and rows it keeps, its error.
#include <gtest/gtest.h>

#include "tools/bench/filter.h"

namespace jetpipe::tools {
namespace {

TEST(BenchFilter, EmptyRunsEverything) {
  const FilterMatch m = match_filter("", "gaussian");
  EXPECT_TRUE(m.run);
  EXPECT_TRUE(m.every_row);
  EXPECT_TRUE(keep_row("", m, "anything"));
}

TEST(BenchFilter, PartOfAGroupNameKeepsTheGroup) {
  for (const char* f : {"gauss", "gaussian", "aussi"}) {
    const FilterMatch m = match_filter(f, "gaussian");
    EXPECT_TRUE(m.run) << f;
    EXPECT_TRUE(m.every_row) << f;
    EXPECT_TRUE(keep_row(f, m, "gaussian5x5/replicate")) << f;
  }
  // "pipeline" names both the pipeline and pipeline-batch groups, every row of each.
  EXPECT_TRUE(match_filter("pipeline", "pipeline-batch").every_row);
}

TEST(BenchFilter, ARowNameRunsItsGroupAndKeepsItsRows) {
  const FilterMatch m = match_filter("gaussian5x5", "gaussian");
  EXPECT_TRUE(m.run);
  EXPECT_FALSE(m.every_row);
  EXPECT_TRUE(keep_row("gaussian5x5", m, "gaussian5x5/replicate"));
  EXPECT_TRUE(keep_row("gaussian5x5", m, "gaussian5x5 r16"));
  EXPECT_FALSE(keep_row("gaussian5x5", m, "gaussian3x3/replicate"));
  EXPECT_FALSE(keep_row("gaussian5x5", m, "gaussian7x7 r16"));

  const FilterMatch r = match_filter("box15x15 r64", "box");
  EXPECT_TRUE(r.run);
  EXPECT_TRUE(keep_row("box15x15 r64", r, "box15x15 r64/replicate"));
  EXPECT_FALSE(keep_row("box15x15 r64", r, "box15x15/replicate"));
}

TEST(BenchFilter, OtherGroupsDoNotRun) {
  EXPECT_FALSE(match_filter("gaussian5x5", "box").run);
  EXPECT_FALSE(match_filter("harris", "detect").run);
  EXPECT_FALSE(match_filter("gaussianx", "gaussian5").run);
}

TEST(BenchFilter, NoRowsMessageNamesFilterAreaAndKernels) {
  const std::string m = no_rows_message("gausian", "filters", {"gaussian", "box", "sobel"});
  EXPECT_NE(m.find("'gausian'"), std::string::npos);
  EXPECT_NE(m.find("--area filters"), std::string::npos);
  EXPECT_NE(m.find("gaussian, box, sobel"), std::string::npos);
  EXPECT_EQ(no_rows_message("x", "all", {}), "--filter 'x' kept no row of --area all");
}

}  // namespace
}  // namespace jetpipe::tools
