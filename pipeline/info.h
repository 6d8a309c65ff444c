// SPDX-License-Identifier: MIT
// What `jetpipe info` and `jetpipe stages` report, gathered in one place so that the CLI prints it
// and the Python module (jetpipe.info(), jetpipe.stages()) returns it as data.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/cuda_arch.h"
#include "pipeline/platform.h"

namespace jetpipe {

struct BuildInfo {
  std::string version;  // JETPIPE_VERSION
  bool cuda = false, opencv = false, gstreamer = false;
  bool opencv_codecs = false;      // PNG, JPEG, BMP, TIFF frame files
  std::string cuda_architectures;  // built_cuda_architectures()
  // Whether NVMM surfaces and GStreamer CUDA memory are read in place, and why not (one line each,
  // device_memory_report()).
  std::vector<std::string> device_memory;
  DeviceReport devices;
  std::vector<ArchSupport> device_support;  // one per devices.devices: whether this binary runs
  struct Dir {
    ProfileDir dir;
    bool exists = false;
  };
  std::vector<Dir> profile_dirs;          // search order (after --platform FILE)
  std::vector<ProfileLocation> profiles;  // every profile name, where it resolves to
  bool auto_ok = false;                   // `auto` resolved (else auto_error says why)
  PlatformProfile auto_profile;
  std::string auto_reason, auto_error;
  std::vector<std::string> stage_types;
};

// Gathers the above: queries the CUDA devices and the profile folders, resolves `auto`.
BuildInfo gather_build_info();

// The same as JSON: {"version", "build": {cuda, opencv, gstreamer, frame_files, ...},
// "cuda": {...} (CUDA builds), "platform_dirs", "profiles", "auto", "stage_types"}.
nlohmann::ordered_json build_info_to_json(const BuildInfo& info);

// Every stage type with its doc, common keys and parameters (key, type, default, range, choices,
// doc, required), as `jetpipe stages` lists them.
nlohmann::ordered_json stage_types_json();

}  // namespace jetpipe
