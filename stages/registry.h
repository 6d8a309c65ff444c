// SPDX-License-Identifier: MIT
// Every stage type, registered by name in one place (registry.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/border.h"
#include "stages/params.h"
#include "stages/stage.h"

namespace jetpipe {

struct StageType {
  std::string type;
  std::string doc;
  bool image_output;  // writes an image (has an `output` name) or returns a result
  std::vector<ParamSpec> params;
  std::unique_ptr<Stage> (*make)(const Params& params);
};

const std::vector<StageType>& stage_types();
const StageType* find_stage_type(const std::string& type);
std::string stage_type_names();  // "to_gray, gaussian, ..." for error messages

// Keys every stage of this type takes besides its parameters.
std::vector<std::string> common_keys(const StageType& t);

// Builds a stage from its YAML map. `previous_image` is the default input. Throws config errors
// naming the file, line, column and key.
std::unique_ptr<Stage> make_stage(const std::string& file, const YAML::Node& node,
                                  const std::string& previous_image);

// Stage constructors, one per file in stages/.
std::unique_ptr<Stage> make_to_gray(const Params&);
std::unique_ptr<Stage> make_gaussian(const Params&);
std::unique_ptr<Stage> make_box(const Params&);
std::unique_ptr<Stage> make_sobel(const Params&);
std::unique_ptr<Stage> make_convolve(const Params&);
std::unique_ptr<Stage> make_harris(const Params&);
std::unique_ptr<Stage> make_histogram(const Params&);
std::unique_ptr<Stage> make_stats(const Params&);
std::unique_ptr<Stage> make_threshold(const Params&);
std::unique_ptr<Stage> make_detect(const Params&);

// Shared parameter declarations.
std::vector<ParamSpec> border_params();
Border parse_border(const Params& p);

}  // namespace jetpipe
