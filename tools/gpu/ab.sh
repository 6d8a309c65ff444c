#!/usr/bin/env bash
# On the GPU machine: one device call that judges a change. NEW and BASE are source trees of the
# project (this checkout, or one copied beside it: `git archive COMMIT | tar -x -C .base` here with
# /.base/ in .git/info/exclude, carried with the call); both are built alike (sm_90, Release) in
# parallel, then NEW's GPU tests, its tests under compute-sanitizer memcheck (correctness before
# speed: a deadline cuts the benches, not the checks), the bench runs N times each alternating BASE
# and NEW (same card, clocks and neighbours), Nsight Compute over NEW and BASE, and
# tools/gpu/pdl-order.sh over NEW; each step within what is left of the deadline.
# The device tool brings back eight files at most: this writes two, $OUT/summary.txt (the steps,
# test outcomes, the bench rows of both trees side by side, ncu's headline metrics) and
# $OUT/logs.tgz (every log), and prints the summary.
#
# Usage: tools/gpu/ab.sh [options] NEW [BASE]      (BASE "-" or absent: NEW alone)
#   -t FILTER   gtest filter of NEW's tests to run (e.g. '*GpuBox*:GpuFastRing*': parameterized
#               suites are named PREFIX/Suite.Test/N, so 'GpuBox*' alone matches none of them)
#   -m FILTER   gtest filter to run under compute-sanitizer memcheck
#   -M SECONDS  the memcheck step's limit (default 120; a step cut short says rc=124 and gives no
#               verdict: memcheck slows a test 10-50×)
#   -b ARGS     jetpipe-bench arguments, one run set per -b (e.g. '--area filters --filter box
#               --sizes 16384x16384 --reps 25'); rows of both trees go to the summary
#   -g REGEX    only bench rows matching REGEX in the summary (default: every row)
#   -k SPEC     ncu over one launch of a kernel, SPEC = REGEX[::BENCH ARGS[::SKIP]]: REGEX
#               against the demangled name, templates as ncu writes them ('running_box_kernel<
#               .int.7, .bool.0' for <(int)7, (bool)0, ...>); the bench with BENCH ARGS (default:
#               the first -b's), --reps 3; SKIP matching launches first (default 2). Repeatable.
#   -n N        bench runs of each tree (default 2)
#   -d SECONDS  deadline from the start (default 270): steps past it are skipped, not cut short
set -uo pipefail
tests_filter="" mem_filter="" rows_re="" runs=2 deadline=270 mem_limit=120
benches=() ncu_specs=()
while getopts "t:m:M:b:g:k:n:d:" o; do
  case $o in
    t) tests_filter=$OPTARG ;;
    m) mem_filter=$OPTARG ;;
    M) mem_limit=$OPTARG ;;
    b) benches+=("$OPTARG") ;;
    g) rows_re=$OPTARG ;;
    k) ncu_specs+=("$OPTARG") ;;
    n) runs=$OPTARG ;;
    d) deadline=$OPTARG ;;
    *) sed -n '2,27p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,27p' "$0"; exit 2; }
new=$(cd "$1" && pwd) || exit 2
base=${2:--}
[ "$base" != - ] && { base=$(cd "$base" && pwd) || exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
L=$(mktemp -d)
S=$OUT/summary.txt
: > "$S"
t0=$(date +%s)
left() { echo $((deadline - ($(date +%s) - t0))); }
say() { printf '[%4ds] %s\n' "$(($(date +%s) - t0))" "$*" | tee -a "$S"; }
step() {  # seconds, log, command...: runs within min(seconds, time left)
  local s=$1 log=$2 l
  shift 2
  l=$(left)
  [ "$l" -lt "$s" ] && s=$l
  if [ "$s" -le 3 ]; then
    say "skipped (deadline): $log"
    return 99
  fi
  timeout "$s" "$@" > "$L/$log" 2>&1
  local rc=$?
  say "rc=$rc $log"
  return $rc
}
finish() {
  tar -czf "$OUT/logs.tgz" -C "$L" . 2> /dev/null
  cat "$S"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$S"
date -u | tee -a "$S"

deps=(-DJETPIPE_DEPS_DIR="$root/.deps" -DJETPIPE_GTEST_SOURCE="$root/.deps/googletest")
jobs=16
[ "$base" != - ] && jobs=8
build() {  # source dir, name, targets...
  local src=$1 name=$2
  shift 2
  step $(($(left) - 20)) "build-$name.log" bash -c \
    "cmake -S '$src' -B '$src/build-ab' -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES=90 ${deps[*]} && cmake --build '$src/build-ab' -j $jobs \
       --target $*"
}
targets=(jetpipe-bench)
[ -n "$tests_filter$mem_filter" ] && targets+=(jetpipe_tests)
build "$new" new "${targets[@]}" &
pid_new=$!
pid_base=
[ "$base" != - ] && { build "$base" base jetpipe-bench & pid_base=$!; }
wait $pid_new
rc_new=$?
rc_base=1
[ -n "$pid_base" ] && { wait $pid_base; rc_base=$?; }
if [ $rc_new != 0 ]; then
  grep -m5 -B2 -A8 'error' "$L/build-new.log" | tail -40 | tee -a "$S"
  finish
  exit 1
fi
grep -h 'warning' "$L/build-new.log" | sort -u | head -5 | tee -a "$S"
tests=$new/build-ab/tests/jetpipe_tests
status=0
if [ -n "$tests_filter" ]; then
  step 150 tests.log "$tests" --gtest_filter="$tests_filter" || status=1
  grep -E '^\[  (PASSED|FAILED) |^\[==========\] [0-9]+ tests' "$L/tests.log" | tee -a "$S"
  grep -E '^\[  FAILED  \]' "$L/tests.log" | head -10 | tee -a "$S"
fi
if [ -n "$mem_filter" ]; then
  step "$mem_limit" memcheck.log compute-sanitizer --tool memcheck --error-exitcode 9 "$tests" \
    --gtest_filter="$mem_filter" || status=1
  grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED) ' "$L/memcheck.log" | tee -a "$S"
fi
for ((i = 1; i <= runs; ++i)); do
  for t in base new; do
    dir=$new
    if [ $t = base ]; then
      [ $rc_base = 0 ] || continue
      dir=$base
    fi
    for ((j = 0; j < ${#benches[@]}; ++j)); do
      # shellcheck disable=SC2086  # the bench arguments are words
      step 60 "bench$j-$t-$i.txt" "$dir/build-ab/tools/jetpipe-bench" ${benches[$j]}
    done
  done
done
for ((j = 0; j < ${#ncu_specs[@]}; ++j)); do
  spec=${ncu_specs[$j]}
  ncu_re=${spec%%::*}
  rest=
  [[ $spec == *::* ]] && rest=${spec#*::}
  ncu_args=${rest%%::*}
  ncu_skip=2
  [[ $rest == *::* ]] && ncu_skip=${rest#*::}
  [ -n "$ncu_args" ] || ncu_args=${benches[0]:-}
  [ -n "$ncu_args" ] || { say "skipped (no bench arguments): ncu $ncu_re"; continue; }
  # The bench takes one --reps (a second one fails: "--reps: At Most 1 required but received 2").
  ncu_args=$(sed -E 's/--reps[ =]+[0-9]+//g' <<< "$ncu_args")
  for t in new base; do
    dir=$new
    if [ $t = base ]; then
      [ $rc_base = 0 ] || continue
      dir=$base
    fi
    # shellcheck disable=SC2086
    step 45 "ncu$j-$t.txt" ncu --clock-control none --kernel-name-base demangled \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section SchedulerStats -k "regex:$ncu_re" --launch-skip "$ncu_skip" --launch-count 1 \
      "$dir/build-ab/tools/jetpipe-bench" ${ncu_args} --reps 3
    {
      echo "== ncu $t: $ncu_re ($ncu_args)"
      grep -q 'No kernels were profiled' "$L/ncu$j-$t.txt" && echo "no launch matched"
      grep -E '^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Registers Per Thread|Grid Size' \
        "$L/ncu$j-$t.txt" | head -12
    } | tee -a "$S"
  done
done
step 60 pdl-order.log bash "$root/tools/gpu/pdl-order.sh" "$new/build-ab" || status=1
tail -1 "$L/pdl-order.log" | tee -a "$S"

# The bench rows, both trees, run by run (the live rows, before each run's closing table).
for ((j = 0; j < ${#benches[@]}; ++j)); do
  echo "== bench: ${benches[$j]}" >> "$S"
  for ((i = 1; i <= runs; ++i)); do
    for t in base new; do
      f=$L/bench$j-$t-$i.txt
      [ -f "$f" ] || continue
      awk '/^kernel +impl/ {exit} 1' "$f" | grep -E "${rows_re:-.}" | grep -vE '^(device|\s*$)' |
        tr -s ' ' | cut -c1-120 | sed "s/^/$t $i: /"
      grep -m1 -E '^device:' "$f" | sed -E "s/.*copy bandwidth[^)]*\) /$t $i: copy /"
    done
  done >> "$S"
done
finish
exit $status
