#!/usr/bin/env bash
# Builds the OpenTelemetry Collector that examples/agent-daemon.yaml runs, with
# the Collector's own builder (go.opentelemetry.io/collector/cmd/builder) from
# the Go module proxy, into examples/collector/bin/otelcol-toll (ignored by
# git). Skips the build when that binary is newer than builder-config.yaml.
# On a 2-core VM the first build takes about 5 minutes (module downloads and
# compiling the Collector); later ones reuse Go's build cache.
set -euo pipefail
cd "$(dirname "$0")"
BUILDER_VERSION=v0.165.0
out=bin/otelcol-toll
if [ -x "$out" ] && [ "$out" -nt builder-config.yaml ]; then
  echo "collector: $out is up to date"
  exit 0
fi
mkdir -p bin
GOBIN="$PWD/bin" go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION"
./bin/builder --config builder-config.yaml
cp bin/otelcol-toll-build/otelcol-toll "$out"
# The builder's generated sources are not toll's: left in the tree, they
# showed in `gofmt -l .`. Go's build cache keeps the next build quick.
rm -rf bin/otelcol-toll-build
echo "collector: built $out"
