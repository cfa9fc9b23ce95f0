package local

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// neighbourMeter reads the CPU of the variants whose services run beside a
// trial without being under load (restart: once keeps every variant's
// services running): what their background work took from the machine
// during the trial's window.
type neighbourMeter struct {
	names []string
	idle  []string // the CPUs a neighbour runs on at idle priority; "" for none
	reads []func() (float64, bool)
	start []float64
	ok    []bool
	begun time.Time
}

// neighbours returns the meter of trial pt's idle neighbours: every running
// variant but pt's own and, in a duet, the one loaded beside it, and every
// start warmed ahead of its turn (together, every variant is loaded: only
// those starts are beside it).
func (b *Backend) neighbours(pt *plan.Trial) *neighbourMeter {
	m := &neighbourMeter{}
	loaded := []string{pt.Variant, pt.Pair}
	if b.s.Mode == scenario.ModeDuet {
		loaded = append(loaded, b.s.Baseline)
	}
	running, spares := b.runningNow()
	for _, name := range slices.Sorted(maps.Keys(running)) {
		st := running[name]
		if slices.Contains(loaded, name) || b.s.Mode == scenario.ModeTogether && st.spareOf == "" {
			continue
		}
		m.names = append(m.names, name)
		m.idle = append(m.idle, b.idleCPUs(st))
		m.reads = append(m.reads, cpuReader(st))
	}
	// Starts warmed ahead of their turn wait idle beside it (spares.go).
	for _, name := range slices.Sorted(maps.Keys(spares)) {
		for i, st := range spares[name] {
			m.names = append(m.names, fmt.Sprintf("%s (start %d ahead)", name, i+1))
			m.idle = append(m.idle, b.idleCPUs(st))
			m.reads = append(m.reads, cpuReader(st))
		}
	}
	m.start = make([]float64, len(m.names))
	m.ok = make([]bool, len(m.names))
	return m
}

// idleCPUs returns the CPUs that st, a start warmed ahead of its turn
// beside the rounds, runs on at idle priority until its turn; "" for one
// that runs on its own CPUs at its own priority.
func (b *Backend) idleCPUs(st *started) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st.unwiden == nil {
		return ""
	}
	return st.idleOn
}

// cpuReader returns a reading of the CPU seconds that st's services have
// used so far, each read as the sampler reads it: from its cgroup where it
// has one, from its processes (serviceProcesses) otherwise.
func cpuReader(st *started) func() (float64, bool) {
	var reads []func() (float64, bool)
	for i, svc := range st.group.Services() {
		if cg := st.cgs[st.runs[i].Name]; cg != nil {
			reads = append(reads, func() (float64, bool) {
				s, err := cg.Stat()
				return s.CPU.Seconds(), err == nil
			})
			continue
		}
		procs := serviceProcesses(st, i, svc.Pid())
		if procs == nil {
			return func() (float64, bool) { return 0, false }
		}
		reads = append(reads, func() (float64, bool) {
			s, err := procs.Sample()
			return s.CPU.Seconds(), err == nil
		})
	}
	return func() (float64, bool) {
		var sum float64
		for _, read := range reads {
			v, ok := read()
			if !ok {
				return 0, false
			}
			sum += v
		}
		return sum, true
	}
}

// begin reads the neighbours' CPU; a trial calls it before its load starts
// (warm-up included), so that the reads never compete with the load
// generator.
func (m *neighbourMeter) begin() {
	for i, read := range m.reads {
		m.start[i], m.ok[i] = read()
	}
	m.begun = time.Now()
}

// end returns what each neighbour used since begin; nil when begin was not
// called (a window that never began) or nothing could be read.
func (m *neighbourMeter) end() []record.NeighbourCPU {
	if m.begun.IsZero() {
		return nil
	}
	secs := time.Since(m.begun).Seconds()
	var out []record.NeighbourCPU
	for i, read := range m.reads {
		v, ok := read()
		if !ok || !m.ok[i] {
			continue
		}
		out = append(out, record.NeighbourCPU{Variant: m.names[i], CPUS: max(0, v-m.start[i]), S: secs, IdleCPUs: m.idle[i]})
	}
	return out
}
