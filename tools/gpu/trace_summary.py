#!/usr/bin/env python3
"""Summarizes a `jetpipe run --timeline` Chrome trace: per frame, every span relative to the frame's
first span (µs), sorted by end, and the frame's critical-path figures (last H2D end, last end).
Usage: trace_summary.py TRACE.json [--frames N]   (prints the median of the figures over all
frames and the spans of the first N frames after the first two)."""
import json
import statistics
import sys
from collections import defaultdict


def main():
    path = sys.argv[1]
    show = int(sys.argv[sys.argv.index("--frames") + 1]) if "--frames" in sys.argv else 1
    trace = json.load(open(path))
    tracks = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M"}
    frames = defaultdict(list)
    for e in trace["traceEvents"]:
        if e.get("ph") == "X":
            frames[e["args"]["frame"]].append(e)
    h2d_all, tail_all, total_all = [], [], []
    for i, (f, spans) in enumerate(sorted(frames.items())):
        t0 = min(s["ts"] for s in spans)
        h2d = [s["ts"] + s["dur"] - t0 for s in spans if s["cat"] == "h2d"]
        end = max(s["ts"] + s["dur"] for s in spans) - t0
        if h2d:
            h2d_all.append(max(h2d))
            tail_all.append(end - max(h2d))
        total_all.append(end)
        if 2 <= i < 2 + show:
            print(f"frame {f}: spans (us from the frame's first span)")
            for s in sorted(spans, key=lambda s: s["ts"] + s["dur"]):
                print(f"  {s['ts'] - t0:9.1f} {s['ts'] + s['dur'] - t0:9.1f}  {s['cat']:7s} "
                      f"{s['name']:14s} {tracks.get(s['tid'], s['tid'])}")
    med = statistics.median
    if h2d_all:
        print(f"median over {len(total_all)} frames: last h2d end {med(h2d_all):.1f} us, "
              f"tail after it {med(tail_all):.1f} us, frame {med(total_all):.1f} us")
    else:
        print(f"median over {len(total_all)} frames: frame {med(total_all):.1f} us")


if __name__ == "__main__":
    main()
