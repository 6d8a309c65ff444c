#!/usr/bin/env python3
"""Summarizes `ncu --csv --page raw` output: one line per kernel name (the largest launch of each):
time, DRAM throughput % of peak, global-load sectors per request, achieved occupancy, registers,
dynamic shared memory, and the top warp stall reason (from the WarpStateStats metrics)."""
import csv
import sys


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return None


def main(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    if not rows:
        print("no kernels profiled")
        return
    rows = rows[1:] if rows and rows[0].get("ID", "").strip() == "" else rows  # units row
    best = {}
    for r in rows:
        name = r.get("Kernel Name", "?")[:60]
        t = num(r.get("gpu__time_duration.sum")) or 0
        if name not in best or t > best[name][0]:
            best[name] = (t, r)
    print(f"{'kernel':60} {'time us':>9} {'DRAM %':>7} {'sect/req':>8} {'occ %':>6} "
          f"{'regs':>5} {'dsmem':>7}  top stall")
    for name, (t, r) in sorted(best.items(), key=lambda kv: -kv[1][0]):
        sec = num(r.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")) or 0
        req = num(r.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")) or 0
        stalls = {k: num(v) for k, v in r.items()
                  if k.startswith("smsp__average_warp_latency_issue_stalled_") or
                  k.startswith("smsp__average_warps_issue_stalled_")}
        stalls = {k: v for k, v in stalls.items() if v is not None and not k.endswith("_not_issued")}
        top = max(stalls, key=stalls.get) if stalls else "?"
        top = top.split("issue_stalled_")[-1].split(".")[0] if top != "?" else top
        print(f"{name:60} {t / 1e3:9.1f} {num(r.get('dram__throughput.avg.pct_of_peak_sustained_elapsed')) or 0:7.1f} "
              f"{(sec / req if req else 0):8.2f} "
              f"{num(r.get('sm__warps_active.avg.pct_of_peak_sustained_active')) or 0:6.1f} "
              f"{r.get('launch__registers_per_thread', '?'):>5} "
              f"{r.get('launch__shared_mem_per_block_dynamic', '?'):>7}  {top}")


if __name__ == "__main__":
    main(sys.argv[1])
