#!/usr/bin/env bash
# Fetches the Java agents from Maven Central into examples/java/agents/
# (git-ignored), under version-free names the scenarios use. The versions
# are pinned here and only here. Idempotent.
set -euo pipefail
cd "$(dirname "$0")"

agents=(
  "io.opentelemetry.javaagent:opentelemetry-javaagent:2.33.1 opentelemetry-javaagent.jar"
  "co.elastic.apm:elastic-apm-agent:1.55.1 elastic-apm-agent.jar"
  "com.datadoghq:dd-java-agent:1.68.1 dd-java-agent.jar"
  "io.pyroscope:agent:2.9.2 pyroscope-agent.jar"
)

mkdir -p agents
for a in "${agents[@]}"; do
  read -r gav file <<<"$a"
  # The version is part of the stamp, so a new pin fetches again.
  if [[ -f agents/$file && $(cat "agents/$file.version" 2>/dev/null) == "$gav" ]]; then
    continue
  fi
  tmp=$(mktemp -d)
  mvn -q -B dependency:copy -Dartifact="$gav" -DoutputDirectory="$tmp" -Dmdep.stripVersion=true
  mv "$tmp"/*.jar "agents/$file"
  rm -rf "$tmp"
  echo "$gav" >"agents/$file.version"
  echo "fetched $gav -> examples/java/agents/$file"
done
