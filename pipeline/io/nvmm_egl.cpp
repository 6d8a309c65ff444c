// SPDX-License-Identifier: MIT
// The Jetson NVMM mapper (builds with JETPIPE_NVMM only): NvBufSurface → EGLImage → CUDA, read in
// place. What it follows (docs/decisions/031-nvmm-mapping-route.md says why this route):
//  - Jetson Linux API Reference, nvbufsurface.h (r35.4.1, r36): NvBufSurfaceMapEglImage "creates
//    an EGLImage from the memory of one or more NvBufSurface buffers. Only memory type
//    NVBUF_MEM_SURFACE_ARRAY is supported ... can then be registered with CUDA";
//    NvBufSurfaceUnMapEglImage destroys it; NvBufSurfaceParams: layout, colorFormat,
//    planeParams.pitch "in bytes", dataPtr "not valid for NVBUF_MEM_SURFACE_ARRAY".
//    https://docs.nvidia.com/jetson/archives/r35.4.1/ApiReference/nvbufsurface_8h_source.html
//  - CUDA Runtime API, EGL Interoperability: cudaGraphicsEGLRegisterImage ("Additional
//    Mapping/Unmapping is not required for the registered resource"),
//    cudaGraphicsResourceGetMappedEglFrame (a pitch frame's planes are cudaPitchedPtr; "in case of
//    multiplanar eglFrame, pitch of only first plane is to be considered"),
//    cudaGraphicsUnregisterResource.
//    https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__EGL.html
//  - DeepStream SDK (gst-dsexample, "NvBufSurface on Jetson"): map the EGLImage, register it,
//    take the mapped frame, unregister and unmap once CUDA is done with it.
// The surface is filled by the VIC, decoder or camera before the buffer is pushed, so the frame is
// ready at once; the mapping is dropped once the executor's work on the frame has completed
// (DeviceFrame::owner), never from a CUDA callback.
#include "pipeline/io/nvmm.h"

#if JETPIPE_HAVE_NVMM

#include <cuda_egl_interop.h>
#include <cuda_runtime_api.h>
#include <nvbufsurface.h>

#include <string>

#include "core/error.h"

namespace jetpipe {

namespace {

// The frame format of a surface colour format that a stage reads in place; nullopt for the rest.
std::optional<PixelFormat> frame_format(NvBufSurfaceColorFormat f) {
  switch (f) {
    case NVBUF_COLOR_FORMAT_RGBA:
      return PixelFormat::kRgba8;
    case NVBUF_COLOR_FORMAT_RGBx:
      return PixelFormat::kRgbx8;
    case NVBUF_COLOR_FORMAT_BGRx:
    case NVBUF_COLOR_FORMAT_BGRA:  // byte 3 is ignored
      return PixelFormat::kBgrx8;
    case NVBUF_COLOR_FORMAT_GRAY8:
      return PixelFormat::kGray8;
    case NVBUF_COLOR_FORMAT_NV12:  // 8-bit Y/CbCr 4:2:0, any range or matrix: the luma is read
    case NVBUF_COLOR_FORMAT_NV12_ER:
    case NVBUF_COLOR_FORMAT_NV12_709:
    case NVBUF_COLOR_FORMAT_NV12_709_ER:
    case NVBUF_COLOR_FORMAT_NV12_2020:
      return PixelFormat::kNv12;
    default:
      return std::nullopt;
  }
}

std::string format_name(NvBufSurfaceColorFormat f) {
  switch (f) {
    case NVBUF_COLOR_FORMAT_RGBA:
      return "RGBA";
    case NVBUF_COLOR_FORMAT_RGBx:
      return "RGBx";
    case NVBUF_COLOR_FORMAT_BGRx:
      return "BGRx";
    case NVBUF_COLOR_FORMAT_BGRA:
      return "BGRA";
    case NVBUF_COLOR_FORMAT_GRAY8:
      return "GRAY8";
    case NVBUF_COLOR_FORMAT_NV12:
      return "NV12";
    case NVBUF_COLOR_FORMAT_NV12_ER:
      return "NV12_ER";
    case NVBUF_COLOR_FORMAT_NV12_709:
      return "NV12_709";
    case NVBUF_COLOR_FORMAT_NV12_709_ER:
      return "NV12_709_ER";
    case NVBUF_COLOR_FORMAT_NV12_2020:
      return "NV12_2020";
    case NVBUF_COLOR_FORMAT_YUV420:
      return "YUV420";
    case NVBUF_COLOR_FORMAT_UYVY:
      return "UYVY";
    case NVBUF_COLOR_FORMAT_NV12_10LE:
      return "NV12_10LE";
    default:
      return "colour format " + std::to_string(static_cast<int>(f));
  }
}

std::string cuda_text(cudaError_t e) {
  cudaGetLastError();  // not sticky: clear it so later calls on this thread are not blamed
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

class EglSurfaceMapper final : public SurfaceMapper {
 public:
  std::string name() const override { return "NvBufSurface → EGLImage → CUDA"; }

  std::string probe() override {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      return "no CUDA device (" + (e != cudaSuccess ? cuda_text(e) : std::string("none")) + ")";
    }
    cudaGetDevice(&device_);
    // One small surface of the kind nvvidconv hands over, mapped and dropped as a frame would be.
    NvBufSurfaceCreateParams p{};
    p.gpuId = 0;
    p.width = 64;
    p.height = 64;
    p.colorFormat = NVBUF_COLOR_FORMAT_RGBA;
    p.layout = NVBUF_LAYOUT_PITCH;
    p.memType = NVBUF_MEM_SURFACE_ARRAY;
    NvBufSurface* s = nullptr;
    if (NvBufSurfaceCreate(&s, 1, &p) != 0 || s == nullptr) {
      return "NvBufSurfaceCreate failed for a 64x64 RGBA surface";
    }
    s->numFilled = 1;
    std::string why;
    try {
      map(s, sizeof *s, 64, 64);  // the mapping is dropped at once
    } catch (const Error& err) {
      why = err.what();
    }
    NvBufSurfaceDestroy(s);
    return why;
  }

  MappedSurface map(const void* data, std::size_t, int caps_w, int caps_h) override {
    auto* surf = static_cast<NvBufSurface*>(const_cast<void*>(data));
    if (surf->batchSize < 1 || surf->surfaceList == nullptr) {
      throw input_error("the buffer holds no NvBufSurface (batch size " +
                        std::to_string(surf->batchSize) + ")");
    }
    const NvBufSurfaceParams& p = surf->surfaceList[0];
    SurfaceDesc d;
    d.width = static_cast<int>(p.width);
    d.height = static_cast<int>(p.height);
    d.format = format_name(p.colorFormat);
    d.pixels = frame_format(p.colorFormat);
    d.block_linear = p.layout == NVBUF_LAYOUT_BLOCK_LINEAR;
    if (d.block_linear || !d.pixels) surface_view(d, caps_w, caps_h);  // throws: nothing mapped
    const int planes = static_cast<int>(p.planeParams.num_planes);
    for (int i = 0; i < 2 && i < planes; ++i) d.pitch[i] = p.planeParams.pitch[i];

    const cudaError_t se = cudaSetDevice(device_);  // GStreamer's thread: the executor's device
    if (se != cudaSuccess) throw input_error("cudaSetDevice: " + cuda_text(se));

    MappedSurface m;
    if (surf->memType == NVBUF_MEM_CUDA_DEVICE || surf->memType == NVBUF_MEM_CUDA_UNIFIED) {
      // Already CUDA memory (e.g. DeepStream's nvvideoconvert nvbuf-memory-type=2): dataPtr plus
      // the planes' offsets; nothing to map or unmap.
      auto* base = static_cast<std::uint8_t*>(p.dataPtr);
      d.planes = base != nullptr ? planes : 0;
      for (int i = 0; i < 2 && i < d.planes; ++i) d.plane[i] = base + p.planeParams.offset[i];
      m.view = surface_view(d, caps_w, caps_h);
      return m;
    }
    if (surf->memType != NVBUF_MEM_SURFACE_ARRAY && surf->memType != NVBUF_MEM_DEFAULT) {
      throw input_error("surface memory type " + std::to_string(static_cast<int>(surf->memType)) +
                        " is neither a surface array nor CUDA memory");
    }
    if (NvBufSurfaceMapEglImage(surf, 0) != 0 || p.mappedAddr.eglImage == nullptr) {
      throw input_error(
          "NvBufSurfaceMapEglImage failed (no EGL display: on a headless board leave DISPLAY "
          "unset, or run with ?nvmm=0)");
    }
    cudaGraphicsResource_t res = nullptr;
    cudaError_t e = cudaGraphicsEGLRegisterImage(
        &res, static_cast<EGLImageKHR>(p.mappedAddr.eglImage), cudaGraphicsRegisterFlagsReadOnly);
    if (e != cudaSuccess) {
      NvBufSurfaceUnMapEglImage(surf, 0);
      throw input_error("cudaGraphicsEGLRegisterImage: " + cuda_text(e));
    }
    // From here the mapping is dropped by m.mapping, whatever happens next.
    m.mapping = std::shared_ptr<void>(res, [surf](void* r) {
      cudaGraphicsUnregisterResource(static_cast<cudaGraphicsResource_t>(r));
      NvBufSurfaceUnMapEglImage(surf, 0);
    });
    cudaEglFrame f{};
    e = cudaGraphicsResourceGetMappedEglFrame(&f, res, 0, 0);
    if (e != cudaSuccess)
      throw input_error("cudaGraphicsResourceGetMappedEglFrame: " + cuda_text(e));
    if (f.frameType != cudaEglFrameTypePitch) {
      d.block_linear = true;  // a CUDA array: the surface is not pitch-linear
      surface_view(d, caps_w, caps_h);
    }
    d.planes = static_cast<int>(f.planeCount);
    for (int i = 0; i < 2 && i < d.planes; ++i) {
      d.plane[i] = static_cast<std::uint8_t*>(f.frame.pPitch[i].ptr);
    }
    // The chroma plane of NV12 mapped as one plane: it lies at its offset in the same surface.
    if (*d.pixels == PixelFormat::kNv12 && d.planes == 1 && planes == 2 && d.plane[0] != nullptr) {
      d.plane[1] = d.plane[0] + (p.planeParams.offset[1] - p.planeParams.offset[0]);
      d.planes = 2;
    }
    m.view = surface_view(d, caps_w, caps_h);
    return m;
  }

 private:
  int device_ = 0;
};

}  // namespace

std::shared_ptr<SurfaceMapper> make_nvmm_mapper() { return std::make_shared<EglSurfaceMapper>(); }
bool nvmm_built() { return true; }

}  // namespace jetpipe

#endif  // JETPIPE_HAVE_NVMM
