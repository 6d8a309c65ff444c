// SPDX-License-Identifier: MIT
// Whether this binary holds code a CUDA device can run, from the device's compute capability and
// the architectures it was compiled for (CMAKE_CUDA_ARCHITECTURES, as CMake spells them:
// "87;90;110", "87-real", "90-virtual", "90a", "110f"). Host-only, no CUDA: tested without a GPU.
#pragma once

#include <string>
#include <vector>

namespace jetpipe {

// One entry of CMAKE_CUDA_ARCHITECTURES: "87" is SASS sm_87 and PTX compute_87, "87-real" the
// SASS only, "87-virtual" the PTX only; suffix a: that exact compute capability only; suffix f:
// the family (same major, minor at least this one).
struct CudaArch {
  int cc = 0;       // 10 × major + minor: 87, 90, 110
  char suffix = 0;  // 0, 'a' or 'f'
  bool sass = true, ptx = true;
  std::string text;  // as written
};

// Parses "87;90;110" (also separated by ',' or ' '). Throws a config error on an entry it cannot
// read. "native", "all" and "all-major" parse to an empty list with *symbolic set to the word.
std::vector<CudaArch> parse_cuda_architectures(const std::string& list,
                                               std::string* symbolic = nullptr);

struct ArchSupport {
  bool runs = false;
  bool jit = false;  // runs only by JIT-compiling PTX (slower first launch of each kernel)
  std::string why;   // one sentence naming the device's compute capability and the code compiled in
};

// Whether code compiled for `list` runs on a device of compute capability major.minor. SASS for
// sm_XY runs on X.Z for Z ≥ Y (a: Z = Y only; f: the same family); PTX compute_XY JIT-compiles on
// any X'.Z' ≥ X.Y (a, f: as their SASS).
ArchSupport check_cuda_arch(int major, int minor, const std::string& list);

// This build's CMAKE_CUDA_ARCHITECTURES ("" without CUDA).
std::string built_cuda_architectures();

}  // namespace jetpipe
