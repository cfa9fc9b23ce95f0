#!/usr/bin/env bash
# bench/loadgen.sh: toll's load generator side by side with wrk, vegeta and
# fortio, in one run, against one nginx worker.
#
#   bench/loadgen.sh              # 3 alternating repetitions, 10 s windows (~15 minutes)
#   REPS=5 bench/loadgen.sh       # more repetitions
#   QUICK=1 bench/loadgen.sh      # 1 repetition of 2 s windows: checks the script (~2 minutes)
#   OUT=dir bench/loadgen.sh      # also keep every tool's raw output and results.tsv in dir
#   PORT=18190                    # nginx's port on 127.0.0.1
#
# It installs what is missing (apt-get: wrk, nginx-light, time; go install of
# fortio v1.68.2 and vegeta v12.13.0 into a scratch GOBIN), builds toll from
# this repository, and starts a private nginx: one worker on CPU 1, access log
# off, a fixed 6-byte response. Every generator runs on CPU 0 (taskset), the Go
# ones with GOMAXPROCS=1. Each generator's CPU time is measured the same way for
# all, by GNU time around the process (user + system), and divided by the
# requests it completed as each tool reports them. It measures:
#
#   saturation  closed, 50 connections, DUR s: req/s, CPU µs per request, p50/p99
#               (wrk -t1 -c50, fortio -qps -1 -c 50, vegeta -rate=0 -max-workers=50, toll --users 50)
#   fixed5k     open, 5,000 req/s, DUR s: CPU µs per request, p50 and p99 as each reports them
#               (toll --rate 5000, vegeta -rate=5000/s, fortio -qps 5000 -c 16; wrk has no fixed rate;
#               fortio with -r 0.00001: its default 1 ms histogram buckets hide sub-ms latency);
#               toll's default sends each request at its own time, and its send lateness p99
#               is checked; "tollgrid" is toll with --quantum 2ms (a release grid, by choice),
#               shown for its cost and not judged
#   stall       5,000 req/s, STALL_DUR s, the nginx worker stopped (SIGSTOP) for 0.5 s at 4 s:
#               the p99 each reports, and toll's scheduled/sent/missed
#   rss         toll at 20,000 req/s for RSS_DUR s: its VmRSS, RssAnon and open fds once a second.
#               Flat means: no growth over the second minute (≤ 1 MiB), once Go's heap has
#               reached its collection goal (4 MiB, which a few KiB/s of allocation takes
#               most of the first minute to fill) and the connection pool its working size
#
# No tool gets a warm-up of its own beyond what it always does (toll
# --warmup 0; fortio opens its connections with one request each, not counted).
# Repetitions alternate the order of the tools. At the end it prints the
# medians, the ratios toll/peer of CPU µs per request, and PASS/FAIL for each of
# the load generator's criteria (docs/benchmarks.md), computed from this run. Loopback only; every loop is
# bounded; everything it starts (nginx included) is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
if [[ ${QUICK:-0} == 1 ]]; then
  REPS=1 DUR=2 STALL_DUR=6 RSS_DUR=20
else
  DUR=10 STALL_DUR=10 RSS_DUR=120
fi
[[ $REPS =~ ^[1-9][0-9]?$ ]] || { echo "REPS=$REPS: want 1..99" >&2; exit 2; }
PORT=${PORT:-18190}
URL="http://127.0.0.1:$PORT/"
# fortio's histogram has 1 ms resolution by default: every sub-millisecond
# latency would land in its first bucket and come out interpolated (p50 0.5 ms,
# p99 0.99 ms). 10 µs buckets cover up to 1 s finely enough for the stall.
FORTIO_RES=0.00001
(($(nproc) >= 2)) || { echo "needs 2 CPUs (nginx on CPU 1, generators on CPU 0)" >&2; exit 2; }

work=$(mktemp -d /tmp/toll-loadgen.XXXXXX)
nginx_pid= cur_pid= stopper_pid= rss_pid=

# kill_tree PID: stops PID's children (GNU time's child, the stopper's sleep),
# then PID itself, and reaps it.
kill_tree() {
  local p=$1
  [[ -n $p ]] || return 0
  pkill -KILL -P "$p" 2>/dev/null || true
  kill -KILL "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  kill_tree "$stopper_pid"
  kill_tree "$cur_pid"
  kill_tree "$rss_pid"
  if [[ -n $nginx_pid ]]; then
    pkill -CONT -P "$nginx_pid" 2>/dev/null || true # a stopped worker would not exit
    kill -QUIT "$nginx_pid" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
    kill_tree "$nginx_pid"
  fi
  if [[ -n ${OUT:-} && -d $work/raw ]]; then
    mkdir -p "$OUT" && cp -r "$work/raw" "$work/results.tsv" "$OUT/" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- install -------------------------------------------------------------------
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
[[ -x /usr/bin/time ]] || need+=(time)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
  echo "== apt-get install ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null; }
fi
bin=$work/bin
mkdir -p "$bin" "$work/raw"
echo "== go install fortio and vegeta into $bin; build toll"
GOBIN=$bin go install fortio.org/fortio@v1.68.2
GOBIN=$bin go install github.com/tsenart/vegeta/v12@v12.13.0
go build -o "$bin/toll" ./cmd/toll

# --- nginx: one worker on CPU 1 ------------------------------------------------------
if ss -Hltn "sport = :$PORT" | grep -q .; then
  echo "port $PORT is in use; set PORT" >&2
  exit 1
fi
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
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$PORT backlog=4096;
    location / { return 200 "hello\n"; }
  }
}
EOF
taskset -c 1 nginx -e "$work/nginx/logs/error.log" -c "$work/nginx/nginx.conf" -p "$work/nginx" &
nginx_pid=$!
for _ in $(seq 50); do curl -fs "$URL" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$URL" >/dev/null || { echo "nginx did not start:"; cat "$work/nginx/logs/error.log"; exit 1; }
worker() { pgrep -P "$nginx_pid" | head -1; }
[[ -n $(worker) ]] || { echo "no nginx worker"; exit 1; }
echo "GET $URL" >"$work/targets"

echo "== machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), Linux $(uname -r)"
echo "   $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), fortio $("$bin/fortio" version), vegeta v12.13.0," \
  "$(nginx -v 2>&1 | cut -d' ' -f3), toll $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- load cmd || echo +dirty), $(go version | cut -d' ' -f3)"
echo "   nginx worker $(worker) on CPU $(taskset -pc "$(worker)" | sed 's/.*: //'); generators on CPU 0, GOMAXPROCS=1"
echo "   load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

results=$work/results.tsv # rep, test, tool, completed, cpu_s, rps, p50_ms, p99_ms, extra
: >"$results"

# run TOOL TEST REP CMD...: runs CMD on CPU 0 under GNU time (in the
# background, so that a signal reaches the trap at once), then parses the
# tool's own report into a results line.
run() {
  local tool=$1 test=$2 rep=$3
  shift 3
  local raw=$work/raw/$rep-$test-$tool
  taskset -c 0 env GOMAXPROCS=1 /usr/bin/time -f "%U %S %e" -o "$raw.time" "$@" >"$raw.out" 2>"$raw.err" &
  cur_pid=$!
  if ! wait "$cur_pid"; then
    cur_pid=
    echo "$tool $test failed:"; tail -20 "$raw.err"; exit 1
  fi
  cur_pid=
  case $tool in
    vegeta) "$bin/vegeta" report -type=json <"$work/vegeta.bin" >"$raw.out" ;; # the report is made outside the timed attack
    fortio) mv "$work/fortio.json" "$raw.out" ;;
  esac
  python3 - "$tool" "$test" "$rep" "$raw" >>"$results" <<'PY'
import json, re, sys
tool, test, rep, raw = sys.argv[1:5]
u, s, e = open(raw + ".time").read().split()[-3:]
cpu = float(u) + float(s)
out = open(raw + ".out").read()
extra = f"wall={e}"
if tool == "wrk":
    n = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    def ms(p):
        v, unit = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M).groups()
        return float(v) * {"us": 1e-3, "ms": 1, "s": 1e3}[unit]
    p50, p99 = ms(50), ms(99)
    if m := re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        extra += f",non2xx={m.group(1)}"
    if m := re.search(r"Socket errors: (.*)", out):
        extra += ",errors=" + m.group(1).replace(",", ";").replace(" ", "")
elif tool == "fortio":
    d = json.loads(out)
    h = d["DurationHistogram"]
    n = sum(c for code, c in d["RetCodes"].items() if code == "200")
    rps = d["ActualQPS"]
    pct = {p["Percentile"]: p["Value"] * 1e3 for p in h["Percentiles"]}
    p50, p99 = pct[50], pct[99]
    extra += f",calls={h['Count']},errors={h['Count'] - n}"
elif tool == "vegeta":
    d = json.loads(out)
    n = round(d["requests"] * d["success"])
    rps = d["throughput"]
    p50, p99 = d["latencies"]["50th"] / 1e6, d["latencies"]["99th"] / 1e6
    extra += f",requests={d['requests']},errors={d['requests'] - n}"
else:  # toll, --warmup 0: the window is the whole run
    d = json.loads(out)
    n = d["completed"]
    rps = d["throughput"]
    p50, p99 = d["latency_ms"]["p50"], d["latency_ms"]["p99"]
    extra += (f",scheduled={d['scheduled']},sent={d['sent']},missed={d['missed']},errors={d['errors']}"
              f",own_us={d['cpu_us_per_request']:.2f},conns={d.get('connections', 0)}")
    if "lateness_us" in d:
        extra += f",late_p99_us={d['lateness_us']['p99']:.0f}"
print(f"{rep}\t{test}\t{tool}\t{n}\t{cpu:.3f}\t{rps:.1f}\t{p50:.4f}\t{p99:.4f}\t{extra}")
PY
  tail -1 "$results" | awk -F'\t' '{printf "  %-7s %-10s rep %s: %8.0f req/s  CPU %6.2f s = %6.1f µs/req  p50 %8.3f ms  p99 %9.3f ms  %s\n", $3, $2, $1, $6, $5, ($4 > 0 ? $5*1e6/$4 : 0), $7, $8, $9}'
}

saturation() {
  local rep=$1 tool=$2
  case $tool in
    wrk) run wrk saturation "$rep" wrk -t1 -c50 -d"${DUR}s" --latency "$URL" ;;
    fortio) run fortio saturation "$rep" "$bin/fortio" load -qps -1 -c 50 -t "${DUR}s" -r "$FORTIO_RES" -loglevel Error -json "$work/fortio.json" "$URL" ;;
    vegeta) run vegeta saturation "$rep" "$bin/vegeta" attack -targets="$work/targets" -rate=0 -max-workers=50 -duration="${DUR}s" -output="$work/vegeta.bin" ;;
    toll) run toll saturation "$rep" "$bin/toll" load "$URL" --users 50 -d "${DUR}s" --warmup 0 --json ;;
  esac
}

fixed() {
  local rep=$1 tool=$2 test=${3:-fixed5k} dur=${4:-$DUR}
  case $tool in
    fortio) run fortio "$test" "$rep" "$bin/fortio" load -qps 5000 -c 16 -t "${dur}s" -r "$FORTIO_RES" -loglevel Error -json "$work/fortio.json" "$URL" ;;
    vegeta) run vegeta "$test" "$rep" "$bin/vegeta" attack -targets="$work/targets" -rate=5000/s -duration="${dur}s" -output="$work/vegeta.bin" ;;
    toll) run toll "$test" "$rep" "$bin/toll" load "$URL" --rate 5000 -d "${dur}s" --warmup 0 --json ;;
    tollgrid) run tollgrid "$test" "$rep" "$bin/toll" load "$URL" --rate 5000 -d "${dur}s" --warmup 0 --quantum 2ms --json ;;
  esac
}

stall() { # 5k req/s; the nginx worker stopped for 0.5 s at 4 s
  local rep=$1 tool=$2 w
  w=$(worker)
  (sleep 4; kill -STOP "$w"; sleep 0.5; kill -CONT "$w") &
  stopper_pid=$!
  fixed "$rep" "$tool" stall "$STALL_DUR"
  wait "$stopper_pid" || true
  stopper_pid=
  kill -CONT "$w" 2>/dev/null || true
}

for rep in $(seq 1 "$REPS"); do
  echo "== repetition $rep of $REPS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  order_sat=(wrk fortio vegeta toll) order_fixed=(fortio vegeta toll)
  if ((rep % 2 == 0)); then # alternate the order
    order_sat=(toll vegeta fortio wrk) order_fixed=(toll vegeta fortio)
  fi
  for t in "${order_sat[@]}"; do saturation "$rep" "$t"; done
  for t in "${order_fixed[@]}"; do fixed "$rep" "$t"; done
  fixed "$rep" tollgrid
  for t in "${order_fixed[@]}"; do stall "$rep" "$t"; done
done

echo "== toll at 20,000 req/s for ${RSS_DUR} s: VmRSS once a second (load average $(cut -d' ' -f1-3 /proc/loadavg))"
taskset -c 0 env GOMAXPROCS=1 "$bin/toll" load "$URL" --rate 20000 -d "${RSS_DUR}s" --json >"$work/raw/rss.json" 2>"$work/raw/rss.err" &
rss_pid=$!
: >"$work/raw/rss.txt"
for _ in $(seq 1 $((RSS_DUR + 10))); do # VmRSS in KiB, and open file descriptors (~ connections)
  sleep 1
  kill -0 "$rss_pid" 2>/dev/null || break
  kb=$(awk '/^VmRSS|^RssAnon/ {printf "%s ", $2}' "/proc/$rss_pid/status" 2>/dev/null) || break
  fds=$(find "/proc/$rss_pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) || fds=0
  if [[ -n $kb ]]; then echo "$kb$fds" >>"$work/raw/rss.txt"; fi
done
wait "$rss_pid" || { echo "toll at 20k req/s failed:"; tail "$work/raw/rss.err"; exit 1; }
rss_pid=
echo "   load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$results" "$work/raw/rss.txt" "$work/raw/rss.json" "$STALL_DUR" <<'PY'
import json, statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
stall_dur = float(sys.argv[4])
def kv(e):
    return dict(x.split("=", 1) for x in e.split(",") if "=" in x)
med = {}
for test in ("saturation", "fixed5k", "stall"):
    for tool in ("wrk", "fortio", "vegeta", "toll", "tollgrid"):
        rs = [r for r in rows if r[1] == test and r[2] == tool]
        if not rs:
            continue
        us = [float(r[4]) * 1e6 / int(r[3]) for r in rs]
        med[test, tool] = dict(us=st.median(us), rps=st.median(float(r[5]) for r in rs),
                               p50=st.median(float(r[6]) for r in rs), p99=st.median(float(r[7]) for r in rs),
                               extra=[kv(r[8]) for r in rs], n=len(rs),
                               us_all=us, p99_all=[float(r[7]) for r in rs])
reps = max(v["n"] for v in med.values())
print(f"\n== medians of {reps} repetition(s); CPU is user+system of the generator's process (GNU time)")
print(f"| test | tool | req/s | CPU µs/req | p50 ms | p99 ms | CPU µs/req per rep |")
print(f"|---|---|---:|---:|---:|---:|---|")
for (test, tool), v in med.items():
    print(f"| {test} | {tool} | {v['rps']:.0f} | {v['us']:.1f} | {v['p50']:.3f} | {v['p99']:.3f} | "
          + " ".join(f"{x:.1f}" for x in v["us_all"]) + " |")
print("\n== ratios toll/peer of CPU µs per request (below 1: toll spends less)")
for test in ("saturation", "fixed5k"):
    for peer in ("wrk", "fortio", "vegeta"):
        if (test, peer) in med:
            print(f"  {test:<11} toll/{peer:<7} {med[test, 'toll']['us'] / med[test, peer]['us']:.2f}")
if ("fixed5k", "tollgrid") in med:
    print(f"  fixed5k     tollgrid/fortio {med['fixed5k', 'tollgrid']['us'] / med['fixed5k', 'fortio']['us']:.2f}   (toll --quantum 2ms, a release grid: not judged)")
for test in ("saturation", "fixed5k", "stall"):
    own = [float(e["own_us"]) for e in med[test, "toll"]["extra"]]
    print(f"  ({test}: toll's own getrusage figure, median {st.median(own):.1f} µs/req, against GNU time's {med[test, 'toll']['us']:.1f})")

samples = [l.split() for l in open(sys.argv[2]) if l.strip()]
rss = [int(x[0]) / 1024 for x in samples]
anon = [int(x[1]) / 1024 for x in samples]
fds = [int(x[2]) for x in samples]
r = json.load(open(sys.argv[3]))
settled = rss[min(9, len(rss) - 1):]
growth = settled[-1] - settled[0]
print(f"\n== toll's RSS at 20k req/s over {len(rss)} samples: first {rss[0]:.1f} MiB, after 10 s {settled[0]:.1f} MiB, "
      f"last {rss[-1]:.1f} MiB, max {max(rss):.1f} MiB; growth after 10 s {growth:+.1f} MiB")
print("   every 10 s (RSS MiB / of it anonymous / open fds): " + "  ".join(f"{rss[i]:.1f}/{anon[i]:.1f}/{fds[i]}" for i in range(0, len(rss), 10))
      + f"  end {rss[-1]:.1f}/{anon[-1]:.1f}/{fds[-1]}")
half = rss[min(59, len(rss) - 1):]
late = half[-1] - half[0]
print(f"   second minute: {half[0]:.1f} -> {half[-1]:.1f} MiB ({late:+.2f} MiB over {len(half)} s)")
print(f"   {r['completed']} requests completed ({r['throughput']:.0f} req/s), {r['missed']} missed, "
      f"{r['errors']} errors, p99 {r['latency_ms']['p99']:.3f} ms, {r['cpu_us_per_request']:.1f} µs/req, "
      f"max RSS {r['max_rss_mib']:.1f} MiB")

def verdict(ok, text):
    print(("  PASS  " if ok else "  FAIL  ") + text)
print("\n== criteria (medians of this run)")
t = med["saturation", "toll"]["us"]; w = med["saturation", "wrk"]["us"]
verdict(t <= 1.2 * w, f"saturation: toll {t:.1f} µs/req <= 1.2 × wrk's {w:.1f} = {1.2 * w:.1f} (ratio {t / w:.2f})")
t = med["fixed5k", "toll"]["us"]; f = med["fixed5k", "fortio"]["us"]
verdict(t <= f, f"5k req/s: toll {t:.1f} µs/req <= fortio's {f:.1f} (ratio {t / f:.2f})")
lateness = [float(e["late_p99_us"]) for e in med["fixed5k", "toll"]["extra"] if "late_p99_us" in e]
verdict(bool(lateness) and st.median(lateness) <= 50,
        f"5k req/s: toll sends each request within 50 µs of its time, p99 of the lateness "
        + (f"{st.median(lateness):.0f} µs (per rep " + ", ".join(f"{x:.0f}" for x in lateness) + ")" if lateness else "not reported"))
peer, lo = min(((p, med["fixed5k", p]["p50"]) for p in ("fortio", "vegeta")), key=lambda x: x[1])
t = med["fixed5k", "toll"]["p50"]
verdict(t <= lo + 0.1, f"5k req/s: toll's p50 {t:.3f} ms within 0.1 ms of the lowest peer p50, {peer}'s {lo:.3f} ms")
# 0.5 s of 5,000 req/s is 2,500 requests delayed by 500..0 ms; p99 lies 1% of
# all requests into them: 500 ms × (1 − 0.01 × duration / 0.5 s).
exp = 500 * (1 - 0.01 * stall_dur / 0.5)
t = med["stall", "toll"]["p99"]
verdict(0.75 * exp <= t <= 1.25 * exp,
        f"stall: toll's p99 {t:.0f} ms ≈ {exp:.0f} ms expected (±25%; per rep "
        + ", ".join(f"{x:.0f}" for x in med["stall", "toll"]["p99_all"])
        + f"); vegeta {med['stall', 'vegeta']['p99']:.0f} ms, fortio {med['stall', 'fortio']['p99']:.1f} ms")
acct = all(int(e["scheduled"]) == int(e["sent"]) + int(e["missed"]) for e in med["stall", "toll"]["extra"])
verdict(acct, "stall: every scheduled request was sent or counted as missed ("
        + "; ".join(f"scheduled {e['scheduled']} sent {e['sent']} missed {e['missed']}" for e in med["stall", "toll"]["extra"]) + ")")
verdict(late <= 1 and len(half) >= 30,
        f"RSS flat at 20k req/s: {late:+.2f} MiB over the second minute <= 1 MiB (after the first 10 s: {growth:+.1f} MiB)")
PY
