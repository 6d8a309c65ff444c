#!/usr/bin/env bash
# The compiler's resource report for every CUDA kernel (registers, shared memory, stack frame and
# spills) for sm_90 (or the architecture given), names demangled. Runs without a GPU.
# Usage: tools/gpu/resources.sh [arch, default 90]
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:-90}
for f in kernels/*.cu kernels/*/*.cu; do
  nvcc -std=c++17 -O3 -arch=sm_$arch --expt-relaxed-constexpr -Xptxas -v -I. \
    -DJETPIPE_HAVE_CUDA=1 -DJETPIPE_HAVE_OPENCV=0 -DJETPIPE_HAVE_GSTREAMER=0 \
    -c "$f" -o /dev/null 2>&1 |
    sed -nE "s/.*Compiling entry function '([^']+)'.*/FN \1/p; s/.*(Used [0-9]+ registers.*)/USED \1/p; s/.*([0-9]+ bytes stack frame.*)/FRAME \1/p" |
    awk -v file="${f#kernels/}" '
      $1 == "FN" { fn = $2 }
      $1 == "FRAME" { sub(/^FRAME /, ""); frame = $0 }
      $1 == "USED" { sub(/^USED /, ""); print file "\t" fn "\t" $0 "\t" frame }'
done | c++filt | awk -F'\t' '{ n = $2; sub(/\(.*/, "", n); printf "%-20s %-58.58s %s | %s\n", $1, n, $3, $4 }' |
  sort -u
