#!/usr/bin/env bash
# What profiling costs the service it samples, and whether a profiled A/A
# run reads differences that are not there.
#
# Go, sampled by perf (outside the service's cgroup; the service pays the
# sampling interrupts and the kernel's stack walks): an A/A scenario, the
# quickstart's service and load with both variants untraced ("baseline" and
# "again"), run PAIRS times without and with --profile, in turn. It prints,
# per run, both sides' CPU per request and the twin's change, and for the
# profiled runs how many functions the twin's differential profile read as
# significant out of how many it sampled (about 5% is what 95% intervals
# allow). Then the profiling's cost: the mean log ratio of each profiled run's
# CPU per request (both sides) to the unprofiled run before it, with its 95%
# t interval over the pairs (runs apart in time, so the interval includes
# the drift between runs).
#
# JVM, sampled by async-profiler (inside the JVM, so its CPU is the
# service's): one run of the Java example's consumer without and with
# async-profiler loaded exactly as `toll run --profile` loads it
# (-agentpath:libasyncProfiler.so=start,event=itimer,interval=1003us,loop=1s,...),
# as a shared duet in precision mode: the change is the profiler's cost.
# Needs examples/java/build.sh and examples/java/fetch-agents.sh; skipped
# without them.
#
# Usage: bench/profcost.sh
#   PAIRS=4        unprofiled/profiled pairs of Go runs (about 3 minutes a pair)
#   JVM=1          also the JVM run (about 12 minutes; 0 to skip); JVM=ways
#                  compares three ways of loading async-profiler beside the
#                  baseline instead (toll's event=itimer with loop=1s,
#                  event=cpu with loop=1s, event=cpu without loop), 8 rounds
#                  after a warm-up until the JIT settles (about 10 minutes)
#   KEEP=DIR       keep every results directory there
# Measure alone: nothing else may build, test or send load meanwhile.
# Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${PAIRS:-4}
jvm=${JVM:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/toll" ./cmd/toll
echo "profcost.sh: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"

cat > "$work/aa.yaml" <<'YAML'
name: profcost-aa
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "5000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 10s}
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider", --work, "20000", --trace, none]
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 10s}
    measure: true
variants:
  - name: baseline
  - name: again
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests: [{name: consumer, method: GET, path: /consumer}]
  rate: 300
  warmup: 1s
  duration: 3s
  slice: 50ms
mode: duet
pinning: {duet: shared}
restart: per-round
rounds: 10
YAML

# levels DIR: "baseline_ms again_ms pct lo hi significant" from summary.json,
# then, when the run was profiled, "sig/sampled" of the twin's functions.
levels() {
  python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
per = {}
for t in s["trials"]:
    if t.get("excluded"):
        continue
    c = (t.get("costs") or {}).get("cpu_per_request_ms")
    if c is not None:
        per.setdefault(t["variant"], []).append(c)
mean = {v: sum(x) / len(x) for v, x in per.items()}
v = next(v for v in s["steps"][0]["variants"] if v["name"] == "again")
d = next(c for c in v["costs"] if c["cost"] == "cpu_per_request_ms")["delta"]
out = [f"{mean['baseline']:.4f}", f"{mean['again']:.4f}", f"{d['pct']:+.2f}",
       f"{d['ci_low']:+.2f}", f"{d['ci_high']:+.2f}", "1" if d["significant"] else "0"]
prof = [p for p in s.get("profiles") or [] if p["variant"] == "again"]
if prof:
    fn = prof[0]["functions"]
    out.append(f"{sum(1 for r in fn if r.get('significant'))}/{len(fn)}")
print(" ".join(out))
PY
}

# functions DIR: "significant sampled": of every function either side's
# profile sampled (not only the 50 the summary keeps), how many the twin's
# paired rounds read a change in at 95%: each trial's own CPU per function
# (go tool pprof), divided by the requests it completed, differenced round
# by round, with a t interval over the rounds, as the analysis does.
functions() {
  python3 - "$1" <<'PY'
import glob, json, math, os, statistics, subprocess, sys
from collections import defaultdict
t95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 29: 2.045}
per = defaultdict(dict)  # (round) -> variant -> {function: ms per request}
for f in glob.glob(os.path.join(sys.argv[1], "trials", "*.json")):
    t = json.load(open(f))
    prof = (t.get("profile") or {}).get("file")
    done = t["load"]["completed"]
    if not prof or not done or t.get("excluded"):
        continue
    out = subprocess.run(["go", "tool", "pprof", "-top", "-nodecount=1000000", "-nodefraction=0",
                          "-unit=ns", "-sample_index=cpu", os.path.join(sys.argv[1], prof)],
                         capture_output=True, text=True).stdout
    fn = {}
    started = False
    for line in out.splitlines():
        if line.strip().startswith("flat"):
            started = True
            continue
        if started and line.strip():
            parts = line.split()
            fn[" ".join(parts[5:])] = float(parts[0].rstrip("ns")) / 1e6 / done
    per[t["round"]][t["variant"]] = fn
rounds = [r for r in per if "baseline" in per[r] and "again" in per[r]]
names = set()
for r in rounds:
    names |= set(per[r]["baseline"]) | set(per[r]["again"])
sig = 0
for n in names:
    d = [per[r]["again"].get(n, 0) - per[r]["baseline"].get(n, 0) for r in rounds]
    sd = statistics.stdev(d)
    if sd > 0 and abs(statistics.mean(d)) > t95.get(len(d) - 1, 2.0) * sd / math.sqrt(len(d)):
        sig += 1
print(sig, len(names))
PY
}

ratios="$work/ratios"
: > "$ratios"
: > "$work/aafns"
for i in $(seq 1 "$pairs"); do
  for prof in off on; do
    out="$work/go-$i-$prof"
    flag=()
    [[ $prof == off ]] || flag=(--profile)
    start=$(date +%s)
    "$work/toll" run -q "${flag[@]}" --out "$out" "$work/aa.yaml" > /dev/null 2>&1 || true
    if [[ ! -f $out/summary.json ]]; then
      echo "go pair $i, profiling $prof: no summary (see $out)"; continue
    fi
    read -r b a pct lo hi sig fns <<<"$(levels "$out")"
    extra=""
    if [[ $prof == on ]]; then
      read -r fsig fall <<<"$(functions "$out")"
      echo "$fsig $fall" >> "$work/aafns"
      extra=", twin's functions that read a change: ${fsig} of ${fall} sampled (${fns%%/*} of the ${fns#*/} the summary kept)"
      [[ -z ${prev:-} ]] || python3 -c "import math; print(math.log($b/${prev% *}), math.log($a/${prev#* }))" >> "$ratios"
    else
      prev="$b $a"
    fi
    printf 'go pair %d, profiling %-3s: baseline %s ms, again %s ms per request; again %s%% [%s, %s] %s (%d s, load %s)%s\n' \
      "$i" "$prof" "$b" "$a" "$pct" "$lo" "$hi" "$([[ $sig == 1 ]] && echo 'FALSE POSITIVE' || echo '~')" \
      "$(($(date +%s) - start))" "$(cut -d' ' -f1 /proc/loadavg)" "$extra"
    [[ -z ${KEEP:-} ]] || cp -r "$out" "$KEEP/"
  done
  prev=""
done
python3 - "$ratios" <<'PY'
import math, statistics, sys
# Each pair gives two log ratios (both sides): average them per pair, so
# that the interval is over pairs, the independent units.
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
x = [(a + b) / 2 for a, b in rows]
if len(x) < 2:
    print("perf's cost: fewer than 2 pairs"); sys.exit()
t = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}.get(len(x) - 1, 2.2)
m, h = statistics.mean(x), t * statistics.stdev(x) / math.sqrt(len(x))
pct = lambda v: 100 * (math.exp(v) - 1)
print(f"perf's cost to a Go service's CPU per request: {pct(m):+.2f}% [{pct(m - h):+.2f}%, {pct(m + h):+.2f}%] over {len(x)} pairs")
PY
awk '{s += $1; n += $2} END {if (n) printf "profiled A/A: %d of %d functions sampled read a change (%.1f%%; about 5%% by chance at 95%% each)\n", s, n, 100 * s / n}' "$work/aafns"

if [[ $jvm != 0 ]]; then
  lib=examples/java/agents/libasyncProfiler.so
  jar=examples/java/target/toll-java-example.jar
  if [[ ! -f $lib || ! -f $jar ]]; then
    echo "jvm: skipped: needs $jar (examples/java/build.sh) and $lib (examples/java/fetch-agents.sh)"
    exit 0
  fi
  mkdir -p "$work/asprof"
  asprof() { # $1 = variant, $2 = async-profiler's options
    printf '  - name: %s\n    services:\n      consumer:\n        env:\n          JAVA_TOOL_OPTIONS: "-agentpath:%s=start,%s"\n' "$1" "$PWD/$lib" "$2"
  }
  cat > "$work/jvm.yaml" <<YAML
name: profcost-jvm
network: isolated
services:
  - name: provider
    command: [java, -Xms256m, -Xmx256m, -jar, $PWD/$jar,
              --role=provider, "--server.port=\${port:provider}", --work=5000]
    ready: {http: "http://127.0.0.1:\${port:provider}/health", timeout: 120s}
  - name: consumer
    command: [java, -Xms256m, -Xmx256m, -jar, $PWD/$jar,
              --role=consumer, "--server.port=\${port:consumer}",
              "--provider=http://127.0.0.1:\${port:provider}/provider", --work=20000]
    ready: {http: "http://127.0.0.1:\${port:consumer}/health", timeout: 180s}
    measure: true
variants:
  - name: baseline
$(asprof async-profiler "event=itimer,interval=1003000,loop=1s,threads,ann,dot,collapsed,file=$work/asprof/%p.%n{1000000000}.collapsed")
$(if [[ $jvm == ways ]]; then
  asprof cpu-loop1s "event=cpu,interval=1003000,loop=1s,threads,ann,dot,collapsed,file=$work/asprof/%p.%n{1000000000}.collapsed"
  asprof cpu-noloop "event=cpu,interval=1003000,threads,ann,dot,collapsed,file=$work/asprof/%p.collapsed"
fi)
load:
  target: "http://127.0.0.1:\${port:consumer}"
  requests: [{name: consumer, method: GET, path: /consumer}]
  rate: 100
  warmup: 2s
  duration: 4s
$([[ $jvm != ways ]] || printf '  variant_warmup: 2m\n  variant_warmup_until: {jit_below: 5ms, over: 10s}\n  variant_warmup_users: 2\n')
mode: duet
pinning: {duet: shared, warmup: all}
$(if [[ $jvm == ways ]]; then
  echo "rounds: 8"
else
  echo "precision: {target: 2%, costs: [cpu_per_request, cpu_per_request_nojit], budget: 12m}"
fi)
YAML
  out="$work/jvm"
  start=$(date +%s)
  "$work/toll" run -q --out "$out" "$work/jvm.yaml" > "$work/jvm.txt" 2>&1 || true
  echo "jvm ($(($(date +%s) - start)) s, load $(cut -d' ' -f1 /proc/loadavg)):"
  grep -E "CPU per request|reached|budget spent|chose" "$work/jvm.txt" || tail -20 "$work/jvm.txt"
  echo "dumps written by async-profiler: $(find "$work/asprof" -type f | wc -l)"
  [[ -z ${KEEP:-} ]] || cp -r "$out" "$work/jvm.txt" "$KEEP/"
fi
