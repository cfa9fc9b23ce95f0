#!/usr/bin/env bash
# A small eBPF agent, in the two ways eBPF agents watch an application
# (Kindling compares its eBPF and kernel-module probes the same way):
#
#   agent.sh syscalls PORT BINARY  tracepoints on every system call's entry
#                                  and exit: per-syscall counts and latency
#                                  histograms of the process (Kindling, Falco)
#   agent.sh uprobes  PORT BINARY  uprobes on the Go HTTP server's and client's
#                                  functions, the service's own handler, the
#                                  Go runtime's system-call entry and exit and
#                                  its allocator in BINARY: requests, calls,
#                                  reads, writes, system calls and heap
#                                  allocations, seen from user space (Beyla,
#                                  Pixie, Odiglet hook the HTTP functions; an
#                                  allocation tracer such as bcc's memleak
#                                  hooks the allocator)
#
# The traced process is the one listening on 127.0.0.1:PORT. bpftrace prints
# "toll-ebpf-agent: attached" once every probe is attached (its BEGIN probe
# runs after the others are attached), which is the service's readiness
# (ready: {log: ...}); if a probe cannot attach, bpftrace exits with the
# reason and toll stops the run with the end of this log. Every 10 s the
# agent prints what it aggregated, as an agent would ship it. Needs root.
set -euo pipefail
mode=${1:?usage: agent.sh syscalls|uprobes PORT BINARY} port=${2:?port} bin=${3:?binary}

# bpftrace reads tracepoints' formats from tracefs.
if [ ! -e /sys/kernel/tracing/events ]; then
  mount -t tracefs nodev /sys/kernel/tracing || {
    echo "toll-ebpf-agent: tracefs is not mounted at /sys/kernel/tracing and could not be" >&2; exit 1; }
fi
pid=$(ss -Hltnp "sport = :$port" | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2 || true)
if [ -z "$pid" ]; then
  echo "toll-ebpf-agent: no process listens on port $port" >&2
  exit 1
fi
# BINARY "-" is the traced process's own executable. A uprobe traps in every
# process that maps its file, whatever -p says: give the traced process a
# file of its own (own-copy.sh) so that only it pays.
if [ "$bin" = - ]; then
  bin=$(readlink "/proc/$pid/exe")
fi
echo "toll-ebpf-agent: tracing pid $pid ($(tr '\0' ' ' </proc/$pid/cmdline | cut -c1-120)) with $mode"

case $mode in
syscalls)
  prog='
tracepoint:raw_syscalls:sys_enter /pid == $1/ { @start[tid] = nsecs; }
tracepoint:raw_syscalls:sys_exit /pid == $1 && @start[tid]/ {
  @syscalls[args->id] = count();
  @latency_us = hist((nsecs - @start[tid]) / 1000);
  delete(@start[tid]);
}
interval:s:10 { time("%H:%M:%S "); print(@syscalls, 8); print(@latency_us); clear(@syscalls); clear(@latency_us); }'
  ;;
uprobes)
  # runtime.mallocgc(size, typ, needzero) takes its size in the first
  # register of Go's internal calling convention, which bpftrace's arg0
  # (the C convention's) does not read: AX on amd64, R0 on arm64.
  case $(uname -m) in
  x86_64) size='reg("ax")' ;;
  aarch64) size='reg("r0")' ;;
  *) size=0 ;;
  esac
  prog="
uprobe:$bin:\"net/http.serverHandler.ServeHTTP\" /pid == \$1/ { @requests = count(); }
uprobe:$bin:\"github.com/tollperf/toll/app.(*consumer).ServeHTTP\" /pid == \$1/ { @handler = count(); }
uprobe:$bin:\"net/http.(*conn).readRequest\" /pid == \$1/ { @read_request = count(); }
uprobe:$bin:\"net/http.(*response).finishRequest\" /pid == \$1/ { @finish_request = count(); }
uprobe:$bin:\"net/http.(*Transport).roundTrip\" /pid == \$1/ { @client_calls = count(); }
uprobe:$bin:\"internal/poll.(*FD).Read\" /pid == \$1/ { @fd_reads = count(); }
uprobe:$bin:\"internal/poll.(*FD).Write\" /pid == \$1/ { @fd_writes = count(); }
uprobe:$bin:\"runtime.entersyscall\" /pid == \$1/ { @syscall_start[tid] = nsecs; }
uprobe:$bin:\"runtime.exitsyscall\" /pid == \$1 && @syscall_start[tid]/ { @syscalls = count(); delete(@syscall_start[tid]); }
uprobe:$bin:\"runtime.mallocgc\" /pid == \$1/ { @allocs = count(); @alloc_bytes = sum($size); }
interval:s:10 {
  time(\"%H:%M:%S \");
  print(@requests); print(@handler); print(@read_request); print(@finish_request);
  print(@client_calls); print(@fd_reads); print(@fd_writes); print(@syscalls);
  print(@allocs); print(@alloc_bytes);
  clear(@requests); clear(@handler); clear(@read_request); clear(@finish_request);
  clear(@client_calls); clear(@fd_reads); clear(@fd_writes); clear(@syscalls);
  clear(@allocs); clear(@alloc_bytes);
}"
  ;;
*)
  echo "toll-ebpf-agent: mode $mode is not syscalls or uprobes" >&2
  exit 2
  ;;
esac
# bpftrace 0.17 leaves out, without a word, a uprobe whose function is not
# in the binary: the agent would run and trace nothing. Check each first.
if [ "$mode" = uprobes ]; then
  functions=$(bpftrace -l "uprobe:$bin:*" 2>/dev/null || true)
  for fn in $(grep -o 'uprobe:[^"]*"[^"]*"' <<<"$prog" | cut -d'"' -f2); do
    if ! grep -qxF "uprobe:$bin:$fn" <<<"$functions"; then
      echo "toll-ebpf-agent: ERROR: $bin has no function $fn to attach a uprobe to" >&2
      exit 1
    fi
  done
fi
prog+='
BEGIN { printf("toll-ebpf-agent: attached\n"); }'
# A uprobe is placed in every process that maps BINARY, a tracepoint fires
# in every process; -p and the predicate keep the traced one's events.
exec bpftrace -p "$pid" -e "$prog" "$pid"
