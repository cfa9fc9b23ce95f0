package probe

import (
	"errors"
	"io/fs"
	"syscall"
	"time"
)

// Sample is one reading of the costs of a process tree. CPU figures are
// cumulative since the processes started: the cost over a window is the
// difference of two samples.
type Sample struct {
	// Time is when the reading began.
	Time time.Time
	// CPU is User+System.
	CPU time.Duration
	// User and System are the CPU time spent in user and kernel mode by the
	// processes, including that of their children they have reaped.
	User, System time.Duration
	// RSS is the resident set size in bytes, summed over the processes
	// (pages shared between them count once per process).
	RSS uint64
	// Threads is the number of threads over the processes.
	Threads int
	// FDs is the number of open file descriptors over the processes.
	FDs int
	// Procs is the number of processes.
	Procs int
}

// Sampler reads samples. A Sampler whose subject has vanished (the process
// exited) returns an error for which errors.Is(err, fs.ErrNotExist) holds.
type Sampler interface {
	Sample() (Sample, error)
}

// gone reports whether err says that a process has vanished.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}
