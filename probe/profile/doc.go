// Package profile samples the on-CPU stacks of a service's processes during
// a trial's measured window, so that analyze can say where a variant's added
// CPU goes, function by function.
//
// A Profiler starts sampling a Target (a cgroup, or a list of processes)
// and its Session, once stopped, returns the stacks sampled within the
// window as a pprof profile (github.com/google/pprof/profile): two sample
// values, the number of samples and the CPU time they stand for in
// nanoseconds, each sample labelled with its service, its thread's name and
// the whole second of the window it fell in (NumLabel "second"), so that
// analyze can hold a profile to the same window as every other cost.
//
// Perf is the implementation for any process: Linux perf with the
// cpu-clock software event (which needs no hardware counters) and frame
// pointers for call stacks (-g), read back with perf script. A runtime
// whose frames perf cannot name has its own, a Preparer, which also says
// which commands start that runtime and how to start them ready to be
// sampled: AsyncProfiler for JVMs (async-profiler loaded at the JVM's
// start, Java methods by name) and PySpy for Python (py-spy, Python
// functions as module:function).
package profile
