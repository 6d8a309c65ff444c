#!/usr/bin/env bash
# On the GPU machine: configure, build (sm_90), run every test (GPU tests included) and the
# regression suite, then check the SASS for loads above a PDL wait (tools/gpu/pdl-order.sh); logs
# under $OUT. Usage: [GTEST_FILTER='*Gpu*'] tools/gpu/device-test.sh [extra ctest args]
# ctest runs the gtest binary as shards (jetpipe_tests.shard<i>of<N>; -R shard3 picks one);
# GTEST_FILTER narrows the cases inside every shard.
# With .deps/gst (tools/gpu/gst-bundle.sh, made on a Debian 12 machine) the build and the tests use
# that GStreamer (tools/gpu/gst-env.sh): the bundle is checked first (gst-check.log; a failed check
# fails the run at the end, the rest still runs), nvh264dec and `jetpipe info` are logged, and the
# GStreamer GPU tests' outcomes (GpuNvmm.*, GpuGstCuda.*) are printed with their skip reasons.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
gst_rc=0
if [ -d .deps/gst ]; then
  # shellcheck source=tools/gpu/gst-env.sh
  . tools/gpu/gst-env.sh || exit 1
  tools/gpu/gst-bundle.sh --check > "$OUT/gst-check.log" 2>&1 || gst_rc=1
  head -40 "$OUT/gst-check.log"
  gst-inspect-1.0 nvh264dec > "$OUT/gst-inspect-nvh264dec.txt" 2>&1 ||
    echo "gst: no nvh264dec ($OUT/gst-inspect-nvh264dec.txt)"
else
  echo "gst: no .deps/gst (tools/gpu/gst-bundle.sh): GStreamer only if this machine has it"
fi
# The Python module too where pybind11 is a pip package of the interpreter (python/tests/test_gpu.py
# runs CuPy and torch arrays through it).
pybind11_dir=$(python3 -m pybind11 --cmakedir 2>/dev/null || true)
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DJETPIPE_DEPS_DIR="$PWD/.deps" -DJETPIPE_GTEST_SOURCE="$PWD/.deps/googletest" \
  ${pybind11_dir:+-Dpybind11_DIR="$pybind11_dir"} \
  > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
grep -E "jetpipe |Python module" "$OUT/configure.log"
cmake --build build-dev -j 16 > "$OUT/build.log" 2>&1 || { grep -E "error|Error" -A5 "$OUT/build.log" | head -60; exit 1; }
grep -iE "warning" "$OUT/build.log" | head -20
build-dev/tools/jetpipe info > "$OUT/jetpipe-info.txt" 2>&1
grep -E "^build:|^NVMM|^GStreamer|^device 0" "$OUT/jetpipe-info.txt"
rm -rf build-dev/tests/results  # the shards' XML reports, read below
ctest --test-dir build-dev --output-on-failure -j 4 "$@" > "$OUT/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|Failed|\[  FAILED  \]|\*\*\*|Skipped|Not Run" "$OUT/ctest.log" |
  head -60
# Per test case (ctest counts shards): from the XML reports of the shards that finished.
cat build-dev/tests/results/*.xml 2>/dev/null | awk '/<testcase /{n++} /result="skipped"/{s++}
  /<failure /{f++} END{printf "gtest cases: %d ran, %d skipped, %d failures\n", n, s, f}'
# The GStreamer GPU tests, each with its outcome (and why it skipped).
cat build-dev/tests/results/*.xml 2>/dev/null | awk '
  /<testcase / && /classname="(GpuNvmm|GpuGstCuda)"/ {
    match($0, / name="[^"]*"/); n = substr($0, RSTART + 7, RLENGTH - 8)
    match($0, / classname="[^"]*"/); c = substr($0, RSTART + 12, RLENGTH - 13)
    cur = c "." n; out[cur] = "passed"; k++; next }
  /<testcase / { cur = ""; next }
  cur != "" && /<failure / { out[cur] = "FAILED" }
  cur != "" && /<skipped / {
    match($0, / message="[^"]*"/); m = substr($0, RSTART + 10, RLENGTH - 11)
    gsub(/&#x0A;/, " ", m); gsub(/&quot;/, "\"", m); gsub(/&lt;/, "<", m); gsub(/&gt;/, ">", m)
    gsub(/&amp;/, "\\&", m); out[cur] = "skipped: " m }
  END { for (t in out) print t ": " out[t]
        if (k == 0) print "GpuNvmm, GpuGstCuda: no result (filtered out, or their shard did not finish)" }' |
  sort | tee "$OUT/gst-gpu-tests.txt"
# The Python tests (ctest's python_tests) once more with pytest's own report: what ran and why
# the rest skipped (python/tests/test_gpu.py needs CuPy; its torch case, torch). A full run only
# (no ctest arguments narrowing it).
if [ -d build-dev/python ] && [ $# -eq 0 ]; then
  PYTHONPATH=build-dev/python JETPIPE_CLI=build-dev/tools/jetpipe JETPIPE_SOURCE_DIR="$PWD" \
    python3 -m pytest python/tests -q -rs -p no:cacheprovider > "$OUT/pytest.log" 2>&1 || rc=1
  tail -8 "$OUT/pytest.log"
fi
# No global or texture load above a kernel's wait for the kernel before (kernels/block/pdl.cuh).
tools/gpu/pdl-order.sh build-dev > "$OUT/pdl-order.txt" 2>&1 || rc=1
tail -5 "$OUT/pdl-order.txt"
[ $gst_rc = 0 ] || { echo "gst: the GStreamer bundle check FAILED ($OUT/gst-check.log)"; rc=1; }
exit $rc
