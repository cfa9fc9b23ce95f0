#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a while each.
#
#   scripts/fuzz.sh            # each target for FUZZTIME (default 5s): what CI runs
#   FUZZTIME=5m scripts/fuzz.sh sink   # longer, only the targets in ./sink
#
# Targets are found, not listed: any `func FuzzXxx(f *testing.F)` in a
# _test.go file is run. A crasher fails the script; go test writes it to the
# package's testdata/fuzz/FuzzXxx/ so that it becomes a regression seed once
# committed (plain `go test ./...` replays every seed there).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-5s}
only=${1:-}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
found=0
while IFS=: read -r file _ line; do
  pkg=./$(dirname "$file")
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
  if [ -n "$only" ] && [[ "$pkg" != "./$only"* ]]; then
    continue
  fi
  found=$((found + 1))
  echo "== fuzz $pkg $name ($fuzztime)"
  # go's fuzzer can end a short -fuzztime run with "context deadline
  # exceeded" and no failing input, when the time runs out while a worker
  # is busy: that is the clock, not a crasher, and the target runs again
  # (once). A failing input is always written to testdata/fuzz and fails.
  for try in 1 2; do
    if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" 2>&1 | tee "$log"; then
      break
    fi
    if [ "$try" -eq 1 ] && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
      echo "== $name: the fuzzer's deadline, not a failing input: running it again"
      continue
    fi
    exit 1
  done
done < <(git ls-files '*_test.go' | xargs grep -nE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' | sort)

echo "== $found fuzz target(s) ran for $fuzztime each"
if [ "$found" -eq 0 ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
