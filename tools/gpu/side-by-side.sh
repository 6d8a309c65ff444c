#!/usr/bin/env bash
# On the GPU machine: this tree against BASE, another source tree of the project (e.g. the commit
# before a change: `git archive COMMIT | tar -x -C .base` here, with /.base/ in .git/info/exclude,
# carried with the call), both built alike (sm_90, Release), then the 1080p chain
# (jetpipe-bench --area pipeline) and `jetpipe bench pipeline` run N times each, alternating base
# and new, so both face the same card, clocks and neighbours. Full logs under $OUT; the headline
# rows last. Usage: tools/gpu/side-by-side.sh BASE [N] (N = 3).
set -uo pipefail
cd "$(dirname "$0")/../.."
# The GStreamer bundle the build found, if any (tools/gpu/gst-env.sh, decision 035).
[ -d .deps/gst ] && { . tools/gpu/gst-env.sh > /dev/null || exit 1; }
base=$(cd "$1" && pwd)
n=${2:-3}
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
deps=(-DJETPIPE_DEPS_DIR="$PWD/.deps" -DJETPIPE_GTEST_SOURCE="$PWD/.deps/googletest")
build() {  # source dir, log name
  cmake -S "$1" -B "$1/build-dev" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" > "$OUT/$2-configure.log" 2>&1 &&
    cmake --build "$1/build-dev" -j 8 --target jetpipe jetpipe-bench > "$OUT/$2-build.log" 2>&1
}
build "$PWD" new & pid_new=$!
build "$base" base & pid_base=$!
wait $pid_new || { echo "new: build failed"; grep -m5 -A5 error "$OUT/new-build.log"; exit 1; }
wait $pid_base || { echo "base: build failed"; grep -m5 -A5 error "$OUT/base-build.log"; exit 1; }
for i in $(seq 1 "$n"); do
  for t in base new; do
    dir=$PWD; [ $t = base ] && dir=$base
    "$dir/build-dev/tools/jetpipe-bench" --area pipeline --sizes 1920x1080 --reps 50 \
      > "$OUT/chain-$t-$i.txt" 2>&1
    (cd "$dir" && build-dev/tools/jetpipe bench pipeline --sizes 1920x1080 --frames 1000 \
      --repeat 3 --filter "[discrete") > "$OUT/stream-$t-$i.txt" 2>&1
  done
done
for i in $(seq 1 "$n"); do
  for t in base new; do
    printf '%-4s run %d  chain: %s\n' $t "$i" \
      "$(grep -E '^ *pipeline +jetpipe-graph-gpu ' "$OUT/chain-$t-$i.txt" | head -1 | tr -s ' ')"
    grep -E '\[discrete\] pinned-chunked K=[^ ]* S=' "$OUT/stream-$t-$i.txt" | head -1 |
      sed "s/^/$t run $i  stream: /" | tr -s ' '
  done
done
