#!/usr/bin/env bash
# fetch-otel-version.sh VERSION: fetches one release of the OpenTelemetry
# Java agent from Maven Central into
# examples/java/agents/versions/opentelemetry-javaagent-VERSION.jar
# (git-ignored), the jar otel-versions.yaml runs as ${version}: what
# `toll bisect --build` calls for each version. Maven checks the jar
# against Central's checksums (-C). Idempotent.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 VERSION" >&2; exit 2; }
cd "$(dirname "$0")"
v=$1
jar=agents/versions/opentelemetry-javaagent-$v.jar
[ -s "$jar" ] && exit 0
mkdir -p agents/versions
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mvn -q -B -C -Dstyle.color=never dependency:copy \
  -Dartifact="io.opentelemetry.javaagent:opentelemetry-javaagent:$v" -DoutputDirectory="$tmp" -Dmdep.stripVersion=true
mv "$tmp"/*.jar "$jar"
echo "fetched opentelemetry-javaagent $v -> examples/java/$jar"
