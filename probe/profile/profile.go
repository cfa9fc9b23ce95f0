package profile

import (
	"context"
	"time"

	"github.com/google/pprof/profile"
)

// Profiler samples on-CPU stacks.
type Profiler interface {
	// Name names the profiler in a trial's record: "perf",
	// "async-profiler", "py-spy".
	Name() string
	// Available reports why the profiler cannot sample on this machine,
	// or nil.
	Available(ctx context.Context) error
	// Start begins sampling t's processes. The sampling goes on until the
	// session is stopped or ctx is done.
	Start(ctx context.Context, t Target) (Session, error)
}

// Preparer is a Profiler for one runtime that has a say in how its
// services start: a JVM's profiler is loaded into it at its start.
type Preparer interface {
	Profiler
	// Prepare returns the command and environment that start argv's
	// process (with environment env) ready to be sampled by this
	// profiler, which keeps what it needs in dir (the Target's Dir of
	// every session on that process), and true; or argv, env and false
	// when argv does not start the runtime it profiles.
	Prepare(argv, env []string, dir string) ([]string, []string, bool)
}

// Session is one sampling started by a Profiler.
type Session interface {
	// Stop ends the sampling and returns the stacks sampled in w, or an
	// error saying why there are none.
	Stop(w Window) (*profile.Profile, error)
}

// Target is what a Profiler samples: one service's processes, named by its
// cgroup when it has one that perf can watch, else by their process IDs.
type Target struct {
	// Service names the service; every sample carries it as its
	// "service" label.
	Service string
	// Cgroup is the service's cgroup as perf names it: its path from the
	// root of the perf_event hierarchy (on cgroup v2, the unified one),
	// e.g. /toll/run-1/baseline.consumer. Empty: Pids.
	Cgroup string
	// Pids are the service's processes: perf samples them when Cgroup is
	// empty (threads they start later too, processes they start later
	// not), py-spy the first that runs Python.
	Pids []int
	// Dir is the directory a Preparer was given for the service's
	// start; empty for other profilers.
	Dir string
}

// Window is the span of time whose samples a session keeps.
type Window struct {
	Start, End time.Time
}

// The labels every sample carries.
const (
	// LabelService is the string label naming the sample's service.
	LabelService = "service"
	// LabelThread is the string label with the sampled thread's name
	// (its comm): a JVM's "C2 CompilerThre" or "GC Thread#0".
	LabelThread = "thread"
	// LabelSecond is the numeric label with the whole second of the
	// window the sample fell in, from 0.
	LabelSecond = "second"
)

// The sample values of every profile, in this order.
const (
	// SamplesType is the first value: the number of samples.
	SamplesType = "samples"
	// CPUType is the second value: the CPU time the samples stand for,
	// in nanoseconds.
	CPUType = "cpu"
)
