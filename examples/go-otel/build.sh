#!/usr/bin/env bash
# Builds the consumer with one release of the OpenTelemetry Go SDK, as
# bin/consumer-VERSION (VERSION without its v: 1.20.0), in a copy of this
# module under bin/, from the Go module proxy.
#
# With logs, it builds bin/consumer-logs-VERSION instead: the same consumer
# with the SDK's logs as well (--logs otel), from the log modules released
# beside VERSION (v0.N.0 beside 1.(N+24).0; 1.27.0 is the first such
# release).
#
# Usage: bash build.sh VERSION [logs]
set -euo pipefail
v=${1#v}
here=$(cd "$(dirname "$0")" && pwd)
mods=("go.opentelemetry.io/otel@v$v" "go.opentelemetry.io/otel/sdk@v$v"
  "go.opentelemetry.io/otel/trace@v$v" "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp@v$v")
tags=
files=("$here/main.go" "$here/logs_none.go")
name=consumer-$v
if [ "${2:-}" = logs ]; then
  minor=$(echo "$v" | cut -d. -f2)
  if [ "${v%%.*}" != 1 ] || [ "$minor" -lt 27 ]; then
    echo "build.sh: $v has no log SDK released beside it (1.27.0 is the first)" >&2
    exit 2
  fi
  lv=v0.$((minor - 24)).0
  mods+=("go.opentelemetry.io/otel/log@$lv" "go.opentelemetry.io/otel/sdk/log@$lv"
    "go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp@$lv")
  tags=otellogs
  files=("$here/main.go" "$here/logs_otel.go")
  name=consumer-logs-$v
elif [ -n "${2:-}" ]; then
  echo "build.sh: $2: want logs or nothing" >&2
  exit 2
fi
out=$here/bin/$name
[ -x "$out" ] && exit 0
src=$here/bin/src-$name
rm -rf "$src"
mkdir -p "$src"
cp "${files[@]}" "$here/go.mod" "$src/"
cd "$src"
go get "${mods[@]}"
# -e: a module's tests may need a version the proxy no longer serves.
go mod tidy -e >/dev/null 2>&1 || true
go build -tags "$tags" -o "$out" .
cd "$here"
rm -rf "$src"
