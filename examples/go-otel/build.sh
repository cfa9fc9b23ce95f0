#!/usr/bin/env bash
# Builds the consumer with one release of the OpenTelemetry Go SDK, as
# bin/consumer-VERSION (VERSION without its v: 1.20.0), in a copy of this
# module under bin/, from the Go module proxy.
#
# Usage: bash build.sh VERSION
set -euo pipefail
v=${1#v}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/bin/consumer-$v
[ -x "$out" ] && exit 0
src=$here/bin/src-$v
rm -rf "$src"
mkdir -p "$src"
cp "$here/main.go" "$here/go.mod" "$src/"
cd "$src"
go get "go.opentelemetry.io/otel@v$v" "go.opentelemetry.io/otel/sdk@v$v" \
  "go.opentelemetry.io/otel/trace@v$v" "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp@v$v"
go mod tidy >/dev/null
go build -o "$out" .
cd "$here"
rm -rf "$src"
