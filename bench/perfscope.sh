#!/usr/bin/env bash
# What perf's sampling costs a Go service, by how perf is scoped.
#
# Runs toll's reference consumer and provider (the quickstart's, untraced)
# on CPU 1, the consumer in a cgroup of its own, and loads it with
# `toll load` at 300 req/s for 15 s, in turn with no perf, with
# `perf record -p` (the consumer's process: its events switched at each of
# its context switches) and with `perf record -a` (every CPU), TURNS times.
# Prints the consumer's CPU per request (its cgroup's CPU over the requests
# completed) each time, and each perf's against the turn's run without.
#
# Usage: bench/perfscope.sh        TURNS=4
# Measure alone: nothing else may build, test or send load meanwhile.
# Loopback only (ports 18080-18081). Needs root and perf.
set -euo pipefail
cd "$(dirname "$0")/.."
turns=${TURNS:-4}
work=$(mktemp -d)
go build -o "$work/toll" ./cmd/toll
T=$work/toll
if [[ -d /sys/fs/cgroup/cpuacct ]]; then
  cg=/sys/fs/cgroup/cpuacct/toll-perfscope
  usage() { cat "$cg/cpuacct.usage"; }
else
  cg=/sys/fs/cgroup/toll-perfscope
  usage() { awk '$1 == "usage_usec" {print $2 * 1000}' "$cg/cpu.stat"; }
fi
mkdir -p "$cg"
taskset -c 1 "$T" app provider --addr 127.0.0.1:18081 --work 5000 > /dev/null 2>&1 & P=$!
taskset -c 1 "$T" app consumer --addr 127.0.0.1:18080 --provider http://127.0.0.1:18081/provider \
  --work 20000 --trace none > /dev/null 2>&1 & C=$!
trap 'kill $P $C 2>/dev/null; sleep 0.5; rmdir "$cg" 2>/dev/null; rm -rf "$work"' EXIT
sleep 1
echo "$C" > "$cg/cgroup.procs"
taskset -c 0 "$T" load http://127.0.0.1:18080/consumer --rate 300 --duration 5s > /dev/null
echo "perfscope.sh: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for turn in $(seq 1 "$turns"); do
  none=""
  for mode in none processes every-cpu; do
    pp=""
    case $mode in
      processes) taskset -c 0 perf record -q -e cpu-clock -F 997 -g -o "$work/perf.data" -p "$C" 2> /dev/null & pp=$! ;;
      every-cpu) taskset -c 0 perf record -q -e cpu-clock -F 997 -g -o "$work/perf.data" -a 2> /dev/null & pp=$! ;;
    esac
    sleep 2
    u0=$(usage)
    n=$(taskset -c 0 "$T" load http://127.0.0.1:18080/consumer --rate 300 --duration 15s --json |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["completed"])')
    u1=$(usage)
    [[ -z $pp ]] || { kill -INT "$pp"; wait "$pp" 2> /dev/null || true; }
    ms=$(python3 -c "print(f'{($u1 - $u0) / 1e6 / $n:.4f}')")
    [[ $mode != none ]] || none=$ms
    python3 -c "print(f'turn $turn, perf $mode: $ms ms per request ({100 * ($ms / $none - 1):+.1f}% against no perf), $n requests')"
    sleep 1
  done
done
