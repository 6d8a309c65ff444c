#!/usr/bin/env python3
"""Summarizes a per-block trace of the chain (jetpipe-bench built with -DJP_BLOCK_TRACE=1, run with
JP_TRACE_OUT=file): per kernel, when its blocks started, passed their wait for the kernel before,
and exited, in us from the replay's first block start; the median over the replays.
Usage: block_timeline.py trace.csv"""
import csv
import statistics
import sys
from collections import defaultdict

NAMES = {1: "gray+gaussian", 2: "harris", 3: "hist+stats", 4: "candidates", 5: "finish"}


def main(path):
    rows = defaultdict(list)
    for r in csv.DictReader(open(path)):
        rows[int(r["replay"])].append(r)
    per = defaultdict(lambda: defaultdict(list))
    res = set()
    for rep, rs in rows.items():
        t_ref = min(int(r["t0"]) for r in rs)
        end = max(int(r["t2"]) for r in rs)
        per["span"]["us"].append((end - t_ref) / 1e3)
        by_k = defaultdict(list)
        for r in rs:
            by_k[int(r["kernel"])].append(r)
            res.add(int(r["t2"]) % 1000)
        for k, ks in by_k.items():
            t0 = sorted((int(r["t0"]) - t_ref) / 1e3 for r in ks)
            t1 = sorted((int(r["t1"]) - t_ref) / 1e3 for r in ks)
            t2 = sorted((int(r["t2"]) - t_ref) / 1e3 for r in ks)
            work = sorted((int(r["t2"]) - int(r["t1"])) / 1e3 for r in ks)
            sms = defaultdict(int)
            for r in ks:
                sms[int(r["smid"])] += 1
            d = per[k]
            d["blocks"].append(len(ks))
            d["start first"].append(t0[0])
            d["start last"].append(t0[-1])
            d["waited first"].append(t1[0])
            d["waited last"].append(t1[-1])
            d["end first"].append(t2[0])
            d["end median"].append(t2[len(t2) // 2])
            d["end last"].append(t2[-1])
            d["work median"].append(work[len(work) // 2])
            d["work p90"].append(work[int(len(work) * 0.9)])
            d["work max"].append(work[-1])
            d["blocks/SM max"].append(max(sms.values()))
    print(f"{path}: {len(rows)} replays; span (first block start to last exit) median "
          f"{statistics.median(per['span']['us']):.2f} us "
          f"(min {min(per['span']['us']):.2f}, max {max(per['span']['us']):.2f}); "
          f"timer residues mod 1000 ns seen: {len(res)}")
    cols = ["blocks", "blocks/SM max", "start first", "start last", "waited first", "waited last",
            "work median", "work p90", "work max", "end first", "end median", "end last"]
    print("kernel".ljust(14) + "".join(c.rjust(13) for c in cols))
    for k in sorted(x for x in per if x != "span"):
        d = per[k]
        print(NAMES.get(k, str(k)).ljust(14) +
              "".join(f"{statistics.median(d[c]):13.2f}" for c in cols))


if __name__ == "__main__":
    main(sys.argv[1])
