#!/usr/bin/env python3
"""Summarizes a cupti_trace.cpp CSV: the GPU work split into frames (groups separated by more than
--gap µs of idle GPU), and for the frames with the most common number of items (after the first
two) each kernel and copy's median start and end relative to the frame's first item, by name,
stream and occurrence. Then the median frame span and the last H2D's end.
Usage: kernel_timeline.py TRACE.csv [--gap US]"""
import collections
import re
import statistics
import sys

KERNELS = r"(fast_separable|histogram|harris_fast|harris_rows|harris_tile|detect_max|detect_candidates|" \
          r"detect_finish|detect_rows|to_gray|separable_tile|h2d|d2h|d2d|memcpy)"


def short(name):
    m = re.search(KERNELS, name)
    if m:
        return m.group(1)
    m = re.search(r"(detect_cu_[0-9a-f]+_?\d+\w{0,4})", name)  # anonymous-namespace detect kernels
    return m.group(1) if m else name[:40]


def main():
    path = sys.argv[1]
    gap = float(sys.argv[sys.argv.index("--gap") + 1]) if "--gap" in sys.argv else 40.0
    recs = []
    for line in open(path):
        kind, start, end, stream, _corr, nbytes, name = line.rstrip("\n").split(",", 6)
        if kind in "KM":
            recs.append((int(start), int(end), int(stream), name))
    recs.sort()
    frames, cur, last_end = [], [], 0
    for r in recs:
        if cur and r[0] - last_end > gap * 1000:
            frames.append(cur)
            cur, last_end = [], 0
        cur.append(r)
        last_end = max(last_end, r[1])
    if cur:
        frames.append(cur)
    if not frames:
        print("no GPU work in the trace")
        return
    n = collections.Counter(len(f) for f in frames).most_common(1)[0][0]
    good = [f for f in frames if len(f) == n][2:] or [f for f in frames if len(f) == n]
    spans = collections.defaultdict(list)
    for f in good:
        t0, seen = f[0][0], collections.Counter()
        for start, end, stream, name in f:
            key = (short(name), stream)
            seen[key] += 1
            spans[key + (seen[key],)].append((start - t0, end - t0))
    rows = []
    for key, v in spans.items():
        s = statistics.median(x[0] for x in v) / 1000
        e = statistics.median(x[1] for x in v) / 1000
        rows.append((s, e, key))
    print(f"{len(good)} frames of {n} items (of {len(frames)} groups); µs from the frame's first item")
    print(f"{'start':>8} {'end':>8} {'dur':>6}  what")
    for s, e, key in sorted(rows):
        print(f"{s:8.1f} {e:8.1f} {e - s:6.1f}  {key[0]:24s} stream {key[1]} #{key[2]}")
    ends = [max(x[1] for x in f) - f[0][0] for f in good]
    h2d = [max(x[1] for x in f if x[3] == "h2d") - f[0][0] for f in good
           if any(x[3] == "h2d" for x in f)]
    line = f"median frame span {statistics.median(ends) / 1000:.1f} µs"
    if h2d:
        line += f"; last H2D ends at {statistics.median(h2d) / 1000:.1f} µs"
    print(line)


if __name__ == "__main__":
    main()
