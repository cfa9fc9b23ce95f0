#!/usr/bin/env bash
# Does a profile put a known cost where it is? A small WSGI service, written
# here and not part of toll, spends INJECT_US microseconds of its thread's
# CPU per request in one named function, price_with_tax, in the variant
# only; toll run --profile (py-spy) must charge about that much to it.
#
#   bench/profinject.sh            # alone
#   HOGS=3 bench/profinject.sh     # beside three busy loops, bounded in time
#
# Needs examples/python/setup.sh's venv. Prints the measured CPU per request
# and price_with_tax's charged change with its interval.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
venv=$repo/examples/python/.venv
[ -x "$venv/bin/py-spy" ] || { echo "run examples/python/setup.sh first" >&2; exit 1; }
INJECT_US=${INJECT_US:-1000}
HOGS=${HOGS:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/shop.py" <<'PY'
import math
import os
import time

INJECT_US = float(os.environ.get("INJECT_US", "0"))


def base_work():
    x = 0.0
    for i in range(1, 3000):
        x += math.sqrt(i)
    return x


def price_with_tax():
    end = time.thread_time() + INJECT_US / 1e6
    x = 0
    while time.thread_time() < end:
        x += 1
    return x


def app(environ, start_response):
    base_work()
    if INJECT_US:
        price_with_tax()
    body = b"ok"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
PY
cat >"$work/inject.yaml" <<YAML
name: injected-python
services:
  - name: shop
    dir: $work
    command: [$venv/bin/waitress-serve, --host=127.0.0.1, "--port=\${port:shop}", --threads=4, shop:app]
    ready: {http: "http://127.0.0.1:\${port:shop}/", timeout: 60s}
    measure: true
variants:
  - name: baseline
  - name: injected
    services:
      shop:
        env: {INJECT_US: "$INJECT_US"}
load:
  target: "http://127.0.0.1:\${port:shop}"
  requests:
    - {name: root, method: GET, path: /}
  rate: 100
  warmup: 2s
  duration: 5s
rounds: 6
YAML
go build -o "$work/toll" ./cmd/toll
for _ in $(seq 1 "$HOGS"); do timeout 120 sh -c 'while :; do :; done' & done
echo "$(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg) hogs $HOGS injected ${INJECT_US} us"
"$work/toll" run --profile --out "$work/res" "$work/inject.yaml" >"$work/run.log"
grep "CPU per request (ms)" "$work/run.log"
python3 - "$work/res/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["profiles"][0]
r = next(r for r in d["charged"] if r["name"] == "shop:price_with_tax")
print("price_with_tax charged %+.3f ms per request [%+.3f, %+.3f]; profiled total %+.3f" % (
    r["delta_ms"], r["ci_low_ms"], r["ci_high_ms"], d["total"]["delta_ms"]))
PY
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
