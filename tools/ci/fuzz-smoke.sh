#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A short libFuzzer run of each harness of tests/fuzz (config, pnm, y4m, uri), two at a time, in
# the build tools/ci/sanitize.sh made (configured here when absent: clang, CPU only, ASan + UBSan).
# Each starts from its committed seeds (tests/fuzz/corpus/NAME, replayed first: ctest's
# fuzz_NAME_seeds) and runs FUZZ_SECONDS (default 25) from a fresh random seed, printed. Any crash,
# leak, UBSan report, timeout (10 s a unit), allocation over 2 GiB or oracle failure fails the
# script; the reproducer is kept in BUILD/fuzz/NAME/ and printed in base64. New corpus entries
# stay in BUILD/fuzz/NAME/corpus (never written back to the repository).
# Usage: FUZZ_SECONDS=25 tools/ci/fuzz-smoke.sh [build dir, default build-san]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=$(realpath -m "${1:-build-san}")
seconds=${FUZZ_SECONDS:-25}
names=(config pnm y4m uri)
start=$SECONDS
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DJETPIPE_CUDA=OFF -DJETPIPE_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    > /dev/null
fi
cmake --build "$build" --target "${names[@]/#/fuzz_}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
fuzz_one() {
  local name=$1 seconds=$2 root=$3 build=$4
  local work=$build/fuzz/$name dict=()
  rm -rf "$work" && mkdir -p "$work/corpus"
  [ -f "$root/tests/fuzz/$name.dict" ] && dict=(-dict="$root/tests/fuzz/$name.dict")
  if "$build/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" "${dict[@]}" \
       "$work/corpus" "$root/tests/fuzz/corpus/$name" > "$work/log" 2>&1; then
    local runs
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$')
    echo "fuzz-smoke: $name: $runs executions in ${seconds} s, $(grep -o 'Seed: [0-9]*' "$work/log")"
  else
    echo "fuzz-smoke: $name: FAILED" >&2
    grep -vE '^#[0-9]+|^INFO|^MERGE' "$work/log" | tail -n 60 >&2
    for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
      [ -f "$a" ] && echo "reproducer $a (base64): $(base64 -w0 "$a")" >&2
    done
    return 1
  fi
}
export -f fuzz_one
failed=0
printf '%s\n' "${names[@]}" | xargs -P 2 -I{} bash -c 'fuzz_one "$@"' _ {} "$seconds" "$root" \
  "$build" || failed=1
echo "fuzz-smoke: ${#names[@]} harnesses, $((SECONDS - start)) s in all"
if [ $failed -ne 0 ]; then
  echo "fuzz-smoke: FAILED (see above; run a reproducer with $build/tests/fuzz/fuzz_NAME FILE)" >&2
  exit 1
fi
