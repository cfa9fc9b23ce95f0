#!/usr/bin/env bash
# A/A with everything left to toll: how often does an identical twin read a
# change on any cost of the table, after the correction for multiple
# comparisons, in the schedule toll chooses?
#
# Runs FILE RUNS times as it is (precision mode: no mode, restart or rounds
# named, so toll chooses them), each with toll's default or the given target
# and budget, and prints per run: how it stopped and in how long, the share
# of it measured, every cost on which the variant TWIN (default "twin") reads
# a change that survives the correction (summary.json's
# significant_corrected; the primary cost keeps its own verdict), and, with
# KNOWN=VARIANT:MS, that variant's CPU per request change in ms with its
# interval and whether it holds MS (KNOWN_COST names another cost, e.g.
# cpu_per_request_nojit_ms for a JVM, whose compilers' bursts are not the
# injected cost). Then the false-alarm count with its 95%
# Wilson interval.
#
# Usage: bench/aa-default.sh FILE RUNS [toll run flags, e.g. --precision 1.5% --budget 3m]
#   TWIN=twin  KNOWN=plus30:0.030  KNOWN_COST=cpu_per_request_ms  KEEP=DIR (keep every results directory)
# Measure alone: nothing else may build, test or send load meanwhile. Needs jq
# (Debian: jq) and python3.
set -euo pipefail
file=$1
runs=$2
shift 2
twin=${TWIN:-twin}
known=${KNOWN:-}
known_cost=${KNOWN_COST:-cpu_per_request_ms}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here" && go build -o "$work/toll" ./cmd/toll)
keep=${KEEP:-$work/runs}
mkdir -p "$keep"
echo "aa-default.sh: $(date -u +%FT%TZ), commit $(git -C "$here" rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "toll run $file $* ($runs runs, twin $twin${known:+, known $known})"
alarms=0
for i in $(seq 1 "$runs"); do
  out="$keep/run-$i"
  began=$(date +%s)
  set +e
  (cd "$(dirname "$file")" && "$work/toll" run "$(basename "$file")" "$@" --out "$out" -q >"$out.txt" 2>&1)
  code=$?
  set -e
  took=$(( $(date +%s) - began ))
  sum="$out/summary.json"
  if [[ ! -f $sum ]]; then
    echo "run $i: exit $code, no summary ($(tail -1 "$out.txt"))"
    continue
  fi
  stop=$(jq -r '[.manifest.precision.steps[]? | "\(.stop) ±\(.half_pct*100|round/100)% after \(.rounds) rounds"] | join("; ")' "$sum")
  share=$(jq -r 'if .measured then (.measured.window_s/.measured.elapsed_s*100|round|tostring)+"%" else "n/a" end' "$sum")
  changed=$(jq -r --arg t "$twin" '[.steps[].variants[] | select(.name==$t) | .costs[] | select(.delta.significant_corrected) | "\(.label) \(.delta.verdict)"] | join(", ")' "$sum")
  line="run $i: exit $code, ${took} s, $stop, measured $share; $twin:"
  if [[ -n $changed ]]; then
    alarms=$((alarms + 1))
    line+=" CHANGE: $changed"
  else
    line+=" no change"
  fi
  if [[ -n $known ]]; then
    kv=${known%%:*}
    kms=${known##*:}
    line+="; $(jq -r --arg v "$kv" --argjson k "$kms" --arg c "$known_cost" '[.steps[].variants[] | select(.name==$v) | .costs[] | select(.cost==$c) | .delta |
      if .abs == null or .abs_ci_low == null then "\($v) \($c): no interval"
      else "\($v) \($c) \(.abs*1000|round/1000) ms [\(.abs_ci_low*1000|round/1000), \(.abs_ci_high*1000|round/1000)] (\(.pct*10|round/10)%), holds \($k): \(.abs_ci_low <= $k and $k <= .abs_ci_high)" end] | join("")' "$sum")"
  fi
  echo "$line"
done
python3 - "$alarms" "$runs" <<'PY'
import math, sys
k, n = int(sys.argv[1]), int(sys.argv[2])
z = 1.96
p = k / n
c = (p + z*z/(2*n)) / (1 + z*z/n)
h = z * math.sqrt(p*(1-p)/n + z*z/(4*n*n)) / (1 + z*z/n)
print(f"false alarms: {k} of {n} runs ({100*p:.0f}% [{100*max(c-h,0):.0f}%, {100*min(c+h,1):.0f}%] 95% Wilson)")
PY
