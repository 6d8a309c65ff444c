// SPDX-License-Identifier: MIT
#include "tools/bench/bench.h"

namespace jetpipe::bench {

void bench_filters(Bench&) {}

}  // namespace jetpipe::bench
