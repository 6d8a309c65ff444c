// SPDX-License-Identifier: MIT
#include "tools/bench/bench.h"

namespace jetpipe::bench {

void bench_detect(Bench&) {}

}  // namespace jetpipe::bench
