// SPDX-License-Identifier: MIT
// Platform profiles (platforms/*.yaml): how a pipeline runs on the hardware at hand.
//   backend: cpu | cuda
//   memory: host | copy | pinned-chunked | zero-copy | managed
//   chunks: row strips per frame; min_strip_mb; strip_ratio; strip_copies; copy_wait; streams;
//   frames_in_flight; cuda_graphs; threads (cpu)
//   results: auto | mapped | copy (where small results land); timing: stages | strips | frame;
//   timing_every
// `auto` decides from device attributes (never the device name): no CUDA device → cpu; an
// integrated GPU → the Jetson profile for its compute capability; otherwise discrete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jetpipe {

// The profile's string keys as enums, parsed once when the profile loads; name() gives the YAML
// spelling back (summaries, `info`, profiles written by `tune`).
enum class Backend : std::uint8_t { kCpu, kCuda };
enum class MemoryStrategy : std::uint8_t { kHost, kCopy, kPinnedChunked, kZeroCopy, kManaged };
enum class CopyWait : std::uint8_t { kEvent, kPoll };
enum class ResultsPlacement : std::uint8_t { kAuto, kMapped, kCopy };
enum class TimingLevel : std::uint8_t { kStages, kStrips, kFrame };

const char* name(Backend v);
const char* name(MemoryStrategy v);
const char* name(CopyWait v);
const char* name(ResultsPlacement v);
const char* name(TimingLevel v);
// The enum spelled `text` in YAML; throws a config error listing the valid spellings.
MemoryStrategy parse_memory_strategy(const std::string& text);
ResultsPlacement parse_results_placement(const std::string& text);
TimingLevel parse_timing_level(const std::string& text);

struct PlatformProfile {
  std::string name = "cpu";
  std::string file;  // where it was read from ("" for built-in defaults)
  Backend backend = Backend::kCpu;
  MemoryStrategy memory = MemoryStrategy::kHost;
  int chunks = 1;
  // cpu: threads that run a frame's strips at once (0: one per CPU the process may use,
  // hardware_threads()); a frame then has max(chunks, threads) strips. Results never depend on it.
  int threads = 0;
  // pinned-chunked: strips of at least this many MiB of frame (fewer strips for small frames: each
  // strip's copy costs the copy engine a start-up); 0 = always `chunks` strips.
  int min_strip_mb = 0;
  // Each strip holds this fraction of the rows of the one before it: 1 = equal strips; below 1 the
  // later strips are shorter, so the frame's last strip, whose stages run only after the whole
  // frame has crossed the bus, leaves a short tail (single-frame latency).
  double strip_ratio = 1.0;
  // pinned-chunked: the frame crosses the bus in at most this many copies; the last strips each
  // in a copy of their own, the strips before them together in the first (0 = a copy per strip).
  // Each copy costs the copy engine a start-up (~3 µs on an H100), and only the last strip's
  // stages wait for the end of the frame's copy: the earlier strips need not land one by one.
  int strip_copies = 0;
  // pinned-chunked with graphs, one frame in flight: how the stages reading the frame's last copy
  // learn it landed: an event, or a one-thread kernel polling a value the copy stream writes after
  // it (kernels/stream_flag.h: seen ~2.75 µs after the copy on an H100, the event's wait 6-9 µs).
  // Single-frame latency only: with frames in flight the poller holds up the others' work.
  CopyWait copy_wait = CopyWait::kEvent;
  int streams = 1;
  int frames_in_flight = 1;
  bool cuda_graphs = false;
  // Small results (histogram, stats, detections): written by the kernels into mapped host memory,
  // or into device memory and copied back; auto: the strategy's measured best.
  ResultsPlacement results = ResultsPlacement::kAuto;
  // GPU timing from events: stages (per stage on the frame's last strip, and the copies: per-stage
  // times and the overlap figure from a handful of events), strips (every stage on every strip:
  // the full --timeline, one event per stage and strip) or frame (first to last event only).
  TimingLevel timing = TimingLevel::kStages;
  // stages / strips: time every Nth frame that way (the others get their GPU span only): each
  // timing event is a graph node the GPU waits on; 1 = every frame (--timeline forces it).
  int timing_every = 1;
};

// The CUDA devices this process sees (empty without CUDA or without a device).
struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  bool integrated = false;
  bool concurrent_managed_access = false;
  bool pageable_memory_access_uses_host_page_tables = false;
  bool can_map_host_memory = false;
  int multiprocessors = 0;
  std::size_t global_memory = 0;
  std::size_t l2_bytes = 0;
};
struct DeviceReport {
  bool cuda_built = false;
  std::string runtime_error;  // why no device could be listed, if so
  int driver_version = 0, runtime_version = 0;
  std::vector<DeviceInfo> devices;
};
DeviceReport query_devices();

// Where profiles named by `--platform NAME` or picked by `auto` are looked for, in order
// (DESIGN.md, Deployment): $JETPIPE_PLATFORMS, then <dir of the running binary>/../share/jetpipe/
// platforms, then the copies built into the binary (every platforms/*.yaml of the source tree).
// A file given by path (`--platform FILE`) is read as it is, before any search.
struct ProfileDir {
  std::string dir;
  std::string origin;  // "$JETPIPE_PLATFORMS", "installed (next to the binary)", ...
};
// The folders of the search above for this process (absent ones included: `info` lists them).
std::vector<ProfileDir> platform_search_dirs();

// Where one profile was found: a file in one of the folders, or the built-in copy.
struct ProfileLocation {
  std::string name;
  std::string path;    // the file; "" for the built-in copy
  std::string origin;  // the folder's origin, or "built into the binary"
  std::string text;    // the built-in copy's YAML (when path is "")
  bool found() const { return !path.empty() || !text.empty(); }
};
// `name` in `dirs` (in order), then among the built-in copies; found() is false if nowhere.
ProfileLocation locate_profile(const std::string& name, const std::vector<ProfileDir>& dirs);
// Every profile name in `dirs` and the built-in copies, each where locate_profile finds it.
std::vector<ProfileLocation> list_profiles(const std::vector<ProfileDir>& dirs);
// "searched: A (origin), B (origin), the copies built into the binary" for error messages.
std::string describe_search(const std::vector<ProfileDir>& dirs);

// Reads and validates a profile; errors name the file, line, key and the valid values.
PlatformProfile load_platform(const std::string& path);
// The same from YAML text; `where` names it in messages and its stem is the default name.
PlatformProfile load_platform_text(const std::string& text, const std::string& where);
// A located profile: the file, or the built-in copy ("built-in:platforms/NAME.yaml" in messages).
PlatformProfile load_platform(const ProfileLocation& at);

// The profile name `auto` picks for these devices (pure: tests pass made-up devices); *why says
// why. No CUDA build or no device → "cpu"; else from device 0's attributes.
std::string auto_platform_name(const DeviceReport& devices, std::string* why);

// A profile for one executor setting (tests, `bench pipeline`, `tune`): the backend follows the
// memory strategy (host → cpu, else cuda), `chunks` strips on as many streams; other keys default.
PlatformProfile strategy_profile(MemoryStrategy memory, int chunks, int frames_in_flight,
                                 bool cuda_graphs);

// auto | NAME (searched as above) | FILE. *reason says why this profile and where it came from
// (for `info`, summaries). A profile found nowhere is a config error naming the places searched:
// `auto` never falls back to the CPU on a machine with a CUDA device.
PlatformProfile resolve_platform(const std::string& spec, std::string* reason);
// The same with the devices and folders given (tests: no GPU and temp folders needed).
PlatformProfile resolve_platform(const std::string& spec, std::string* reason,
                                 const DeviceReport& devices, const std::vector<ProfileDir>& dirs);

// Throws a config error saying why the profile cannot run in this build / on this machine.
void check_runnable(const PlatformProfile& p);

}  // namespace jetpipe
