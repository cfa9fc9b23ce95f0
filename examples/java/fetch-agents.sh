#!/usr/bin/env bash
# Fetches the Java agents, and async-profiler, from Maven Central into
# examples/java/agents/ (git-ignored), under version-free names the
# scenarios use. The versions are pinned here and only here. Maven checks
# each jar against Central's checksums (-C fails on a mismatch).
# Idempotent: a jar already fetched at its pinned version is kept.
set -euo pipefail
cd "$(dirname "$0")"

# groupId:artifactId:version, and the file name the scenarios use.
agents=(
  "io.opentelemetry.javaagent:opentelemetry-javaagent:2.33.1 opentelemetry-javaagent.jar"
  "co.elastic.apm:elastic-apm-agent:1.55.1 elastic-apm-agent.jar"
  "com.datadoghq:dd-java-agent:1.68.1 dd-java-agent.jar"
  "io.pyroscope:agent:2.9.2 pyroscope-agent.jar"
  # Not an agent: the profiler toll loads into a JVM it profiles.
  "tools.profiler:async-profiler:4.1 async-profiler.jar"
)

mkdir -p agents
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for a in "${agents[@]}"; do
  read -r gav file <<<"$a"
  # The version is part of the stamp, so a new pin fetches again.
  if [[ -f agents/$file && $(cat "agents/$file.version" 2>/dev/null) == "$gav" ]]; then
    continue
  fi
  rm -f "$tmp"/*.jar
  mvn -q -B -C -Dstyle.color=never dependency:copy \
    -Dartifact="$gav" -DoutputDirectory="$tmp" -Dmdep.stripVersion=true
  # Replace by rename, so a JVM running the old jar is not disturbed.
  mv "$tmp"/*.jar "agents/$file.new"
  mv "agents/$file.new" "agents/$file"
  echo "$gav" >"agents/$file.version"
  echo "fetched $gav -> examples/java/agents/$file"
done

# toll's profiling of a JVM loads async-profiler's native library (toll run
# --profile --async-profiler examples/java/agents/libasyncProfiler.so).
if [[ agents/async-profiler.jar -nt agents/libasyncProfiler.so ]]; then
  rm -rf "$tmp/ap" && mkdir "$tmp/ap"
  unzip -q -o agents/async-profiler.jar linux-x64/libasyncProfiler.so -d "$tmp/ap"
  # unzip keeps the jar's date; the library is as new as its extraction.
  touch "$tmp/ap/linux-x64/libasyncProfiler.so"
  mv "$tmp/ap/linux-x64/libasyncProfiler.so" agents/libasyncProfiler.so
  echo "extracted examples/java/agents/libasyncProfiler.so"
fi
