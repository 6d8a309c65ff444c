// SPDX-License-Identifier: MIT
// JSON forms of the results contract (README "Results").
#pragma once

#include <nlohmann/json.hpp>

#include "core/results.h"
#include "pipeline/executor.h"

namespace jetpipe {

nlohmann::ordered_json result_to_json(const StageResult& r);
nlohmann::ordered_json record_to_json(const FrameRecord& rec);

}  // namespace jetpipe
