#!/usr/bin/env bash
# Calibration: does toll find a known overhead?
#
# 1. Measures the reference app's CPU per request (baseline only, short).
# 2. Runs baseline against "plus10", whose consumer burns an extra 10% of that
#    CPU per request (--extra-cpu, on the thread CPU clock: exact whatever the
#    machine's load), and against "plus0", which adds nothing.
# 3. Prints toll's Δ% and verdict for each, and whether +10% landed within
#    ±1.5 points and +0% came out as "~".
#
# Usage: bench/calibrate.sh [ROUNDS]   (default 60 rounds: about 10 minutes)
# Runs on loopback only; every run is bounded by its scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/toll" ./cmd/toll

scenario() { # $1 = name, $2 = variants yaml, $3 = rounds
  cat > "$work/$1.yaml" <<YAML
name: $1
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:\${port:provider}", --work, "5000"]
    ready: {http: "http://127.0.0.1:\${port:provider}/health", timeout: 10s}
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:\${port:consumer}",
              --provider, "http://127.0.0.1:\${port:provider}/provider", --work, "150000"]
    ready: {http: "http://127.0.0.1:\${port:consumer}/health", timeout: 10s}
    measure: true
variants:
$2
load:
  target: "http://127.0.0.1:\${port:consumer}"
  requests: [{name: consumer, method: GET, path: /consumer}]
  rate: 150
  warmup: 1s
  duration: 2s
rounds: $3
YAML
}

cost() { # $1 = summary.json, $2 = variant: CPU per request in ms
  python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))
for v in s["steps"][0]["variants"]:
    if v["name"]==sys.argv[2]:
        print(next(c["value"] for c in v["costs"] if c["cost"]=="cpu_per_request_ms"))' "$1" "$2"
}

echo "== measuring the baseline's CPU per request"
scenario probe "  - name: baseline" 5
"$work/toll" run -q --out "$work/probe" "$work/probe.yaml" > /dev/null
base_ms=$(cost "$work/probe/summary.json" baseline)
extra_us=$(python3 -c "print(round(float('$base_ms')*100))") # 10% of base, in µs
echo "baseline: $base_ms ms/request; plus10 adds ${extra_us}us of CPU per request"

echo "== $rounds rounds: baseline, plus10, plus0"
scenario calibrate "  - name: baseline
  - name: plus10
    services:
      consumer: {args: [--extra-cpu, ${extra_us}us]}
  - name: plus0
    services:
      consumer: {args: [--extra-cpu, 0s]}" "$rounds"
start=$(date +%s)
"$work/toll" run -q --out "$work/cal" "$work/calibrate.yaml" | grep -E "cost|CPU per request"
echo "wall time: $(( $(date +%s) - start )) s"
python3 - "$work/cal/summary.json" "$extra_us" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
extra_ms = float(sys.argv[2]) / 1000
base = next(c["value"] for v in s["steps"][0]["variants"] if v["name"] == "baseline"
            for c in v["costs"] if c["cost"] == "cpu_per_request_ms")
# The injected cost is known in absolute terms; as a share it is measured
# against this run's own baseline (the probe's level drifts between runs).
want = 100 * extra_ms / base
print(f"injected {extra_ms*1000:.0f}us on a baseline of {base:.3f} ms: expected {want:+.1f}%")
for v in s["steps"][0]["variants"]:
    c = next((c for c in v["costs"] if c["cost"] == "cpu_per_request_ms"), None)
    if not c or not c.get("delta"):
        continue
    d = c["delta"]
    half = (d["ci_high"] - d["ci_low"]) / 2
    if v["name"] == "plus10":
        ok = abs(d["pct"] - want) <= 1.5 and d["significant"]
        inside = d["ci_low"] <= want <= d["ci_high"]
        print(f"plus10: {d['pct']:+.1f}% ± {half:.1f}%  verdict {d['verdict']!r}  within ±1.5 points of {want:+.1f}%: {'yes' if ok else 'NO'}; interval holds it: {'yes' if inside else 'NO'}")
    else:
        print(f"plus0:  {d['pct']:+.1f}% ± {half:.1f}%  verdict {d['verdict']!r}  reads ~: {'yes' if not d['significant'] else 'NO'}")
PY
