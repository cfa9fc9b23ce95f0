// Package runtime is the seam between toll and the language runtimes it
// reads: a JVM, Node.js. A runtime is found among a service's processes
// (Runtime.Find) and read from outside them, cheaply and without attaching
// (Process.Read), into named values that its descriptors (Metric) say how
// to show and compare. toll's sampler on this machine and its probe in a
// Kubernetes pod read every runtime of the set toll knows (package
// runtimes) the same way; the trial record keeps the values by name, and
// the cost table and the OpenMetrics families come from the descriptors.
package runtime

import (
	"errors"
	"fmt"
)

// ErrNotFound is wrapped by Find's error when none of the processes runs
// the runtime, or none has published its figures yet.
var ErrNotFound = errors.New("runtime not found")

// Runtime is one language runtime toll can read.
type Runtime interface {
	// Name names the runtime in trial records ("jvm", "node"): short,
	// lower case, stable.
	Name() string
	// Metrics describes the figures toll reports of the runtime, in the
	// order of the report's rows.
	Metrics() []Metric
	// Find returns the first process among pids that runs the runtime and
	// can be read, or an error wrapping ErrNotFound. procMount is where
	// the proc file system is mounted ("/proc"). Find is called once per
	// trial on this machine, before the load, and until it succeeds in a
	// pod's probe: it may list directories and open files, not attach.
	Find(procMount string, pids []int) (Process, error)
}

// Process is one running process of a runtime, open for reading.
type Process interface {
	// Pid is the process's id, as the caller of Find sees it.
	Pid() int
	// Read returns the runtime's figures now, by Metric.Name, each in its
	// metric's Unit. A figure the runtime has not published is absent.
	// Read is called once per sample and must cost the measured process
	// nothing, or as little as the runtime's documentation says.
	Read() (map[string]float64, error)
	// Setup returns what the process chose for itself as it began and
	// keeps for its life, by name (a JVM's garbage collector, "gc": "G1"),
	// or nil when the runtime publishes nothing of the kind. Two starts of
	// one program that chose differently differ as a whole, not by what
	// a variant changed: toll records it and says so.
	Setup() map[string]string
	// Close releases what Find opened.
	Close() error
}

// Unit is the unit of a metric's values, as Read returns them.
type Unit string

// The units of readings.
const (
	Bytes   Unit = "bytes"
	Seconds Unit = "seconds"
	Count   Unit = ""
)

// Kind says what a metric's values are, and so how a trial's readings
// become one figure.
type Kind int

// The kinds of metrics.
const (
	// Gauge is a level (bytes in use, threads): a trial's figure is its
	// mean over the measured window's readings.
	Gauge Kind = iota + 1
	// Counter is cumulative since the process started (GC time, GCs): a
	// trial's figure is its rise over the window per second (from the
	// window's first reading to its last), for Seconds in ms/s, for a
	// Count per minute.
	Counter
	// AtStart is set once as the process starts (its initialisation
	// time): a trial's figure is its first reading in the window, and it
	// is compared over starts, not rounds.
	AtStart
)

// Metric describes one figure of a runtime.
type Metric struct {
	// Name is its value's key in a reading (Process.Read) and the trial
	// record: lower case and underscores, stable across versions of toll.
	Name string
	// Unit is the unit of its values.
	Unit Unit
	// Kind says how a trial's readings become one figure.
	Kind Kind
	// Cost names it in reports and summary.json ("jvm_heap_used_mib"):
	// the runtime's name first, toll's unit of it last.
	Cost string
	// Label is its row's name in the cost table ("JVM heap used").
	Label string
	// Family is its OpenMetrics family, in base units
	// ("toll_jvm_heap_used_bytes"), and Help that family's help: one
	// sentence, no quote or backslash.
	Family, Help string
	// VariesByStart says that it differs between two starts of one
	// program more than between rounds of one start (a heap's size, the
	// threads held, collections): a run that starts its services once
	// compares it over starts.
	VariesByStart bool
	// Optional says that the runtime may not publish it (it reads 0 until
	// it does): a trial whose readings hold only 0 has no figure of it.
	Optional bool
	// Whole says that it counts things a process holds (threads): a whole
	// number at each reading, compared by its difference when small.
	Whole bool
	// Own says that toll computes its figure by a rule of its own for this
	// runtime (a JVM's Native Memory Tracking, read once through jcmd; its
	// JIT compilers' CPU per second of load), not by Kind's: the metric
	// gives its row and family only.
	Own bool
}

// Shown is how the cost table shows m: its unit there, what a value
// (a mean, a first reading, or a rise per second) is multiplied by to be
// in that unit, and the decimals shown.
func (m Metric) Shown() (unit string, scale float64, digits int) {
	switch {
	case m.Kind == Counter && m.Unit == Seconds:
		return "ms/s", 1000, 2
	case m.Kind == Counter:
		return "/min", 60, 1
	case m.Unit == Bytes:
		return "MiB", 1.0 / (1 << 20), 1
	case m.Unit == Seconds:
		return "ms", 1000, 0
	}
	return "", 1, 0
}

// Base is how OpenMetrics shows m: the family's unit ("bytes",
// "seconds", "ratio" or none) and what the cost table's figure is
// multiplied by to be in it.
func (m Metric) Base() (unit string, scale float64) {
	switch {
	case m.Kind == Counter && m.Unit == Seconds:
		return "ratio", 1e-3
	case m.Kind == Counter:
		return "", 1.0 / 60
	case m.Unit == Bytes:
		return "bytes", 1 << 20
	case m.Unit == Seconds:
		return "seconds", 1e-3
	}
	return "", 1
}

// Set is the runtimes toll knows, in the order of their rows.
type Set []Runtime

// Metric returns the metric whose Cost is cost, and its runtime.
func (s Set) Metric(cost string) (Metric, Runtime, bool) {
	for _, r := range s {
		for _, m := range r.Metrics() {
			if m.Cost == cost {
				return m, r, true
			}
		}
	}
	return Metric{}, nil, false
}

// Check returns an error for the first runtime of s whose name or
// metrics are not well formed: a name used twice, a metric without a
// name, cost, label or family, or a cost that does not begin with its
// runtime's name.
func (s Set) Check() error {
	names := map[string]bool{}
	costs := map[string]bool{}
	for _, r := range s {
		if r.Name() == "" || names[r.Name()] {
			return fmt.Errorf("runtime %q: no name, or a name used twice", r.Name())
		}
		names[r.Name()] = true
		for _, m := range r.Metrics() {
			switch {
			case m.Name == "" || m.Cost == "" || m.Label == "" || m.Family == "" || m.Help == "":
				return fmt.Errorf("runtime %s: metric %q lacks a name, cost, label, family or help", r.Name(), m.Name)
			case m.Kind < Gauge || m.Kind > AtStart:
				return fmt.Errorf("runtime %s: metric %s: unknown kind %d", r.Name(), m.Name, m.Kind)
			case len(m.Cost) <= len(r.Name()) || m.Cost[:len(r.Name())+1] != r.Name()+"_":
				return fmt.Errorf("runtime %s: metric %s: cost %s does not begin with %s_", r.Name(), m.Name, m.Cost, r.Name())
			case costs[m.Cost]:
				return fmt.Errorf("runtime %s: cost %s named twice", r.Name(), m.Cost)
			}
			costs[m.Cost] = true
		}
	}
	return nil
}

// Find returns the first process among pids that runs a runtime of s, or
// an error wrapping ErrNotFound.
func (s Set) Find(procMount string, pids []int) (Runtime, Process, error) {
	for _, r := range s {
		p, err := r.Find(procMount, pids)
		if err == nil {
			return r, p, nil
		}
	}
	return nil, nil, fmt.Errorf("runtimes %v among %d processes: %w", s.names(), len(pids), ErrNotFound)
}

func (s Set) names() []string {
	var out []string
	for _, r := range s {
		out = append(out, r.Name())
	}
	return out
}
