// SPDX-License-Identifier: MIT
// Where profiles come from (DESIGN.md, Deployment), with temp folders and made-up devices: no GPU
// needed. $JETPIPE_PLATFORMS and the installed folder are both ProfileDirs, searched in order,
// then the copies built into the binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/platform.h"
#include "tests/test_util.h"

namespace jetpipe {
namespace {

void write_profile(const test::TempDir& dir, const std::string& name, const std::string& yaml) {
  std::ofstream(dir / (name + ".yaml")) << yaml;
}

DeviceReport one_device(bool integrated, int cc_major, int cc_minor, int sms, double gib) {
  DeviceReport r;
  r.cuda_built = true;
  DeviceInfo d;
  d.name = "made up";
  d.integrated = integrated;
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  d.multiprocessors = sms;
  d.global_memory = static_cast<std::size_t>(gib * 1024 * 1024 * 1024);
  d.can_map_host_memory = true;
  r.devices.push_back(d);
  return r;
}

TEST(PlatformSearch, FirstFolderWinsThenTheNextThenBuiltIn) {
  const test::TempDir env, installed;
  write_profile(env, "discrete", "backend: cuda\nmemory: pinned-chunked\nchunks: 3\n");
  write_profile(installed, "discrete", "backend: cuda\nmemory: pinned-chunked\nchunks: 5\n");
  write_profile(installed, "jetson-thor", "backend: cuda\nmemory: managed\n");
  const std::vector<ProfileDir> dirs = {{env.str(), "$JETPIPE_PLATFORMS"},
                                        {installed.str(), "installed"}};

  const ProfileLocation a = locate_profile("discrete", dirs);
  EXPECT_EQ(a.path, env / "discrete.yaml");
  EXPECT_EQ(a.origin, "$JETPIPE_PLATFORMS");
  const ProfileLocation b = locate_profile("jetson-thor", dirs);
  EXPECT_EQ(b.path, installed / "jetson-thor.yaml");
  const ProfileLocation c = locate_profile("jetson-orin-nano", dirs);
  EXPECT_TRUE(c.found());
  EXPECT_TRUE(c.path.empty());
  EXPECT_EQ(c.origin, "built into the binary");
  EXPECT_FALSE(locate_profile("nonesuch", dirs).found());

  EXPECT_EQ(load_platform(a).chunks, 3);
  EXPECT_EQ(load_platform(b).memory, MemoryStrategy::kManaged);
  const PlatformProfile nano = load_platform(c);
  EXPECT_EQ(nano.name, "jetson-orin-nano");
  EXPECT_EQ(nano.memory, MemoryStrategy::kZeroCopy);
  EXPECT_EQ(nano.file, "built-in:platforms/jetson-orin-nano.yaml");
}

TEST(PlatformSearch, EveryShippedProfileIsBuiltIn) {
  for (const char* name : {"cpu", "discrete", "discrete-latency", "jetson-orin-nano",
                           "jetson-orin-nx", "jetson-agx-orin", "jetson-thor"}) {
    const ProfileLocation at = locate_profile(name, {});
    ASSERT_TRUE(at.found()) << name;
    EXPECT_EQ(load_platform(at).name, name);
  }
  std::vector<std::string> names;
  for (const ProfileLocation& l : list_profiles({})) names.push_back(l.name);
  EXPECT_EQ(names.size(), 7u);
}

TEST(PlatformSearch, ListShowsWhereEachNameResolves) {
  const test::TempDir dir;
  write_profile(dir, "mine", "backend: cpu\nmemory: host\n");
  write_profile(dir, "cpu", "backend: cpu\nmemory: host\nchunks: 2\n");
  bool saw_mine = false, saw_cpu = false;
  for (const ProfileLocation& l : list_profiles({{dir.str(), "test"}})) {
    if (l.name == "mine") saw_mine = l.path == dir / "mine.yaml";
    if (l.name == "cpu") saw_cpu = l.path == dir / "cpu.yaml";
    if (l.name == "discrete") EXPECT_TRUE(l.path.empty());
  }
  EXPECT_TRUE(saw_mine);
  EXPECT_TRUE(saw_cpu);
}

TEST(PlatformSearch, AutoOnAJetsonUsesTheBuiltInCopyNotTheCpu) {
  std::string why;
  // An Orin Nano (integrated, 8.7, 8 SMs, 8 GB), no profile on disk at all.
  const test::TempDir empty;
  const PlatformProfile p =
      resolve_platform("auto", &why, one_device(true, 8, 7, 8, 7.4), {{empty.str(), "installed"}});
  EXPECT_EQ(p.name, "jetson-orin-nano");
  EXPECT_EQ(p.backend, Backend::kCuda);
  EXPECT_NE(why.find("built into the binary"), std::string::npos) << why;
  // A Thor, a discrete GPU.
  EXPECT_EQ(resolve_platform("auto", &why, one_device(true, 11, 0, 20, 128), {}).name,
            "jetson-thor");
  EXPECT_EQ(resolve_platform("auto", &why, one_device(false, 9, 0, 132, 80), {}).name, "discrete");
}

TEST(PlatformSearch, AutoTakesTheFolderCopyAndSaysWhere) {
  const test::TempDir installed;
  write_profile(installed, "discrete", "backend: cuda\nmemory: pinned-chunked\nchunks: 6\n");
  std::string why;
  const PlatformProfile p = resolve_platform("auto", &why, one_device(false, 9, 0, 132, 80),
                                             {{installed.str(), "installed, next to the binary"}});
  EXPECT_EQ(p.chunks, 6);
  EXPECT_EQ(p.file, installed / "discrete.yaml");
  EXPECT_NE(why.find(installed / "discrete.yaml"), std::string::npos) << why;
  EXPECT_NE(why.find("installed, next to the binary"), std::string::npos) << why;
}

TEST(PlatformSearch, ABrokenProfileOnDiskIsAnErrorNotTheCpu) {
  const test::TempDir dir;
  write_profile(dir, "discrete", "backend: cuda\nmemory: bogus\n");
  try {
    resolve_platform("auto", nullptr, one_device(false, 9, 0, 132, 80), {{dir.str(), "test"}});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_NE(std::string(e.what()).find("discrete.yaml:2:"), std::string::npos) << e.what();
  }
}

TEST(PlatformSearch, NoDeviceOrNoCudaBuildIsTheCpuAndSaysWhy) {
  std::string why;
  DeviceReport none;
  EXPECT_EQ(resolve_platform("auto", &why, none, {}).backend, Backend::kCpu);
  EXPECT_NE(why.find("no CUDA backend"), std::string::npos) << why;
  none.cuda_built = true;
  none.runtime_error = "cudaErrorNoDevice: no CUDA-capable device is detected";
  EXPECT_EQ(resolve_platform("auto", &why, none, {}).backend, Backend::kCpu);
  EXPECT_NE(why.find("cudaErrorNoDevice"), std::string::npos) << why;
}

TEST(PlatformSearch, AnUnknownNameListsTheSearch) {
  const test::TempDir dir;
  const std::string absent = dir / "absent";
  try {
    resolve_platform("nonesuch", nullptr, DeviceReport{}, {{absent, "$JETPIPE_PLATFORMS"}});
    FAIL() << "accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("valid: auto cpu discrete"), std::string::npos) << what;
    EXPECT_NE(what.find(absent + " ($JETPIPE_PLATFORMS, absent)"), std::string::npos) << what;
    EXPECT_NE(what.find("the copies built into the binary"), std::string::npos) << what;
  }
}

TEST(PlatformSearch, ProcessDirsAreTheEnvironmentThenNextToTheBinary) {
  // This test binary lives in <build>/tests: its installed folder is
  // <build>/share/jetpipe/platforms (absent in a build tree), never the source tree's platforms/.
  const std::vector<ProfileDir> dirs = platform_search_dirs();
  ASSERT_FALSE(dirs.empty());
  const ProfileDir& installed = dirs.back();
  EXPECT_NE(installed.dir.find("share/jetpipe/platforms"), std::string::npos) << installed.dir;
  for (const ProfileDir& d : dirs) {
    EXPECT_EQ(d.dir.find(std::string(JETPIPE_SOURCE_DIR) + "/platforms"), std::string::npos)
        << d.dir;
  }
}

TEST(PlatformSearch, TextProfilesNameTheirSourceInErrors) {
  try {
    load_platform_text("backend: cuda\nmemory: pinned\n", "built-in:platforms/x.yaml");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built-in:platforms/x.yaml:2:"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(load_platform_text("backend: cpu\n", "dir/mine.yaml").name, "mine");
}

}  // namespace
}  // namespace jetpipe
