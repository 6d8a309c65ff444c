#!/usr/bin/env bash
# Prints the discrete profile made for single frames (latency-trace.sh, kernel-trace.sh): one frame
# in flight, K strips of any size. Usage: tools/gpu/single-frame-profile.sh K > profile.yaml
# Environment: MEMORY (default pinned-chunked), GRAPHS (true/false, default the profile's), TIMING
# (frame/stages/strips, default the profile's), STRIP_COPIES, STRIP_RATIO and COPY_WAIT (added
# when set).
set -euo pipefail
cd "$(dirname "$0")/../.."
args=(-e "s/^frames_in_flight:.*/frames_in_flight: 1/" -e "s/^chunks:.*/chunks: ${1:-4}/"
      -e "s/^min_strip_mb:.*/min_strip_mb: 0/" -e "s/^memory:.*/memory: ${MEMORY:-pinned-chunked}/")
[ -n "${GRAPHS:-}" ] && args+=(-e "s/^cuda_graphs:.*/cuda_graphs: $GRAPHS/")
[ -n "${TIMING:-}" ] && args+=(-e "s/^timing:.*/timing: $TIMING/")
sed "${args[@]}" platforms/discrete.yaml
[ -n "${STRIP_COPIES:-}" ] && echo "strip_copies: $STRIP_COPIES"
[ -n "${STRIP_RATIO:-}" ] && echo "strip_ratio: $STRIP_RATIO"
[ -n "${COPY_WAIT:-}" ] && echo "copy_wait: $COPY_WAIT"
exit 0
