#!/usr/bin/env bash
# bench/loadgen.sh: toll's load generator side by side with wrk, vegeta and
# fortio, in one run, against one nginx worker.
#
#   bench/loadgen.sh              # 3 alternating repetitions, 10 s windows (~12 minutes)
#   REPS=5 bench/loadgen.sh
#   QUICK=1 bench/loadgen.sh      # 1 repetition of 2 s windows: checks the script
#
# nginx (one worker) runs on CPU 1; every generator runs on CPU 0, the Go
# ones with GOMAXPROCS=1. Each generator's CPU time is measured the same
# way for all, by GNU time around the process (user + system), and divided
# by the requests it completed, as each tool reports them. It measures:
#
#   saturation  closed model, 50 connections: req/s and CPU µs per request
#               (wrk -c50, fortio -qps -1 -c 50, vegeta -rate=0 -max-workers=50, toll --users 50)
#   fixed 5k    open model at 5,000 req/s: CPU µs per request, p50 and p99 as each reports them
#               (toll, vegeta, fortio; wrk has no fixed rate)
#   stall       5,000 req/s with nginx stopped (SIGSTOP) for 0.5 s at 4 s: the p99 each reports
#   rss         toll at 20,000 req/s for 120 s (QUICK: 10 s): its RSS once a second
#
# and prints the medians, the ratios toll/peer, and whether toll meets
# issue #4's criteria. Everything it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
if [[ ${QUICK:-0} == 1 ]]; then
  REPS=1 DUR=2 RSS_DUR=10 STALL_DUR=6
else
  DUR=10 RSS_DUR=120 STALL_DUR=10
fi
PORT=${PORT:-18190}
URL="http://127.0.0.1:$PORT/"

work=$(mktemp -d /tmp/toll-loadgen.XXXXXX)
nginx_pid=
cleanup() {
  if [[ -n $nginx_pid ]]; then
    kill -CONT "$(pgrep -P "$nginx_pid" || true)" 2>/dev/null || true
    kill "$nginx_pid" 2>/dev/null || true
    sleep 0.2
    pkill -9 -P "$nginx_pid" 2>/dev/null || true
    kill -9 "$nginx_pid" 2>/dev/null || true
  fi
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# --- install -----------------------------------------------------------------
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
[[ -x /usr/bin/time ]] || need+=(time)
if ((${#need[@]})); then
  echo "== apt-get install ${need[*]}"
  apt-get install -y -q "${need[@]}" >/dev/null
fi
bin=$work/bin
mkdir -p "$bin"
echo "== go install fortio and vegeta into $bin; build toll"
GOBIN=$bin GOFLAGS=-mod=mod go install fortio.org/fortio@v1.68.2
GOBIN=$bin GOFLAGS=-mod=mod go install github.com/tsenart/vegeta/v12@v12.13.0
go build -o "$bin/toll" ./cmd/toll

# --- nginx: one worker on CPU 1 --------------------------------------------------
mkdir -p "$work/nginx/logs"
cat >"$work/nginx/nginx.conf" <<EOF
worker_processes 1;
worker_cpu_affinity 10;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log;
events { worker_connections 8192; }
http {
  access_log off;
  keepalive_requests 10000000;
  server {
    listen 127.0.0.1:$PORT;
    location / { return 200 "hello\n"; }
  }
}
EOF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
nginx_pid=$!
for _ in $(seq 50); do curl -fs "$URL" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$URL" >/dev/null || { echo "nginx did not start"; exit 1; }
worker() { pgrep -P "$nginx_pid"; }

results=$work/results.tsv # rep, test, tool, completed, cpu_s, rps, p50_ms, p99_ms, extra
: >"$results"

# run TOOL TEST REP CMD...: runs CMD on CPU 0 under GNU time, then parses
# the tool's own report into a results line.
run() {
  local tool=$1 test=$2 rep=$3
  shift 3
  taskset -c 0 env GOMAXPROCS=1 /usr/bin/time -f "%U %S" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
    echo "$tool $test failed:"; cat "$work/err"; exit 1; }
  if [[ $tool == vegeta ]]; then # the report is made after the timed attack
    "$bin/vegeta" report -type=json <"$work/vegeta.bin" >"$work/out"
  fi
  python3 - "$tool" "$test" "$rep" "$work" >>"$results" <<'PY'
import json, re, sys
tool, test, rep, work = sys.argv[1:5]
u, s = open(f"{work}/time").read().split()[-2:]
cpu = float(u) + float(s)
out = open(f"{work}/out").read()
extra = ""
if tool == "wrk":
    n = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    def ms(p):
        v, unit = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M).groups()
        return float(v) * {"us": 1e-3, "ms": 1, "s": 1e3}[unit]
    p50, p99 = ms(50), ms(99)
elif tool == "fortio":
    d = json.load(open(f"{work}/fortio.json"))
    h = d["DurationHistogram"]
    n = sum(c for code, c in d["RetCodes"].items() if code == "200")
    rps = d["ActualQPS"]
    pct = {p["Percentile"]: p["Value"] * 1e3 for p in h["Percentiles"]}
    p50, p99 = pct[50], pct[99]
elif tool == "vegeta":
    d = json.loads(out)
    n = round(d["requests"] * d["success"])
    rps = d["throughput"]
    p50, p99 = d["latencies"]["50th"] / 1e6, d["latencies"]["99th"] / 1e6
else:  # toll
    d = json.loads(out)
    n = d["completed"]  # toll --warmup 0: the window is the whole run
    rps = d["throughput"]
    p50, p99 = d["latency_ms"]["p50"], d["latency_ms"]["p99"]
    extra = f"scheduled={d['scheduled']},sent={d['sent']},missed={d['missed']}"
print(f"{rep}\t{test}\t{tool}\t{n}\t{cpu:.3f}\t{rps:.1f}\t{p50:.4f}\t{p99:.4f}\t{extra}")
PY
  tail -1 "$results" | awk -F'\t' '{printf "  %-7s %-11s rep %s: %8.0f req/s  CPU %6.2f s = %6.1f µs/req  p50 %8.3f ms  p99 %9.3f ms\n", $3, $2, $1, $6, $5, $5*1e6/$4, $7, $8}'
}

vegeta_attack() { # the command line of a vegeta attack writing its results to vegeta.bin
  echo "echo 'GET $URL' | $bin/vegeta attack $* > $work/vegeta.bin"
}

saturation() {
  local rep=$1 tool=$2
  case $tool in
    wrk) run wrk saturation "$rep" wrk -t1 -c50 -d"${DUR}s" --latency "$URL" ;;
    fortio) run fortio saturation "$rep" "$bin/fortio" load -qps -1 -c 50 -t "${DUR}s" -loglevel Error -json "$work/fortio.json" "$URL" ;;
    vegeta) run vegeta saturation "$rep" sh -c "$(vegeta_attack -rate=0 -max-workers=50 -duration="${DUR}s")" ;;
    toll) run toll saturation "$rep" "$bin/toll" load "$URL" --users 50 -d "${DUR}s" --json ;;
  esac
}

fixed() {
  local rep=$1 tool=$2 test=${3:-fixed5k} dur=${4:-$DUR}
  case $tool in
    fortio) run fortio "$test" "$rep" "$bin/fortio" load -qps 5000 -c 16 -t "${dur}s" -loglevel Error -json "$work/fortio.json" "$URL" ;;
    vegeta) run vegeta "$test" "$rep" sh -c "$(vegeta_attack -rate=5000/s -duration="${dur}s")" ;;
    toll) run toll "$test" "$rep" "$bin/toll" load "$URL" --rate 5000 -d "${dur}s" --json ;;
  esac
}

stall() { # 5k req/s; nginx stopped for 0.5 s at 4 s
  local rep=$1 tool=$2
  (sleep 4; kill -STOP "$(worker)"; sleep 0.5; kill -CONT "$(worker)") &
  local stopper=$!
  fixed "$rep" "$tool" stall "$STALL_DUR"
  wait "$stopper"
}

peers_sat=(wrk fortio vegeta toll)
peers_fixed=(fortio vegeta toll)
for rep in $(seq 1 "$REPS"); do
  echo "== repetition $rep of $REPS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  order_sat=("${peers_sat[@]}") order_fixed=("${peers_fixed[@]}")
  if ((rep % 2 == 0)); then # alternate the order
    order_sat=(toll vegeta fortio wrk) order_fixed=(toll vegeta fortio)
  fi
  for t in "${order_sat[@]}"; do saturation "$rep" "$t"; done
  for t in "${order_fixed[@]}"; do fixed "$rep" "$t"; done
  for t in "${order_fixed[@]}"; do stall "$rep" "$t"; done
done

echo "== toll at 20,000 req/s for ${RSS_DUR} s: RSS once a second"
taskset -c 0 "$bin/toll" load "$URL" --rate 20000 -d "${RSS_DUR}s" --json >"$work/rss.json" &
tpid=$!
: >"$work/rss.txt"
for _ in $(seq 1 $((RSS_DUR - 1))); do
  sleep 1
  awk '/VmRSS/ {print $2}' "/proc/$tpid/status" >>"$work/rss.txt" 2>/dev/null || break
done
wait "$tpid"

python3 - "$results" "$work/rss.txt" "$work/rss.json" <<'PY'
import json, statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
med = {}
for test in ("saturation", "fixed5k", "stall"):
    for tool in ("wrk", "fortio", "vegeta", "toll"):
        rs = [r for r in rows if r[1] == test and r[2] == tool]
        if not rs:
            continue
        us = [float(r[4]) * 1e6 / int(r[3]) for r in rs]
        med[test, tool] = dict(us=st.median(us), rps=st.median(float(r[5]) for r in rs),
                               p50=st.median(float(r[6]) for r in rs), p99=st.median(float(r[7]) for r in rs),
                               extra=[r[8] for r in rs], n=len(rs))
print("\n== medians (%d repetition(s))" % max(v["n"] for v in med.values()))
print(f"  {'test':<11} {'tool':<7} {'req/s':>9} {'CPU µs/req':>11} {'p50 ms':>9} {'p99 ms':>9}")
for (test, tool), v in med.items():
    print(f"  {test:<11} {tool:<7} {v['rps']:>9.0f} {v['us']:>11.1f} {v['p50']:>9.3f} {v['p99']:>9.1f}")
print("\n== ratios toll/peer, CPU µs per request")
for test in ("saturation", "fixed5k"):
    for peer in ("wrk", "fortio", "vegeta"):
        if (test, peer) in med:
            print(f"  {test:<11} toll/{peer:<7} {med[test, 'toll']['us'] / med[test, peer]['us']:.2f}")
rss = [int(x) / 1024 for x in open(sys.argv[2]) if x.strip()]
r = json.load(open(sys.argv[3]))
settled = rss[min(9, len(rss) - 1):]
growth = settled[-1] - settled[0]
print(f"\n== toll RSS at 20k req/s: after 10 s {settled[0]:.1f} MiB, at the end {rss[-1]:.1f} MiB, max {max(rss):.1f} MiB; "
      f"growth after 10 s {growth:+.1f} MiB; {r['completed']} requests over {r['connections']} connections")

def verdict(ok, text):
    print(("  PASS  " if ok else "  FAIL  ") + text)
print("\n== issue #4 criteria")
t = med["saturation", "toll"]["us"]; w = med["saturation", "wrk"]["us"]
verdict(t <= 1.2 * w, f"saturation: toll {t:.1f} µs/req <= 1.2 × wrk's {w:.1f}")
t = med["fixed5k", "toll"]["us"]; f = med["fixed5k", "fortio"]["us"]
verdict(t <= f, f"5k req/s: toll {t:.1f} µs/req <= fortio's {f:.1f}")
lo = min(med["fixed5k", p]["p50"] for p in ("fortio", "vegeta"))
t = med["fixed5k", "toll"]["p50"]
verdict(t <= lo + 0.1, f"5k req/s: toll's p50 {t:.3f} ms within 0.1 ms of the lowest peer p50 {lo:.3f} ms")
t = med["stall", "toll"]["p99"]
verdict(t >= 300, f"stall: toll's p99 {t:.0f} ms shows the 0.5 s stall (about 400 ms expected); "
        f"vegeta {med['stall', 'vegeta']['p99']:.0f} ms, fortio {med['stall', 'fortio']['p99']:.1f} ms")
acct = all(int(kv["scheduled"]) == int(kv["sent"]) + int(kv["missed"])
           for e in med["stall", "toll"]["extra"] for kv in [dict(x.split("=") for x in e.split(","))])
verdict(acct, "stall: every scheduled request was sent or counted as missed (" + "; ".join(med["stall", "toll"]["extra"]) + ")")
verdict(growth <= 0.1 * settled[0], f"RSS flat at 20k req/s: growth after the first 10 s {growth:+.1f} MiB (<= 10%)")
PY
