#!/usr/bin/env bash
# Runs the GPU tests under compute-sanitizer: memcheck, racecheck, initcheck and synccheck. Each tool
# must report 0 errors. Usage (on the GPU machine, after tools/gpu/device-test.sh built build-dev):
#   tools/gpu/sanitize.sh [gtest filter, default 'Gpu*']   (logs under $OUT or /tmp/jetpipe-out)
# SANITIZE_TIMEOUT=SECONDS bounds each tool's run (default 0: none); a run cut short fails.
# SANITIZE_TOOLS="racecheck ..." picks the tools (default all four).
# The tests see the tool in JETPIPE_SANITIZER: under initcheck a copy queued after a kernel that
# polls for it did not run until that kernel ended, so GpuStreamValue queues the copy first there,
# and the executor equality test leaves the copy_wait: poll profiles out (their order is one CUDA
# does not see; initcheck hung on them). Under any tool that test prints "[ SETTING  ] ..." before
# each setting, so a report in the log falls under the setting that made it. Known and open
# (docs/PERFORMANCE.md): initcheck over the equality tests of config/ (camera, default, video) and
# the regression pipeline reports, in about one pinned-chunked setting with K >= 2 a process, reads
# of rows that the reading kernel's own stream wrote before it, or fails on an illegal address at
# cudaHostAlloc; results stay bit-exact and memcheck is clean. tools/gpu/initcheck_alloc.cu shows
# initcheck reporting such reads in a correct standalone program (about one process in seven).
# SANITIZE_SHARDS=N splits the tests into N googletest shards run side by side, each in its own
# compute-sanitizer process on the one GPU; every shard must pass. Racecheck is mostly host time:
# on the H100 12 shards ran 205 filter edge tests in 3 min 21 s, where one process had been cut
# at 110 s.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
filter=${1:-Gpu*}
bin=build-dev/tests/jetpipe_tests
shards=${SANITIZE_SHARDS:-1}
status=0
for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  pids=()
  logs=()  # this run's logs only (a glob would also read an earlier run's extra shards)
  for ((i = 0; i < shards; ++i)); do
    log="$OUT/sanitize-$tool.log"
    [ "$shards" -gt 1 ] && log="$OUT/sanitize-$tool-shard$i.log"
    logs+=("$log")
    JETPIPE_SANITIZER=$tool GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
      timeout "${SANITIZE_TIMEOUT:-0}" \
      compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 \
      "$bin" --gtest_filter="$filter" --gtest_brief=1 > "$log" 2>&1 &
    pids+=($!)
  done
  rc=0
  for pid in "${pids[@]}"; do
    wait "$pid" || rc=$?
  done
  summary=$(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "${logs[@]}" | sort | uniq -c |
    tr -s ' ' | tr '\n' ';')
  tests=$(grep -hE "^\[  (PASSED|FAILED)  \]" "${logs[@]}" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
  echo "$tool ($shards process(es)): rc=$rc $summary $tests"
  # What was found, condensed: each distinct finding with its kernel, counted.
  grep -hE "^========= +(Invalid|Uninitialized|Race|Error|Program hit|Barrier|Leaked)|^=========     at " \
    "${logs[@]}" | sed -E 's/0x[0-9a-f]+/0x_/g' | sort | uniq -c | sort -rn | head -20 \
    > "$OUT/sanitize-$tool-findings.txt"
  [ -s "$OUT/sanitize-$tool-findings.txt" ] && head -8 "$OUT/sanitize-$tool-findings.txt"
  [ $rc -eq 0 ] || status=1
done
exit $status
