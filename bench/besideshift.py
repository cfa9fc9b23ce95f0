#!/usr/bin/env python3
"""Whether starts warmed beside the rounds moved what the rounds measured.

Reads the results directories of runs in which every variant was loaded at
once (mode: together) and starts warmed beside the rounds on the services'
CPU. Each round is classed by whether that CPU (SERVICES_CPU, default 1)
was more than BUSY percent busy (default 85) over the baseline's window, a
spare warming there, or not. For each start (its rounds past the first
quarter, the settled ones) and each variant, the mean of its log ratio to
the baseline, CPU per request without the JIT compilers' CPU, over rounds
with a spare beside less the mean over rounds without, in percent points,
and those differences pooled by inverse variance over the starts that had
at least three rounds of each kind.

Usage: bench/besideshift.py RESULTS_DIR [RESULTS_DIR ...]
Reads only files; run it when nothing is being measured.
"""
import collections
import glob
import json
import math
import os
import statistics
import sys


def rounds(run, cpu):
    """round -> variant -> (start, CPU busy %, CPU s per request without JIT)."""
    out = collections.defaultdict(dict)
    for path in glob.glob(os.path.join(run, "trials", "*.json")):
        with open(path) as f:
            t = json.load(f)
        if "samples" not in t or not t["load"]["completed"]:
            continue
        svc = [s for s in t["services"] if s.get("measured")][0]
        pts = [p for p in [s for s in t["samples"] if s["service"] == svc["name"]][0]["points"] if p["t"] >= -0.01]
        a = min(pts, key=lambda p: abs(p["t"]))
        b = min(pts, key=lambda p: abs(p["t"] - t["planned_s"]))
        jit = lambda p: sum(r["values"].get("jit_cpu", 0) for r in p.get("runtimes", []))
        per = ((b["cpu"] - a["cpu"]) - (jit(b) - jit(a))) / t["load"]["completed"]
        m = [x for x in t["machine"] if x["t"] >= -0.01]
        busy = 100 * (m[-1]["per_cpu_busy"][cpu] - m[0]["per_cpu_busy"][cpu]) / max(1e-9, m[-1]["per_cpu_total"][cpu] - m[0]["per_cpu_total"][cpu])
        out[t["round"]][t["variant"]] = (t.get("launch", 0), busy, per)
    return out


def main():
    cpu = int(os.environ.get("SERVICES_CPU", "1"))
    limit = float(os.environ.get("BUSY", "85"))
    base = os.environ.get("BASELINE", "baseline")
    pooled = collections.defaultdict(lambda: [0.0, 0.0])
    for run in sys.argv[1:]:
        rows = rounds(run, cpu)
        starts = collections.defaultdict(list)
        for r in sorted(rows):
            if base in rows[r]:
                starts[rows[r][base][0]].append(r)
        for start, rs in sorted(starts.items()):
            rs = rs[len(rs) // 4:]
            for v in sorted({v for r in rs for v in rows[r] if v != base}):
                kinds = {True: [], False: []}
                for r in rs:
                    if v in rows[r] and rows[r][v][2] > 0 and rows[r][base][2] > 0:
                        kinds[rows[r][base][1] > limit].append(100 * math.log(rows[r][v][2] / rows[r][base][2]))
                beside, alone = kinds[True], kinds[False]
                if len(beside) < 3 or len(alone) < 3:
                    continue
                d = statistics.mean(beside) - statistics.mean(alone)
                se2 = statistics.variance(beside) / len(beside) + statistics.variance(alone) / len(alone)
                print(f"{run} start {start + 1} {v}: {len(beside)} rounds beside a spare, {len(alone)} without: {d:+.2f} ± {1.96 * math.sqrt(se2):.2f}")
                pooled[v][0] += d / se2
                pooled[v][1] += 1 / se2
    for v, (s, w) in sorted(pooled.items()):
        print(f"pooled {v}: {s / w:+.2f} ± {1.96 / math.sqrt(w):.2f} points (95%)")


if __name__ == "__main__":
    main()
