#!/usr/bin/env bash
# Nsight Compute over the benchmark's kernels at one size, summarized per kernel: DRAM throughput
# (% of peak), global-load sectors per request, achieved occupancy, and the top warp stall reason.
# Usage (GPU machine, after a build in build-dev): tools/gpu/profile.sh [bench --filter] [size]
# Environment: BENCH_ARGS (more jetpipe-bench arguments, e.g. "--area pipeline"), NCU_ARGS (more ncu
# arguments, e.g. "-k regex:detect_candidates --launch-count 3"), TAG (suffix of the output files).
set -uo pipefail
cd "$(dirname "$0")/../.."
# The GStreamer bundle the build found, if any (tools/gpu/gst-env.sh, decision 035).
[ -d .deps/gst ] && { . tools/gpu/gst-env.sh > /dev/null || exit 1; }
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
filter=${1:-}
size=${2:-16384x16384}
metrics=dram__throughput.avg.pct_of_peak_sustained_elapsed,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,\
launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__occupancy_limit_shared_mem
ncu --clock-control none --target-processes all --metrics "$metrics" --section WarpStateStats \
  --launch-skip 0 --launch-count 400 ${NCU_ARGS:-} --csv --page raw \
  build-dev/tools/jetpipe-bench --reps 3 --sizes "$size" ${filter:+--filter "$filter"} ${BENCH_ARGS:-} \
  > "$OUT/ncu${TAG:-}.csv" 2> "$OUT/ncu${TAG:-}.err"
python3 tools/gpu/ncu_summary.py "$OUT/ncu${TAG:-}.csv" | tee "$OUT/ncu-summary${TAG:-}.txt"
