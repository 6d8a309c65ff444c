#!/usr/bin/env bash
# On the GPU machine, from a checkout of the base (e.g. main) with the tree under test copied to NEW
# (decision 044): both built alike (sm_90, Release) in parallel, then the Otsu GPU tests, the same
# under compute-sanitizer memcheck (and racecheck while time is left), tools/gpu/pdl-order.sh, the
# Otsu bench rows N times each alternating base and new, and Nsight Compute over otsu_kernel; each
# step within a deadline (seconds from the start). Logs in a scratch folder, gathered into six files
# under $OUT at the end (the device tool returns eight at most); a summary last.
# Usage: tools/gpu/otsu-device.sh NEW [BASE=. or - for none] [N=2] [DEADLINE=225]
set -uo pipefail
OUT=${OUT:-/tmp/jetpipe-out}
final_out=$OUT
OUT=$(mktemp -d)
mkdir -p "$final_out"
new=$(cd "$1" && pwd)
base=${2:-.}
[ "$base" != - ] && base=$(cd "$base" && pwd)  # "-": the new tree alone (no base build)
n=${3:-2}
deadline=${4:-225}
t0=$(date +%s)
left() { echo $((deadline - ($(date +%s) - t0))); }
step() {  # seconds, log, command...: runs within min(seconds, time left), notes the status
  local s=$1 log=$2
  shift 2
  local l
  l=$(left)
  [ "$l" -lt "$s" ] && s=$l
  if [ "$s" -le 2 ]; then
    echo "SKIPPED (no time left): $*" | tee -a "$OUT/steps.txt"
    return 99
  fi
  timeout "$s" "$@" > "$OUT/$log" 2>&1
  local rc=$?
  printf '%4ds rc=%-3d %s\n' "$(($(date +%s) - t0))" "$rc" "$log" | tee -a "$OUT/steps.txt"
  return $rc
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
date -u +%F | tee -a "$OUT/gpu.txt"
jobs=8
[ "$base" = - ] && jobs=16
deps=(-DJETPIPE_DEPS_DIR="$PWD/.deps" -DJETPIPE_GTEST_SOURCE="$PWD/.deps/googletest")
# The new tree's test binary with only the Otsu tests' files (the whole suite took most of a build).
mkdir -p "$new/.left-out"
for f in "$new"/tests/test_*.cpp; do
  case "$f" in */test_gpu_reductions.cpp | */test_util.cpp) ;; *) mv "$f" "$new/.left-out/" ;; esac
done
build() {  # source dir, log, targets...: configure and build within the build's deadline
  local src=$1 log=$2
  shift 2
  { timeout $(($(left) - 15)) cmake -S "$src" -B "$src/build-dev" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" &&
      timeout $(($(left) - 15)) cmake --build "$src/build-dev" -j "$jobs" --target "$@"; } \
    > "$OUT/$log" 2>&1
  local rc=$?
  printf '%4ds rc=%-3d %s\n' "$(($(date +%s) - t0))" "$rc" "$log" | tee -a "$OUT/steps.txt"
  return $rc
}
build "$new" build-new.log jetpipe-bench jetpipe_tests &
pid_new=$!
pid_base=
[ "$base" != - ] && { build "$base" build-base.log jetpipe-bench & pid_base=$!; }
wait $pid_new
rc_new=$?
rc_base=1
[ -n "$pid_base" ] && { wait $pid_base; rc_base=$?; }
if [ $rc_new != 0 ]; then
  grep -m5 -B2 -A8 'error' "$OUT/build-new.log" | tail -40
  exit 1
fi
tests=$new/build-dev/tests/jetpipe_tests
filter='GpuOtsu.*:GpuThreshold.*'
step 40 tests.log "$tests" --gtest_filter="$filter"
for i in $(seq 1 "$n"); do
  for t in base new; do
    dir=$new
    [ $t = base ] && dir=$base
    [ $t = base ] && [ $rc_base != 0 ] && continue
    step 30 "bench-$t-$i.txt" "$dir/build-dev/tools/jetpipe-bench" --area reductions \
      --filter otsu --sizes 16384x16384,1920x1080 --reps 25
  done
done
sfilter='GpuOtsu.*:GpuThreshold.OtsuOnDevice'
step 40 memcheck.log compute-sanitizer --tool memcheck --error-exitcode 1 "$tests" \
  --gtest_filter="$sfilter"
step 20 pdl-order.log bash "$new/tools/gpu/pdl-order.sh" "$new/build-dev"
step 45 ncu.csv ncu --clock-control none -k regex:otsu_kernel --launch-count 40 \
  --section WarpStateStats --metrics gpu__time_duration.sum,sm__cycles_elapsed.max \
  --csv --page raw "$new/build-dev/tools/jetpipe-bench" --area reductions --filter otsu \
  --sizes 1920x1080 --reps 3
python3 - "$OUT/ncu.csv" > "$OUT/ncu-summary.txt" 2>&1 << 'EOF'
import csv, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.DictReader(lines))
rows = rows[1:] if rows and rows[0].get("ID", "").strip() == "" else rows
def num(v):
    try: return float(str(v).replace(",", ""))
    except ValueError: return None
groups = {}
for r in rows:  # certified launches (< 15 us) apart from step-for-step ones
    t = num(r.get("gpu__time_duration.sum")) / 1e3
    g = groups.setdefault("step for step" if t > 15 else "certified", {"t": [], "st": {}})
    g["t"].append(t)
    for k, v in r.items():
        if "warps_issue_stalled_" in k and k.endswith("_per_issue_active.ratio") and num(v):
            name = k.split("issue_stalled_")[-1].replace("_per_issue_active.ratio", "")
            g["st"][name] = g["st"].get(name, 0) + num(v)
for name, g in groups.items():
    n = len(g["t"])
    top = sorted(g["st"].items(), key=lambda kv: -kv[1])[:6]
    print(f"ncu otsu_kernel {name}: {n} launches, {min(g['t']):.2f}-{max(g['t']):.2f} us; "
          "stalls per issue: " + ", ".join(f"{k} {v / n:.2f}" for k, v in top))
EOF
step 40 racecheck.log compute-sanitizer --tool racecheck --error-exitcode 1 "$tests" \
  --gtest_filter="$sfilter"

echo "==== summary"
for i in $(seq 1 "$n"); do
  for t in base new; do
    [ -f "$OUT/bench-$t-$i.txt" ] || continue
    awk '/^kernel/ {exit} /otsu/' "$OUT/bench-$t-$i.txt" | sed "s/^/$t $i: /" | tr -s ' ' |
      sed -E 's/ [0-9.]+ GB\/s [0-9.]+%//' | cut -c1-110
  done
done
cat "$OUT/ncu-summary.txt"
cat "$OUT/gpu.txt" "$OUT/steps.txt"
grep -E 'GpuOtsu:|OK \]|FAILED|Failure|PASSED' "$OUT/tests.log" | head -20
grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/memcheck.log" | tail -3 | sed 's/^/memcheck: /'
grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED|hazard' "$OUT/racecheck.log" | tail -3 |
  sed 's/^/racecheck: /'
tail -1 "$OUT/pdl-order.log"
# Six files back: summary (gpu, steps, tests), bench runs, sanitizers + pdl-order, ncu, builds.
{ cat "$OUT/gpu.txt" "$OUT/steps.txt"; cat "$OUT/tests.log"; } > "$final_out/tests.txt" 2>/dev/null
for f in "$OUT"/bench-*.txt; do echo "== ${f##*/}"; cat "$f"; done > "$final_out/bench.txt" 2>/dev/null
for f in memcheck.log racecheck.log pdl-order.log; do echo "== $f"; cat "$OUT/$f"; done \
  > "$final_out/sanitizers.txt" 2>/dev/null
cp "$OUT/ncu-summary.txt" "$final_out/" 2>/dev/null
cp "$OUT/ncu.csv" "$final_out/" 2>/dev/null
for f in build-new.log build-base.log; do echo "== $f"; tail -40 "$OUT/$f"; done \
  > "$final_out/builds.txt" 2>/dev/null
