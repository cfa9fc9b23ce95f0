#!/usr/bin/env bash
# Sets up the venv and runs the Flask example; extra arguments go to toll run.
set -euo pipefail
cd "$(dirname "$0")/../.."
examples/python/setup.sh
go run ./cmd/toll run examples/python/flask.yaml "$@"
