// SPDX-License-Identifier: MIT
// The Python module `jetpipe`: pipeline/api.h's Pipeline, builder and streams, numpy frames in
// (read in place), records out as dicts equal to their results.jsonl lines, kept images as numpy
// arrays owning the record's image. python/README.md says what each call takes and raises.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#if JETPIPE_HAVE_DLPACK
#include <dlpack/dlpack.h>
#endif

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "interrupt.h"
#include "pipeline/api.h"
#include "pipeline/info.h"
#include "pipeline/io/reconnect.h"
#include "pipeline/results_json.h"

namespace py = pybind11;

namespace jetpipe::python {
namespace {

PyObject* g_error = nullptr;         // jetpipe.Error(RuntimeError)
PyObject* g_config_error = nullptr;  // jetpipe.ConfigError(jetpipe.Error)
PyObject* g_input_error = nullptr;   // jetpipe.InputError(jetpipe.Error)

// A config error's place, parsed from jetpipe's "file:line:col: [stage 'n' (type): ]key: ..."
// messages (stages/params.cpp, pipeline/config.cpp); None where the message has no such part.
void set_config_attributes(py::object& exc, const std::string& what) {
  py::object file = py::none(), line = py::none(), column = py::none(), key = py::none(),
             stage = py::none();
  static const std::regex located(R"(^(.+?):(\d+):(\d+): ([\s\S]*)$)");
  static const std::regex unlocated(R"(^(<[^>]*>|[^ :]*[/.][^ :]*): ([\s\S]*)$)");
  static const std::regex stage_label(R"(^stage '([^']*)' \([^)]*\): ([\s\S]*)$)");
  static const std::regex unknown_key(R"(^unknown key '([^']+)')");
  static const std::regex key_first(R"(^([A-Za-z_][A-Za-z0-9_.]*): )");
  std::smatch m;
  std::string rest;
  if (std::regex_match(what, m, located)) {
    file = py::str(m[1].str());
    line = py::int_(std::stoi(m[2].str()));
    column = py::int_(std::stoi(m[3].str()));
    rest = m[4].str();
  } else if (std::regex_match(what, m, unlocated)) {
    file = py::str(m[1].str());
    rest = m[2].str();
  } else {
    rest = what;
  }
  if (std::regex_match(rest, m, stage_label)) {
    stage = py::str(m[1].str());
    rest = m[2].str();
  }
  if (std::regex_search(rest, m, unknown_key) || std::regex_search(rest, m, key_first)) {
    key = py::str(m[1].str());
  }
  exc.attr("file") = file;
  exc.attr("line") = line;
  exc.attr("column") = column;
  exc.attr("key") = key;
  exc.attr("stage") = stage;
}

void raise_error(const Error& e) {
  if (e.kind() == ErrorKind::kRuntime) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return;
  }
  PyObject* type = e.kind() == ErrorKind::kConfig ? g_config_error : g_input_error;
  py::object exc = py::reinterpret_borrow<py::object>(type)(py::str(e.what()));
  if (e.kind() == ErrorKind::kConfig) set_config_attributes(exc, e.what());
  PyErr_SetObject(type, exc.ptr());
}

[[noreturn]] void throw_input(const std::string& what) { throw input_error(what); }

// nlohmann::json → Python objects (dicts keep the JSON's key order).
py::object to_py(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return py::none();
    case nlohmann::ordered_json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case nlohmann::ordered_json::value_t::array: {
      py::list l(j.size());
      for (std::size_t i = 0; i < j.size(); ++i) l[i] = to_py(j[i]);
      return l;
    }
    case nlohmann::ordered_json::value_t::object: {
      py::dict d;
      for (const auto& [k, v] : j.items()) d[py::str(k)] = to_py(v);
      return d;
    }
    default:
      return py::none();
  }
}

// How an image is laid out as an array, on the host (numpy) or the device (CAI, DLPack): NV12 as
// its luma plane, S16 as int16, F32 as float32, the rest uint8 with channels(format) a pixel.
struct ArrayLayout {
  int channels = 1;             // 1: H×W; else H×W×channels
  std::size_t elem = 1;         // bytes an element
  const char* typestr = "|u1";  // numpy's array-interface type string

  explicit ArrayLayout(PixelFormat f) {
    if (f == PixelFormat::kS16 || f == PixelFormat::kF32) {
      elem = f == PixelFormat::kS16 ? 2 : 4;
      typestr = f == PixelFormat::kS16 ? "<i2" : "<f4";
    } else if (f != PixelFormat::kNv12) {
      channels = jetpipe::channels(f);
    }
  }
  std::vector<py::ssize_t> shape(const ImageView& v) const {
    if (channels == 1) return {v.height, v.width};
    return {v.height, v.width, channels};
  }
  std::vector<py::ssize_t> strides(const ImageView& v) const {  // in bytes
    const auto pitch = static_cast<py::ssize_t>(v.pitch);
    if (channels == 1) return {pitch, static_cast<py::ssize_t>(elem)};
    return {pitch, channels, 1};
  }
};

// A record's image as a numpy array over the HostImage (no copy; a capsule owns the image).
// NV12 comes as its luma plane (H×W uint8).
py::array image_to_numpy(const HostImage& image) {
  const ImageView v = image.view();
  const ArrayLayout a(v.format);
  py::capsule owner(new HostImage(image), [](void* p) { delete static_cast<HostImage*>(p); });
  return py::array(py::dtype::from_args(py::str(a.typestr)), a.shape(v), a.strides(v), v.data,
                   owner);
}

// A record's image left in device memory (Pipeline.keep_images(names, device=True)): handed to
// CuPy, PyTorch, Numba... through __cuda_array_interface__ (v3) or DLPack without a copy. The
// buffer lives as long as this object or any array made from it (they hold a reference). Its
// pixels were written before the record was handed over: no stream to wait on.
struct PyDeviceImage {
  KeptDeviceImage image;

  ArrayLayout layout() const { return ArrayLayout(image.view.format); }  // as host images
  py::tuple shape() const { return py::tuple(py::cast(layout().shape(image.view))); }
  py::dict cuda_array_interface() const {
    const ArrayLayout a = layout();
    py::dict d;
    d["shape"] = shape();
    d["typestr"] = a.typestr;
    d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(image.view.data), false);
    d["strides"] = py::tuple(py::cast(a.strides(image.view)));
    d["version"] = 3;
    d["stream"] = py::none();  // ready: written before the record was handed over
    return d;
  }
};

#if JETPIPE_HAVE_DLPACK
struct DlpackExport {
  std::shared_ptr<void> owner;
  std::int64_t shape[3] = {0, 0, 0};
  std::int64_t strides[3] = {0, 0, 0};  // in elements
};

void dlpack_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {  // never consumed: ours to delete
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (t != nullptr && t->deleter != nullptr) t->deleter(t);
  } else {
    PyErr_Clear();
  }
}

py::object to_dlpack(const PyDeviceImage& self) {
  auto* ctx = new DlpackExport;
  ctx->owner = self.image.owner;
  const ImageView& v = self.image.view;
  const ArrayLayout a = self.layout();
  const auto e = static_cast<std::int64_t>(a.elem);
  const std::vector<py::ssize_t> shape = a.shape(v), strides = a.strides(v);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    ctx->shape[i] = shape[i];
    ctx->strides[i] = strides[i] / e;  // in elements: pitches are 256-byte multiples
  }
  auto* t = new DLManagedTensor{};
  t->dl_tensor.data = v.data;
  t->dl_tensor.device = DLDevice{kDLCUDA, self.image.device};
  t->dl_tensor.ndim = static_cast<std::int32_t>(shape.size());
  const PixelFormat f = v.format;
  t->dl_tensor.dtype = DLDataType{static_cast<std::uint8_t>(f == PixelFormat::kS16   ? kDLInt
                                                            : f == PixelFormat::kF32 ? kDLFloat
                                                                                     : kDLUInt),
                                  static_cast<std::uint8_t>(8 * e), 1};
  t->dl_tensor.shape = ctx->shape;
  t->dl_tensor.strides = ctx->strides;
  t->dl_tensor.byte_offset = 0;
  t->manager_ctx = ctx;
  t->deleter = [](DLManagedTensor* m) {
    delete static_cast<DlpackExport*>(m->manager_ctx);
    delete m;
  };
  PyObject* capsule = PyCapsule_New(t, "dltensor", &dlpack_capsule_destructor);
  if (capsule == nullptr) {
    t->deleter(t);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}
#endif

py::dict record_to_py(const FrameRecord& rec, bool with_images) {
  py::dict d = to_py(record_to_json(rec));
  if (with_images) {
    py::dict images;
    for (const auto& [name, img] : rec.images) {
      if (!img.empty()) images[py::str(name)] = image_to_numpy(img);
    }
    for (const auto& [name, img] : rec.device_images) {
      images[py::str(name)] = py::cast(PyDeviceImage{img});
    }
    d["images"] = images;
  }
  return d;
}

// The pixel format of a frame of `ndim` dimensions and `c` channels, `format` naming it or ""
// for the default (gray8, bgr8, bgrx8).
PixelFormat frame_format(int ndim, long c, const std::string& format) {
  PixelFormat f = PixelFormat::kGray8;
  if (ndim == 2) {
    f = PixelFormat::kGray8;
  } else if (ndim == 3 && c == 3) {
    f = PixelFormat::kBgr8;
  } else if (ndim == 3 && c == 4) {
    f = PixelFormat::kBgrx8;
  } else {
    throw_input(
        "frame: expected H×W (gray8), H×W×3 (bgr8, rgb8) or H×W×4 (bgrx8, rgbx8, rgba8) "
        "uint8 pixels, got " +
        std::to_string(ndim) + " dimensions" +
        (ndim == 3 ? " with " + std::to_string(c) + " channels" : ""));
  }
  if (format.empty()) return f;
  PixelFormat named;
  if (!parse_pixel_format(format, &named) || channels(named) != channels(f) ||
      named == PixelFormat::kNv12 || bytes_per_pixel(named) != bytes_per_pixel(f)) {
    throw_input("frame: format '" + format + "' does not fit " + std::to_string(ndim) +
                "-dimensional uint8 pixels with " + std::to_string(ndim == 2 ? 1 : c) +
                " channels (H×W: gray8; H×W×3: bgr8, rgb8; H×W×4: bgrx8, rgbx8, rgba8)");
  }
  return named;
}

// A numpy frame as a HostImage over the array's own buffer (no copy) when its pixels are
// contiguous within a row and rows go forward; any other layout is copied once
// (numpy.ascontiguousarray). The image holds a reference to the array until the frame is done.
HostImage numpy_frame(py::handle obj, const std::string& format) {
  py::array a = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj)
                                               : py::array::ensure(obj);
  if (!a) {
    PyErr_Clear();
    throw_input(
        "frame: expected a numpy array (uint8) or an object with "
        "__cuda_array_interface__, got " +
        std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  if (a.dtype().kind() != 'u' || a.itemsize() != 1) {
    throw_input("frame: expected uint8 pixels, got dtype " + std::string(py::str(a.dtype())));
  }
  const int ndim = static_cast<int>(a.ndim());
  const long c = ndim == 3 ? static_cast<long>(a.shape(2)) : 1;
  const PixelFormat f = frame_format(ndim, c, format);
  if (a.shape(0) <= 0 || a.shape(1) <= 0) throw_input("frame: empty array");
  const bool in_place =
      (ndim == 2 ? a.strides(1) == 1 : (a.strides(2) == 1 && a.strides(1) == c)) &&
      a.strides(0) >= static_cast<py::ssize_t>(a.shape(1) * c);
  if (!in_place) {
    a = py::module_::import("numpy").attr("ascontiguousarray")(a);
  }
  ImageView v;
  v.data = static_cast<std::uint8_t*>(const_cast<void*>(a.data()));
  v.width = static_cast<int>(a.shape(1));
  v.height = static_cast<int>(a.shape(0));
  v.pitch = static_cast<std::size_t>(a.strides(0));
  v.format = f;
  auto* keep = new py::object(a);
  std::shared_ptr<std::uint8_t[]> storage(v.data, [keep](std::uint8_t*) {
    py::gil_scoped_acquire gil;  // dropped by whichever thread finishes with the frame
    delete keep;
  });
  return HostImage(std::move(storage), v);
}

// An object with __cuda_array_interface__ (v2/v3) as a DeviceFrame over its memory: shapes and
// formats as for numpy frames; pixels contiguous within a row (device memory is never copied
// here); `stream` becomes the frame's ready stream (1: the legacy default, 2: per-thread).
DeviceFrame cai_frame(py::handle obj, const std::string& format) {
  py::dict cai = obj.attr("__cuda_array_interface__");
  const py::tuple shape = cai["shape"];
  const std::string typestr = py::str(cai["typestr"]);
  if (typestr != "|u1" && typestr != "<u1" && typestr != ">u1") {
    throw_input("device frame: expected uint8 pixels (typestr '|u1'), got '" + typestr + "'");
  }
  const int ndim = static_cast<int>(shape.size());
  const long c = ndim == 3 ? shape[2].cast<long>() : 1;
  const PixelFormat f = frame_format(ndim, c, format);
  const long h = shape[0].cast<long>(), w = shape[1].cast<long>();
  if (h <= 0 || w <= 0) throw_input("device frame: empty array");
  long s0 = w * c, s1 = c, s2 = 1;
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    const py::tuple st = cai["strides"];
    s0 = st[0].cast<long>();
    s1 = st[1].cast<long>();
    if (ndim == 3) s2 = st[2].cast<long>();
  }
  if ((ndim == 2 ? s1 != 1 : (s2 != 1 || s1 != c)) || s0 < w * c) {
    throw_input(
        "device frame: the pixels of a row must be contiguous and rows must go forward "
        "(strides " +
        std::to_string(s0) + ", " + std::to_string(s1) +
        "); make the array contiguous first (cupy.ascontiguousarray)");
  }
  const py::tuple data = cai["data"];
  DeviceFrame d;
  d.view.data = reinterpret_cast<std::uint8_t*>(data[0].cast<std::uintptr_t>());
  d.view.width = static_cast<int>(w);
  d.view.height = static_cast<int>(h);
  d.view.pitch = static_cast<std::size_t>(s0);
  d.view.format = f;
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    const auto s = cai["stream"].cast<std::uintptr_t>();
    if (s == 0) throw_input("device frame: __cuda_array_interface__ stream 0 is not allowed (v3)");
    d.ready_stream = reinterpret_cast<CUstream_st*>(s);
  }
  auto* keep = new py::object(py::reinterpret_borrow<py::object>(obj));
  d.owner = DeviceFrame::release_with([keep] {
    py::gil_scoped_acquire gil;
    delete keep;
  });
  return d;
}

#if JETPIPE_HAVE_DLPACK
// A DLPack tensor taken from a producer (`obj.__dlpack__(...)`): the capsule renamed
// "used_dltensor" as the protocol asks, the managed tensor's deleter called once the frame is done
// (with the GIL: producers' deleters release Python objects).
struct DlpackTensor {
  DLManagedTensor* t = nullptr;
  explicit DlpackTensor(py::object capsule) {
    PyObject* c = capsule.ptr();
    if (!PyCapsule_IsValid(c, "dltensor")) {
      throw_input("frame: __dlpack__() did not return a 'dltensor' capsule (already consumed?)");
    }
    t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
    PyCapsule_SetName(c, "used_dltensor");
  }
  // The release, for an owner called from any thread.
  std::function<void()> release() {
    DLManagedTensor* m = t;
    t = nullptr;
    return [m] {
      py::gil_scoped_acquire gil;
      if (m->deleter != nullptr) m->deleter(m);
    };
  }
  ~DlpackTensor() {
    if (t != nullptr && t->deleter != nullptr) t->deleter(t);
  }
};

// A DLPack tensor's pixels as a view: uint8, H×W or H×W×C as for numpy frames, pixels contiguous
// within a row and rows going forward (strides in elements; none: compact row-major).
ImageView dlpack_view(const DLTensor& x, const std::string& format) {
  if (x.dtype.code != kDLUInt || x.dtype.bits != 8 || x.dtype.lanes != 1) {
    throw_input("frame: expected uint8 pixels from __dlpack__, got dtype code " +
                std::to_string(x.dtype.code) + " bits " + std::to_string(x.dtype.bits) + " lanes " +
                std::to_string(x.dtype.lanes));
  }
  const int ndim = x.ndim;
  if (ndim != 2 && ndim != 3) frame_format(ndim, 1, format);  // names the shapes taken
  const long c = ndim == 3 ? static_cast<long>(x.shape[2]) : 1;
  const PixelFormat f = frame_format(ndim, c, format);
  const long h = static_cast<long>(x.shape[0]), w = static_cast<long>(x.shape[1]);
  if (h <= 0 || w <= 0) throw_input("frame: empty array");
  long s0 = w * c, s1 = c, s2 = 1;
  if (x.strides != nullptr) {
    s0 = static_cast<long>(x.strides[0]);
    s1 = static_cast<long>(x.strides[1]);
    if (ndim == 3) s2 = static_cast<long>(x.strides[2]);
  }
  if ((ndim == 2 ? s1 != 1 : (s2 != 1 || s1 != c)) || s0 < w * c) {
    throw_input(
        "frame: the pixels of a row must be contiguous and rows must go forward (DLPack strides " +
        std::to_string(s0) + ", " + std::to_string(s1) + "); make the tensor contiguous first");
  }
  ImageView v;
  v.data = static_cast<std::uint8_t*>(x.data) + x.byte_offset;
  v.width = static_cast<int>(w);
  v.height = static_cast<int>(h);
  v.pitch = static_cast<std::size_t>(s0);
  v.format = f;
  return v;
}
#endif

// The DLPack device type `obj` offers (__dlpack__ and __dlpack_device__), or 0 (kNotDlpack).
int dlpack_device(py::handle obj) {
  if (!py::hasattr(obj, "__dlpack__") || !py::hasattr(obj, "__dlpack_device__")) return 0;
  const py::tuple d = obj.attr("__dlpack_device__")();
  return d[0].cast<int>();
}

constexpr int kNotDlpack = 0, kDlpackCpu = 1, kDlpackCuda = 2, kDlpackCudaHost = 3,
              kDlpackCudaManaged = 13;

constexpr const char* kNoDlpack =
    "frame: this jetpipe was built without DLPack (its header, Debian's libdlpack-dev, was not "
    "found): pass a numpy array or an object with __cuda_array_interface__";

constexpr const char* kNoCudaFrames =
    "device frame: this jetpipe was built without CUDA, so GPU arrays (__cuda_array_interface__, "
    "DLPack on a CUDA device) cannot be read (jetpipe.info()['build']['cuda'] is False); copy the "
    "array to the host first "
    "(cupy.asnumpy(a), tensor.cpu().numpy()) and pass the numpy array";

// A DLPack producer in host memory (numpy, a CPU torch tensor; CUDA pinned memory) as a
// HostImage over its buffer: no copy; the tensor is released once the frame is done.
HostImage dlpack_host_frame(py::handle obj, int device, const std::string& format) {
  if (device != kDlpackCpu && device != kDlpackCudaHost) {
    throw_input("frame: __dlpack_device__() says device type " + std::to_string(device) +
                "; jetpipe reads host (1), CUDA host (3), CUDA (2) and CUDA managed (13) memory");
  }
#if JETPIPE_HAVE_DLPACK
  DlpackTensor t(obj.attr("__dlpack__")());
  const ImageView v = dlpack_view(t.t->dl_tensor, format);
  std::shared_ptr<std::uint8_t[]> storage(v.data, [r = t.release()](std::uint8_t*) { r(); });
  return HostImage(std::move(storage), v);
#else
  (void)obj;
  (void)format;
  throw_input(kNoDlpack);
#endif
}

// A DLPack producer in CUDA (or managed) memory as a DeviceFrame: asked for the legacy default
// stream (stream=1), which becomes the frame's ready stream; released after the frame's GPU work.
DeviceFrame dlpack_device_frame(py::handle obj, const std::string& format) {
#if JETPIPE_HAVE_DLPACK
  DlpackTensor t(obj.attr("__dlpack__")(py::arg("stream") = 1));
  DeviceFrame d;
  d.view = dlpack_view(t.t->dl_tensor, format);
  d.ready_stream = reinterpret_cast<CUstream_st*>(std::uintptr_t{1});
  d.owner = DeviceFrame::release_with(t.release());
  return d;
#else
  (void)obj;
  (void)format;
  throw_input(kNoDlpack);
#endif
}

class PyStream;

struct PyPipeline {
  std::unique_ptr<Pipeline> p;
  std::mutex busy;             // one call at a time (a Pipeline runs one frame stream)
  PyStream* active = nullptr;  // the source or inputs being iterated, until they end or close
  bool host_images = false, device_images = false;  // keep_images' two lists are not empty
  bool with_images() const { return host_images || device_images; }

  ~PyPipeline() {
    if (p) {
      py::gil_scoped_release nogil;  // executor threads may drop numpy frames (their deleters
      p.reset();                     // take the GIL) while it joins them
    }
  }
  Pipeline& get() {
    if (!p) throw std::runtime_error("jetpipe.Pipeline: used after close()");
    return *p;
  }
};

std::unique_lock<std::mutex> lock_or_raise(std::mutex& m, const char* what) {
  std::unique_lock<std::mutex> lk(m, std::try_to_lock);
  if (!lk.owns_lock()) throw std::runtime_error(what);
  return lk;
}

// What a Source and an Inputs share: one thread iterating at a time, the pipeline's lock while a
// record is pulled (the GIL released), Ctrl-C (python/interrupt.h), and an ending that drops the
// records in flight so the pipeline starts clean.
class PyStream {
 public:
  PyStream(py::object owner, PyPipeline* pp, std::shared_ptr<std::atomic<int>> stop, bool hook)
      : owner_(std::move(owner)), pp_(pp), stop_(std::move(stop)), hook_(hook) {}
  virtual ~PyStream() = default;

  py::dict next() {
    auto lk = lock_or_raise(iter_, "jetpipe: a source iterated from two threads at once");
    if (done_) throw py::stop_iteration();
    auto busy = lock_or_raise(pp_->busy, "jetpipe.Pipeline: in use by another thread");
    Pipeline& p = pp_->get();
    if (pp_->active != nullptr && pp_->active != this) {
      throw std::runtime_error(
          "jetpipe: another source of this pipeline is being iterated; finish or close it first "
          "(a Pipeline runs one source, or one set of inputs, at a time)");
    }
    // Ctrl-C between frames, or while a frame is awaited: in-flight records dropped, then raised.
    if (PyErr_CheckSignals() != 0) interrupted(busy);
    pp_->active = this;
    FrameRecord rec;
    bool got = false;
    try {
      InterruptHook hook(hook_ ? stop_.get() : nullptr);
      py::gil_scoped_release nogil;
      got = pull(p, &rec);
    } catch (...) {
      busy.unlock();
      finish();
      throw;
    }
    if (stop_->load() != 0 && PyErr_CheckSignals() != 0) interrupted(busy);
    if (!got) {
      busy.unlock();
      const std::string error = finish();
      if (!error.empty()) throw input_error(error);
      throw py::stop_iteration();
    }
    return record_to_py(rec, pp_->with_images());
  }

  // Stops: records still in flight are dropped; later iteration ends at once. Returns the source's
  // error ("" if none).
  std::string finish() {
    std::string error;
    if (pp_->p) {
      py::gil_scoped_release nogil;  // before waiting for a thread that may want the GIL back
      std::lock_guard<std::mutex> busy(pp_->busy);
      if (pp_->p) error = end(*pp_->p);
    }
    if (pp_->active == this) pp_->active = nullptr;
    done_ = true;
    return error;
  }

  void close() {
    auto lk = lock_or_raise(iter_, "jetpipe: close() while another thread iterates the source");
    finish();
    release();
  }

 protected:
  // The next record (false at the end), the GIL released and the pipeline held.
  virtual bool pull(Pipeline& p, FrameRecord* rec) = 0;
  // Drops what is in flight and stops reading, the pipeline held; returns the source's error.
  virtual std::string end(Pipeline& p) = 0;
  // Lets the source(s) go (close()).
  virtual void release() = 0;

  void end_quietly() noexcept {  // for destructors: they never throw into Python
    try {
      finish();
    } catch (...) {
    }
  }

  py::object owner_;  // the Python Pipeline: alive as long as this
  PyPipeline* pp_;
  std::shared_ptr<std::atomic<int>> stop_;  // the sources' SourceOptions::stop

 private:
  [[noreturn]] void interrupted(std::unique_lock<std::mutex>& busy) {
    py::error_already_set e;  // KeyboardInterrupt, taken before finish() releases the GIL
    busy.unlock();
    finish();
    throw e;
  }

  const bool hook_;
  std::mutex iter_;
  bool done_ = false;
};

// Opens with a stop request the Ctrl-C hook can raise (opening may wait: a first frame, a
// reconnect); KeyboardInterrupt if Ctrl-C came meanwhile.
template <typename Open>
auto open_interruptible(const std::shared_ptr<std::atomic<int>>& stop, Open&& open) {
  decltype(open()) opened;
  {
    InterruptHook hook(stop.get());
    py::gil_scoped_release nogil;
    opened = open();
  }
  if (stop->load() != 0 && PyErr_CheckSignals() != 0) throw py::error_already_set();
  return opened;
}

py::dict run_stats_to_py(const RunStats& st) {
  py::dict d;
  d["read"] = st.read;
  d["processed"] = st.processed;
  d["failed"] = st.failed;
  d["dropped"] = st.dropped;
  d["source_error"] = st.source_error;
  return d;
}

class PySource : public PyStream {
 public:
  PySource(py::object owner, PyPipeline* pp, std::shared_ptr<std::atomic<int>> stop,
           std::unique_ptr<Source> s)
      : PyStream(std::move(owner), pp, std::move(stop), s->live()), source_(std::move(s)) {}
  ~PySource() override { end_quietly(); }

  py::dict stats() const { return run_stats_to_py(stats_); }
  std::string describe() const { return source_ ? source_->describe() : "(closed)"; }
  bool live() const { return source_ && source_->live(); }
  py::object total() const {
    if (!source_) return py::none();
    const auto t = source_->total();
    return t ? py::object(py::int_(*t)) : py::object(py::none());
  }

 private:
  bool pull(Pipeline& p, FrameRecord* rec) override {
    if (!stream_) stream_.emplace(p.stream(*source_));
    const bool got = stream_->next(rec);
    stats_ = stream_->stats();
    return got;
  }
  std::string end(Pipeline& p) override {
    if (!stream_) return "";
    stats_ = stream_->stats();
    p.drain();
    stream_.reset();
    return stats_.source_error;
  }
  void release() override { source_.reset(); }

  std::unique_ptr<Source> source_;
  std::optional<Pipeline::Stream> stream_;
  RunStats stats_;
};

// Several inputs (Pipeline::open_inputs): each read on its own thread, records as they complete.
class PyInputs : public PyStream {
 public:
  PyInputs(py::object owner, PyPipeline* pp, std::shared_ptr<std::atomic<int>> stop,
           std::unique_ptr<SourceSet> set)
      : PyStream(std::move(owner), pp, std::move(stop), true), set_(std::move(set)) {}
  ~PyInputs() override { end_quietly(); }

  // While reading, from the inputs' states (read and dropped as their threads last saw them).
  py::dict stats() const { return run_stats_to_py(stream_ ? stream_->stats() : stats_); }
  // Each input's state; its reconnects once it has ended (its thread joined).
  py::list inputs() const {
    py::list out;
    if (!set_) return out;
    for (std::size_t i = 0; i < set_->size(); ++i) {
      const InputState st = set_->state(i);
      nlohmann::ordered_json j = {{"name", st.name}, {"uri", st.uri}, {"opened", st.opened}};
      if (st.opened) {
        j["source"] = st.describe;
        j["live"] = st.live;
      }
      j["read"] = st.taken;
      j["dropped"] = st.dropped;
      j["ended"] = name(st.end);
      if (!st.error.empty()) j["error"] = st.error;
      if (joined_) {
        if (const Source* src = set_->source(i)) {
          if (const std::optional<ReconnectStats> r = reconnect_stats(*src)) {
            j["reconnects"] = reconnects_json(*r);
          }
        }
      }
      out.append(to_py(j));
    }
    return out;
  }

 private:
  bool pull(Pipeline& p, FrameRecord* rec) override {
    if (!stream_) stream_.emplace(p.stream(*set_));
    const bool got = stream_->next(rec);
    joined_ = !got;  // InputStream::next joins the inputs' threads at the end
    return got;
  }
  std::string end(Pipeline& p) override {
    if (!set_) return stats_.source_error;
    if (stream_) {
      stream_->stop(true);
      FrameRecord rest;
      while (stream_->next(&rest)) {
      }
      stats_ = stream_->stats();
      stream_.reset();
    }
    p.drain();
    set_->join();
    joined_ = true;
    stats_.source_error = set_->first_error();
    return stats_.source_error;
  }
  void release() override {
    stream_.reset();
    set_.reset();
  }

  std::unique_ptr<SourceSet> set_;
  std::optional<Pipeline::InputStream> stream_;
  RunStats stats_;  // once stream_ is gone (end())
  bool joined_ = false;
};

py::dict process(PyPipeline& self, py::handle frame, std::int64_t index,
                 const std::string& source_name, const std::string& format) {
  auto busy = lock_or_raise(self.busy, "jetpipe.Pipeline: in use by another thread");
  Pipeline& p = self.get();
  if (self.active != nullptr) {
    throw std::runtime_error(
        "jetpipe.Pipeline.process: a source of this pipeline is being iterated; finish or close "
        "it first");
  }
  FrameRecord rec;
  const int dl = py::isinstance<py::array>(frame) ? kNotDlpack : dlpack_device(frame);
  if (py::hasattr(frame, "__cuda_array_interface__") || dl == kDlpackCuda ||
      dl == kDlpackCudaManaged) {
#if !JETPIPE_HAVE_CUDA
    if (dl != kNotDlpack) throw_input(kNoCudaFrames);  // before __dlpack__ hands over the tensor
#endif
    DeviceFrame d = py::hasattr(frame, "__cuda_array_interface__")
                        ? cai_frame(frame, format)
                        : dlpack_device_frame(frame, format);
#if JETPIPE_HAVE_CUDA
    py::gil_scoped_release nogil;
    rec = p.process(std::move(d), index, source_name);
#else
    (void)d;
    (void)p;
    throw_input(kNoCudaFrames);
#endif
  } else {
    HostImage image =
        dl != kNotDlpack ? dlpack_host_frame(frame, dl, format) : numpy_frame(frame, format);
    py::gil_scoped_release nogil;
    rec = p.process(image, index, source_name);
    image = HostImage();  // the array's reference goes with the GIL released: the deleter takes it
  }
  return record_to_py(rec, self.with_images());
}

// A Python value as YAML text for the builder: bool, int, float (repr: round-trips), str (quoted),
// None, and lists / tuples of these.
std::string yaml_value(py::handle v) {
  if (v.is_none()) return "null";
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) {
    return py::str(py::repr(v));
  }
  if (py::isinstance<py::str>(v)) {
    std::string out = "\"";
    for (char ch : v.cast<std::string>()) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    return out + "\"";
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::string out = "[";
    bool first = true;
    for (py::handle item : v) {
      out += (first ? "" : ", ") + yaml_value(item);
      first = false;
    }
    return out + "]";
  }
  throw py::type_error(
      "builder: a key's value must be a bool, number, string, None or a list of "
      "them, got " +
      std::string(py::str(py::type::of(v).attr("__name__"))));
}

}  // namespace
}  // namespace jetpipe::python

PYBIND11_MODULE(jetpipe, m) {
  using namespace jetpipe;
  using namespace jetpipe::python;
  m.doc() = "jetpipe: streaming image pipelines (CPU and CUDA) over numpy and GPU arrays";
  m.attr("__version__") = JETPIPE_VERSION;

  g_error = PyErr_NewExceptionWithDoc("jetpipe.Error", "A jetpipe configuration or input error.",
                                      PyExc_RuntimeError, nullptr);
  g_config_error = PyErr_NewExceptionWithDoc(
      "jetpipe.ConfigError",
      "A bad config or argument; attributes file, line, column, key, stage (None when unknown).",
      g_error, nullptr);
  g_input_error = PyErr_NewExceptionWithDoc(
      "jetpipe.InputError", "A source that cannot be opened or read, or a frame it cannot take.",
      g_error, nullptr);
  m.attr("Error") = py::handle(g_error);
  m.attr("ConfigError") = py::handle(g_config_error);
  m.attr("InputError") = py::handle(g_input_error);
  py::register_exception_translator([](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const Error& err) {
      raise_error(err);
    }
  });

  m.def(
      "info", [] { return to_py(build_info_to_json(gather_build_info())); },
      "What `jetpipe info` prints, as a dict.");
  m.def(
      "stages", [] { return to_py(stage_types_json()); },
      "Every stage type with its keys, defaults and ranges (`jetpipe stages`), as a list.");

  py::class_<PyStream>(m, "_Stream")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &PyStream::next)
      .def("close", &PyStream::close, "Stops reading; records in flight are dropped.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyStream& s, py::args) { s.close(); });

  py::class_<PySource, PyStream>(m, "Source",
                                 "Frames of one input; iterate to get one record a frame.")
      .def_property_readonly("stats", &PySource::stats)
      .def_property_readonly("live", &PySource::live)
      .def_property_readonly("total", &PySource::total)
      .def("__repr__", [](const PySource& s) { return "<jetpipe.Source " + s.describe() + ">"; })
      .def("describe", &PySource::describe);

  py::class_<PyInputs, PyStream>(
      m, "Inputs",
      "Several inputs, each read on its own thread; iterate to get each frame's record as it "
      "completes (its 'input' names its input).")
      .def_property_readonly("stats", &PyInputs::stats)
      .def_property_readonly("inputs", &PyInputs::inputs)
      .def("__repr__", [](const PyInputs& s) {
        return "<jetpipe.Inputs " + std::to_string(py::len(s.inputs())) + " inputs>";
      });

  py::class_<PyDeviceImage>(m, "DeviceImage",
                            "A record's image in device memory: __cuda_array_interface__ and "
                            "DLPack (cupy.asarray(img), torch.from_dlpack(img)), no copy.")
      .def_property_readonly("shape", &PyDeviceImage::shape)
      .def_property_readonly("format",
                             [](const PyDeviceImage& s) { return to_string(s.image.view.format); })
      .def_property_readonly("device", [](const PyDeviceImage& s) { return s.image.device; })
      .def_property_readonly("__cuda_array_interface__", &PyDeviceImage::cuda_array_interface)
      .def(
          "__dlpack__",
          [](const PyDeviceImage& s, py::object /*stream: ready already*/) -> py::object {
#if JETPIPE_HAVE_DLPACK
            return to_dlpack(s);
#else
            (void)s;
            throw_input(kNoDlpack);
#endif
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const PyDeviceImage& s) { return py::make_tuple(kDlpackCuda, s.image.device); })
      .def("__repr__", [](const PyDeviceImage& s) {
        const ImageView& v = s.image.view;
        return "<jetpipe.DeviceImage " + std::string(to_string(v.format)) + " " +
               std::to_string(v.width) + "x" + std::to_string(v.height) +
               " on cuda:" + std::to_string(s.image.device) + ">";
      });

  py::class_<PyPipeline> pipeline(m, "Pipeline");
  auto make = [](Pipeline p) {
    auto pp = std::make_unique<PyPipeline>();
    pp->p = std::make_unique<Pipeline>(std::move(p));
    return pp;
  };
  pipeline
      .def_static(
          "from_file",
          [make](const std::string& path, const std::string& platform) {
            return make(Pipeline::from_file(path, platform));
          },
          py::arg("path"), py::arg("platform") = "")
      .def_static(
          "from_yaml",
          [make](const std::string& text, const std::string& base_dir,
                 const std::string& platform) {
            return make(Pipeline::from_yaml(text, base_dir, platform));
          },
          py::arg("text"), py::arg("base_dir") = ".", py::arg("platform") = "")
      .def_static("builder", [] { return PipelineBuilder(); })
      .def(
          "keep_images",
          [](PyPipeline& self, std::vector<std::string> names, bool device) {
            Pipeline& p = self.get();
            auto busy = lock_or_raise(self.busy, "jetpipe.Pipeline: in use by another thread");
            if (self.active) throw std::runtime_error("keep_images: a source is being iterated");
            const bool any = !names.empty();
            p.keep_images(std::move(names), device);
            (device ? self.device_images : self.host_images) = any;
          },
          py::arg("names"), py::arg("device") = false)
      .def(
          "open",
          [](py::object self_obj, const std::string& uri) {
            PyPipeline& self = self_obj.cast<PyPipeline&>();
            Pipeline& p = self.get();
            auto stop = std::make_shared<std::atomic<int>>(0);
            std::unique_ptr<Source> s =
                open_interruptible(stop, [&] { return p.open(uri, stop.get()); });
            return std::make_unique<PySource>(self_obj, &self, stop, std::move(s));
          },
          py::arg("uri") = "")
      .def(
          "open_inputs",
          [](py::object self_obj, std::optional<std::vector<std::string>> inputs,
             std::int64_t max_frames) {
            PyPipeline& self = self_obj.cast<PyPipeline&>();
            Pipeline& p = self.get();
            std::vector<InputConfig> list;
            if (inputs) {
              if (inputs->empty()) throw config_error("open_inputs: an empty list of inputs");
              list = parse_input_args(*inputs, p.config().input_defaults());
            }
            auto stop = std::make_shared<std::atomic<int>>(0);
            std::unique_ptr<SourceSet> set = open_interruptible(stop, [&] {
              std::unique_ptr<SourceSet> opened = p.open_inputs(list, max_frames, stop.get());
              opened->wait_open();  // throws when no input can be opened
              return opened;
            });
            return std::make_unique<PyInputs>(self_obj, &self, stop, std::move(set));
          },
          py::arg("inputs") = py::none(), py::arg("max_frames") = -1)
      .def("process", &process, py::arg("frame"), py::arg("index") = 0, py::arg("source") = "",
           py::arg("format") = "")
      .def("close",
           [](PyPipeline& self) {
             auto busy = lock_or_raise(self.busy, "jetpipe.Pipeline: close() while in use");
             self.active = nullptr;  // its source's next call says the pipeline is closed
             std::unique_ptr<Pipeline> gone = std::move(self.p);
             py::gil_scoped_release nogil;
             gone.reset();
           })
      .def_property_readonly("closed", [](const PyPipeline& self) { return !self.p; })
      .def_property_readonly("platform",
                             [](PyPipeline& self) { return self.get().platform().name; })
      .def_property_readonly("image_names",
                             [](PyPipeline& self) { return self.get().config().image_names(); })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](py::object self, py::args) { self.attr("close")(); });

  py::class_<PipelineBuilder>(m, "Builder", "Stages in code, validated as a config file is.")
      .def(
          "input",
          [](PipelineBuilder& b, const std::string& uri) -> PipelineBuilder& {
            return b.input(uri);
          },
          py::return_value_policy::reference_internal)
      .def(
          "platform",
          [](PipelineBuilder& b, const std::string& name) -> PipelineBuilder& {
            return b.platform(name);
          },
          py::return_value_policy::reference_internal)
      .def(
          "stage",
          [](PipelineBuilder& b, const std::string& type, py::kwargs kw) -> PipelineBuilder& {
            std::vector<std::pair<std::string, std::string>> keys;
            for (const auto& [k, v] : kw) keys.emplace_back(py::str(k), yaml_value(v));
            return b.stage(type, keys);
          },
          py::arg("type"), py::return_value_policy::reference_internal)
      .def("yaml", &PipelineBuilder::yaml)
      .def("build", [make](const PipelineBuilder& b) { return make(b.build()); });
}
