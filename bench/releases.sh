#!/usr/bin/env bash
# An agent's overhead over its releases, as a user follows it: runs FILE
# (a scenario naming ${version}) once per version listed in VERSIONS (a
# file, oldest first, as toll bisect reads), each recorded in a fresh
# history labelled version=V, in the order listed; then prints the
# history's trend and writes its page, and bisects the same versions.
#
# Usage: bench/releases.sh FILE VERSIONS OUT [toll run flags, e.g. --precision 3% --budget 3m]
#   BUILD='bash fetch-otel-version.sh ${version}'  run before each version (in FILE's directory)
#   SIZE=3%       the change toll bisect looks for
#   BISECT=0      skip the bisect
#   BISECT_FLAGS='--rounds 5'  toll bisect's own flags (default: precision mode, half the size)
# Measure alone: nothing else may build, test or send load meanwhile.
set -euo pipefail
file=$1
versions=$2
out=$3
shift 3
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
(cd "$here" && go build -o "$out/toll" ./cmd/toll)
toll=$out/toll
db=$out/history.db
echo "releases.sh: $(date -u +%FT%TZ), commit $(git -C "$here" rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$toll run $file --set version=V --history $db --label version=V $*"
grep -v '^#' "$versions" | grep -v '^$' | while read -r v; do
  if [ -n "${BUILD:-}" ]; then
    (cd "$(dirname "$file")" && sh -c "${BUILD//\$\{version\}/$v}") >/dev/null
  fi
  start=$(date +%s)
  code=0
  "$toll" run "$file" --set "version=$v" --history "$db" --label "version=$v" --out "$out/run-$v" -q "$@" >"$out/run-$v.txt" 2>&1 || code=$?
  echo "$v: exit $code, $(( $(date +%s) - start )) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
"$toll" history --db "$db" --html "$out/history.html"
if [ "${BISECT:-1}" = 1 ]; then
  echo "releases.sh: bisect at $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  args=(bisect "$file" --versions-file "$versions" --size "${SIZE:-3%}" --out "$out/bisect" --history "$out/bisect.db")
  [ -n "${BUILD:-}" ] && args+=(--build "$BUILD")
  # shellcheck disable=SC2206 # flags, split on purpose
  [ -n "${BISECT_FLAGS:-}" ] && args+=(${BISECT_FLAGS})
  start=$(date +%s)
  "$toll" "${args[@]}" || true
  echo "bisect: $(( $(date +%s) - start )) s"
fi
