// SPDX-License-Identifier: MIT
// JP_HD marks functions shared by host code and CUDA device code. Empty outside nvcc.
#pragma once

#if defined(__CUDACC__)
#define JP_HD __host__ __device__ __forceinline__
#else
#define JP_HD inline
#endif
