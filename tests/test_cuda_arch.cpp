// SPDX-License-Identifier: MIT
// pipeline/cuda_arch.h: whether a binary's CUDA architectures run on a device, without a GPU.
#include <gtest/gtest.h>

#include "core/error.h"
#include "pipeline/cuda_arch.h"

namespace jetpipe {
namespace {

constexpr const char* kDefault13 = "87,90,110";  // the CMake default with CUDA 13

TEST(CudaArch, ParsesCMakeSpellings) {
  const auto a = parse_cuda_architectures("87-real;90a;110f-virtual, 75");
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].cc, 87);
  EXPECT_TRUE(a[0].sass);
  EXPECT_FALSE(a[0].ptx);
  EXPECT_EQ(a[1].cc, 90);
  EXPECT_EQ(a[1].suffix, 'a');
  EXPECT_TRUE(a[1].sass && a[1].ptx);
  EXPECT_EQ(a[2].cc, 110);
  EXPECT_EQ(a[2].suffix, 'f');
  EXPECT_FALSE(a[2].sass);
  EXPECT_TRUE(a[2].ptx);
  EXPECT_EQ(a[3].cc, 75);
  std::string sym;
  EXPECT_TRUE(parse_cuda_architectures("native", &sym).empty());
  EXPECT_EQ(sym, "native");
  EXPECT_THROW(parse_cuda_architectures("sm_87"), Error);
  EXPECT_THROW(parse_cuda_architectures("87-fast"), Error);
}

TEST(CudaArch, DefaultsRunOnOrinHopperThor) {
  for (auto [major, minor] : {std::pair{8, 7}, {9, 0}, {11, 0}}) {
    const ArchSupport s = check_cuda_arch(major, minor, kDefault13);
    EXPECT_TRUE(s.runs) << s.why;
    EXPECT_FALSE(s.jit) << s.why;
  }
}

TEST(CudaArch, XavierGetsAClearNo) {  // AGX Xavier: sm_72, older than every default
  const ArchSupport s = check_cuda_arch(7, 2, kDefault13);
  EXPECT_FALSE(s.runs);
  EXPECT_NE(s.why.find("compute capability 7.2 cannot run"), std::string::npos) << s.why;
  EXPECT_NE(s.why.find("sm_87, sm_90, sm_110"), std::string::npos) << s.why;
  EXPECT_NE(s.why.find("-DCMAKE_CUDA_ARCHITECTURES=72"), std::string::npos) << s.why;
  EXPECT_NE(s.why.find("--platform cpu"), std::string::npos) << s.why;
}

TEST(CudaArch, SassRunsOnItsMajorAtEqualOrHigherMinor) {
  EXPECT_TRUE(check_cuda_arch(8, 9, "87-real").runs);   // 8.9 runs sm_87
  EXPECT_FALSE(check_cuda_arch(8, 6, "87-real").runs);  // 8.6 does not
  EXPECT_FALSE(check_cuda_arch(9, 0, "87-real").runs);  // another major does not
  EXPECT_FALSE(check_cuda_arch(10, 0, "87-real;90-real").runs);
}

TEST(CudaArch, PtxJitsOnNewerDevices) {
  const ArchSupport s = check_cuda_arch(12, 0, kDefault13);  // compute_110 PTX
  EXPECT_TRUE(s.runs);
  EXPECT_TRUE(s.jit);
  EXPECT_NE(s.why.find("JIT-compiles the PTX for compute_110"), std::string::npos) << s.why;
  EXPECT_FALSE(check_cuda_arch(12, 0, "87-real;90-real;110-real").runs);  // no PTX
  EXPECT_TRUE(check_cuda_arch(9, 0, "87-virtual").jit);
  EXPECT_FALSE(check_cuda_arch(8, 6, "87-virtual").runs);  // PTX never runs on an older device
}

TEST(CudaArch, ArchSpecificAndFamily) {
  EXPECT_TRUE(check_cuda_arch(9, 0, "90a").runs);
  EXPECT_FALSE(check_cuda_arch(10, 0, "90a").runs);  // a: that compute capability only, PTX too
  EXPECT_TRUE(check_cuda_arch(10, 3, "100f").runs);
  EXPECT_FALSE(check_cuda_arch(11, 0, "100f").runs);
}

TEST(CudaArch, NoCodeOrSymbolicLists) {
  EXPECT_FALSE(check_cuda_arch(9, 0, "").runs);
  EXPECT_TRUE(check_cuda_arch(9, 0, "all-major").runs);
}

TEST(CudaArch, ThisBuildsList) {  // CMAKE_CUDA_ARCHITECTURES reaches the binary, readable
  const std::string list = built_cuda_architectures();
  EXPECT_EQ(list.empty(), !JETPIPE_HAVE_CUDA) << list;
  EXPECT_NO_THROW(parse_cuda_architectures(list)) << list;
}

}  // namespace
}  // namespace jetpipe
