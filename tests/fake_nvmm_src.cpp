// SPDX-License-Identifier: MIT
// The element is a GstPushSrc registered by hand (g_type_register_static with functions of the
// exact GObject signatures, so no function-pointer casts).
#include "tests/fake_nvmm_src.h"

#include <cstring>
#include <mutex>

#if JETPIPE_HAVE_GSTREAMER
#include <gst/base/gstpushsrc.h>
#include <gst/gst.h>
#endif
#if JETPIPE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace jetpipe::test {

namespace {

std::mutex released_mutex;
std::vector<std::int64_t> released_ids;
FakeSurfaceMapper* log_to = nullptr;

}  // namespace

void fake_src_reset(FakeSurfaceMapper* mapper) {
  std::lock_guard<std::mutex> lk(released_mutex);
  released_ids.clear();
  log_to = mapper;
}

std::vector<std::int64_t> fake_src_released() {
  std::lock_guard<std::mutex> lk(released_mutex);
  return released_ids;
}

#if JETPIPE_HAVE_GSTREAMER

namespace {

struct FakeNvmmSrc {
  GstPushSrc parent;
  int width, height;
  char* format;
  char* memory;
  int fail_at, bl_at, unreadable_at;
  gboolean device;
  std::int64_t next;
};

struct FakeNvmmSrcClass {
  GstPushSrcClass parent_class;
};

enum {
  kPropWidth = 1,
  kPropHeight,
  kPropFormat,
  kPropMemory,
  kPropFailAt,
  kPropBlAt,
  kPropUnreadableAt,
  kPropDevice
};

GstPushSrcClass* parent_type_class = nullptr;

// What one buffer owns: its surface (and pixels), freed when GStreamer frees the buffer.
struct Holder {
  std::int64_t id = 0;
  FakeSurface surface;
  HostImage host;  // the pixels (host memory), or the source of the device copy
  std::uint8_t* device = nullptr;
  std::size_t device_bytes = 0;
};

void release_holder(gpointer p) {
  auto* h = static_cast<Holder*>(p);
#if JETPIPE_HAVE_CUDA
  if (h->device != nullptr) {
    cudaMemset(h->device, 0x5A, h->device_bytes);  // a read after release sees poison
    cudaFree(h->device);
  }
#endif
  {
    std::lock_guard<std::mutex> lk(released_mutex);
    released_ids.push_back(h->id);
    if (log_to != nullptr) log_to->log("release " + std::to_string(h->id));
  }
  delete h;
}

FakeNvmmSrc* self_of(gpointer p) { return reinterpret_cast<FakeNvmmSrc*>(p); }

bool system_memory(const FakeNvmmSrc* s) { return std::strcmp(s->memory, "system") == 0; }

void set_property(GObject* object, guint id, const GValue* value, GParamSpec* spec) {
  FakeNvmmSrc* s = self_of(object);
  switch (id) {
    case kPropWidth:
      s->width = g_value_get_int(value);
      break;
    case kPropHeight:
      s->height = g_value_get_int(value);
      break;
    case kPropFormat:
      g_free(s->format);
      s->format = g_value_dup_string(value);
      break;
    case kPropMemory:
      g_free(s->memory);
      s->memory = g_value_dup_string(value);
      break;
    case kPropFailAt:
      s->fail_at = g_value_get_int(value);
      break;
    case kPropBlAt:
      s->bl_at = g_value_get_int(value);
      break;
    case kPropUnreadableAt:
      s->unreadable_at = g_value_get_int(value);
      break;
    case kPropDevice:
      s->device = g_value_get_boolean(value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec);
  }
}

void get_property(GObject* object, guint id, GValue* value, GParamSpec* spec) {
  FakeNvmmSrc* s = self_of(object);
  switch (id) {
    case kPropWidth:
      g_value_set_int(value, s->width);
      break;
    case kPropHeight:
      g_value_set_int(value, s->height);
      break;
    case kPropFormat:
      g_value_set_string(value, s->format);
      break;
    case kPropMemory:
      g_value_set_string(value, s->memory);
      break;
    case kPropFailAt:
      g_value_set_int(value, s->fail_at);
      break;
    case kPropBlAt:
      g_value_set_int(value, s->bl_at);
      break;
    case kPropUnreadableAt:
      g_value_set_int(value, s->unreadable_at);
      break;
    case kPropDevice:
      g_value_set_boolean(value, s->device);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec);
  }
}

void finalize(GObject* object) {
  FakeNvmmSrc* s = self_of(object);
  g_free(s->format);
  g_free(s->memory);
  G_OBJECT_CLASS(parent_type_class)->finalize(object);
}

gboolean negotiate(GstBaseSrc* base) {
  FakeNvmmSrc* s = self_of(base);
  const std::string caps = std::string("video/x-raw") + (system_memory(s) ? "" : "(memory:NVMM)") +
                           ",format=" + (system_memory(s) ? "BGR" : s->format) +
                           ",width=" + std::to_string(s->width) +
                           ",height=" + std::to_string(s->height) + ",framerate=30/1";
  GstCaps* c = gst_caps_from_string(caps.c_str());
  const gboolean ok = gst_base_src_set_caps(base, c);
  gst_caps_unref(c);
  return ok;
}

GstFlowReturn create(GstPushSrc* src, GstBuffer** out) {
  FakeNvmmSrc* s = self_of(src);
  auto* h = new Holder;
  h->id = s->next++;
  GstBuffer* b = nullptr;
  if (system_memory(s)) {
    h->host = fake_surface_pixels(h->id, s->width, s->height, PixelFormat::kBgr8);
    const ImageView v = h->host.view();
    b = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, v.data, v.pitch * v.height, 0,
                                    v.pitch * v.height, h, release_holder);
  } else {
    FakeSurface& f = h->surface;
    f.id = h->id;
    f.width = s->width;
    f.height = s->height;
    const std::string fmt = h->id == s->unreadable_at ? "YUV444" : s->format;
    std::strncpy(f.format, fmt.c_str(), sizeof f.format - 1);
    f.block_linear = h->id == s->bl_at;
    f.fail_map = h->id == s->fail_at;
    const std::optional<PixelFormat> pf = fake_surface_format(s->format);
    h->host = fake_surface_pixels(h->id, s->width, s->height, pf.value_or(PixelFormat::kRgba8));
    ImageView v = h->host.view();
#if JETPIPE_HAVE_CUDA
    if (s->device) {
      h->device_bytes = image_bytes(v.width, v.height, v.format, v.pitch);
      void* p = nullptr;
      if (cudaMalloc(&p, h->device_bytes) != cudaSuccess ||
          cudaMemcpy(p, v.data, h->device_bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(p);
        delete h;
        return GST_FLOW_ERROR;
      }
      h->device = static_cast<std::uint8_t*>(p);
      v = make_view(h->device, v.width, v.height, v.format, v.pitch);
    }
#endif
    f.planes = v.format == PixelFormat::kNv12 ? 2 : 1;
    f.plane[0] = v.data;
    f.pitch[0] = v.pitch;
    f.plane[1] = v.uv;
    f.pitch[1] = v.uv_pitch;
    b = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, &f, sizeof f, 0, sizeof f, h,
                                    release_holder);
  }
  GST_BUFFER_PTS(b) = static_cast<GstClockTime>(h->id) * GST_SECOND / 30;
  GST_BUFFER_DURATION(b) = GST_SECOND / 30;
  *out = b;
  return GST_FLOW_OK;
}

void class_init(gpointer klass, gpointer) {
  parent_type_class = static_cast<GstPushSrcClass*>(g_type_class_peek_parent(klass));
  auto* gobject = G_OBJECT_CLASS(klass);
  gobject->set_property = set_property;
  gobject->get_property = get_property;
  gobject->finalize = finalize;
  const auto rw = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_property(gobject, kPropWidth,
                                  g_param_spec_int("width", "w", "w", 1, 4096, 64, rw));
  g_object_class_install_property(gobject, kPropHeight,
                                  g_param_spec_int("height", "h", "h", 1, 4096, 48, rw));
  g_object_class_install_property(gobject, kPropFormat,
                                  g_param_spec_string("format", "f", "f", "RGBA", rw));
  g_object_class_install_property(gobject, kPropMemory,
                                  g_param_spec_string("memory", "m", "m", "nvmm", rw));
  g_object_class_install_property(gobject, kPropFailAt,
                                  g_param_spec_int("fail-at", "f", "f", -1, G_MAXINT, -1, rw));
  g_object_class_install_property(
      gobject, kPropBlAt, g_param_spec_int("block-linear-at", "b", "b", -1, G_MAXINT, -1, rw));
  g_object_class_install_property(
      gobject, kPropUnreadableAt,
      g_param_spec_int("unreadable-at", "u", "u", -1, G_MAXINT, -1, rw));
  g_object_class_install_property(gobject, kPropDevice,
                                  g_param_spec_boolean("device", "d", "d", FALSE, rw));
  auto* element = GST_ELEMENT_CLASS(klass);
  gst_element_class_set_static_metadata(element, "Fake NVMM source (jetpipe tests)", "Source/Video",
                                        "Fake NVMM surfaces for tests", "jetpipe");
  static GstStaticPadTemplate src = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS,
                                                            GST_STATIC_CAPS("video/x-raw(ANY)"));
  gst_element_class_add_static_pad_template(element, &src);
  GST_BASE_SRC_CLASS(klass)->negotiate = negotiate;
  GST_PUSH_SRC_CLASS(klass)->create = create;
}

void instance_init(GTypeInstance* instance, gpointer) {
  FakeNvmmSrc* s = self_of(instance);
  s->width = 64;
  s->height = 48;
  s->format = g_strdup("RGBA");
  s->memory = g_strdup("nvmm");
  s->fail_at = s->bl_at = s->unreadable_at = -1;
  s->device = FALSE;
  s->next = 0;
  gst_base_src_set_format(GST_BASE_SRC(instance), GST_FORMAT_TIME);
}

}  // namespace

bool register_fake_nvmm_src() {
  static const bool ok = [] {
    if (!gst_init_check(nullptr, nullptr, nullptr)) return false;
    GTypeInfo info{};
    info.class_size = sizeof(FakeNvmmSrcClass);
    info.class_init = class_init;
    info.instance_size = sizeof(FakeNvmmSrc);
    info.instance_init = instance_init;
    const GType type =
        g_type_register_static(GST_TYPE_PUSH_SRC, "JpFakeNvmmSrc", &info, GTypeFlags(0));
    return gst_element_register(nullptr, "jpfakenvmmsrc", GST_RANK_NONE, type) == TRUE;
  }();
  return ok;
}

#else

bool register_fake_nvmm_src() { return false; }

#endif  // JETPIPE_HAVE_GSTREAMER

}  // namespace jetpipe::test
