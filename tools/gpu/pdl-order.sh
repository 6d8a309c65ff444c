#!/usr/bin/env bash
# Lists every global or texture load that the compiler placed above a kernel's wait for the kernel
# before it (griddepcontrol.wait, SASS ACQBULK): under programmatic dependent launch such a load may
# read what the kernel before has not written yet (kernels/block/pdl.cuh, above pdl_wait). Reads the
# SASS of the built kernels (cuobjdump), so it runs where the CUDA toolkit has cuobjdump (the GPU
# machine); exit status 1 if any load comes first in a kernel with a wait.
# Usage: tools/gpu/pdl-order.sh [build dir, default build-dev]
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-dev}
objs=$(find "$build" -name '*.cu.o' | sort)
[ -n "$objs" ] || { echo "pdl-order: no CUDA objects under $build" >&2; exit 2; }
found=0
kernels=0
for o in $objs; do
  out=$(cuobjdump -sass "$o" 2>/dev/null | awk -v obj="${o##*/}" '
    /Function : / { fn = $3; loads = 0; first = ""; next }
    / ACQBULK/ { waits++; if (loads > 0) printf "%s %s: %d load(s) above the wait, first: %s\n", obj, fn, loads, first; loads = -1e9; next }
    /[ \t](LDG|LD|TEX|TLD|TLD4|TXD|SULD|LDGSTS)(\.[A-Z0-9_]+)* / {
      if (loads >= 0) { if (loads == 0) { first = $0; gsub(/ +/, " ", first); gsub(/\/\* 0x[0-9a-f]+ \*\//, "", first) } loads++ }
    }
    END { print "waits " waits + 0 }')
  kernels=$((kernels + $(echo "$out" | awk '/^waits/ {print $2}')))
  if echo "$out" | grep -q "above the wait"; then
    echo "$out" | grep "above the wait" | c++filt
    found=1
  fi
done
echo "pdl-order: $kernels kernel(s) with a wait checked; $([ $found = 0 ] && echo "no load above a wait" || echo "LOADS ABOVE A WAIT (listed above)")"
exit $found
