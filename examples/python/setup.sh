#!/usr/bin/env bash
# Creates examples/python/.venv with the pinned Flask, waitress and
# OpenTelemetry packages. Idempotent: does nothing when requirements.txt
# has not changed since the last install.
set -euo pipefail
cd "$(dirname "$0")"
venv=.venv
stamp=$venv/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  echo "examples/python/.venv is up to date"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r requirements.txt
echo "$want" >"$stamp"
echo "examples/python/.venv ready: $("$venv/bin/python" --version), $("$venv/bin/pip" show opentelemetry-sdk | grep ^Version)"
