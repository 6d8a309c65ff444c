#!/usr/bin/env python3
"""The host's calls and the GPU's work of single frames, on one clock: summarizes a cupti_trace.cpp
CSV written with TRACE_API=1 (runtime API calls included). An iteration ends where a
cudaEventSynchronize returns (the host's wait for a frame); the last N iterations that launched a
graph are kept, and for the most common sequence of calls each call and each kernel or copy of the
iteration (matched by correlation id; by name and order of start) is printed with its median start
and end in µs from the iteration's first call. Usage (GPU machine, after a build in build-dev):
  g++ -O2 -shared -fPIC -std=c++17 -I/usr/local/cuda/include tools/gpu/cupti_trace.cpp \\
      -o /tmp/libtrace.so -L/usr/local/cuda/lib64 -lcupti
  TRACE_API=1 CUDA_INJECTION64_PATH=/tmp/libtrace.so TRACE_CSV=/tmp/t.csv \\
      build-dev/tools/jetpipe bench pipeline --sizes 1920x1080 --frames 50 --repeat 1 \\
      --filter "pinned-chunked K=4 S=4 F=1 graphs results=auto timing=frame"
  tools/gpu/api_timeline.py /tmp/t.csv [N, default 20]
(the bench's last 25 frames are its single frames, one at a time; tracing slows the API calls.)"""
import collections
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_timeline import short  # noqa: E402


def main():
    path = sys.argv[1]
    keep = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    api, gpu = [], []
    for line in open(path):
        kind, start, end, _stream, corr, _nbytes, name = line.rstrip("\n").split(",", 6)
        (api if kind == "R" else gpu).append((int(start), int(end), kind, int(corr), name))
    api.sort()
    gpu.sort()
    iters, lo = [], 0
    for sync in (a for a in api if a[4].startswith("cudaEventSynchronize")):
        calls = [a for a in api if lo <= a[0] <= sync[0]]
        if any(c[4].startswith("cudaGraphLaunch") for c in calls):
            corrs = {c[3] for c in calls}
            iters.append((lo, calls, [g for g in gpu if g[3] in corrs]))
        lo = sync[1]
    if not iters:
        print("no iteration with a graph launch (was TRACE_API=1 set?)")
        return
    iters = iters[-keep:]
    sig = collections.Counter(tuple(c[4] for c in it[1]) for it in iters).most_common(1)[0][0]
    iters = [it for it in iters if tuple(c[4] for c in it[1]) == sig]
    rows = collections.defaultdict(list)
    for lo, calls, work in iters:
        t0 = calls[0][0]
        rows[("(host since the last wait returned)", 0)].append(((lo - t0) / 1e3, 0.0))
        for i, c in enumerate(calls):
            rows[(c[4].split("_v")[0], i)].append(((c[0] - t0) / 1e3, (c[1] - t0) / 1e3))
        seen = collections.Counter()
        for start, end, _kind, _corr, name in work:
            what = "GPU " + short(name)
            seen[what] += 1
            rows[(what, seen[what])].append(((start - t0) / 1e3, (end - t0) / 1e3))
    print(f"{len(iters)} iterations of {len(sig)} calls; µs from the iteration's first call")
    print(f"{'start':>8} {'end':>8} {'dur':>6}  what")
    out = sorted((statistics.median(a for a, _ in v), statistics.median(b for _, b in v), k)
                 for k, v in rows.items())
    for start, end, (what, n) in out:
        print(f"{start:8.1f} {end:8.1f} {end - start:6.1f}  {what} #{n}")


if __name__ == "__main__":
    main()
