// SPDX-License-Identifier: MIT
#include "pipeline/platform.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "pipeline/cuda_arch.h"
#include "stages/params.h"

#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace fs = std::filesystem;

namespace jetpipe {

DeviceReport query_devices() {
  DeviceReport r;
#if JETPIPE_HAVE_CUDA
  r.cuda_built = true;
  cudaRuntimeGetVersion(&r.runtime_version);
  cudaDriverGetVersion(&r.driver_version);
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    r.runtime_error = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    return r;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.multiprocessors = p.multiProcessorCount;
    d.global_memory = p.totalGlobalMem;
    d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    int v = 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrIntegrated, i);
    d.integrated = v != 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, i);
    d.concurrent_managed_access = v != 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccessUsesHostPageTables, i);
    d.pageable_memory_access_uses_host_page_tables = v != 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrCanMapHostMemory, i);
    d.can_map_host_memory = v != 0;
    r.devices.push_back(d);
  }
#endif
  return r;
}

namespace {
// In the enums' order (platform.h).
const char* const kBackends[] = {"cpu", "cuda"};
const char* const kMemories[] = {"host", "copy", "pinned-chunked", "zero-copy", "managed"};
const char* const kCopyWaits[] = {"event", "poll"};
const char* const kResults[] = {"auto", "mapped", "copy"};
const char* const kTimings[] = {"stages", "strips", "frame"};
}  // namespace

const char* name(Backend v) { return kBackends[static_cast<int>(v)]; }
const char* name(MemoryStrategy v) { return kMemories[static_cast<int>(v)]; }
const char* name(CopyWait v) { return kCopyWaits[static_cast<int>(v)]; }
const char* name(ResultsPlacement v) { return kResults[static_cast<int>(v)]; }
const char* name(TimingLevel v) { return kTimings[static_cast<int>(v)]; }

namespace {

template <std::size_t N>
std::string valid_list(const char* const (&valid)[N]) {
  std::string list;
  for (const char* v : valid) list += (list.empty() ? "" : " | ") + std::string(v);
  return list;
}

// The index of `text` among `valid`, or -1.
template <std::size_t N>
int index_of(const std::string& text, const char* const (&valid)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (text == valid[i]) return static_cast<int>(i);
  }
  return -1;
}

// The enum of a profile key, read from its YAML node.
template <class E, std::size_t N>
E one_of(const std::string& file, const YAML::Node& n, const char* key,
         const char* const (&valid)[N]) {
  const int i = n.IsScalar() ? index_of(n.Scalar(), valid) : -1;
  if (i >= 0) return static_cast<E>(i);
  throw config_error(yaml_where(file, n) + ": " + key + ": must be one of " + valid_list(valid) +
                     " (got '" + (n.IsScalar() ? n.Scalar() : std::string("?")) + "')");
}

template <class E, std::size_t N>
E parse_enum(const std::string& text, const char* key, const char* const (&valid)[N]) {
  const int i = index_of(text, valid);
  if (i >= 0) return static_cast<E>(i);
  throw config_error(std::string(key) + " '" + text + "': must be one of " + valid_list(valid));
}

int int_in(const std::string& file, const YAML::Node& n, const char* key, int lo, int hi) {
  try {
    const int v = n.as<int>();
    if (v >= lo && v <= hi) return v;
  } catch (const YAML::Exception&) {
  }
  throw config_error(yaml_where(file, n) + ": " + key + ": must be an integer in " +
                     std::to_string(lo) + ".." + std::to_string(hi));
}

double number_in(const std::string& file, const YAML::Node& n, const char* key, double lo,
                 double hi) {
  try {
    const double v = n.as<double>();
    if (v >= lo && v <= hi) return v;
  } catch (const YAML::Exception&) {
  }
  char range[64];
  std::snprintf(range, sizeof range, "%g..%g", lo, hi);
  throw config_error(yaml_where(file, n) + ": " + key + ": must be a number in " + range);
}

// The profile `auto` picks for a device, from its attributes (never its name).
std::string auto_profile_name(const DeviceInfo& d, std::string* why) {
  const std::string cc = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  if (!d.integrated) {
    *why = "device 0 is a discrete GPU (cudaDevAttrIntegrated = 0, compute capability " + cc +
           (d.pageable_memory_access_uses_host_page_tables
                ? ", and it reads pageable host memory through the host's page tables"
                : "") +
           ")";
    return "discrete";
  }
  const double gib = static_cast<double>(d.global_memory) / (1024.0 * 1024.0 * 1024.0);
  std::string base = "device 0 is an integrated GPU (cudaDevAttrIntegrated = 1) with compute "
                     "capability " + cc + ", " + std::to_string(d.multiprocessors) + " SMs, " +
                     std::to_string(static_cast<int>(gib + 0.5)) + " GiB shared memory" +
                     (d.concurrent_managed_access ? ", concurrent managed access"
                                                  : ", no concurrent managed access") +
                     (d.can_map_host_memory ? ", maps host memory" : "");
  const int cc10 = d.cc_major * 10 + d.cc_minor;
  if (cc10 >= 100) {
    *why = base + ": a Thor-class (compute capability ≥ 10) Jetson";
    return "jetson-thor";
  }
  if (d.multiprocessors >= 12) {
    *why = base + ": ≥ 12 SMs is an AGX Orin";
    return "jetson-agx-orin";
  }
  if (gib > 9) {
    *why = base + ": 8 SMs with more than 8 GB is an Orin NX 16 GB";
    return "jetson-orin-nx";
  }
  *why = base + ": up to 8 SMs and 8 GB is an Orin Nano (the Orin NX 8 GB has the same GPU)";
  return "jetson-orin-nano";
}

}  // namespace

MemoryStrategy parse_memory_strategy(const std::string& text) {
  return parse_enum<MemoryStrategy>(text, "memory", kMemories);
}
ResultsPlacement parse_results_placement(const std::string& text) {
  return parse_enum<ResultsPlacement>(text, "results", kResults);
}
TimingLevel parse_timing_level(const std::string& text) {
  return parse_enum<TimingLevel>(text, "timing", kTimings);
}

PlatformProfile strategy_profile(MemoryStrategy memory, int chunks, int frames_in_flight,
                                 bool cuda_graphs) {
  PlatformProfile p;
  p.name = name(memory);
  p.backend = memory == MemoryStrategy::kHost ? Backend::kCpu : Backend::kCuda;
  p.memory = memory;
  p.chunks = chunks;
  p.streams = chunks;
  p.frames_in_flight = frames_in_flight;
  p.cuda_graphs = cuda_graphs;
  return p;
}

namespace {
PlatformProfile parse_platform(const YAML::Node& root, const std::string& path);
}  // namespace

PlatformProfile load_platform(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(path + ": cannot open the platform profile");
  std::ostringstream text;
  text << in.rdbuf();
  return load_platform_text(text.str(), path);
}

PlatformProfile load_platform_text(const std::string& text, const std::string& where) {
  return parse_platform(load_yaml(text, where), where);
}

PlatformProfile load_platform(const ProfileLocation& at) {
  if (!at.path.empty()) return load_platform(at.path);
  return load_platform_text(at.text, "built-in:platforms/" + at.name + ".yaml");
}

namespace {
PlatformProfile parse_platform(const YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) throw config_error(path + ": a platform profile must be a map");
  PlatformProfile p;
  p.file = path;
  p.name = fs::path(path).stem().string();
  for (const auto& kv : root) {
    const std::string k = yaml_key(path, kv.first);
    const YAML::Node v = kv.second;
    if (k == "backend") {
      p.backend = one_of<Backend>(path, v, "backend", kBackends);
    } else if (k == "memory") {
      p.memory = one_of<MemoryStrategy>(path, v, "memory", kMemories);
    } else if (k == "chunks") {
      p.chunks = int_in(path, v, "chunks", 1, 1024);
    } else if (k == "threads") {
      p.threads = int_in(path, v, "threads", 0, 1024);
    } else if (k == "min_strip_mb") {
      p.min_strip_mb = int_in(path, v, "min_strip_mb", 0, 4096);
    } else if (k == "strip_ratio") {
      p.strip_ratio = number_in(path, v, "strip_ratio", 0.05, 1.0);
    } else if (k == "strip_copies") {
      p.strip_copies = int_in(path, v, "strip_copies", 0, 1024);
    } else if (k == "copy_wait") {
      p.copy_wait = one_of<CopyWait>(path, v, "copy_wait", kCopyWaits);
    } else if (k == "streams") {
      p.streams = int_in(path, v, "streams", 1, 64);
    } else if (k == "frames_in_flight") {
      p.frames_in_flight = int_in(path, v, "frames_in_flight", 1, 16);
    } else if (k == "cuda_graphs") {
      if (!v.IsScalar() || (v.Scalar() != "true" && v.Scalar() != "false")) {
        throw config_error(yaml_where(path, v) + ": cuda_graphs: must be true or false");
      }
      p.cuda_graphs = v.Scalar() == "true";
    } else if (k == "timing") {
      p.timing = one_of<TimingLevel>(path, v, "timing", kTimings);
    } else if (k == "timing_every") {
      p.timing_every = int_in(path, v, "timing_every", 1, 1000000);
    } else if (k == "results") {
      p.results = one_of<ResultsPlacement>(path, v, "results", kResults);
    } else if (k == "name" || k == "description") {
      if (!v.IsScalar()) throw config_error(yaml_where(path, v) + ": " + k + ": must be a string");
      if (k == "name") p.name = v.Scalar();
    } else {
      throw config_error(yaml_where(path, kv.first) + ": unknown key " + shown_key(k) +
                         " (valid: name, description, backend, memory, chunks, threads, "
                         "min_strip_mb, strip_ratio, strip_copies, copy_wait, streams, "
                         "frames_in_flight, cuda_graphs, results, timing, timing_every)");
    }
  }
  if (p.backend == Backend::kCpu && p.memory != MemoryStrategy::kHost) {
    throw config_error(path + ": memory '" + name(p.memory) +
                       "' needs backend: cuda (cpu runs memory: host)");
  }
  if (p.copy_wait == CopyWait::kPoll && p.frames_in_flight > 1) {
    throw config_error(path + ": copy_wait: poll needs frames_in_flight: 1 (a polling kernel holds "
                       "its queue while it waits, and the other frames' work waits behind it)");
  }
  if (p.backend == Backend::kCuda && p.memory == MemoryStrategy::kHost) {
    throw config_error(path + ": backend cuda needs a memory strategy other than host");
  }
  return p;
}
}  // namespace

namespace {
// Throws "<what>device 0 (<name>) <why>" where this binary holds no code that runs on the device
// (an AGX Xavier, sm_72, with the default architectures).
void require_device_code(const DeviceInfo& d, const std::string& what) {
  const ArchSupport arch = check_cuda_arch(d.cc_major, d.cc_minor, built_cuda_architectures());
  if (!arch.runs) throw config_error(what + "device 0 (" + d.name + ") " + arch.why);
}
}  // namespace

std::string auto_platform_name(const DeviceReport& r, std::string* why) {
  if (!r.cuda_built) {
    *why = "auto: this build has no CUDA backend";
    return "cpu";
  }
  if (r.devices.empty()) {
    *why = "auto: no CUDA device" + (r.runtime_error.empty() ? "" : " (" + r.runtime_error + ")");
    return "cpu";
  }
  std::string dev_why;
  const std::string name = auto_profile_name(r.devices[0], &dev_why);
  *why = "auto: " + dev_why + " → " + name;
  return name;
}

PlatformProfile resolve_platform(const std::string& spec, std::string* reason) {
  if (spec.empty() || spec == "auto") {
    const DeviceReport r = query_devices();
    if (r.cuda_built && !r.devices.empty()) require_device_code(r.devices[0], "auto: ");
    return resolve_platform(spec, reason, r, platform_search_dirs());
  }
  return resolve_platform(spec, reason, DeviceReport{}, platform_search_dirs());
}

PlatformProfile resolve_platform(const std::string& spec, std::string* reason,
                                 const DeviceReport& devices, const std::vector<ProfileDir>& dirs) {
  std::string why;
  std::string name = spec;
  if (spec.empty() || spec == "auto") {
    name = auto_platform_name(devices, &why);
  } else if (fs::exists(spec) && !fs::is_directory(spec)) {
    if (reason) *reason = "given as a file: " + spec;
    return load_platform(spec);
  } else {
    why = "given by name";
  }
  const ProfileLocation at = locate_profile(name, dirs);
  if (!at.found()) {
    if (spec.empty() || spec == "auto") {
      // Never the CPU in its place: on a machine with a GPU that would hide a broken install.
      throw config_error(why + ", but no profile '" + name + "' was found (" +
                         describe_search(dirs) + "); give one with --platform FILE");
    }
    std::string valid;
    for (const ProfileLocation& l : list_profiles(dirs)) valid += " " + l.name;
    throw config_error("platform '" + spec + "': no such profile (valid: auto" + valid +
                       ", or a path to a .yaml file; " + describe_search(dirs) + ")");
  }
  if (reason) {
    *reason = why + " (" + (at.path.empty() ? "the copy built into the binary" : at.path) + ", " +
              (at.path.empty() ? "no file found" : at.origin) + ")";
  }
  return load_platform(at);
}

void check_runnable(const PlatformProfile& p) {
  if (p.backend == Backend::kCpu) return;
  const std::string what = (p.file.empty() ? p.name : p.file) + ": backend " + name(p.backend) +
                           " with memory " + name(p.memory);
#if !JETPIPE_HAVE_CUDA
  throw config_error(what + " cannot run: this build has no CUDA (configure with nvcc on the "
                            "PATH, or use --platform cpu)");
#else
  const DeviceReport r = query_devices();
  if (r.devices.empty()) {
    throw config_error(what + " cannot run: no CUDA device (" +
                       (r.runtime_error.empty() ? std::string("none found") : r.runtime_error) +
                       "); use --platform cpu");
  }
  require_device_code(r.devices[0], what + " cannot run: ");
  if (p.memory == MemoryStrategy::kZeroCopy && !r.devices[0].can_map_host_memory) {
    throw config_error(what + " cannot run: device 0 cannot map host memory "
                              "(cudaDevAttrCanMapHostMemory = 0); use memory: pinned-chunked");
  }
#endif
}

}  // namespace jetpipe
