// SPDX-License-Identifier: MIT
// jetpipe-bench --sms / --policy: the checks and the lines printed (tools/bench/sms_option.h);
// the green context itself needs a GPU and is exercised by the bench, never by a test.
#include <gtest/gtest.h>

#include "tools/bench/sms_option.h"

namespace jetpipe::tools {
namespace {

TEST(BenchSms, PolicyTargetsParse) {
  PolicyTarget t = PolicyTarget::kDevice;
  EXPECT_TRUE(parse_policy_target("orin", &t));
  EXPECT_EQ(t, PolicyTarget::kOrin);
  EXPECT_TRUE(parse_policy_target("discrete", &t));
  EXPECT_EQ(t, PolicyTarget::kDiscrete);
  EXPECT_TRUE(parse_policy_target("device", &t));
  EXPECT_EQ(t, PolicyTarget::kDevice);
  EXPECT_FALSE(parse_policy_target("Orin", &t));
  EXPECT_FALSE(parse_policy_target("", &t));
}

TEST(BenchSms, PolicyTargetsStandForTheirComputeCapability) {
  int major = 0, minor = 0;
  policy_cc(PolicyTarget::kOrin, 9, 0, &major, &minor);
  EXPECT_EQ(major * 10 + minor, 87);
  policy_cc(PolicyTarget::kDiscrete, 8, 7, &major, &minor);
  EXPECT_EQ(major * 10 + minor, 90);
  policy_cc(PolicyTarget::kDevice, 10, 0, &major, &minor);
  EXPECT_EQ(major * 10 + minor, 100);
}

TEST(BenchSms, RequestsOutsideTheDeviceAreRefusedWithTheReason) {
  EXPECT_EQ(check_sms_request(8, 132), "");
  EXPECT_EQ(check_sms_request(132, 132), "");
  EXPECT_NE(check_sms_request(0, 132).find(">= 1"), std::string::npos);
  EXPECT_NE(check_sms_request(-4, 132).find(">= 1"), std::string::npos);
  const std::string big = check_sms_request(200, 132);
  EXPECT_NE(big.find("--sms 200"), std::string::npos) << big;
  EXPECT_NE(big.find("132 SMs"), std::string::npos) << big;
}

TEST(BenchSms, UnsupportedIsOneLineThatNamesTheNeed) {
  const std::string m = sms_unsupported_message(8, "built with CUDA 12.2");
  EXPECT_EQ(m.find('\n'), std::string::npos);
  EXPECT_NE(m.find("--sms 8"), std::string::npos) << m;
  EXPECT_NE(m.find("12.4"), std::string::npos) << m;
  EXPECT_NE(m.find("built with CUDA 12.2"), std::string::npos) << m;
  EXPECT_NE(m.find("nothing measured"), std::string::npos) << m;
  EXPECT_NE(kSmsUnsupportedExit, 0);
  EXPECT_NE(kSmsUnsupportedExit, 1);  // a failure
  EXPECT_NE(kSmsUnsupportedExit, 2);  // a bad argument
}

TEST(BenchSms, BannerSaysBandwidthIsNotScaled) {
  const std::string m = sms_banner(8, 8, 8, 132, 2970.0);
  EXPECT_NE(m.find("8 of 132 SMs"), std::string::npos) << m;
  EXPECT_NE(m.find("ran on 8 distinct SMs"), std::string::npos) << m;
  EXPECT_NE(m.find("NOT scaled"), std::string::npos) << m;
  EXPECT_NE(m.find("2970 GB/s"), std::string::npos) << m;
  EXPECT_NE(m.find("~205 GB/s"), std::string::npos) << m;
  EXPECT_NE(m.find("upper bound"), std::string::npos) << m;
  // A rounded-up split says what was asked for and what came.
  EXPECT_NE(sms_banner(4, 8, 8, 132, 2970.0).find("8 of 132 SMs (asked for 4)"), std::string::npos);
}

}  // namespace
}  // namespace jetpipe::tools
