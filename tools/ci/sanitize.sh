#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# AddressSanitizer + UndefinedBehaviorSanitizer over the CPU test suite: one clang build of the CPU
# backend (OpenCV and GStreamer as found; the Python module off, as an ASan library cannot be
# loaded into an uninstrumented interpreter) in build-san with -fsanitize=address,undefined and
# -fno-sanitize-recover (any report ends its process, so fails its test), plus the coverage
# instrumentation of JETPIPE_FUZZ, so that tools/ci/fuzz-smoke.sh reuses the same build. ctest then
# runs the gtest shards, regress, regress_detects_changes and the examples; the leak checker's
# suppressions for GLib's and GStreamer's own allocations are tests/lsan.supp (tests/CMakeLists.txt
# passes them). Left out: install_offtree (a packaging check that compiles a consumer) and the
# Jetson bring-up dry run (a shell script), which test no code of ours under the sanitizers, and
# the twin-against-OpenCV cases at 640x480 and 1920x1080 and on the photos (GTEST_FILTER below):
# three quarters of the suite's time under ASan, for code the same cases run at 113x113 and at the
# odd sizes (1x1, 1x7, 7x1, 3x129, 129x3), where the edges are. SANITIZE_GTEST_FILTER='*' runs all.
# Usage: tools/ci/sanitize.sh [build dir, default build-san]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-san}
start=$SECONDS
# -O1 with line tables: symbolized reports at about half the compile time of -O2 -g.
mkdir -p "$build"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DJETPIPE_CUDA=OFF -DJETPIPE_PYTHON=OFF -DJETPIPE_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
grep -E "^-- jetpipe" "$build/configure.log"
cmake --build "$build"
built=$SECONDS
echo "sanitize: built in $((built - start)) s"
export GTEST_FILTER=${SANITIZE_GTEST_FILTER:-'-*/640x480*:*/1920x1080*:Photos/*'}
echo "sanitize: GTEST_FILTER=$GTEST_FILTER"
if ! ctest --test-dir "$build" --output-on-failure -j 2 -LE fuzz \
     -E '^(install_offtree|jetson_bring_up_dry_run)$'; then
  echo "sanitize: FAILED (an ASan/UBSan/LSan report or a failing test, above)" >&2
  exit 1
fi
echo "sanitize: ctest in $((SECONDS - built)) s, $((SECONDS - start)) s in all"
