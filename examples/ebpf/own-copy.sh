#!/usr/bin/env bash
# own-copy.sh BINARY ARGS...: runs a private copy of BINARY with ARGS, and
# removes the copy when it exits.
#
# A uprobe is a breakpoint in a file, not in a process: the kernel puts it
# in every process that maps the file, and bpftrace's -p and its `pid ==`
# predicate only decide what is recorded. Every service of ebpf.yaml, and
# toll itself, runs the same toll binary, so uprobes on it would trap in the
# baseline's consumer, the providers and toll's load generator as well, and
# the comparison would see no difference. Each consumer runs its own copy,
# and the agent attaches to the copy of the process it traces
# (/proc/PID/exe), so only that consumer pays.
set -euo pipefail
bin=${1:?usage: own-copy.sh BINARY ARGS...}
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/toll-own-copy.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp "$bin" "$dir/$(basename "$bin")"
# Not exec: the shell stays to remove the copy. toll stops the service's
# whole process group, so the copy gets toll's signals itself.
"$dir/$(basename "$bin")" "$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT
wait "$child" || wait "$child"
