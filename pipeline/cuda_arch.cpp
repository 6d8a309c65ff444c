// SPDX-License-Identifier: MIT
#include "pipeline/cuda_arch.h"

#include <cctype>

#include "core/error.h"

#ifndef JETPIPE_CUDA_ARCHITECTURES
#define JETPIPE_CUDA_ARCHITECTURES ""
#endif

namespace jetpipe {
namespace {

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// Whether code for `a` (SASS when sass, else PTX) runs on a device of compute capability `dev`.
bool runs_on(const CudaArch& a, int dev, bool sass) {
  if (a.suffix == 'a') return dev == a.cc;
  if (a.suffix == 'f' || sass) return dev / 10 == a.cc / 10 && dev % 10 >= a.cc % 10;
  return dev >= a.cc;  // PTX: JIT for this and any newer compute capability
}

std::string describe(const std::vector<CudaArch>& archs) {
  std::string sass, ptx;
  for (const auto& a : archs) {
    const std::string n = std::to_string(a.cc) + (a.suffix ? std::string(1, a.suffix) : "");
    if (a.sass) sass += (sass.empty() ? "sm_" : ", sm_") + n;
    if (a.ptx) ptx += (ptx.empty() ? "compute_" : ", compute_") + n;
  }
  std::string s = sass.empty() ? "no SASS" : "SASS for " + sass;
  return s + (ptx.empty() ? " and no PTX" : " and PTX " + ptx);
}

}  // namespace

std::vector<CudaArch> parse_cuda_architectures(const std::string& list, std::string* symbolic) {
  std::vector<CudaArch> out;
  std::size_t i = 0;
  while (i < list.size()) {
    const std::size_t j = list.find_first_of(";, ", i);
    const std::string item = list.substr(i, j == std::string::npos ? std::string::npos : j - i);
    i = j == std::string::npos ? list.size() : j + 1;
    if (item.empty()) continue;
    if (item == "native" || item == "all" || item == "all-major") {
      if (symbolic) *symbolic = item;
      return {};
    }
    CudaArch a;
    a.text = item;
    std::size_t k = 0;
    while (k < item.size() && std::isdigit(static_cast<unsigned char>(item[k]))) ++k;
    std::string rest = item.substr(k);
    if (k < 2 || k > 3)
      throw config_error("CUDA architecture '" + item + "': expected e.g. 87, 90a, 110-real");
    a.cc = std::stoi(item.substr(0, k));
    if (!rest.empty() && (rest[0] == 'a' || rest[0] == 'f')) {
      a.suffix = rest[0];
      rest = rest.substr(1);
    }
    if (rest == "-real") {
      a.ptx = false;
    } else if (rest == "-virtual") {
      a.sass = false;
    } else if (!rest.empty()) {
      throw config_error("CUDA architecture '" + item + "': expected e.g. 87, 90a, 110-real");
    }
    out.push_back(a);
  }
  return out;
}

ArchSupport check_cuda_arch(int major, int minor, const std::string& list) {
  const int dev = major * 10 + minor;
  const std::string cc = "compute capability " + cc_text(dev);
  ArchSupport r;
  std::string symbolic;
  const std::vector<CudaArch> archs = parse_cuda_architectures(list, &symbolic);
  if (!symbolic.empty()) {
    r.runs = true;
    r.why = "built for CUDA architectures '" + symbolic + "': assumed to include " + cc;
    return r;
  }
  if (archs.empty()) {
    r.why = "this binary holds no CUDA device code";
    return r;
  }
  for (const auto& a : archs) {
    if (a.sass && runs_on(a, dev, true)) {
      r.runs = true;
      r.why = cc + " runs this binary's SASS for sm_" + a.text.substr(0, a.text.find('-'));
      return r;
    }
  }
  const CudaArch* best = nullptr;  // the driver JIT-compiles the newest PTX the device takes
  for (const auto& a : archs) {
    if (a.ptx && runs_on(a, dev, false) && (best == nullptr || a.cc > best->cc)) best = &a;
  }
  if (best != nullptr) {
    r.runs = r.jit = true;
    r.why = cc + " has no SASS in this binary (" + describe(archs) +
            "): the driver JIT-compiles the PTX for compute_" +
            best->text.substr(0, best->text.find('-')) + " (slower first launch of each kernel)";
    return r;
  }
  r.why = cc + " cannot run this binary: it holds " + describe(archs) +
          ", and SASS runs only on its own major version (equal or higher minor), PTX only on "
          "an equal or higher compute capability. Rebuild with -DCMAKE_CUDA_ARCHITECTURES=" +
          std::to_string(dev) + " (if the CUDA toolkit still supports it) or use --platform cpu";
  return r;
}

std::string built_cuda_architectures() { return JETPIPE_CUDA_ARCHITECTURES; }

}  // namespace jetpipe
