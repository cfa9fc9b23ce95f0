// Package node reads a Node.js process's V8 heap, garbage collections and
// event-loop time from outside it, as toll reads a JVM's hsperfdata.
//
// Node publishes nothing of its own that another process can read without
// attaching: its inspector is an attach (a debugger protocol that runs
// code in the process), a heap snapshot on a signal stops the process for
// seconds, and /proc holds only what toll reads of every process (CPU,
// RSS, threads). So the process publishes its figures itself, through a
// small script that the user opts into and toll ships beside this package:
// tollstats.cjs, loaded with `node --require` (or NODE_OPTIONS). Every
// 250 ms it writes one line of JSON to /tmp/toll-node-<uid>/<pid>, which
// toll reads at each sample (one small file read by toll, nothing in the
// process). The script's own cost is in its header: a timer wake-up per
// period, a few microseconds of V8 calls and a write, and one performance
// entry per collection. Each variant of a run carries it alike, so it adds
// to the baseline as to the variants; a run comparing a service with and
// without it would measure it.
//
// Things the caller should know:
//
//   - Figures are as fresh as the script's last write: up to one period
//     older than toll's sample. A file not rewritten for staleAfter is of
//     a process that stopped writing (or exited on a signal, which leaves
//     the file behind until the next Node process that loads the script
//     starts and removes the files of processes that are gone): it is
//     not read.
//   - A process in another container of a pod is read through
//     /proc/PID/root/tmp when the pod shares one process namespace.
package node
