// SPDX-License-Identifier: MIT
// jetpipe-bench [--filter NAME] [--reps N] [--sizes 640x480,1920x1080,...] [--json FILE]
//               [--sms N] [--policy device|orin|discrete]
// --sms N runs everything inside a CUDA green context of N SMs (a rough stand-in for a Jetson's 4
// to 16; memory bandwidth is not scaled, and the output says so); where green contexts are missing
// (CUDA < 12.4, toolkit or driver) it prints one line and exits 3, measuring nothing.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/launch/device_info.h"
#include "tools/bench/bench.h"
#include "tools/bench/green_context.h"
#include "tools/bench/sms_option.h"
#include "tools/size_list.h"

int main(int argc, char** argv) {
  namespace tools = jetpipe::tools;
  CLI::App app{"jetpipe-bench: kernel benchmarks against CUB, NPP and OpenCV (CPU)"};
  std::string filter, json, sizes_arg = "640x480,1920x1080,3840x2160,16384x16384";
  int reps = 25, sms = 0;
  std::string area = "all", policy = "device";
  app.add_option("--filter", filter,
                 "Only kernels whose name contains this, or one kernel's rows by name "
                 "(gaussian5x5, box15x15 r64); no row kept is an error");
  app.add_option("--reps", reps, "Timed runs per case (median reported)")->check(CLI::Range(3, 10000));
  app.add_option("--sizes", sizes_arg, "Comma-separated WxH list")->capture_default_str();
  app.add_option("--json", json, "Also write the rows as JSON");
  app.add_option("--area", area, "all | reductions | filters | detect | pipeline")
      ->capture_default_str();
  app.add_option("--sms", sms,
                 "Run inside a CUDA green context of N SMs, grids sized for them (0: the whole "
                 "GPU; CUDA >= 12.4, else exit 3; rounds up to 8 on sm_90; memory bandwidth is not "
                 "scaled)")
      ->check(CLI::Range(0, 1 << 16))
      ->capture_default_str();
  app.add_option("--policy", policy,
                 "device | orin | discrete: the tuning policies launchers pick (orin: sm_87's, "
                 "without programmatic dependent launch)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::vector<std::pair<int, int>> parsed;
  std::string bad;
  if (!tools::parse_size_list(sizes_arg, &parsed, &bad)) {
    std::fprintf(stderr, "jetpipe-bench: bad size '%s' (want WxH)\n", bad.c_str());
    return 2;
  }
  tools::PolicyTarget target = tools::PolicyTarget::kDevice;
  if (!tools::parse_policy_target(policy, &target)) {
    std::fprintf(stderr, "jetpipe-bench: --policy '%s': want device, orin or discrete\n",
                 policy.c_str());
    return 2;
  }
  std::vector<jetpipe::bench::Size> sizes;
  for (const auto& [w, h] : parsed) sizes.push_back({w, h});
  try {
    // The green context first: current before the runtime API makes anything (Bench's stream).
    std::unique_ptr<jetpipe::bench::GreenContext> green;
    if (sms > 0) {
      std::string why;
      bool bad_request = false;
      green = jetpipe::bench::GreenContext::create(sms, &why, &bad_request);
      if (!green) {
        std::fprintf(stderr, "%s\n",
                     bad_request ? ("jetpipe-bench: " + why).c_str()
                                 : tools::sms_unsupported_message(sms, why).c_str());
        return bad_request ? 2 : tools::kSmsUnsupportedExit;
      }
    }
    jetpipe::bench::Bench b(reps, filter, sizes);
    const cudaDeviceProp& props = b.props();
    int cc_major = 0, cc_minor = 0;
    tools::policy_cc(target, props.major, props.minor, &cc_major, &cc_minor);
    if (green || target != tools::PolicyTarget::kDevice) {
      const int launch_sms = green ? green->sms() : props.multiProcessorCount;
      JP_CUDA(jetpipe::dev::set_launch_target(launch_sms, cc_major, cc_minor));
      std::string note = "policies: sm_" + std::to_string(cc_major * 10 + cc_minor) +
                         (cc_major < 9 ? " (Orin's), no programmatic dependent launch" : "");
      if (green) {
        note = tools::sms_banner(sms, green->sms(), jetpipe::bench::count_sms_used(b.stream()),
                                 green->device_sms(), b.copy_gbps()) +
               "; " + note;
      }
      std::printf("%s\n", note.c_str());
      b.set_launch_sms(launch_sms, note);
    }
    if (area == "all" || area == "reductions") jetpipe::bench::bench_reductions(b);
    if (area == "all" || area == "filters") jetpipe::bench::bench_filters(b);
    if (area == "all" || area == "detect") jetpipe::bench::bench_detect(b);
    if (area == "all" || area == "pipeline") jetpipe::bench::bench_pipeline(b);
    if (!b.any_rows() && !filter.empty()) {
      std::fprintf(stderr, "jetpipe-bench: %s\n",
                   jetpipe::tools::no_rows_message(filter, area, b.groups()).c_str());
      return 2;
    }
    b.print_table();
    if (!json.empty()) b.write_json(json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jetpipe-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
