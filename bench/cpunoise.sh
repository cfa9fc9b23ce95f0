#!/usr/bin/env bash
# How much does the CPU cost of identical work drift on this machine, and
# does the drift cancel between two copies running at the same time?
#
# Runs bench/cpunoise (a fixed math.Log loop at a duty cycle, one figure per
# window: µs of thread CPU per loop) as one copy, as two copies sharing one
# CPU, and as two copies on two CPUs, and prints each copy's coefficient of
# variation across windows and, for the pairs, the correlation of the two
# copies and the spread (sd) of their log ratio: what a paired comparison
# would be left with.
#
# Usage: bench/cpunoise.sh [WINDOW] [COUNT]     (default 2s 30: 3 minutes)
#   CPUS="1 0"   the CPU for the single copy and shared pair, then the other
#   DUTY=0.3     each copy's busy share (the single copy runs at 2x)
# Needs taskset. Keep the machine otherwise quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
win=${1:-2s}
count=${2:-30}
duty=${DUTY:-0.3}
read -r a b <<< "${CPUS:-1 0}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/cpunoise" ./bench/cpunoise
single=$(python3 -c "print(min(1, 2 * $duty))")
echo "== one copy on CPU $a, duty $single"
taskset -c "$a" "$work/cpunoise" "$win" "$count" "$single" > "$work/one"
echo "== two copies sharing CPU $a, duty $duty each"
taskset -c "$a" "$work/cpunoise" "$win" "$count" "$duty" > "$work/s1" &
taskset -c "$a" "$work/cpunoise" "$win" "$count" "$duty" > "$work/s2"
wait
echo "== two copies on CPUs $a and $b, duty $duty each"
taskset -c "$a" "$work/cpunoise" "$win" "$count" "$duty" > "$work/d1" &
taskset -c "$b" "$work/cpunoise" "$win" "$count" "$duty" > "$work/d2"
wait
python3 - "$work" "$win" <<'PY'
import math, statistics as st, sys
d, win = sys.argv[1], sys.argv[2]
def read(name):
    return [float(l.split()[1]) for l in open(f"{d}/{name}")]
def cv(xs):
    return 100 * st.stdev(xs) / st.mean(xs)
one = read("one")
print(f"\nper {win} window, µs of CPU per loop:")
print(f"  one copy:            mean {st.mean(one):7.1f}  CV {cv(one):5.1f}%")
for label, x, y in (("sharing one CPU", "s1", "s2"), ("on two CPUs", "d1", "d2")):
    x, y = read(x), read(y)
    n = min(len(x), len(y))
    x, y = x[:n], y[:n]
    r = st.correlation(x, y)
    logs = [math.log(p / q) for p, q in zip(x, y)]
    print(f"  two copies, {label:16s} CV {cv(x):5.1f}% and {cv(y):5.1f}%, correlation {r:+.2f}, sd of log ratio {100 * st.stdev(logs):5.2f}%")
PY
