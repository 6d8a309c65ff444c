// SPDX-License-Identifier: MIT
#include "stages/registry.h"

#include <algorithm>

#include "core/error.h"

namespace jetpipe {

namespace {

std::vector<ParamSpec> with_border(std::vector<ParamSpec> specs) {
  for (auto& s : border_params()) specs.push_back(std::move(s));
  return specs;
}

std::vector<StageType> build_types() {
  using T = ParamType;
  std::vector<StageType> t;
  t.push_back({"to_gray",
               "BGR8/RGB8/BGRx/RGBx/RGBA → GRAY8 with OpenCV cvtColor's weights and rounding "
               "(NV12: its luma)",
               true,
               {},
               make_to_gray});
  t.push_back({"gaussian", "Gaussian blur (OpenCV GaussianBlur), GRAY8 → GRAY8", true,
               with_border({
                   {"ksize", T::kInt, "", 0, 31, {},
                    "odd kernel size 3..31; 0 = from sigma (default: from sigma if given, else 3)"},
                   {"sigma", T::kNumber, "0", 0, 100, {}, "standard deviation; 0 = from ksize"},
               }),
               make_gaussian});
  t.push_back({"box", "box filter (OpenCV boxFilter), GRAY8 → GRAY8", true,
               with_border({
                   {"ksize", T::kInt, "3", 1, 31, {}, "odd kernel size"},
                   {"normalize", T::kBool, "true", 0, 0, {}, "mean (true) or saturated sum"},
               }),
               make_box});
  t.push_back({"sobel", "Sobel derivative (OpenCV Sobel); the image is named by the stage's name",
               true,
               with_border({
                   {"dx", T::kInt, "1", 0, 2, {}, "x derivative order"},
                   {"dy", T::kInt, "0", 0, 2, {}, "y derivative order"},
                   {"ksize", T::kInt, "3", 1, 5, {}, "aperture: 1, 3 or 5"},
                   {"scale", T::kNumber, "1", -1e6, 1e6, {}, "factor on the derivative"},
                   {"output", T::kChoice, "s16", 0, 0, {"s16", "abs8"},
                    "S16 (like CV_16S) or GRAY8 |value| (convertScaleAbs)"},
               }),
               make_sobel});
  t.push_back({"convolve", "2-D correlation with a kernel (OpenCV filter2D), GRAY8 → GRAY8", true,
               with_border({
                   {"kernel", T::kMatrix, "", 0, 15, {}, "rows of numbers, odd sizes ≤ 15", true},
                   {"delta", T::kNumber, "0", -1e6, 1e6, {}, "added to each result"},
               }),
               make_convolve});
  t.push_back({"harris", "Harris corner response (OpenCV cornerHarris), GRAY8 → F32", true,
               with_border({
                   {"block_size", T::kInt, "3", 1, 31, {}, "neighbourhood size"},
                   {"ksize", T::kInt, "3", 1, 7, {}, "Sobel aperture: 1, 3, 5 or 7"},
                   {"k", T::kNumber, "0.04", 0, 1, {}, "Harris free parameter"},
               }),
               make_harris});
  t.push_back({"histogram", "uniform-bin histogram (OpenCV calcHist) of a GRAY8 image", false,
               {
                   {"bins", T::kInt, "256", 1, 256, {}, "number of bins"},
                   {"range", T::kRange, "[0, 256]", 0, 256, {}, "[lo, hi): values counted"},
               },
               make_histogram});
  t.push_back({"stats", "min, max, mean, population stddev and count (GRAY8, S16, F32)", false, {},
               make_stats});
  t.push_back({"threshold", "binary threshold (OpenCV THRESH_BINARY), GRAY8 → GRAY8", true,
               {
                   {"value", T::kNumberOrChoice, "otsu", 0, 255, {"otsu"},
                    "threshold: pixels > value become max_value; otsu = from the histogram"},
                   {"max_value", T::kNumber, "255", 0, 255, {}, "value of pixels above"},
               },
               make_threshold});
  t.push_back({"detect", "non-maximum suppression on a response (F32, S16, GRAY8)", false,
               {
                   {"threshold", T::kNumber, "", -1e30, 1e30, {}, "absolute: score > threshold"},
                   {"quality", T::kNumber, "", 0, 1, {},
                    "relative: score > quality × the frame's maximum (default 0.01)"},
                   {"nms_radius", T::kInt, "1", 0, 64, {}, "window (2r+1)²"},
                   {"max_detections", T::kInt, "1000", 1, 1000000, {}, "points kept; the rest overflow"},
               },
               make_detect});
  return t;
}

}  // namespace

std::vector<ParamSpec> border_params() {
  return {
      {"border", ParamType::kChoice, "reflect101", 0, 0,
       {"constant", "replicate", "reflect", "reflect101", "wrap"}, "border mode (OpenCV names)"},
      {"border_value", ParamType::kNumber, "0", 0, 255, {}, "value outside for border: constant"},
  };
}

Border parse_border(const Params& p) {
  Border b;
  parse_border_mode(p.get_string("border"), &b.mode);
  b.value = p.get_number("border_value");
  return b;
}

const std::vector<StageType>& stage_types() {
  static const std::vector<StageType> types = build_types();
  return types;
}

const StageType* find_stage_type(const std::string& type) {
  for (const auto& t : stage_types()) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

std::string stage_type_names() {
  std::string out;
  for (const auto& t : stage_types()) out += (out.empty() ? "" : ", ") + t.type;
  return out;
}

std::vector<std::string> common_keys(const StageType& t) {
  std::vector<std::string> keys = {"type", "name", "input"};
  bool output_is_param = false;
  for (const auto& s : t.params) output_is_param = output_is_param || s.key == "output";
  if (t.image_output && !output_is_param) keys.push_back("output");
  return keys;
}

namespace {

std::string name_value(const std::string& file, const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v.IsDefined() ? safe_name(file, v, key) : std::string();
}

}  // namespace

std::unique_ptr<Stage> make_stage(const std::string& file, const YAML::Node& node,
                                  const std::string& previous_image) {
  if (!node.IsMap()) {
    throw config_error(yaml_where(file, node) +
                       ": a stage must be a map like {type: gaussian, ksize: 5}");
  }
  const YAML::Node type_node = node["type"];
  if (!type_node.IsDefined()) {
    throw config_error(yaml_where(file, node) + ": stage has no 'type' (one of " +
                       stage_type_names() + ")");
  }
  const std::string type = type_node.IsScalar() ? type_node.Scalar() : std::string();
  const StageType* t = find_stage_type(type);
  if (!t) {
    throw config_error(yaml_where(file, type_node) + ": type: unknown stage type '" + type +
                       "' (valid: " + stage_type_names() + ")");
  }
  std::string name = name_value(file, node, "name");
  if (name.empty()) name = type;
  std::string input = name_value(file, node, "input");
  if (input.empty()) input = previous_image;
  std::string output;
  if (t->image_output) {
    const auto keys = common_keys(*t);
    const bool has_output_key =
        std::find(keys.begin(), keys.end(), std::string("output")) != keys.end();
    output = has_output_key ? name_value(file, node, "output") : std::string();
    if (output.empty()) output = name;
  }
  const Params params(file, "stage '" + name + "' (" + type + ")", node, &t->params,
                      common_keys(*t));
  std::unique_ptr<Stage> stage = t->make(params);
  stage->set_identity(type, name, input, output);
  return stage;
}

bool accept_formats(PixelFormat in, std::initializer_list<PixelFormat> ok, std::string* why) {
  std::string list;
  for (PixelFormat f : ok) {
    if (f == in) return true;
    list += (list.empty() ? "" : ", ") + std::string(to_string(f));
  }
  if (why) *why = "accepts " + list + " images, not " + to_string(in);
  return false;
}

}  // namespace jetpipe
