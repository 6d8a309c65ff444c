#!/usr/bin/env bash
# Where a single frame's GPU time goes, without timing events: config/default.yaml run one frame at a
# time (frames_in_flight 1, timing: frame) with the CUPTI tracer injected (tools/gpu/cupti_trace.cpp:
# the start and end of every kernel and copy, graph nodes included), summarized per frame by
# kernel_timeline.py. Usage (GPU machine, after a build in build-dev):
#   tools/gpu/kernel-trace.sh [sizes] [chunks]      e.g. tools/gpu/kernel-trace.sh 1920x1080 4
# Environment: MEMORY (default pinned-chunked), GRAPHS (true/false, default the profile's), and any
# JETPIPE_* switch passes through.
set -uo pipefail
cd "$(dirname "$0")/../.."
# The GStreamer bundle the build found, if any (tools/gpu/gst-env.sh, decision 035).
[ -d .deps/gst ] && { . tools/gpu/gst-env.sh > /dev/null || exit 1; }
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
sizes=${1:-1920x1080}
chunks=${2:-4}
work=$(mktemp -d)
cuda=${CUDA_HOME:-/usr/local/cuda}
g++ -O2 -shared -fPIC -std=c++17 -I"$cuda/include" tools/gpu/cupti_trace.cpp -o "$work/libtrace.so" \
  -L"$cuda/lib64" -lcupti || exit 1
TIMING=frame tools/gpu/single-frame-profile.sh "$chunks" > "$work/single.yaml"
for s in ${sizes//,/ }; do
  w=${s%x*}; h=${s#*x}
  LD_LIBRARY_PATH="$cuda/lib64:${LD_LIBRARY_PATH:-}" CUDA_INJECTION64_PATH="$work/libtrace.so" \
    TRACE_CSV="$work/trace-$s.csv" build-dev/tools/jetpipe run --config config/default.yaml \
    --input "test://blobs?w=$w&h=$h&frames=60&format=bgr8" --platform "$work/single.yaml" \
    --output-dir "$work/out-$s" > "$work/run-$s.log" 2>&1 || { tail -5 "$work/run-$s.log"; continue; }
  echo "== $s, ${MEMORY:-pinned-chunked}, K=$chunks, one frame at a time (CUPTI)" |
    tee "$OUT/kernel-trace-$s-k$chunks.txt"
  python3 tools/gpu/kernel_timeline.py "$work/trace-$s.csv" | tee -a "$OUT/kernel-trace-$s-k$chunks.txt"
done
