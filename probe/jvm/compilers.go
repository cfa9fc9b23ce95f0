package jvm

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// IsCompilerThread tells whether a thread named comm
// (/proc/PID/task/TID/comm) is one of HotSpot's JIT compiler threads: "C1
// CompilerThread0", "C2 CompilerThread1", "JVMCI CompilerThread0", of which
// Linux keeps the first 15 characters.
func IsCompilerThread(comm string) bool {
	return strings.HasPrefix(comm, "C1 CompilerThre") || strings.HasPrefix(comm, "C2 CompilerThre") ||
		strings.HasPrefix(comm, "JVMCI CompilerT")
}

// CompilerThreads reads how much CPU a HotSpot JVM's JIT compiler threads
// have used, from the scheduler's own account of each thread
// (/proc/PID/task/TID/schedstat, in nanoseconds). hsperfdata's compile time
// (Counters.JITTime) is the wall time compilations took, which on a CPU
// shared with other work includes the time the compiler waited to run; this
// is what compiling cost the CPU.
//
// HotSpot starts compiler threads as its queue of methods grows and stops
// them when it drains (-XX:+UseDynamicNumberOfCompilerThreads, the default).
// CPU counts every compiler thread seen at any reading, each at its last
// reading, so the total never falls when one exits; it misses what an
// exiting thread ran after the reading before, which is little, since a
// thread is stopped only after idling. A CompilerThreads is not safe for
// concurrent use.
type CompilerThreads struct {
	fs  procfs.FS
	pid int
	// compiler holds, for every thread listed at the last reading, whether
	// it is a compiler thread: a thread's name is read once.
	compiler map[int]bool
	// last is each live compiler thread's CPU at its last reading; gone is
	// the sum of those of compiler threads that have exited.
	last map[int]time.Duration
	gone time.Duration
}

// NewCompilerThreads returns a reader of the compiler threads of the JVM
// with pid, in the proc file system mounted at procMount ("/proc").
func NewCompilerThreads(procMount string, pid int) (*CompilerThreads, error) {
	fs, err := procfs.NewFS(procMount)
	if err != nil {
		return nil, fmt.Errorf("compiler threads of %d: %w", pid, err)
	}
	return &CompilerThreads{fs: fs, pid: pid, compiler: map[int]bool{}, last: map[int]time.Duration{}}, nil
}

// CPU returns the CPU time the JVM's compiler threads have used since it
// started.
func (c *CompilerThreads) CPU() (time.Duration, error) {
	threads, err := c.fs.AllThreads(c.pid)
	if err != nil {
		return 0, fmt.Errorf("compiler threads of %d: %w", c.pid, err)
	}
	listed := make(map[int]bool, len(threads))
	for _, t := range threads {
		listed[t.PID] = true
		isCompiler, known := c.compiler[t.PID]
		if !known {
			comm, err := t.Comm()
			if err != nil {
				continue // exited since the listing
			}
			isCompiler = IsCompilerThread(comm)
			c.compiler[t.PID] = isCompiler
		}
		if !isCompiler {
			continue
		}
		st, err := t.Schedstat()
		if err != nil {
			continue
		}
		c.last[t.PID] = time.Duration(st.RunningNanoseconds)
	}
	// A thread no longer listed has exited: its CPU stays in the total, and
	// its id, which the kernel may give to a new thread, is forgotten.
	for tid := range c.compiler {
		if listed[tid] {
			continue
		}
		c.gone += c.last[tid]
		delete(c.last, tid)
		delete(c.compiler, tid)
	}
	total := c.gone
	for _, d := range c.last {
		total += d
	}
	return total, nil
}
