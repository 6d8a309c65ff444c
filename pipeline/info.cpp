// SPDX-License-Identifier: MIT
#include "pipeline/info.h"

#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "pipeline/io/device_memory.h"
#include "pipeline/io/image_io.h"
#include "stages/registry.h"

namespace jetpipe {

BuildInfo gather_build_info() {
  BuildInfo b;
  b.version = JETPIPE_VERSION;
  b.cuda = JETPIPE_HAVE_CUDA;
  b.opencv = JETPIPE_HAVE_OPENCV;
  b.gstreamer = JETPIPE_HAVE_GSTREAMER;
  b.opencv_codecs = have_opencv_codecs();
  b.cuda_architectures = built_cuda_architectures();
  b.device_memory = device_memory_report();
  b.devices = query_devices();
  for (const auto& d : b.devices.devices) {
    b.device_support.push_back(check_cuda_arch(d.cc_major, d.cc_minor, b.cuda_architectures));
  }
  const std::vector<ProfileDir> dirs = platform_search_dirs();
  for (const ProfileDir& d : dirs) {
    std::error_code ec;
    b.profile_dirs.push_back({d, std::filesystem::is_directory(d.dir, ec)});
  }
  b.profiles = list_profiles(dirs);
  try {
    b.auto_profile = resolve_platform("auto", &b.auto_reason);
    b.auto_ok = true;
  } catch (const Error& e) {
    b.auto_error = e.what();
  }
  for (const auto& t : stage_types()) b.stage_types.push_back(t.type);
  return b;
}

nlohmann::ordered_json build_info_to_json(const BuildInfo& b) {
  using J = nlohmann::ordered_json;
  J j;
  j["version"] = b.version;
  J frame_files = J::array({"pgm", "ppm"});
  if (b.opencv_codecs) {
    for (const char* f : {"png", "jpeg", "bmp", "tiff"}) frame_files.push_back(f);
  }
  j["build"] = {{"cuda", b.cuda},
                {"opencv", b.opencv},
                {"gstreamer", b.gstreamer},
                {"frame_files", frame_files},
                {"device_memory", b.device_memory}};
  if (b.devices.cuda_built) {
    J devices = J::array();
    for (std::size_t i = 0; i < b.devices.devices.size(); ++i) {
      const DeviceInfo& d = b.devices.devices[i];
      const ArchSupport& a = b.device_support[i];
      devices.push_back(
          {{"index", d.index},
           {"name", d.name},
           {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
           {"multiprocessors", d.multiprocessors},
           {"global_memory", d.global_memory},
           {"l2_bytes", d.l2_bytes},
           {"integrated", d.integrated},
           {"concurrent_managed_access", d.concurrent_managed_access},
           {"host_page_tables", d.pageable_memory_access_uses_host_page_tables},
           {"map_host_memory", d.can_map_host_memory},
           {"runs", a.runs},
           {"jit", a.jit},
           {"why", a.why}});
    }
    j["cuda"] = {{"runtime_version", b.devices.runtime_version},
                 {"driver_version", b.devices.driver_version},
                 {"architectures", b.cuda_architectures},
                 {"devices_error", b.devices.runtime_error},
                 {"devices", devices}};
  }
  J dirs = J::array();
  for (const auto& d : b.profile_dirs) {
    dirs.push_back({{"dir", d.dir.dir}, {"origin", d.dir.origin}, {"exists", d.exists}});
  }
  j["platform_dirs"] = dirs;
  J profiles = J::object();
  for (const ProfileLocation& l : b.profiles) {
    profiles[l.name] = l.path.empty() ? J("built into the binary") : J(l.path);
  }
  j["profiles"] = profiles;
  if (b.auto_ok) {
    j["auto"] = {{"name", b.auto_profile.name},           {"backend", name(b.auto_profile.backend)},
                 {"memory", name(b.auto_profile.memory)}, {"chunks", b.auto_profile.chunks},
                 {"file", b.auto_profile.file},           {"because", b.auto_reason}};
  } else {
    j["auto"] = {{"error", b.auto_error}};
  }
  j["stage_types"] = b.stage_types;
  return j;
}

nlohmann::ordered_json stage_types_json() {
  using J = nlohmann::ordered_json;
  J out = J::array();
  for (const auto& t : stage_types()) {
    J params = J::array();
    for (const auto& p : t.params) {
      J q = {{"key", p.key}, {"spec", describe_spec(p)}, {"doc", p.doc}};
      if (!p.default_value.empty()) q["default"] = p.default_value;
      if (p.required) q["required"] = true;
      params.push_back(q);
    }
    out.push_back({{"type", t.type},
                   {"doc", t.doc},
                   {"image_output", t.image_output},
                   {"keys", common_keys(t)},
                   {"params", params}});
  }
  return out;
}

}  // namespace jetpipe
