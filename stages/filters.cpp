// SPDX-License-Identifier: MIT
// Image → image stages: to_gray, gaussian, box, sobel, convolve, harris. configure() is the
// constructor (parameters validated, strings turned into enums); run_cpu() only computes rows.
#include <type_traits>

#include "kernels/box.h"
#include "kernels/convolve.h"
#include "kernels/gaussian.h"
#include "kernels/harris.h"
#include "kernels/sobel.h"
#include "kernels/to_gray.h"
#include "stages/gpu_util.h"
#include "stages/registry.h"

namespace jetpipe {

namespace {

#if JETPIPE_HAVE_CUDA
// The CUDA launcher of each filter's parameter type: launch(p, src, dst, y0, y1, ctx, stream).
template <class P>
struct GpuLauncher;
template <>
struct GpuLauncher<GaussianParams> {
  static cudaError_t launch(const GaussianParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, const LaunchContext& ctx, cudaStream_t stream) {
    return launch_gaussian(p, src, dst, y0, y1, ctx, stream);
  }
};
template <>
struct GpuLauncher<BoxParams> {
  static cudaError_t launch(const BoxParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, const LaunchContext& ctx, cudaStream_t stream) {
    return launch_box(p, src, dst, y0, y1, ctx, stream);
  }
};
template <>
struct GpuLauncher<SobelParams> {
  static cudaError_t launch(const SobelParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, const LaunchContext& ctx, cudaStream_t stream) {
    return launch_sobel(p, src, dst, y0, y1, ctx, stream);
  }
};
template <>
struct GpuLauncher<ConvolveParams> {  // no programmatic launches: no context
  static cudaError_t launch(const ConvolveParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, const LaunchContext&, cudaStream_t stream) {
    return launch_convolve(p, src, dst, y0, y1, stream);
  }
};
template <>
struct GpuLauncher<HarrisParams> {
  static cudaError_t launch(const HarrisParams& p, const FilterSource& src, const ImageView& dst,
                            int y0, int y1, const LaunchContext& ctx, cudaStream_t stream) {
    return launch_harris(p, src, dst, y0, y1, ctx, stream);
  }
};

// A filter on the GPU: reads the whole input (textures kept per input view), writes strip rows.
template <class P>
class FilterGpu : public StageGpu {
 public:
  FilterGpu(P p, std::string label) : p_(std::move(p)), label_(std::move(label)) {}
  bool bind(const GpuBinding& b) override {
    in_ = b.in;
    out_ = b.out;
    bool changed = false;
    texture_ = &textures_.get(b.in, p_.border, &changed);  // empty for a colour input (fused)
    return changed;
  }
  // gaussian reads a BGR8 / RGB8 image as its to_gray image in the same pass (launch_gaussian).
  bool fuse_producer(const Stage& producer) override {
    return std::is_same_v<P, GaussianParams> && producer.type() == "to_gray";
  }
  // harris gathers its response's maximum for a detection with quality reading it.
  bool feed_maximum(StageGpu& reader) override {
    if (!std::is_same_v<P, HarrisParams> || max_reader_ != nullptr || !reader.wants_maximum()) {
      return false;
    }
    max_reader_ = &reader;
    return true;
  }
  void launch(int, int, int y0, int y1, const LaunchContext& ctx, GpuStream stream) override {
    const FilterSource src(in_, *texture_);
    if constexpr (std::is_same_v<P, HarrisParams>) {
      if (max_reader_ != nullptr) {
        check_stage_launch(launch_harris_max(p_, src, out_, y0, y1, max_reader_->maximum_feed(),
                                             ctx, stream, FilterPath::kAuto),
                           label_, "launch_harris_max");
        return;
      }
    }
    check_stage_launch(GpuLauncher<P>::launch(p_, src, out_, y0, y1, ctx, stream), label_,
                       "the filter launch");
  }

 private:
  StageGpu* max_reader_ = nullptr;  // feed_maximum's reader
  P p_;
  std::string label_;
  ImageView in_, out_;
  TextureCache textures_;
  const UniqueTexture* texture_ = nullptr;
};

class ToGrayGpu : public StageGpu {
 public:
  explicit ToGrayGpu(std::string label) : label_(std::move(label)) {}
  bool bind(const GpuBinding& b) override {
    in_ = b.in;
    out_ = b.out;
    return false;
  }
  void launch(int, int, int y0, int y1, const LaunchContext&, GpuStream stream) override {
    check_stage_launch(launch_to_gray(in_, out_, y0, y1, stream), label_, "launch_to_gray");
  }

 private:
  std::string label_;
  ImageView in_, out_;
};
#endif  // JETPIPE_HAVE_CUDA

// A GRAY8-input filter with one parameter struct and one CPU twin.
template <class P, void (*Ref)(const P&, const ImageView&, const ImageView&, int, int),
          int (*Halo)(const P&)>
class FilterStage : public Stage {
 public:
  FilterStage(P p, PixelFormat out) : p_(std::move(p)), out_(out) {}
  bool accepts(PixelFormat in, std::string* why) const override {
    return accept_formats(in, {PixelFormat::kGray8}, why);
  }
  PixelFormat output_format(PixelFormat) const override { return out_; }
  int halo() const override { return Halo(p_); }
  bool wraps() const override { return p_.border.mode == BorderMode::kWrap; }
  void run_cpu(int, const ImageView& in, const ImageView& out, int, int y0, int y1) override {
    Ref(p_, in, out, y0, y1);
  }
  std::unique_ptr<StageGpu> make_gpu() const override {
#if JETPIPE_HAVE_CUDA
    return std::make_unique<FilterGpu<P>>(p_, label());
#else
    return nullptr;
#endif
  }
  const P& params() const { return p_; }

 private:
  P p_;
  PixelFormat out_;
};

class ToGrayStage : public Stage {
 public:
  bool accepts(PixelFormat in, std::string* why) const override {
    return accept_formats(
        in,
        {PixelFormat::kBgr8, PixelFormat::kRgb8, PixelFormat::kBgrx8, PixelFormat::kRgbx8,
         PixelFormat::kRgba8, PixelFormat::kGray8, PixelFormat::kNv12},
        why);
  }
  PixelFormat output_format(PixelFormat) const override { return PixelFormat::kGray8; }
  void run_cpu(int, const ImageView& in, const ImageView& out, int, int y0, int y1) override {
    to_gray_ref(in, out, y0, y1);
  }
  std::unique_ptr<StageGpu> make_gpu() const override {
#if JETPIPE_HAVE_CUDA
    return std::make_unique<ToGrayGpu>(label());
#else
    return nullptr;
#endif
  }
};

int odd_ksize(const Params& p, const char* key, int min) {
  const int k = p.get_int(key);
  if (k < min || k % 2 == 0) {
    p.fail(key, "must be odd and at least " + std::to_string(min) + " (got " + std::to_string(k) +
                    ")");
  }
  return k;
}

}  // namespace

std::unique_ptr<Stage> make_to_gray(const Params&) { return std::make_unique<ToGrayStage>(); }

std::unique_ptr<Stage> make_gaussian(const Params& p) {
  const double sigma = p.get_number("sigma");
  // No ksize: from sigma when sigma is given, else 3. ksize 0: from sigma (OpenCV's rule).
  const int ksize = p.has("ksize") ? p.get_int("ksize") : (sigma > 0 ? 0 : 3);
  if (ksize != 0 && (ksize < 3 || ksize % 2 == 0)) {
    p.fail("ksize", "must be odd and at least 3, or 0 for from sigma (got " + std::to_string(ksize) + ")");
  }
  if (ksize == 0 && sigma <= 0) p.fail("sigma", "must be > 0 when ksize is 0");
  const GaussianParams gp = resolve_gaussian(ksize, sigma, parse_border(p));
  if (gp.ksize > 31) {
    p.fail("sigma", "gives a kernel of " + std::to_string(gp.ksize) + " taps; at most 31 (sigma ≤ 5)");
  }
  return std::make_unique<FilterStage<GaussianParams, gaussian_ref, gaussian_halo>>(
      gp, PixelFormat::kGray8);
}

std::unique_ptr<Stage> make_box(const Params& p) {
  BoxParams bp;
  bp.ksize = odd_ksize(p, "ksize", 1);
  bp.normalize = p.get_bool("normalize");
  bp.border = parse_border(p);
  return std::make_unique<FilterStage<BoxParams, box_ref, box_halo>>(bp, PixelFormat::kGray8);
}

std::unique_ptr<Stage> make_sobel(const Params& p) {
  SobelParams sp;
  sp.dx = p.get_int("dx");
  sp.dy = p.get_int("dy");
  sp.ksize = p.get_int("ksize");
  sp.scale = p.get_number("scale");
  sp.abs8 = p.get_string("output") == "abs8";
  sp.border = parse_border(p);
  if (sp.ksize != 1 && sp.ksize != 3 && sp.ksize != 5) p.fail("ksize", "must be 1, 3 or 5");
  if (sp.dx + sp.dy < 1) p.fail("dx", "dx + dy must be at least 1");
  if (sp.ksize == 1 && (sp.dx > 2 || sp.dy > 2)) p.fail("ksize", "1 allows orders up to 2");
  return std::make_unique<FilterStage<SobelParams, sobel_ref, sobel_halo>>(
      sp, sp.abs8 ? PixelFormat::kGray8 : PixelFormat::kS16);
}

std::unique_ptr<Stage> make_convolve(const Params& p) {
  ConvolveParams cp;
  const auto rows = p.get_matrix("kernel");
  cp.rows = static_cast<int>(rows.size());
  cp.cols = static_cast<int>(rows[0].size());
  for (const auto& r : rows) {
    for (double v : r) cp.taps.push_back(static_cast<float>(v));
  }
  cp.delta = p.get_number("delta");
  cp.border = parse_border(p);
  return std::make_unique<FilterStage<ConvolveParams, convolve_ref, convolve_halo>>(
      cp, PixelFormat::kGray8);
}

std::unique_ptr<Stage> make_harris(const Params& p) {
  HarrisParams hp;
  hp.block_size = p.get_int("block_size");
  hp.ksize = p.get_int("ksize");
  hp.k = p.get_number("k");
  hp.border = parse_border(p);
  if (hp.ksize % 2 == 0) p.fail("ksize", "must be 1, 3, 5 or 7");
  return std::make_unique<FilterStage<HarrisParams, harris_ref, harris_halo>>(
      hp, PixelFormat::kF32);
}

}  // namespace jetpipe
