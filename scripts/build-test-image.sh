#!/usr/bin/env bash
# Builds a container image FROM scratch holding a static toll built from this
# tree, tagged localhost/toll:dev (or $1), with Podman or Docker, whichever
# is installed (podman first). No registry is needed. Used by
# examples/quickstart-containers.yaml; the container tests build their own.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-localhost/toll:dev}
engine=$(command -v podman || command -v docker || true)
[ -n "$engine" ] || { echo "neither podman nor docker is installed (scripts/install-test-deps.sh installs podman)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
CGO_ENABLED=0 go build -o "$dir/toll" ./cmd/toll
printf 'FROM scratch\nCOPY toll /toll\nENTRYPOINT ["/toll"]\n' > "$dir/Containerfile"
"$engine" build -q -t "$tag" -f "$dir/Containerfile" "$dir"
echo "built $tag with $(basename "$engine")"
