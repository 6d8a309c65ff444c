#!/usr/bin/env bash
# On the GPU machine: the 1080p chain's per-block timeline. Builds jetpipe-bench with
# -DJP_BLOCK_TRACE=1 (kernels/block/block_trace.cuh) in build-trace, replays the chain's graph with
# the trace on and summarizes it per kernel (tools/gpu/block_timeline.py): when the blocks started,
# passed their wait for the kernel before, and exited. Usage: tools/gpu/block-trace.sh [OUT dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/jetpipe-out}}
mkdir -p "$OUT"
cmake -S . -B build-trace -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DJETPIPE_DEPS_DIR="$PWD/.deps" -DCMAKE_CUDA_FLAGS="-DJP_BLOCK_TRACE=1" > "$OUT/trace-configure.log"
cmake --build build-trace -j 16 --target jetpipe-bench > "$OUT/trace-build.log"
JP_TRACE_OUT="$OUT/block-trace.csv" build-trace/tools/jetpipe-bench --area pipeline \
  --sizes 1920x1080 --reps 20 > "$OUT/trace-bench.txt"
grep harris_tiled: "$OUT/trace-bench.txt" || true
python3 tools/gpu/block_timeline.py "$OUT/block-trace.csv"
python3 tools/gpu/block_timeline.py "$OUT/block-trace.csv.harris"
