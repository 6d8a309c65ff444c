// SPDX-License-Identifier: MIT
// Checks for CUDA runtime calls (CUDA builds only). Launchers return cudaError_t; stage and pipeline
// boundaries wrap calls in JP_CUDA, which throws jetpipe::Error naming the call, file and line.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "core/error.h"

namespace jetpipe {

inline void check_cuda(cudaError_t err, const char* expr, const char* file, int line) {
  if (err == cudaSuccess) return;
  throw Error(std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
              ") in " + expr + " at " + file + ":" + std::to_string(line));
}

}  // namespace jetpipe

#define JP_CUDA(expr) ::jetpipe::check_cuda((expr), #expr, __FILE__, __LINE__)
