#!/usr/bin/env bash
# A/A: how often does toll call a difference where there is none?
#
# Runs the same scenario many times with a variant identical to the baseline
# ("again": the same command, the same settings), over two service shapes
# that differ in CPU per request and utilisation, and prints:
#   - each run's CPU-per-request Δ% of "again" against the baseline, its
#     interval, and whether the interval excludes 0 (a false positive);
#   - the false-positive rate per shape and overall, with its 95% Wilson
#     interval (toll's intervals are 95%: the rate should be about 5% or less);
#   - the mean A/A estimate across runs with its t interval: a systematic
#     bias (one side always cheaper) shows here even when each run's interval
#     is honest about its own noise.
# Then, with the same settings, it runs a known +2% (the reference app's
# --extra-cpu, on a CPU clock) once per shape, and says after how many rounds
# and minutes its interval first excluded 0.
#
# Usage: bench/aa.sh [RUNS_PER_SHAPE]     (default 10: 20 A/A runs in all)
#   MODE=shared       mode: duet with pinning.duet: shared (default); "together"
#                     for mode: together (every variant at once on the shared
#                     CPU); "alternating" for the default schedule (variants in
#                     turn)
#   SLICE=50ms        with MODE=shared, the two sides' loads take turns of this
#                     long (load.slice; default none: loaded at once)
#   ROUNDS=30         rounds per run; WINDOW=2s WARMUP=1s per trial
#   PRECISION=1.5%    run in precision mode instead of a fixed number of
#                     rounds: each run stops when the interval's half-width
#                     is within this target, or after BUDGET (default 5m);
#                     the rounds each run took are printed with it. A target
#                     below 2% is what detecting the known +2% needs
#   PLUS2_PRECISION=1%  the +2% check's own target (default PRECISION): the
#                     A/A runs can test the stopping rule at the default ±3%
#                     while the +2% check runs to a target that can see 2%
#   RESTART=per-round the restart policy
#   SHAPES="light heavy"  which shapes to run (see shape() below)
#   PLUS2=1           also run the +2% check (default 1; 0 to skip)
#   THIRD=1           add a third variant, +10% (--extra-cpu), beside the twin
#                     (default 1): the runs that found the run-level effect had three
#                     variants, so a duet's baseline ran twice per round and
#                     the twin once; THIRD=0 runs baseline and twin alone
#   CONTROL=1         run with an A/A control (control: true): the twin's and
#                     the +2% check's changes are then corrected by it
#                     (default 0)
#   KEEP=DIR          keep every results directory there
# A run takes about ROUNDS × (WARMUP + WINDOW + a start) seconds (twice the warm-up
# and window with SLICE); the
# defaults take about 2 minutes per run, 45 minutes in all. Measure alone:
# nothing else may build, test or send load meanwhile. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
mode=${MODE:-shared}
rounds=${ROUNDS:-30}
window=${WINDOW:-2s}
warmup=${WARMUP:-1s}
restart=${RESTART:-per-round}
shapes=${SHAPES:-light heavy}
plus2=${PLUS2:-1}
third=${THIRD:-1}
control=${CONTROL:-0}
slice=${SLICE:-}
precision=${PRECISION:-}
budget=${BUDGET:-5m}
plus2_precision=${PLUS2_PRECISION:-$precision}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/toll" ./cmd/toll
echo "aa.sh: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
design="$rounds rounds"
[[ -z $precision ]] || design="precision ±$precision within $budget, rounds"
echo "mode $mode${slice:+ in turns of $slice}, $design of $warmup + $window, restart $restart, $runs runs per shape, control $control"

# shape NAME: prints "RATE WORK" for the consumer (--work math.Log calls per
# request, about 12 ns each on this VM, plus about 60 µs of HTTP handling).
#   light: ~280 µs of CPU per request at 400 req/s per side (~0.11 cores each),
#          the first Java findings' service
#   heavy: ~1.2 ms per request at 150 req/s per side (~0.18 cores each), fewer
#          and longer requests, more of the CPU busy
shape() {
  case $1 in
    light) echo "400 18000" ;;
    heavy) echo "150 90000" ;;
    *) echo "unknown shape $1" >&2; exit 2 ;;
  esac
}

scenario() { # $1 = file, $2 = rate, $3 = work, $4 = variants yaml
  local layout=""
  if [[ $mode == shared ]]; then
    layout="mode: duet
pinning: {duet: shared}"
  elif [[ $mode == together ]]; then
    layout="mode: together"
  fi
  cat > "$1" <<YAML
name: aa
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:\${port:provider}", --work, "5000"]
    ready: {http: "http://127.0.0.1:\${port:provider}/health", timeout: 10s}
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:\${port:consumer}",
              --provider, "http://127.0.0.1:\${port:provider}/provider", --work, "$3"]
    ready: {http: "http://127.0.0.1:\${port:consumer}/health", timeout: 10s}
    measure: true
variants:
$4
load:
  target: "http://127.0.0.1:\${port:consumer}"
  requests: [{name: consumer, method: GET, path: /consumer}]
  rate: $2
  warmup: $warmup
  duration: $window
$([[ $mode == shared && -n $slice ]] && echo "  slice: $slice")
$(if [[ -n $precision ]]; then echo "precision: {target: $precision, budget: $budget}"; else echo "rounds: $rounds"; fi)
restart: $restart
control: $([[ $control == 1 ]] && echo true || echo false)
$layout
YAML
}

verdict() { # $1 = summary.json, $2 = variant: "pct lo hi significant"
  python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for v in s["steps"][0]["variants"]:
    if v["name"] == sys.argv[2]:
        c = next(c for c in v["costs"] if c["cost"] == "cpu_per_request_ms")
        d = c["delta"]
        # No interval (fewer than 2 rounds, a budget spent first): "none".
        if d.get("ci_low") is None:
            print("none none none 0", len(d.get("rounds") or []))
        else:
            print(d["pct"], d["ci_low"], d["ci_high"], 1 if d["significant"] else 0, len(d["rounds"]))
PY
}

stopped() { # $1 = manifest.json: how a run in precision mode stopped, "fixed" otherwise
  python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])).get("precision") or {}
print(",".join(s.get("stop") or "?" for s in p.get("steps") or []) or "fixed")
PY
}

results="$work/results.tsv"
: > "$results"
for sh in $shapes; do
  read -r rate wk <<<"$(shape "$sh")"
  variants="  - name: baseline
  - name: again"
  if [[ $third == 1 ]]; then
    # +10% of about (12.4 ns × work + 60 µs): the exact share does not
    # matter here, only that a third variant runs.
    us=$(python3 -c "print(round((0.0124 * $wk + 60) * 0.10))")
    variants+="
  - name: plus10
    services:
      consumer: {args: [--extra-cpu, ${us}us]}"
  fi
  scenario "$work/$sh.yaml" "$rate" "$wk" "$variants"
  for i in $(seq 1 "$runs"); do
    out="$work/$sh-$i"
    start=$(date +%s)
    "$work/toll" run -q --out "$out" "$work/$sh.yaml" > /dev/null 2>&1 || true
    if [[ ! -f $out/summary.json ]]; then
      echo "$sh run $i: no summary (see $out)"; continue
    fi
    read -r pct lo hi sig n <<<"$(verdict "$out/summary.json" again)"
    stop=$(stopped "$out/manifest.json")
    if [[ $pct == none ]]; then
      echo "$sh run $i: no interval after $n rounds ($stop; see $out), left out"; continue
    fi
    # The twin's per-round log ratio by its duet's place in the round (0 =
    # first), to see whether the baseline's history within a round biases it.
    byorder=$(python3 - "$out" <<'PY'
import glob, json, math, os, sys
trials = [json.load(open(f)) for f in glob.glob(os.path.join(sys.argv[1], "trials", "*.json"))]
cpu = {}
for t in trials:
    pts = [p for s in t["samples"] for p in s["points"]]
    done = t["load"]["completed"]
    if done == 0 or not t["samples"]:
        continue
    c = sum(s["points"][-1]["cpu"] - s["points"][0]["cpu"] for s in t["samples"] if s["points"])
    cpu[(t["round"], t["variant"], t.get("pair", ""))] = (c / done, t["order"])
out = {}
for (r, v, pair), (x, order) in cpu.items():
    # A duet's baseline names its partner; together, one baseline trial a
    # round serves every variant, and order is the twin's place in the
    # round's order of requests.
    base = cpu.get((r, "baseline", "again")) or cpu.get((r, "baseline", ""))
    if v == "again" and base:
        out.setdefault(order, []).append(math.log(x / base[0]))
print(" ".join(f"{o}:{100*(math.exp(sum(xs)/len(xs))-1):+.2f}%/{len(xs)}" for o, xs in sorted(out.items())))
PY
)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sh" "$i" "$pct" "$lo" "$hi" "$sig" "$(($(date +%s) - start))" "$byorder" "$n" >> "$results"
    printf '%-6s run %2d: %+.2f%% [%+.2f, %+.2f] %s (%d rounds, %s; %d s, load %s; by place in round, whole-trial CPU: %s)\n' "$sh" "$i" "$pct" "$lo" "$hi" \
      "$([[ $sig == 1 ]] && echo 'FALSE POSITIVE' || echo '~')" "$n" "$stop" "$(($(date +%s) - start))" "$(cut -d' ' -f1 /proc/loadavg)" "$byorder"
    [[ -z ${KEEP:-} ]] || cp -r "$out" "$KEEP/"
  done
done

python3 - "$results" <<'PY'
import math, sys
rows = [l.split("\t") for l in open(sys.argv[1]) if l.strip()]
def wilson(k, n, z=1.96):
    if n == 0:
        return 0, 0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0, c - h), min(1, c + h)
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
     10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 10**9: 1.960}
def t975(df):
    ks = sorted(T)
    for lo, hi in zip(ks, ks[1:]):
        if lo <= df <= hi:
            return T[lo] + (T[hi] - T[lo]) * (df - lo) / (hi - lo)
def report(name, rs):
    n, k = len(rs), sum(int(r[5]) for r in rs)
    lo, hi = wilson(k, n)
    pcts = [float(r[2]) for r in rs]
    line = f"{name:8s} false positives {k}/{n} = {100*k/max(n,1):.0f}% [{100*lo:.0f}%, {100*hi:.0f}%]"
    if n >= 2:
        m = sum(pcts) / n
        sd = math.sqrt(sum((x - m) ** 2 for x in pcts) / (n - 1))
        h = t975(n - 1) * sd / math.sqrt(n)
        line += f"; mean A/A estimate {m:+.2f}% ± {h:.2f}% ({'biased' if abs(m) > h else 'no bias shown'})"
        # The runs' own standard errors, from their intervals, against the
        # spread of their estimates between runs: a ratio above 1 is an
        # effect the intervals do not carry (the calibration's run_noise_pct, record.DefaultCalibration).
        se = [(float(r[4]) - float(r[3])) / 2 / t975(int(r[8]) - 1) for r in rs]
        claimed = math.sqrt(sum(x * x for x in se) / n)
        line += f"; spread between runs {sd:.2f}% against {claimed:.2f}% claimed ({sd / claimed:.2f}×)"
    print(line)
print("== A/A")
for sh in sorted({r[0] for r in rows}):
    report(sh, [r for r in rows if r[0] == sh])
report("all", rows)
PY

if [[ $plus2 == 1 ]]; then
  precision=$plus2_precision
  echo "== a known +2% with the same settings${precision:+, precision ±$precision within $budget}"
  for sh in $shapes; do
    read -r rate wk <<<"$(shape "$sh")"
    # 2% of the baseline's CPU per request, measured by the first A/A run.
    base_ms=$(python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))
print(next(c["value"] for v in s["steps"][0]["variants"] if v["name"]=="baseline" for c in v["costs"] if c["cost"]=="cpu_per_request_ms"))' "$work/$sh-1/summary.json")
    us=$(python3 -c "print(max(1, round(float('$base_ms') * 1000 * 0.02)))")
    scenario "$work/$sh-plus2.yaml" "$rate" "$wk" "  - name: baseline
  - name: plus2
    services:
      consumer: {args: [--extra-cpu, ${us}us]}"
    out="$work/$sh-plus2"
    start=$(date +%s)
    "$work/toll" run -q --out "$out" "$work/$sh-plus2.yaml" > /dev/null 2>&1 || true
    wall=$(($(date +%s) - start))
    python3 - "$out/summary.json" "$wall" "$sh" "$us" "$base_ms" <<'PY'
import json, math, sys
s, wall, sh, us, base = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
by = {}
for t in s["trials"]:
    if t["variant"] == "plus2" or (t["variant"] == "baseline" and t.get("pair", "plus2") == "plus2"):
        if "cpu_per_request_ms" in t.get("costs", {}):  # a trial that served nothing has none
            by.setdefault(t["round"], {})[t["variant"]] = t["costs"]["cpu_per_request_ms"]
logs = [math.log(r["plus2"] / r["baseline"]) for _, r in sorted(by.items()) if len(r) == 2]
rounds = len(logs)
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
     10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 10**9: 1.960}
def t975(df):
    ks = sorted(T)
    for lo, hi in zip(ks, ks[1:]):
        if lo <= df <= hi:
            return T[lo] + (T[hi] - T[lo]) * (df - lo) / (hi - lo)
first = None
for k in range(3, rounds + 1):
    xs = logs[:k]
    m = sum(xs) / k
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (k - 1))
    h = t975(k - 1) * sd / math.sqrt(k)
    if m - h > 0 and first is None:
        first = k
d = next(c for v in s["steps"][0]["variants"] if v["name"] == "plus2" for c in v["costs"] if c["cost"] == "cpu_per_request_ms")["delta"]
want = 100 * us / 1000 / base
when = f"from round {first} ({first * wall / rounds / 60:.1f} min)" if first else "never"
if d.get("ci_low") is None:
    print(f"{sh:6s} +{us}us = {want:+.1f}%: no interval after {rounds} rounds ({wall/60:.1f} min)")
    sys.exit(0)
print(f"{sh:6s} +{us}us = {want:+.1f}%: toll {d['pct']:+.2f}% [{d['ci_low']:+.2f}, {d['ci_high']:+.2f}] after {rounds} rounds ({wall/60:.1f} min), {'detected' if d['ci_low'] > 0 else 'NOT detected'}; interval excludes 0 {when}")
PY
  done
fi
