#!/usr/bin/env bash
# Runs the GPU tests under compute-sanitizer: memcheck, racecheck, initcheck and synccheck. Each tool
# must report 0 errors. Usage (on the GPU machine, after tools/gpu/device-test.sh built build-dev):
#   tools/gpu/sanitize.sh [gtest filter, default 'Gpu*']   (logs under $OUT or /tmp/jetpipe-out)
# SANITIZE_TIMEOUT=SECONDS bounds each tool's run (default 0: none); a run cut short fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
filter=${1:-Gpu*}
bin=build-dev/tests/jetpipe_tests
status=0
for tool in memcheck racecheck initcheck synccheck; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  timeout "${SANITIZE_TIMEOUT:-0}" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 \
    "$bin" --gtest_filter="$filter" --gtest_brief=1 > "$OUT/sanitize-$tool.log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$OUT/sanitize-$tool.log" | tail -2 | tr '\n' ' ')
  tests=$(grep -E "^\[  (PASSED|FAILED)  \]" "$OUT/sanitize-$tool.log" | tr '\n' ' ')
  echo "$tool: rc=$rc $summary $tests"
  # What was found, condensed: each distinct finding with its kernel, counted.
  grep -E "^========= +(Invalid|Uninitialized|Race|Error|Program hit|Barrier|Leaked)|^=========     at " \
    "$OUT/sanitize-$tool.log" | sed -E 's/0x[0-9a-f]+/0x_/g' | sort | uniq -c | sort -rn | head -20 \
    > "$OUT/sanitize-$tool-findings.txt"
  [ -s "$OUT/sanitize-$tool-findings.txt" ] && head -8 "$OUT/sanitize-$tool-findings.txt"
  [ $rc -eq 0 ] || status=1
done
exit $status
