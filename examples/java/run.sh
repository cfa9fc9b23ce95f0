#!/usr/bin/env bash
# Fetches the agents, builds the Spring Boot service and runs agents.yaml.
# Extra arguments go to toll run (e.g. --out DIR). Needs root (network: isolated).
set -euo pipefail
cd "$(dirname "$0")/../.."
examples/java/fetch-agents.sh
examples/java/build.sh
go run ./cmd/toll run examples/java/agents.yaml "$@"
