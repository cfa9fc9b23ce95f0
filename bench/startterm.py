#!/usr/bin/env python3
"""The start-to-start term a JVM's runs show, from their own starts.

Reads the results directories of runs that held two or more starts (toll
run in precision mode, mode: together or duet, restart once) and, for each
variant, each start's mean of its rounds' CPU per request without the JIT
compilers' CPU as a log ratio to the baseline's, over the second half of
the start's rounds (its settled ones); starts of fewer than MIN_ROUNDS
rounds (default 20) are left out. The spread of those means within a run,
less what the rounds' own spread explains, pooled over the runs, is twice a
side's start term (both sides start again): compare it with the
calibration toll carries (the manifest's calibration.jvm_start_noise_pct).

Usage: bench/startterm.py RESULTS_DIR [RESULTS_DIR ...]
Reads only files; run it when nothing is being measured.
"""
import collections
import glob
import json
import math
import os
import statistics
import sys


def rounds(run):
    """round -> variant -> (measured service's pid, CPU ms per request without JIT)."""
    out = collections.defaultdict(dict)
    for path in glob.glob(os.path.join(run, "trials", "*.json")):
        with open(path) as f:
            t = json.load(f)
        if "samples" not in t:
            continue
        svc = [s for s in t["services"] if s.get("measured")][0]
        pts = [p for p in [s for s in t["samples"] if s["service"] == svc["name"]][0]["points"] if p["t"] >= -0.01]
        a = min(pts, key=lambda p: abs(p["t"]))
        b = min(pts, key=lambda p: abs(p["t"] - t["planned_s"]))
        n = t["load"]["completed"]
        if n == 0 or a["t"] == b["t"]:
            continue
        jit = lambda p: sum(r["values"].get("jit_cpu", 0) for r in p.get("runtimes", []))
        out[t["round"]][t["variant"]] = (svc["pid"], 1000 * ((b["cpu"] - a["cpu"]) - (jit(b) - jit(a))) / n)
    return out


def starts(run, baseline):
    """Each start's rounds, as {variant: 100·ln(variant/baseline)}, in order; a start
    begins where the baseline's measured process changes."""
    by, pid = [], None
    for r in sorted(rows := rounds(run)):
        x = rows[r]
        if baseline not in x:
            continue
        if x[baseline][0] != pid:
            by.append([])
            pid = x[baseline][0]
        base = x[baseline][1]
        by[-1].append({v: 100 * math.log(c / base) for v, (_, c) in x.items() if v != baseline and c > 0 and base > 0})
    return by


def main():
    least = int(os.environ.get("MIN_ROUNDS", "20"))
    baseline = os.environ.get("BASELINE", "baseline")
    pooled = collections.defaultdict(lambda: [0.0, 0])  # variant -> [Σ excess·df, Σ df]
    for run in sys.argv[1:]:
        kept = [s for s in starts(run, baseline) if len(s) >= least]
        if len(kept) < 2:
            print(f"{run}: fewer than 2 starts of {least} rounds or more, left out")
            continue
        for v in sorted({v for s in kept for r in s for v in r}):
            means, se2 = [], []
            for s in kept:
                xs = [r[v] for r in s[len(s) // 2:] if v in r]
                if len(xs) < 2:
                    break
                means.append(statistics.mean(xs))
                se2.append(statistics.variance(xs) / len(xs))
            else:
                df = len(means) - 1
                pooled[v][0] += (statistics.variance(means) - statistics.mean(se2)) * df
                pooled[v][1] += df
                print(f"{run} {v}: starts' means " + ", ".join(f"{m:.1f}" for m in means))
    for v, (ex, df) in sorted(pooled.items()):
        term = math.sqrt(max(ex / df, 0) / 2)
        print(f"{v}: {term:.2f}% a side ({df} degrees of freedom)")


if __name__ == "__main__":
    main()
