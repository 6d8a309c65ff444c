// SPDX-License-Identifier: MIT
// Texture objects over GRAY8 views, the border-mode → texture-unit table, and the border probe.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "core/cuda_check.h"
#include "kernels/filters/source.cuh"
#include "kernels/launch/filter_launch.cuh"
#include "kernels/texture.h"

namespace jetpipe {

const char* to_string(FilterPath p) {
  switch (p) {
    case FilterPath::kAuto:
      return "auto";
    case FilterPath::kTexture:
      return "texture";
    case FilterPath::kTiled:
      return "tiled";
  }
  return "?";
}

namespace {

// What the texture unit does outside the image over pitched linear memory (DESIGN.md's measured
// table): border = 0, clamp = replicate; wrap and mirror need normalized coordinates (with
// unnormalized ones both silently clamp). reflect101 has no equivalent (Halide's mirror_interior
// neither), nor a constant other than 0: the kernel remaps those coordinates itself.
enum class Fill { kAny, kZero, kNonZero };
struct TextureRule {
  BorderMode mode;
  Fill fill;  // constant only: which values the rule covers
  TextureAddressing addressing;
};
constexpr TextureRule kTextureRules[] = {
    {BorderMode::kReplicate, Fill::kAny, {cudaAddressModeClamp, false, false}},
    {BorderMode::kConstant, Fill::kZero, {cudaAddressModeBorder, false, false}},
    {BorderMode::kConstant, Fill::kNonZero, {cudaAddressModeClamp, false, true}},
    {BorderMode::kReflect, Fill::kAny, {cudaAddressModeMirror, true, false}},
    {BorderMode::kWrap, Fill::kAny, {cudaAddressModeWrap, true, false}},
    {BorderMode::kReflect101, Fill::kAny, {cudaAddressModeClamp, false, true}},
};

int attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  JP_CUDA(cudaDeviceGetAttribute(&v, a, device));
  return v;
}

}  // namespace

std::uint8_t border_fill_u8(const Border& border) {
  const double v = border.value;  // saturate_cast<uchar>: round half to even, clamp, NaN → 0
  if (!(v > 0)) return 0;
  if (v >= 255) return 255;
  return static_cast<std::uint8_t>(std::nearbyint(v));
}

TextureAddressing texture_addressing(const Border& border) {
  const bool zero = border_fill_u8(border) == 0;
  for (const TextureRule& r : kTextureRules) {
    if (r.mode != border.mode) continue;
    if (r.fill == Fill::kAny || (r.fill == Fill::kZero) == zero) return r.addressing;
  }
  return {cudaAddressModeClamp, false, true};  // not reached: every mode has a rule
}

const char* UniqueTexture::unsupported_reason(const ImageView& view) {
  if (view.empty()) return "empty view";
  if (view.format != PixelFormat::kGray8) return "not GRAY8";
  int device = 0;
  JP_CUDA(cudaGetDevice(&device));
  const auto align = static_cast<std::uintptr_t>(attribute(cudaDevAttrTextureAlignment, device));
  const auto pitch_align =
      static_cast<std::size_t>(attribute(cudaDevAttrTexturePitchAlignment, device));
  if (reinterpret_cast<std::uintptr_t>(view.data) % align != 0) {
    return "base not aligned to textureAlignment";
  }
  if (view.pitch % pitch_align != 0) return "pitch not a multiple of texturePitchAlignment";
  if (view.width > attribute(cudaDevAttrMaxTexture2DLinearWidth, device) ||
      view.height > attribute(cudaDevAttrMaxTexture2DLinearHeight, device) ||
      view.pitch >
          static_cast<std::size_t>(attribute(cudaDevAttrMaxTexture2DLinearPitch, device))) {
    return "larger than the pitched 2D texture limits";
  }
  return nullptr;
}

UniqueTexture::UniqueTexture(const ImageView& view, const Border& border)
    : view_(view), border_(border) {
  why_ = unsupported_reason(view);
  if (why_ != nullptr) return;
  why_ = "";
  const TextureAddressing a = texture_addressing(border);
  TextureRef r;
  r.width = view.width;
  r.height = view.height;
  r.inv_width = 1.0f / static_cast<float>(view.width);
  r.inv_height = 1.0f / static_cast<float>(view.height);
  r.mode = border.mode;
  r.fill = border_fill_u8(border);
  r.normalized = a.normalized;
  r.remap = a.remap;

  cudaTextureDesc td;
  std::memset(&td, 0, sizeof(td));
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = a.address;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = a.normalized ? 1 : 0;

  cudaResourceDesc rd;
  std::memset(&rd, 0, sizeof(rd));
  rd.resType = cudaResourceTypePitch2D;
  rd.res.pitch2D.devPtr = view.data;
  rd.res.pitch2D.desc = cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
  rd.res.pitch2D.width = static_cast<std::size_t>(view.width);
  rd.res.pitch2D.height = static_cast<std::size_t>(view.height);
  rd.res.pitch2D.pitchInBytes = view.pitch;
  JP_CUDA(cudaCreateTextureObject(&r.pixels, &rd, &td, nullptr));

  if (view.width >= 16) {
    const int chunks = view.width / 16;
    rd.res.pitch2D.desc = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindUnsigned);
    rd.res.pitch2D.width = static_cast<std::size_t>(chunks);
    r.inv_chunks = 1.0f / static_cast<float>(chunks);
    const cudaError_t err = cudaCreateTextureObject(&r.chunks, &rd, &td, nullptr);
    if (err != cudaSuccess) {
      cudaDestroyTextureObject(r.pixels);
      check_cuda(err, "cudaCreateTextureObject (16-byte texels)", __FILE__, __LINE__);
    }
  }
  ref_ = r;
}

void UniqueTexture::reset() {
  if (ref_.chunks != 0) cudaDestroyTextureObject(ref_.chunks);
  if (ref_.pixels != 0) cudaDestroyTextureObject(ref_.pixels);
  ref_ = TextureRef{};
  why_ = "no view";
}

UniqueTexture::~UniqueTexture() { reset(); }

UniqueTexture::UniqueTexture(UniqueTexture&& o) noexcept { *this = std::move(o); }

UniqueTexture& UniqueTexture::operator=(UniqueTexture&& o) noexcept {
  if (this != &o) {
    reset();
    view_ = o.view_;
    border_ = o.border_;
    ref_ = std::exchange(o.ref_, TextureRef{});
    why_ = std::exchange(o.why_, "no view");
  }
  return *this;
}

bool UniqueTexture::serves(const ImageView& view, const Border& border) const {
  return valid() && view.data == view_.data && view.width == view_.width &&
         view.height == view_.height && view.pitch == view_.pitch && view.format == view_.format &&
         border.mode == border_.mode &&
         (border.mode != BorderMode::kConstant ||
          border_fill_u8(border) == border_fill_u8(border_));
}

namespace dev {

// ---- Border probe ------------------------------------------------------------------------------

template <class Src>
__global__ void border_probe_kernel(const Src src, const int* xy, int n, std::uint8_t* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const int x = xy[2 * i], y = xy[2 * i + 1];
  const typename Src::Row r = src.row(y);
  std::uint8_t* o = out + 17 * static_cast<std::size_t>(i);
  o[0] = src.pixel(r, x);
  const uint4 c = src.template chunk<true>(r, x & ~15);
  const std::uint32_t w[4] = {c.x, c.y, c.z, c.w};
  for (int b = 0; b < 16; ++b) o[1 + b] = static_cast<std::uint8_t>(w[b >> 2] >> (8 * (b & 3)));
}

}  // namespace dev

cudaError_t launch_border_probe(const FilterSource& src, const Border& border, FilterPath path,
                                const int* d_xy, int n, std::uint8_t* d_out, cudaStream_t stream) {
  if (src.view.empty() || src.view.format != PixelFormat::kGray8 || n < 0) {
    return cudaErrorInvalidValue;
  }
  if (n == 0) return cudaSuccess;
  bool tex = false;
  if (cudaError_t e = dev::resolve_path(src, border, path, FilterPath::kTiled, &tex)) return e;
  return dev::with_source(src, border, tex, [&](const auto& s) {
    dev::border_probe_kernel<<<dev::div_up(n, 128), 128, 0, stream>>>(s, d_xy, n, d_out);
    return cudaPeekAtLastError();
  });
}

}  // namespace jetpipe
