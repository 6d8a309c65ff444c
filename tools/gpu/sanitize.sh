#!/usr/bin/env bash
# Runs the GPU tests under compute-sanitizer: memcheck, racecheck, initcheck and synccheck. Each tool
# must report 0 errors. Usage (on the GPU machine, after tools/gpu/device-test.sh built build-dev):
#   tools/gpu/sanitize.sh [gtest filter, default '*Gpu*': every GPU test]
# Logs under $OUT (or /tmp/jetpipe-out).
# SANITIZE_TIMEOUT=SECONDS bounds each process (default 0: none); a process cut short fails.
# SANITIZE_TOOLS="racecheck ..." picks the tools (default all four).
# The tests see the tool in JETPIPE_SANITIZER: under initcheck a copy queued after a kernel that
# polls for it did not run until that kernel ended, so GpuStreamValue queues the copy first there,
# and the executor equality test leaves the copy_wait: poll profiles out (their order is one CUDA
# does not see, and initcheck reported reads after the polled copy). Under any tool that test
# prints "[ SETTING  ] ..." before each setting, so a report in the log falls under its setting.
# initcheck runs with the GPU to itself: its shards run one after another. Side by side with other
# processes on the GPU it reported uninitialized reads of rows that the reading kernel's own stream
# had written, or failed on an illegal address surfacing at cudaHostAlloc, in 10 of 12 processes
# of the executor's equality tests (K = 3 settings) on the H100; the same settings alone, and then
# every GPU test alone: 0 errors (H100, 2026-11-24, commit 188ae7f; docs/PERFORMANCE.md).
# SANITIZE_SHARDS=N splits the tests into N googletest shards, each in its own compute-sanitizer
# process; every shard must pass. Memcheck, racecheck and synccheck run their shards side by side
# (racecheck is mostly host time: on the H100 16 shards ran 1793 filter tests in 500 s).
# SANITIZE_ONLY="I J ..." runs only those shards (to spread a tool over several calls).
set -uo pipefail
cd "$(dirname "$0")/../.."
# The GStreamer bundle the build found, if any (tools/gpu/gst-env.sh, decision 035).
[ -d .deps/gst ] && { . tools/gpu/gst-env.sh > /dev/null || exit 1; }
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
filter=${1:-*Gpu*}
bin=build-dev/tests/jetpipe_tests
shards=${SANITIZE_SHARDS:-1}
status=0
for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  pids=()
  logs=()  # this run's logs only (a glob would also read an earlier run's extra shards)
  rc=0
  for i in ${SANITIZE_ONLY:-$(seq 0 $((shards - 1)))}; do
    log="$OUT/sanitize-$tool.log"
    [ "$shards" -gt 1 ] && log="$OUT/sanitize-$tool-shard$i.log"
    logs+=("$log")
    JETPIPE_SANITIZER=$tool GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
      timeout "${SANITIZE_TIMEOUT:-0}" \
      compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 \
      "$bin" --gtest_filter="$filter" --gtest_brief=1 > "$log" 2>&1 &
    if [ "$tool" = initcheck ]; then  # alone on the GPU (header)
      start=$SECONDS
      wait $! || rc=$?
      echo "initcheck shard $i: $((SECONDS - start)) s"
    else
      pids+=($!)
    fi
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || rc=$?
  done
  summary=$(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "${logs[@]}" | sort | uniq -c |
    tr -s ' ' | tr '\n' ';')
  tests=$(grep -hE "^\[  (PASSED|FAILED)  \]" "${logs[@]}" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
  echo "$tool (${#logs[@]} process(es)): rc=$rc $summary $tests"
  # What was found, condensed: each distinct finding with its kernel, counted.
  grep -hE "^========= +(Invalid|Uninitialized|Race|Error|Program hit|Barrier|Leaked)|^=========     at " \
    "${logs[@]}" | sed -E 's/0x[0-9a-f]+/0x_/g' | sort | uniq -c | sort -rn | head -20 \
    > "$OUT/sanitize-$tool-findings.txt"
  [ -s "$OUT/sanitize-$tool-findings.txt" ] && head -8 "$OUT/sanitize-$tool-findings.txt"
  [ $rc -eq 0 ] || status=1
done
exit $status
