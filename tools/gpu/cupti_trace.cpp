// SPDX-License-Identifier: MIT
// A CUPTI activity tracer injected into any CUDA program (no change to it, no extra events or graph
// nodes): every kernel (graph nodes included) and memcpy with the GPU's start and end timestamps,
// and with TRACE_API=1 the runtime API calls on the same clock. Written as CSV at exit:
//   kind (K kernel, M memcpy, R runtime call), start ns, end ns, stream, correlation, bytes, name
// Build and use (GPU machine; tools/gpu/kernel-trace.sh does both):
//   g++ -O2 -shared -fPIC -std=c++17 -I/usr/local/cuda/include tools/gpu/cupti_trace.cpp
//       -o /tmp/libcupti_trace.so -L/usr/local/cuda/lib64 -lcupti   (one line)
//   CUDA_INJECTION64_PATH=/tmp/libcupti_trace.so TRACE_CSV=trace.csv build-dev/tools/jetpipe run ...
#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Record {
  char kind;
  std::uint64_t start, end;
  std::uint32_t stream, correlation;
  std::uint64_t bytes;
  std::string name;
};
std::vector<Record> g_records;
std::mutex g_mutex;
constexpr std::size_t kBufferBytes = 8u << 20;

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *size = kBufferBytes;
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *max_records = 0;
}

const char* copy_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "h2d";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "d2h";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "d2d";
    default: return "memcpy";
  }
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  std::lock_guard<std::mutex> lock(g_mutex);
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
      g_records.push_back({'K', k->start, k->end, k->streamId, k->correlationId, 0,
                           k->name != nullptr ? k->name : "?"});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
      g_records.push_back({'M', m->start, m->end, m->streamId, m->correlationId, m->bytes,
                           copy_kind(m->copyKind)});
    } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
      const char* name = nullptr;
      cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name);
      g_records.push_back({'R', a->start, a->end, 0, a->correlationId, 0, name ? name : "?"});
    }
  }
  std::free(buffer);
}

void write_at_exit() {
  cuptiActivityFlushAll(1);
  const char* path = std::getenv("TRACE_CSV");
  std::FILE* f = std::fopen(path != nullptr ? path : "cupti_trace.csv", "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cupti_trace: cannot write %s\n", path != nullptr ? path : "cupti_trace.csv");
    return;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const Record& r : g_records) {
    std::fprintf(f, "%c,%llu,%llu,%u,%u,%llu,%s\n", r.kind, static_cast<unsigned long long>(r.start),
                 static_cast<unsigned long long>(r.end), r.stream, r.correlation,
                 static_cast<unsigned long long>(r.bytes), r.name.c_str());
  }
  std::fclose(f);
}

bool check(CUptiResult e, const char* what) {
  if (e == CUPTI_SUCCESS) return true;
  const char* s = nullptr;
  cuptiGetResultString(e, &s);
  std::fprintf(stderr, "cupti_trace: %s: %s\n", what, s != nullptr ? s : "?");
  return false;
}

}  // namespace

// Called by the CUDA driver when CUDA_INJECTION64_PATH names this library.
extern "C" int InitializeInjection(void) {
  if (!check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "callbacks") ||
      !check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernels") ||
      !check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "memcpy")) {
    return 0;
  }
  if (std::getenv("TRACE_API") != nullptr) {
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "runtime API");
  }
  std::atexit(write_at_exit);
  return 1;
}
