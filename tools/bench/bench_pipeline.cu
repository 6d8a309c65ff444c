// SPDX-License-Identifier: MIT
#include "tools/bench/bench.h"

namespace jetpipe::bench {

void bench_pipeline(Bench&) {}

}  // namespace jetpipe::bench
