// SPDX-License-Identifier: MIT
#include "pipeline/info.h"

#include <cstdio>
#include <string>

#include "stages/registry.h"
#include "tools/cli/commands.h"

namespace jetpipe::cli {

int cmd_info() {
  const BuildInfo b = gather_build_info();
  std::printf("jetpipe %s\n", b.version.c_str());
  std::printf("build: CUDA %s, OpenCV %s, GStreamer %s\n", b.cuda ? "yes" : "no",
              b.opencv ? "yes" : "no", b.gstreamer ? "yes" : "no");
  std::printf("frame files: PGM/PPM%s\n", b.opencv_codecs ? ", PNG, JPEG, BMP, TIFF (OpenCV)" : "");
  // Frames left in device memory by the GStreamer sources (pipeline/io/device_memory.h).
  for (const std::string& line : b.device_memory) std::printf("%s\n", line.c_str());
  const DeviceReport& r = b.devices;
  if (r.cuda_built) {
    std::printf("CUDA runtime %d, driver %d\n", r.runtime_version, r.driver_version);
    std::printf("CUDA architectures in this binary: %s\n", b.cuda_architectures.c_str());
    if (!r.runtime_error.empty()) std::printf("devices: none (%s)\n", r.runtime_error.c_str());
    for (std::size_t i = 0; i < r.devices.size(); ++i) {
      const DeviceInfo& d = r.devices[i];
      std::printf(
          "device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, L2 %.0f MiB, %s, "
          "concurrent managed access %s, host page tables %s, map host memory %s\n",
          d.index, d.name.c_str(), d.cc_major, d.cc_minor, d.multiprocessors,
          static_cast<double>(d.global_memory) / (1 << 30),
          static_cast<double>(d.l2_bytes) / (1 << 20), d.integrated ? "integrated" : "discrete",
          d.concurrent_managed_access ? "yes" : "no",
          d.pageable_memory_access_uses_host_page_tables ? "yes" : "no",
          d.can_map_host_memory ? "yes" : "no");
      const ArchSupport& a = b.device_support[i];
      std::printf("  %s: %s\n", a.runs ? (a.jit ? "runs (PTX JIT)" : "runs") : "NO CODE FOR IT",
                  a.why.c_str());
    }
  }
  // Where profiles come from, in search order, then where each name resolves to.
  std::printf("platform profiles, searched in order (after --platform FILE):\n");
  for (const auto& d : b.profile_dirs) {
    std::printf("  %s (%s%s)\n", d.dir.dir.c_str(), d.dir.origin.c_str(),
                d.exists ? "" : ", absent");
  }
  std::printf("  the copies built into the binary\n");
  for (const ProfileLocation& l : b.profiles) {
    std::printf("  %-18s %s\n", l.name.c_str(),
                l.path.empty() ? "built into the binary" : l.path.c_str());
  }
  int rc = 0;
  if (b.auto_ok) {
    const PlatformProfile& p = b.auto_profile;
    std::printf("platform auto: %s (backend %s, memory %s, chunks %d) from %s\n  because %s\n",
                p.name.c_str(), name(p.backend), name(p.memory), p.chunks, p.file.c_str(),
                b.auto_reason.c_str());
  } else {
    std::printf("platform auto: error: %s\n", b.auto_error.c_str());
    rc = 2;  // a machine whose profile is missing everywhere cannot run `auto`
  }
  std::printf("stage types: %s\n", stage_type_names().c_str());
  return rc;
}

int cmd_stages() {
  for (const auto& t : stage_types()) {
    std::printf("%s: %s\n", t.type.c_str(), t.doc.c_str());
    std::printf("    keys: ");
    for (const auto& k : common_keys(t)) std::printf("%s ", k.c_str());
    std::printf("\n");
    for (const auto& p : t.params) {
      std::printf("    %-15s %s%s%s; %s\n", p.key.c_str(), describe_spec(p).c_str(),
                  p.default_value.empty() ? "" : ", default ", p.default_value.c_str(),
                  p.doc.c_str());
    }
  }
  return 0;
}

}  // namespace jetpipe::cli
