#!/usr/bin/env bash
# The compiler's resource report for every CUDA kernel (registers, shared memory, stack frame and
# spills) for sm_90 (or the architecture given). Runs without a GPU.
# Usage: tools/gpu/resources.sh [arch, default 90]
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:-90}
for f in kernels/*.cu; do
  nvcc -std=c++17 -O3 -arch=sm_$arch --expt-relaxed-constexpr -Xptxas -v -I. \
    -DJETPIPE_HAVE_CUDA=1 -DJETPIPE_HAVE_OPENCV=0 -DJETPIPE_HAVE_GSTREAMER=0 \
    -c "$f" -o /dev/null 2>&1 |
    awk -v file="$f" '
      /Compiling entry function/ { match($0, /_Z[^'"'"' ]*|[a-zA-Z_][a-zA-Z0-9_]*'"'"' for/); fn=$0; sub(/.*function .|. for .*/, "", fn) }
      /bytes stack frame/ { frame=$0 }
      /Used [0-9]+ registers/ { printf "%-28s %-60.60s %s | %s\n", file, fn, $0, frame }'
done | sed -E 's/ptxas info +: //g'
