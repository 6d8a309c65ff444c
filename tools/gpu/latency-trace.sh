#!/usr/bin/env bash
# One frame at a time through the discrete profile with K strips (frames_in_flight 1), a timeline
# per size, summarized by trace_summary.py: where a single frame's time goes after its H2D.
# Usage (GPU machine, after a build in build-dev): tools/gpu/latency-trace.sh [sizes] [chunks]
# Environment: MEMORY (default pinned-chunked), GRAPHS (true/false, default the profile's).
set -uo pipefail
cd "$(dirname "$0")/../.."
# The GStreamer bundle the build found, if any (tools/gpu/gst-env.sh, decision 035).
[ -d .deps/gst ] && { . tools/gpu/gst-env.sh > /dev/null || exit 1; }
OUT=${OUT:-/tmp/jetpipe-out}
mkdir -p "$OUT"
sizes=${1:-1920x1080,3840x2160}
chunks=${2:-4}
work=$(mktemp -d)
TIMING= tools/gpu/single-frame-profile.sh "$chunks" > "$work/single.yaml"
tag=${MEMORY:-pinned-chunked}${GRAPHS:+-graphs-$GRAPHS}
for s in ${sizes//,/ }; do
  w=${s%x*}; h=${s#*x}
  build-dev/tools/jetpipe run --config config/default.yaml \
    --input "test://blobs?w=$w&h=$h&frames=40&format=bgr8" --platform "$work/single.yaml" \
    --output-dir "$work/out-$s" --timeline "$work/trace-$s.json" > "$work/run-$s.log" 2>&1 ||
    { tail -5 "$work/run-$s.log"; continue; }
  echo "== $s, $tag, K=$chunks, one frame at a time" | tee "$OUT/trace-$tag-$s.txt"
  python3 tools/gpu/trace_summary.py "$work/trace-$s.json" --frames 1 | tee -a "$OUT/trace-$tag-$s.txt"
done
