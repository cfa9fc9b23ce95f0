// Package probe samples the costs of a measured service cheaply: CPU time,
// resident memory, threads, file descriptors and processes, read from /proc
// for a process and its descendants.
//
// A Sampler reads one Sample; Run calls a Sampler at ticks aligned to a
// start time, so that the samples of different services and of the load
// generator line up. CPU figures are cumulative: the cost over a window is
// the difference between the samples at its ends.
//
// Per-process CPU time is counted in clock ticks (10 ms on common kernels),
// so a window of a few seconds carries a quantization error of a few
// ticks per process; the cgroup's cpu.stat, in microseconds, is the finer
// source where it is available.
//
// Cost: a ProcessTree sample of a small tree on a 2-core VM with about 200
// processes takes about 0.4 ms of CPU (BenchmarkProcessTreeSample), where
// reading /proc/*/stat for every process would take about 10 ms.
package probe
