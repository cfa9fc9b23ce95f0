#!/usr/bin/env bash
# Gold standard: does a scenario's fast schedule give the answer a slow,
# careful one gives?
#
# Runs SCENARIO once as a gold standard, then RUNS times as shipped, and
# prints each variant's changes side by side with whether they agree.
#
# The gold standard takes away what the fast schedules share a CPU with:
#   - restart: per-trial: every trial starts its variant's services fresh and
#     stops them after, so no other variant's services are running (no idle
#     neighbours: their timers, exporters, garbage collectors and JIT) and no
#     trial inherits another's caches or heap;
#   - the default sequential schedule: one variant under load at a time, so
#     no exporter thread of another variant runs on the measured CPU;
#   - long windows (GOLD_DURATION, default 8 s, after GOLD_WARMUP 3 s) and many
#     rounds (GOLD_ROUNDS, default 30), in a seeded random order per round, so
#     the machine's drift averages out instead of cancelling within a pair.
# It is slow (about GOLD_ROUNDS × variants × (start + warm-up + window)) and
# on a shared VM its interval is wider than the fast schedule's; it answers
# whether the fast schedule is biased, not how precise it is.
#
# A fast run agrees when the gold standard's estimate lies inside its 95%
# interval ("in CI"); "consistent" is the weaker check that the two estimates
# differ by less than the two half-widths combined (sqrt(h1² + h2²)), what two
# unbiased measurements of one quantity should show 95% of the time.
#
# Usage: bench/gold.sh [SCENARIO] [RUNS]   (default examples/quickstart.yaml, 3)
#   GOLD_ROUNDS=30 GOLD_WARMUP=3s GOLD_DURATION=8s   the gold standard's settings
#   FAST_ARGS="..."   extra toll run flags for the fast runs (default none:
#                     the scenario as shipped)
#   FAST="shipped shared"  the fast schedules to run RUNS times each: "shipped"
#                     (the scenario as it is) and "shared" (the same scenario
#                     as a duet sharing the services' CPU: mode: duet,
#                     pinning: {duet: shared}); default "shipped"
#   GOLD_FROM=DIR     take the gold standard from an earlier run's results
#                     directory (kept with KEEP) instead of running it again
#   KEEP=DIR          keep every results directory there
#   COSTS="cpu_per_request_ms latency_p50_ms latency_p99_ms"  costs to compare
# A duet scenario's gold standard runs it with --sequential (one variant
# alone at a time). Measure alone: nothing else may build, test or send load
# meanwhile. Loopback only, as the scenario says.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-examples/quickstart.yaml}
runs=${2:-3}
gold_rounds=${GOLD_ROUNDS:-30}
gold_warmup=${GOLD_WARMUP:-3s}
gold_duration=${GOLD_DURATION:-8s}
costs=${COSTS:-cpu_per_request_ms latency_p50_ms latency_p99_ms}
work=$(mktemp -d)
# The shared duet's copy sits beside the scenario, whose relative paths
# (jars, agents) are the file's.
shared_copy="$(dirname "$scenario")/.gold-shared-$$.yaml"
trap 'rm -rf "$work" "$shared_copy"' EXIT
go build -o "$work/toll" ./cmd/toll
echo "gold.sh: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "scenario $scenario; gold standard: restart per-trial, $gold_rounds rounds of $gold_warmup + $gold_duration; $runs fast runs as shipped${FAST_ARGS:+ with $FAST_ARGS}"

# run NAME ARGS...: one toll run into $work/NAME; prints its wall time.
run() {
  local name=$1
  shift
  local start
  start=$(date +%s)
  # Exit 3 (invalid) and 4 (gate) still leave a summary to compare.
  "$work/toll" run -q --out "$work/$name" "$@" > "$work/$name.log" 2>&1 || true
  if [[ ! -f $work/$name/summary.json ]]; then
    echo "$name: no summary; toll said:" >&2
    tail -20 "$work/$name.log" >&2
    exit 1
  fi
  echo "$name: $(($(date +%s) - start)) s, load average $(cut -d' ' -f1 /proc/loadavg) at the end"
  [[ -z ${KEEP:-} ]] || cp -r "$work/$name" "$KEEP/"
}

if [[ -n ${GOLD_FROM:-} ]]; then
  cp -r "$GOLD_FROM" "$work/gold"
  echo "gold: from $GOLD_FROM"
else
  run gold "$scenario" --sequential --restart per-trial --rounds "$gold_rounds" --warmup "$gold_warmup" --duration "$gold_duration"
fi
{ cat "$scenario"; printf '\nmode: duet\npinning: {duet: shared}\n'; } > "$shared_copy"
fast=()
for i in $(seq 1 "$runs"); do
  for mode in ${FAST:-shipped}; do
    case $mode in
      shipped) file=$scenario ;;
      shared)
        if grep -Eq '^mode:[[:space:]]*duet' "$scenario"; then
          echo "gold.sh: $scenario is a duet already; FAST=shipped runs it as it is" >&2
          exit 2
        fi
        file=$shared_copy ;;
      *) echo "gold.sh: FAST mode $mode is not one of shipped, shared" >&2; exit 2 ;;
    esac
    # shellcheck disable=SC2086 # FAST_ARGS is a list of flags
    run "$mode$i" "$file" ${FAST_ARGS:-}
    fast+=("$mode$i=$work/$mode$i/summary.json")
  done
done

python3 - "$work/gold/summary.json" "$costs" "${fast[@]}" <<'PY'
import json, math, sys

gold_path, costs, fast_paths = sys.argv[1], sys.argv[2].split(), sys.argv[3:]

def deltas(path):
    """{(step, variant, cost): (pct, lo, hi, rounds)} of a summary's first
    comparison of each cost (against the baseline)."""
    s = json.load(open(path))
    out = {}
    for st in s["steps"]:
        for v in st["variants"]:
            for c in v["costs"]:
                d = c.get("delta")
                if c["cost"] in costs and d and d.get("pct") is not None:
                    out[(st["index"], v["name"], c["cost"])] = (d["pct"], d["ci_low"], d["ci_high"], v.get("rounds", 0))
    return out

gold = deltas(gold_path)
fast = [(p.split("=", 1)[0], deltas(p.split("=", 1)[1])) for p in fast_paths]
agree, consistent_n, total = {}, {}, {}
for key in sorted(gold):
    step, variant, cost = key
    g = gold[key]
    gh = (g[2] - g[1]) / 2
    print(f"\n{variant} {cost} (step {step}): gold standard {g[0]:+.1f}% [{g[1]:+.1f}, {g[2]:+.1f}]")
    for name, f in fast:
        if key not in f:
            print(f"  {name}: no estimate")
            continue
        x = f[key]
        h = (x[2] - x[1]) / 2
        inside = x[1] <= g[0] <= x[2]
        consistent = abs(x[0] - g[0]) <= math.hypot(h, gh)
        mode = name.rstrip("0123456789")
        if cost == "cpu_per_request_ms":
            total[mode] = total.get(mode, 0) + 1
            agree[mode] = agree.get(mode, 0) + inside
            consistent_n[mode] = consistent_n.get(mode, 0) + consistent
        print(f"  {name}: {x[0]:+.1f}% [{x[1]:+.1f}, {x[2]:+.1f}] (±{h:.1f})  "
              f"{'gold in CI' if inside else 'gold OUTSIDE CI'}, "
              f"{'consistent' if consistent else 'INCONSISTENT'} (Δ {x[0] - g[0]:+.1f} points, allowed ±{math.hypot(h, gh):.1f})")
print("\nCPU per request:")
for mode in total:
    print(f"  {mode}: gold standard inside the run's interval in {agree[mode]} of {total[mode]}; consistent in {consistent_n[mode]} of {total[mode]}")
PY
