#!/usr/bin/env bash
# Calibration: does toll find a known overhead, and how small a one?
#
# 1. Measures the reference app's CPU per request (baseline only, short).
# 2. Runs the baseline against one variant per overhead in PLUS: "plusN"'s
#    consumer burns an extra N% of that CPU per request (--extra-cpu, on a
#    CPU time clock: exact whatever the machine's load); "plus0" burns
#    nothing extra.
# 3. Prints toll's Δ% and verdict for each against the share the injected
#    time is of this run's own baseline; for plus10, whether it landed within
#    ±1.5 points; for plus0, whether it read "~"; and for every variant how
#    the interval narrowed with rounds (the same t interval on log ratios
#    that toll computes, over the first k rounds), with the run time k rounds
#    took.
#
# Usage: bench/calibrate.sh [ROUNDS]     (default 50)
#   RATE=350 WORK=150000   open-model req/s, and the consumer's --work: the
#                          defaults keep the consumer's CPU about 65% busy
#   RESTART=per-round      the scenario's restart policy
#   DUET=shared            run as mode: duet with pinning.duet: shared (the
#                          baseline beside each variant, on the same CPU);
#                          RATE is then each side's, so halve it
#   PLUS="10 0"            the overheads, in % of the baseline's CPU per request
#   KEEP=DIR               keep toll's output directory there
# The defaults (3 variants, 50 rounds of 1 s + 2 s) take about 10 minutes.
# Runs on loopback only; every run is bounded by its scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-50}
rate=${RATE:-350}
work_iters=${WORK:-150000}
restart=${RESTART:-per-round}
plus=${PLUS:-10 0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/toll" ./cmd/toll

scenario() { # $1 = name, $2 = variants yaml, $3 = rounds, $4 = extra top-level yaml
  cat > "$work/$1.yaml" <<YAML
name: $1
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:\${port:provider}", --work, "5000"]
    ready: {http: "http://127.0.0.1:\${port:provider}/health", timeout: 10s}
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:\${port:consumer}",
              --provider, "http://127.0.0.1:\${port:provider}/provider", --work, "$work_iters"]
    ready: {http: "http://127.0.0.1:\${port:consumer}/health", timeout: 10s}
    measure: true
variants:
$2
load:
  target: "http://127.0.0.1:\${port:consumer}"
  requests: [{name: consumer, method: GET, path: /consumer}]
  rate: $rate
  warmup: 1s
  duration: 2s
rounds: $3
restart: $restart
${4:-}
YAML
}

cost() { # $1 = summary.json, $2 = variant: CPU per request in ms
  python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))
for v in s["steps"][0]["variants"]:
    if v["name"]==sys.argv[2]:
        print(next(c["value"] for c in v["costs"] if c["cost"]=="cpu_per_request_ms"))' "$1" "$2"
}

echo "== measuring the baseline's CPU per request ($rate req/s, --work $work_iters)"
scenario probe "  - name: baseline" 5
"$work/toll" run -q --out "$work/probe" "$work/probe.yaml" > /dev/null
base_ms=$(cost "$work/probe/summary.json" baseline)
echo "baseline: $base_ms ms/request, $(python3 -c "print(f'{$base_ms * $rate / 1000:.2f}')") cores"

variants="  - name: baseline"
for p in $plus; do
  us=$(python3 -c "print(round(float('$base_ms') * 10 * $p))") # p% of base, in µs
  variants+="
  - name: plus$p
    services:
      consumer: {args: [--extra-cpu, ${us}us]}"
  echo "plus$p adds ${us}us of CPU per request"
done

mode=
[[ -z ${DUET:-} ]] || mode="mode: duet
pinning: {duet: $DUET}"
echo "== $rounds rounds, restart $restart${DUET:+, duet $DUET}: baseline, $(echo $plus | sed 's/\([0-9]*\)/plus\1/g; s/ /, /g')"
scenario calibrate "$variants" "$rounds" "$mode"
start=$(date +%s)
"$work/toll" run -q --out "$work/cal" "$work/calibrate.yaml" | grep -E "cost|CPU per request" || true
wall=$(($(date +%s) - start))
echo "wall time: $wall s"
[[ -z ${KEEP:-} ]] || cp -r "$work/cal" "$KEEP"
python3 - "$work/calibrate.yaml" "$work/cal/summary.json" "$wall" <<'PY'
import json, math, os, re, sys
scen, summ, wall = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), int(sys.argv[3])
extra_us = {m[0]: int(m[1]) for m in re.findall(r"name: (plus\d+)\n.*\n.*--extra-cpu, (\d+)us", scen)}
variants = summ["steps"][0]["variants"]
cpu = {v["name"]: next(c for c in v["costs"] if c["cost"] == "cpu_per_request_ms") for v in variants}
base = cpu["baseline"]["value"]
# t quantiles (0.975) by degrees of freedom, interpolated between.
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
     10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 50: 2.009,
     60: 2.000, 80: 1.990, 100: 1.984, 120: 1.980, 10**9: 1.960}
def t975(df):
    ks = sorted(T)
    for lo, hi in zip(ks, ks[1:]):
        if lo <= df <= hi:
            return T[lo] + (T[hi] - T[lo]) * (df - lo) / (hi - lo)
def interval(logs):
    n = len(logs)
    m = sum(logs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in logs) / (n - 1))
    h = t975(n - 1) * sd / math.sqrt(n)
    return 100 * (math.exp(m) - 1), 100 * (math.exp(m - h) - 1), 100 * (math.exp(m + h) - 1)
rounds = len(cpu["baseline"]["values"])
def paired_logs(name):
    # log(variant / baseline) per round, over CPU per request; in a duet the
    # baseline trial is the one that ran beside this variant.
    by = {}
    for t in summ["trials"]:
        if t["variant"] == name or (t["variant"] == "baseline" and t.get("pair", name) == name):
            by.setdefault(t["round"], {})[t["variant"]] = t["costs"]["cpu_per_request_ms"]
    return [math.log(r[name] / r["baseline"]) for _, r in sorted(by.items()) if len(r) == 2]
# Minutes k rounds would take with the baseline and this one variant only.
# A duet runs the pair at once: one trial's time per round.
per_pair = wall / (rounds * (len(variants) - 1)) if os.environ.get("DUET") else 2 * wall / (rounds * len(variants))
for name, us in extra_us.items():
    d = cpu[name]["delta"]
    want = 100 * us / 1000 / base
    half = (d["ci_high"] - d["ci_low"]) / 2
    line = f"{name}: injected {us}us, {want:+.1f}% of this run's baseline {base:.3f} ms; toll: {d['pct']:+.1f}% ± {half:.1f}%, verdict {d['verdict']!r}"
    inside = d["ci_low"] <= want <= d["ci_high"]
    if us == 0:
        line += f"; reads ~: {'yes' if not d['significant'] else 'NO'}"
    else:
        line += f"; interval holds {want:+.1f}%: {'yes' if inside else 'NO'}"
    if name == "plus10":
        line += f"; within ±1.5 points: {'yes' if abs(d['pct'] - want) <= 1.5 and d['significant'] else 'NO'}"
    print(line)
    logs = paired_logs(name)
    steps = sorted({k for k in (5, 10, 15, 20, 30, 40, 50, 60, 80, 100, 120, 160, 200) if k < rounds} | {rounds})
    cells = []
    for k in steps:
        pct, lo, hi = interval(logs[:k])
        mark = "*" if lo > 0 or hi < 0 else " "
        cells.append(f"{k:>3} rounds {k * per_pair / 60:4.1f} min: {pct:+5.1f}% [{lo:+5.1f}, {hi:+5.1f}]{mark}")
    print("   " + "\n   ".join(cells) + "\n   (* the interval excludes 0; minutes: this run's wall time per trial, for a run of the baseline and this variant alone)")
PY
