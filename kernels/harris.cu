// SPDX-License-Identifier: MIT
// CUDA twin of harris, fused: per output tile, the image tile + halo in shared memory (through the
// source: global loads or texture fetches, the image border), the structure tensor over the tile +
// box halo (positions outside the image: 0 for a constant border, computed from the periodic
// extension for wrap, else copied from the remapped position, which lies in the same tile), then
// the box sums and the response. Every operation is the twin's, in its order, without contraction.
#include <cuda_runtime.h>

#include <vector>

#include "kernels/block/filter_launch.cuh"
#include "kernels/block/filter_source.cuh"
#include "kernels/harris.h"
#include "kernels/sobel.h"

namespace jetpipe {

namespace dev {

constexpr int kHarrisMaxTaps = 7;

struct HarrisArgs {
  int gx_x[kHarrisMaxTaps], gx_y[kHarrisMaxTaps];  // d/dx: taps along x, along y
  int gy_x[kHarrisMaxTaps], gy_y[kHarrisMaxTaps];  // d/dy
  int gx_nx, gx_ny, gy_nx, gy_ny;
  int r;           // gradient radius
  int bs, anchor;  // box size and anchor (bs / 2)
  double scale, k;
  BorderMode mode;
  int width, height, y0, y1;
  std::uint8_t* dst;
  std::size_t pitch;
  bool aligned4;  // F32 rows 4-byte aligned
};

__host__ __device__ inline int ceil16(int v) { return (v + 15) & ~15; }

struct HarrisGeom {
  int img_left, img_stride, img_rows, cov_w, cov_h;
  __host__ __device__ HarrisGeom(int bs, int anchor, int r) {
    img_left = ceil16(anchor + r);  // tile origin x = tx0 − img_left (tx0 a multiple of 16)
    img_stride = img_left + kHarrisTileW + ceil16(bs - 1 - anchor + r);
    img_rows = kHarrisTileH + bs - 1 + 2 * r;
    cov_w = kHarrisTileW + bs - 1;
    cov_h = kHarrisTileH + bs - 1;
  }
  __host__ __device__ int img_bytes() const { return ceil16(img_stride * img_rows); }
  __host__ __device__ std::size_t smem_bytes() const {
    return static_cast<std::size_t>(img_bytes()) + 3 * sizeof(float) * cov_w * cov_h;
  }
};

// Σ_u ty[u] · Σ_v tx[v] · img(row − ny/2 + u, col − nx/2 + v): exact integers.
__device__ __forceinline__ int derivative(const std::uint8_t* img, int stride, int row, int col,
                                          const int* tx, int nx, const int* ty, int ny) {
  int sum = 0;
  for (int u = 0; u < ny; ++u) {
    const std::uint8_t* p = img + (row - ny / 2 + u) * stride + col - nx / 2;
    int s = 0;
    for (int v = 0; v < nx; ++v) s += tx[v] * static_cast<int>(p[v]);
    sum += ty[u] * s;
  }
  return sum;
}

// Grid: x = ceil(width / kHarrisTileW), y = ceil((y1 − y0) / kHarrisTileH).
template <class Src>
__global__ void __launch_bounds__(kHarrisThreads) harris_kernel(const Src src, const HarrisArgs a) {
  extern __shared__ __align__(16) std::uint8_t smem[];
  const HarrisGeom g(a.bs, a.anchor, a.r);
  std::uint8_t* img = smem;
  float* cxx = reinterpret_cast<float*>(smem + g.img_bytes());
  float* cxy = cxx + g.cov_w * g.cov_h;
  float* cyy = cxy + g.cov_w * g.cov_h;
  const int tx0 = static_cast<int>(blockIdx.x) * kHarrisTileW;
  const int ty0 = a.y0 + static_cast<int>(blockIdx.y) * kHarrisTileH;
  const int cx0 = tx0 - a.anchor, cy0 = ty0 - a.anchor;  // cov tile origin
  const int ix0 = tx0 - g.img_left, iy0 = cy0 - a.r;     // image tile origin

  load_tile(src, img, g.img_stride, ix0, iy0, g.img_rows, threadIdx.x, kHarrisThreads);
  __syncthreads();

  const int ncov = g.cov_w * g.cov_h;
  const bool periodic = a.mode == BorderMode::kWrap;
  const bool zero_outside = a.mode == BorderMode::kConstant;
  for (int i = threadIdx.x; i < ncov; i += kHarrisThreads) {
    const int ci = i / g.cov_w, cj = i - ci * g.cov_w;
    const int cx = cx0 + cj, cy = cy0 + ci;
    const bool inside = static_cast<unsigned>(cx) < static_cast<unsigned>(a.width) &&
                        static_cast<unsigned>(cy) < static_cast<unsigned>(a.height);
    if (inside || periodic) {
      const int row = cy - iy0, col = cx - ix0;
      const int dx = derivative(img, g.img_stride, row, col, a.gx_x, a.gx_nx, a.gx_y, a.gx_ny);
      const int dy = derivative(img, g.img_stride, row, col, a.gy_x, a.gy_nx, a.gy_y, a.gy_ny);
      const float gx = __double2float_rn(__dmul_rn(static_cast<double>(dx), a.scale));
      const float gy = __double2float_rn(__dmul_rn(static_cast<double>(dy), a.scale));
      cxx[i] = __fmul_rn(gx, gx);
      cxy[i] = __fmul_rn(gx, gy);
      cyy[i] = __fmul_rn(gy, gy);
    } else if (zero_outside) {
      cxx[i] = cxy[i] = cyy[i] = 0.f;
    }
  }
  __syncthreads();

  if (!periodic &&
      !zero_outside) {  // replicate, reflect, reflect101: the remapped position's tensor
    for (int i = threadIdx.x; i < ncov; i += kHarrisThreads) {
      const int ci = i / g.cov_w, cj = i - ci * g.cov_w;
      const int cx = cx0 + cj, cy = cy0 + ci;
      if (static_cast<unsigned>(cx) < static_cast<unsigned>(a.width) &&
          static_cast<unsigned>(cy) < static_cast<unsigned>(a.height)) {
        continue;
      }
      const int sj = border_remap(cx, a.width, a.mode) - cx0;
      const int si = border_remap(cy, a.height, a.mode) - cy0;
      // Positions some output needs always remap into the tile; others are never read.
      if (sj >= 0 && sj < g.cov_w && si >= 0 && si < g.cov_h) {
        const int s = si * g.cov_w + sj;
        cxx[i] = cxx[s];
        cxy[i] = cxy[s];
        cyy[i] = cyy[s];
      }
    }
    __syncthreads();
  }

  for (int i = threadIdx.x; i < kHarrisTileW * kHarrisTileH; i += kHarrisThreads) {
    const int oy = i / kHarrisTileW, ox = i % kHarrisTileW;
    const int x = tx0 + ox, y = ty0 + oy;
    if (x >= a.width || y >= a.y1) continue;
    double s0 = 0, s1 = 0, s2 = 0;
    for (int u = 0; u < a.bs; ++u) {
      double r0 = 0, r1 = 0, r2 = 0;
      const int base = (oy + u) * g.cov_w + ox;
      for (int v = 0; v < a.bs; ++v) {
        r0 = __dadd_rn(r0, static_cast<double>(cxx[base + v]));
        r1 = __dadd_rn(r1, static_cast<double>(cxy[base + v]));
        r2 = __dadd_rn(r2, static_cast<double>(cyy[base + v]));
      }
      s0 = __dadd_rn(s0, r0);
      s1 = __dadd_rn(s1, r1);
      s2 = __dadd_rn(s2, r2);
    }
    // R = a·c − b² − k·(a + c)², left to right as the twin's expression.
    const double tr = __dadd_rn(s0, s2);
    const double det = __dsub_rn(__dmul_rn(s0, s2), __dmul_rn(s1, s1));
    const float v = __double2float_rn(__dsub_rn(det, __dmul_rn(__dmul_rn(a.k, tr), tr)));
    std::uint8_t* row = a.dst + static_cast<std::size_t>(y) * a.pitch;
    if (a.aligned4) {
      reinterpret_cast<float*>(row)[x] = v;
    } else {
      const std::uint32_t u = __float_as_uint(v);
      for (int b = 0; b < 4; ++b) row[4 * x + b] = static_cast<std::uint8_t>(u >> (8 * b));
    }
  }
}

void fill_taps(int dx, int dy, int ksize, int* tx, int* nx, int* ty, int* ny) {
  SobelParams sp;
  sp.dx = dx;
  sp.dy = dy;
  sp.ksize = ksize;
  std::vector<float> kx, ky;
  sobel_taps(sp, &kx, &ky);
  *nx = static_cast<int>(kx.size());
  *ny = static_cast<int>(ky.size());
  for (int i = 0; i < *nx; ++i) tx[i] = static_cast<int>(kx[i]);
  for (int i = 0; i < *ny; ++i) ty[i] = static_cast<int>(ky[i]);
}

}  // namespace dev

cudaError_t launch_harris(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                          int y0, int y1, cudaStream_t stream, FilterPath path) {
  if (cudaError_t e = dev::check_filter_views(src.view, dst, PixelFormat::kF32, y0, y1)) return e;
  if (p.block_size < 1 || p.block_size > kHarrisMaxBlock ||
      (p.ksize != 1 && p.ksize != 3 && p.ksize != 5 && p.ksize != 7)) {
    return cudaErrorInvalidValue;
  }
  bool tex = false;
  const FilterPolicy& pol = dev::current_filter_policy();
  if (cudaError_t e = dev::resolve_path(src, p.border, path, pol.harris, &tex)) return e;
  if (y0 == y1) return cudaSuccess;
  // Taps per thread for the last params (sobel_taps allocates); the args themselves are per call.
  struct Cache {
    int ksize = -1;
    dev::HarrisArgs a{};
  };
  thread_local Cache cache;
  if (cache.ksize != p.ksize) {
    dev::fill_taps(1, 0, p.ksize, cache.a.gx_x, &cache.a.gx_nx, cache.a.gx_y, &cache.a.gx_ny);
    dev::fill_taps(0, 1, p.ksize, cache.a.gy_x, &cache.a.gy_nx, cache.a.gy_y, &cache.a.gy_ny);
    cache.ksize = p.ksize;
  }
  dev::HarrisArgs a = cache.a;
  a.r = p.ksize == 1 ? 1 : p.ksize / 2;
  a.bs = p.block_size;
  a.anchor = p.block_size / 2;
  a.scale = 1.0 / (static_cast<double>(1 << (p.ksize - 1)) * p.block_size * 255.0);
  a.k = p.k;
  a.mode = p.border.mode;
  a.width = src.view.width;
  a.height = src.view.height;
  a.y0 = y0;
  a.y1 = y1;
  a.dst = dst.data;
  a.pitch = dst.pitch;
  a.aligned4 = dev::aligned_to(dst, 4);
  const dev::HarrisGeom g(a.bs, a.anchor, a.r);
  const std::size_t smem = g.smem_bytes();
  if (smem > 48 * 1024) return cudaErrorInvalidValue;  // not reached for block_size ≤ 31
  const dim3 grid(dev::div_up(a.width, kHarrisTileW), dev::div_up(y1 - y0, kHarrisTileH));
  return dev::with_source(src, p.border, tex, [&](const auto& s) {
    dev::harris_kernel<<<grid, kHarrisThreads, smem, stream>>>(s, a);
    return cudaPeekAtLastError();
  });
}

}  // namespace jetpipe
