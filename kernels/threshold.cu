// SPDX-License-Identifier: MIT
// GPU threshold (THRESH_BINARY on GRAY8) and Otsu's threshold on the device, twins of
// threshold_ref.cpp.
//
// threshold: each thread writes 16 pixels: one 16-byte load, __vcmpgtu4 per word against the
// integer level floor(t) (exact: pixels are integers), one 16-byte store; per pixel where source
// and destination rows are not co-aligned. The threshold may come from device memory (Otsu's), read
// by every thread: no host round trip.
//
// Otsu: one block of 256 threads, a level each. The twin's recurrences (q1, and the class mean mu1
// with OpenCV's "mu1 *= q1" even on skipped levels) are sequential chains whose roundings drift;
// chains started from a close guess do not merge back (host emulation: 28% never), so they are not
// parallelized. Instead every level's sigma comes from exact integer prefixes with a rigorous
// bound on its distance from the twin's; where the best level's lower bound beats every other
// level's upper bound it is the twin's answer, without any chain (4.3-4.8 µs on an H100). Where it
// does not (near-ties), the chains run step for step as in decision 040 (~25 µs).
// docs/decisions/044-otsu-certified-argmax.md has the bounds and the figures.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kernels/launch/launch_config.cuh"
#include "kernels/block/map_rows.cuh"
#include "kernels/threshold.h"
#include "kernels/tuning.h"

namespace jetpipe {

namespace {

// ---- Otsu -------------------------------------------------------------------------------------------

constexpr unsigned kFull = 0xffffffffu;
constexpr double kU = 0x1p-53;  // unit roundoff of double
// Relative error bounds of the certified path, each 8× above the proven one
// (docs/decisions/044-otsu-certified-argmax.md): A_k = H_k·scale against the twin's q1 (258u),
// our mu1 against the twin's chain (1100u: 3.1u a level over 256 levels, plus A's), mu (258u).
constexpr double kEpsQ1 = 0x1p-42, kEpsMu1 = 0x1p-40, kEpsMu = 0x1p-44;

// The largest upper bound (hi1, at level k1, the lowest of equal ones), the lower bound at k1
// (lo1) and the largest upper bound of every other level (hi2).
struct Top2 {
  double hi1, lo1, hi2;
  int k1;
};

__device__ __forceinline__ Top2 merge_top2(Top2 a, const Top2& b) {
  if (b.hi1 > a.hi1 || (b.hi1 == a.hi1 && b.k1 < a.k1)) {
    Top2 r = b;
    r.hi2 = fmax(b.hi2, a.hi1);
    return r;
  }
  a.hi2 = fmax(a.hi2, b.hi1);
  return a;
}

// The exact path: otsu_threshold's recurrences step for step (decision 040). One thread runs the
// q1 / mu chains and the mu1 chain by Markstein steps on correctly rounded reciprocals; every
// level checks its step against __ddiv_rn in parallel, and a mismatch reruns the chain with
// __ddiv_rn. Sigmas and the arg-max (first of equal maxima) run in parallel. Every thread calls it.
__device__ __noinline__ void otsu_exact(const int i, const unsigned long long h, const double scale,
                                        double* out, double* mu1_trace) {
  __shared__ double s_p[256];     // p_i = hist[i] · scale
  __shared__ double s_term[256];  // i · hist[i], then i · p_i
  __shared__ double s_q1[256];    // q1 after level i
  __shared__ double s_mu1[256];   // mu1 after level i (levels not skipped)
  __shared__ double s_rcp[256];   // 1 / q1 after level i, correctly rounded
  __shared__ double s_in[256];    // mu1 before level i (the chain's)
  __shared__ double s_sigma[256];
  __shared__ int s_best[256];
  __shared__ unsigned s_skip[8];  // bit k % 32 of word k / 32: the loop skips level k
  __shared__ double s_mu;
  const double eps = FLT_EPSILON, one_minus_eps = 1. - FLT_EPSILON;
  s_term[i] = __dmul_rn(static_cast<double>(i), static_cast<double>(h));
  s_p[i] = __dmul_rn(static_cast<double>(h), scale);
  __syncthreads();
  if (i == 0) {  // mu = Σ i·hist[i] · scale, in level order; q1 after each level, in level order
    double mu = 0, q1 = 0, t_next = s_term[0], p_next = s_p[0];
#pragma unroll 1
    for (int k = 0; k < 256; ++k) {
      const double t = t_next, p = p_next;
      t_next = s_term[(k + 1) & 255];
      p_next = s_p[(k + 1) & 255];
      mu = __dadd_rn(mu, t);
      q1 = __dadd_rn(q1, p);
      s_q1[k] = q1;
    }
    s_mu = __dmul_rn(mu, scale);
  }
  __syncthreads();
  {
    s_term[i] = __dmul_rn(static_cast<double>(i), s_p[i]);
    const double q1 = s_q1[i], q2 = __dsub_rn(1., q1);
    s_rcp[i] = __drcp_rn(q1);
    const bool skip = fmin(q1, q2) < eps || fmax(q1, q2) > one_minus_eps;
    const unsigned bits = __ballot_sync(kFull, skip);
    if ((i & 31) == 0) s_skip[i >> 5] = bits;
  }
  __syncthreads();
  if (i == 0) {  // the sequential recurrence: OpenCV's "mu1 *= q1" runs on every level
    double mu1 = 0, q1_prev = 0;
#pragma unroll 8
    for (int k = 0; k < 256; ++k) {
      s_in[k] = mu1;
      const double q1 = s_q1[k], r = s_rcp[k];
      const double m = __dmul_rn(mu1, q1_prev);
      const double n = __dadd_rn(m, s_term[k]);
      const double q0 = __dmul_rn(n, r);
      const double q = __fma_rn(__fma_rn(-q1, q0, n), r, q0);
      mu1 = ((s_skip[k >> 5] >> (k & 31)) & 1u) ? m : q;
      s_mu1[k] = mu1;
      q1_prev = q1;
    }
  }
  __syncthreads();
  {  // each level's step against __ddiv_rn's, from the chain's own input
    bool bad = false;
    if (!((s_skip[i >> 5] >> (i & 31)) & 1u)) {
      const double m = __dmul_rn(s_in[i], i > 0 ? s_q1[i - 1] : 0.0);
      const double exact = __ddiv_rn(__dadd_rn(m, s_term[i]), s_q1[i]);
      bad = __double_as_longlong(exact) != __double_as_longlong(s_mu1[i]);
    }
    if (__syncthreads_or(bad)) {
      if (i == 0) {
        double mu1 = 0, q1_prev = 0;
#pragma unroll 1
        for (int k = 0; k < 256; ++k) {
          mu1 = __dmul_rn(mu1, q1_prev);
          const double q1 = s_q1[k];
          if (!((s_skip[k >> 5] >> (k & 31)) & 1u)) {
            mu1 = __ddiv_rn(__dadd_rn(mu1, s_term[k]), q1);
            s_mu1[k] = mu1;
          }
          q1_prev = q1;
        }
      }
      __syncthreads();
    }
  }

  // Per level: sigma, or −1 where the loop skips the level.
  {
    double sigma = -1;
    const bool skip = (s_skip[i >> 5] >> (i & 31)) & 1u;
    if (!skip) {
      const double q1 = s_q1[i], q2 = __dsub_rn(1., q1), mu1 = s_mu1[i];
      const double mu2 = __ddiv_rn(__dsub_rn(s_mu, __dmul_rn(q1, mu1)), q2);
      const double d = __dsub_rn(mu1, mu2);
      sigma = __dmul_rn(__dmul_rn(__dmul_rn(q1, q2), d), d);
      if (!(sigma == sigma)) sigma = -1;  // NaN never wins "sigma > max_sigma"
    }
    s_sigma[i] = sigma;
    s_best[i] = i;
    if (mu1_trace && !skip) mu1_trace[i] = s_mu1[i];
  }
  __syncthreads();
  // Arg-max, ties to the lower level (the loop keeps the first of equal maxima).
  for (int half = 128; half > 0; half >>= 1) {
    if (i < half) {
      const double a = s_sigma[i], b = s_sigma[i + half];
      const int ia = s_best[i], ib = s_best[i + half];
      if (b > a || (b == a && ib < ia)) {
        s_sigma[i] = b;
        s_best[i] = ib;
      }
    }
    __syncthreads();
  }
  if (i == 0) *out = s_sigma[0] > 0 ? static_cast<double>(s_best[0]) : 0.0;
}

// The certified path first: every level's sigma from exact integer prefixes (no sequential chain)
// with a bound on its distance from the twin's sigma; if the best level's lower bound beats every
// other level's upper bound (and 0), it is the twin's answer. Otherwise (near-ties: a level's
// neighbours with zero counts have the same ideal sigma; q1 within its bound of a skip limit;
// mu1_trace asked) the exact path decides.
__global__ void __launch_bounds__(256)
    otsu_kernel(const std::uint64_t* hist, double* out, double* mu1_trace, int* path) {
  __shared__ unsigned long long s_h[8], s_g[8], s_base;
  __shared__ unsigned s_live[8], s_near[8];
  __shared__ Top2 s_top[8];
  const int i = threadIdx.x, lane = i & 31, warp = i >> 5;
  const unsigned long long h = hist[i];
  const unsigned long long h_next = i < 255 ? hist[i + 1] : 0ull;

  // Exact integer prefixes of the counts (H) and of level · count (G).
  unsigned long long hp = h, gp = static_cast<unsigned long long>(i) * h;
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned long long a = __shfl_up_sync(kFull, hp, o), b = __shfl_up_sync(kFull, gp, o);
    if (lane >= o) {
      hp += a;
      gp += b;
    }
  }
  if (lane == 31) {
    s_h[warp] = hp;
    s_g[warp] = gp;
  }
  if (i == 0) s_base = 0;
  __syncthreads();
  unsigned long long n = 0, gsum = 0;
#pragma unroll
  for (int w = 0; w < 8; ++w) {
    const unsigned long long a = s_h[w], b = s_g[w];
    if (w < warp) {
      hp += a;
      gp += b;
    }
    n += a;
    gsum += b;
  }
  if (n == 0) {
    if (i == 0) {
      *out = 0.0;
      if (path) *path = 1;
    }
    return;
  }
  const double scale = __ddiv_rn(1.0, static_cast<double>(n));

  // q1 ≈ A = H·scale; the loop's skips from A, and whether any limit is within A's bound.
  const double eps = FLT_EPSILON, one_minus_eps = 1. - FLT_EPSILON;
  const double a1 = __dmul_rn(static_cast<double>(hp), scale), q2 = __dsub_rn(1., a1);
  const bool skip = fmin(a1, q2) < eps || fmax(a1, q2) > one_minus_eps;
  const double dq1 = kEpsQ1 * a1, dq2 = dq1 + 4 * kU * fabs(q2);
  const bool near = fabs(a1 - eps) <= 2 * dq1 || fabs(q2 - eps) <= 2 * dq2 ||
                    fabs(a1 - one_minus_eps) <= 2 * dq1 || fabs(q2 - one_minus_eps) <= 2 * dq2;
  {  // the skipped prefix (q1 small) ends here: the chain sums level · p from the next level on
    const double a_next = __dmul_rn(static_cast<double>(hp + h_next), scale);
    const double q2_next = __dsub_rn(1., a_next);
    const bool skip_next = fmin(a_next, q2_next) < eps || fmax(a_next, q2_next) > one_minus_eps;
    if (skip && a1 < 0.5 && (i == 255 || !skip_next || a_next >= 0.5)) s_base = gp;
  }
  const unsigned live_bits = __ballot_sync(kFull, !skip), near_bits = __ballot_sync(kFull, near);
  if (lane == 0) {
    s_live[warp] = live_bits;
    s_near[warp] = near_bits;
  }
  const double r1 = __drcp_rn(a1), r2 = __drcp_rn(q2);
  __syncthreads();
  unsigned any_live = 0, any_near = 0;
#pragma unroll
  for (int w = 0; w < 8; ++w) {
    any_live |= s_live[w];
    any_near |= s_near[w];
  }

  Top2 top{-INFINITY, -INFINITY, -INFINITY, i};
  if (!skip) {  // the twin's operations in its order, on A, S = G·scale, mu = Σ level·count·scale
    const double mu = __dmul_rn(static_cast<double>(gsum), scale);
    const double s1 = __dmul_rn(static_cast<double>(gp - s_base), scale);
    const double mu1 = __dmul_rn(s1, r1);
    const double x = __dmul_rn(a1, mu1), y = __dsub_rn(mu, x), mu2 = __dmul_rn(y, r2);
    const double d = __dsub_rn(mu1, mu2), w = __dmul_rn(a1, q2), v = __dmul_rn(w, d);
    const double sigma = __dmul_rn(v, d);
    // Bounds on |twin − ours| of each value, operation by operation (4u: both roundings).
    const double dmu1 = kEpsMu1 * mu1, dmu = kEpsMu * mu;
    const double dx = dq1 * mu1 + a1 * dmu1 + dq1 * dmu1 + 4 * kU * x;
    const double dy = dmu + dx + 4 * kU * fabs(y);
    const double dmu2 = (dy + fabs(mu2) * dq2) * r2 * 1.0001 + 4 * kU * fabs(mu2);  // q2 ≫ dq2
    const double dd = dmu1 + dmu2 + 4 * kU * fabs(d);
    const double dw = dq1 * q2 + a1 * dq2 + dq1 * dq2 + 4 * kU * w;
    const double dv = dw * fabs(d) + w * dd + dw * dd + 4 * kU * fabs(v);
    const double ds = dv * fabs(d) + fabs(v) * dd + dv * dd + 4 * kU * sigma;
    top.hi1 = sigma + 2 * ds;
    top.lo1 = sigma - 2 * ds;
    if (!(top.hi1 == top.hi1) || !(top.lo1 == top.lo1)) {  // never certify around a NaN
      top.hi1 = INFINITY;
      top.lo1 = -INFINITY;
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Top2 other;
    other.hi1 = __shfl_xor_sync(kFull, top.hi1, o);
    other.lo1 = __shfl_xor_sync(kFull, top.lo1, o);
    other.hi2 = __shfl_xor_sync(kFull, top.hi2, o);
    other.k1 = __shfl_xor_sync(kFull, top.k1, o);
    top = merge_top2(top, other);
  }
  if (lane == 0) s_top[warp] = top;
  __syncthreads();
  top = s_top[0];
#pragma unroll
  for (int w = 1; w < 8; ++w) top = merge_top2(top, s_top[w]);
  // No level left by the loop: the twin returns 0, as it does when no sigma is above 0.
  const bool certified = mu1_trace == nullptr && any_near == 0 && n < (1ull << 53) &&
                         (any_live == 0 || (top.lo1 > top.hi2 && top.lo1 > 0));
  if (certified) {
    if (i == 0) {
      *out = any_live ? static_cast<double>(top.k1) : 0.0;
      if (path) *path = 1;
    }
    return;
  }
  otsu_exact(i, h, scale, out, mu1_trace);
  if (i == 0 && path) *path = 0;
}

// ---- threshold ------------------------------------------------------------------------------------

struct ThreshArgs {
  const std::uint8_t* src;
  std::size_t src_pitch;
  std::uint8_t* dst;
  std::size_t dst_pitch;
  int width, y0, rows;
  const double* thresh_dev;  // or null: thresh
  double thresh;
  unsigned high;  // the output value (0..255)
};

// Pixels strictly above the returned level pass: floor(t), −1 (all pass) or 255 (none; also NaN).
__device__ __forceinline__ int pass_level(double t) {
  t = floor(t);
  if (!(t == t)) return 255;
  if (t < 0) return -1;
  if (t >= 255) return 255;
  return static_cast<int>(t);
}

__device__ __forceinline__ unsigned threshold_word(unsigned w, int level, unsigned level4,
                                                   unsigned high4) {
  if (level < 0) return high4;
  if (level >= 255) return 0u;
  return __vcmpgtu4(w, level4) & high4;
}

__global__ void __launch_bounds__(256) threshold_kernel(const ThreshArgs a) {
  const int level = pass_level(a.thresh_dev ? *a.thresh_dev : a.thresh);
  const unsigned level4 = static_cast<unsigned>(level & 0xff) * 0x01010101u;
  const unsigned high4 = a.high * 0x01010101u;
  for (int r = blockIdx.y; r < a.rows; r += gridDim.y) {
    const int y = a.y0 + r;
    const std::uint8_t* s = a.src + static_cast<std::size_t>(y) * a.src_pitch;
    std::uint8_t* d = a.dst + static_cast<std::size_t>(y) * a.dst_pitch;
    const dev::OutRow o = dev::out_row(d, a.width);
    const bool vec_ok =
        ((reinterpret_cast<std::uintptr_t>(s) - reinterpret_cast<std::uintptr_t>(d)) & 15u) == 0;
    for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < o.groups;
         g += gridDim.x * blockDim.x) {
      int x, n;
      o.group(g, &x, &n);
      if (vec_ok && g > 0 && n == 16) {
        const uint4 v = *reinterpret_cast<const uint4*>(s + x);
        uint4 out;
        out.x = threshold_word(v.x, level, level4, high4);
        out.y = threshold_word(v.y, level, level4, high4);
        out.z = threshold_word(v.z, level, level4, high4);
        out.w = threshold_word(v.w, level, level4, high4);
        *reinterpret_cast<uint4*>(d + x) = out;
      } else {
        for (int k = 0; k < n; ++k) {
          d[x + k] = static_cast<int>(s[x + k]) > level ? static_cast<std::uint8_t>(a.high) : 0;
        }
      }
    }
  }
}

cudaError_t launch_thresh(const double* thresh_dev, double thresh, double max_value,
                          const ImageView& src, const ImageView& dst, int y0, int y1,
                          cudaStream_t stream) {
  if (src.format != PixelFormat::kGray8 || dst.format != PixelFormat::kGray8 ||
      src.data == nullptr || dst.data == nullptr || src.width != dst.width ||
      src.height != dst.height || src.width < 1 || y0 < 0 || y1 < y0 || y1 > src.height) {
    return cudaErrorInvalidValue;
  }
  if (y0 == y1) return cudaSuccess;
  dev::DeviceInfo d;
  if (cudaError_t e = dev::current_device(&d)) return e;
  const ReductionPolicy& pol = reduction_policy(d.cc_major, d.cc_minor);
  ThreshArgs a;
  a.src = src.data;
  a.src_pitch = src.pitch;
  a.dst = dst.data;
  a.dst_pitch = dst.pitch;
  a.width = src.width;
  a.y0 = y0;
  a.rows = y1 - y0;
  a.thresh_dev = thresh_dev;
  a.thresh = thresh;
  // threshold_ref's 8-bit rule: max_value rounded half to even and saturated (NaN → 0).
  a.high = !(max_value > 0) ? 0u
                            : max_value >= 255 ? 255u : static_cast<unsigned>(std::nearbyint(max_value));
  const int threads = std::min(std::max(pol.map_threads / 32 * 32, 32), 256);
  const dim3 grid(dev::div_up(dev::max_groups(src.width), threads),
                  static_cast<unsigned>(std::min(a.rows, 65535)));
  threshold_kernel<<<grid, threads, 0, stream>>>(a);
  return cudaPeekAtLastError();
}

}  // namespace

cudaError_t launch_otsu_threshold(const std::uint64_t* hist256, double* threshold,
                                  cudaStream_t stream, double* mu1_trace, int* path) {
  if (hist256 == nullptr || threshold == nullptr) return cudaErrorInvalidValue;
  otsu_kernel<<<1, 256, 0, stream>>>(hist256, threshold, mu1_trace, path);
  return cudaPeekAtLastError();
}

cudaError_t launch_threshold(double thresh, double max_value, const ImageView& src,
                             const ImageView& dst, int y0, int y1, cudaStream_t stream) {
  return launch_thresh(nullptr, thresh, max_value, src, dst, y0, y1, stream);
}

cudaError_t launch_threshold_from(const double* thresh, double max_value, const ImageView& src,
                                  const ImageView& dst, int y0, int y1, cudaStream_t stream) {
  if (thresh == nullptr) return cudaErrorInvalidValue;
  return launch_thresh(thresh, 0.0, max_value, src, dst, y0, y1, stream);
}

}  // namespace jetpipe
