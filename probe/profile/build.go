package profile

import (
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Frame is one function of a sampled stack.
type Frame struct {
	// Function is the symbol's name: a Go function's full name
	// (go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End), a
	// kernel function's, or "[unknown]" where perf found no symbol.
	Function string
	// Module is the file the code lies in: a binary, a shared library,
	// or [kernel.kallsyms].
	Module string

	// path and addr are the module's path and the frame's address in it,
	// for a frame perf could not name.
	path string
	addr uint64
}

// Kernel reports whether f is kernel code.
func (f Frame) Kernel() bool { return strings.HasPrefix(f.Module, "[kernel") }

// Stack is one sampled stack: its frames, leaf first, and what it cost.
type Stack struct {
	Service string
	Thread  string
	Second  int64
	Frames  []Frame
	// Count is the number of samples, CPU the nanoseconds they stand for.
	Count, CPU int64
}

// frameKey is a frame without its address.
type frameKey struct{ function, module string }

// builder collects stacks into a pprof profile, merging identical ones.
type builder struct {
	p         *profile.Profile
	samples   map[string]*profile.Sample
	functions map[frameKey]*profile.Function
	locations map[frameKey]*profile.Location
	mappings  map[string]*profile.Mapping
}

// newBuilder starts a profile sampled every period nanoseconds.
func newBuilder(period int64) *builder {
	return &builder{
		p: &profile.Profile{
			SampleType: []*profile.ValueType{{Type: SamplesType, Unit: "count"}, {Type: CPUType, Unit: "nanoseconds"}},
			PeriodType: &profile.ValueType{Type: CPUType, Unit: "nanoseconds"},
			Period:     period,
		},
		samples:   map[string]*profile.Sample{},
		functions: map[frameKey]*profile.Function{},
		locations: map[frameKey]*profile.Location{},
		mappings:  map[string]*profile.Mapping{},
	}
}

// add counts s.
func (b *builder) add(s Stack) {
	var key strings.Builder
	key.WriteString(s.Service)
	key.WriteByte(0)
	key.WriteString(s.Thread)
	key.WriteByte(0)
	key.WriteString(strconv.FormatInt(s.Second, 10))
	for _, f := range s.Frames {
		key.WriteByte(0)
		key.WriteString(f.Function)
		key.WriteByte(1)
		key.WriteString(f.Module)
	}
	k := key.String()
	if smp, ok := b.samples[k]; ok {
		smp.Value[0] += s.Count
		smp.Value[1] += s.CPU
		return
	}
	smp := &profile.Sample{
		Value:    []int64{s.Count, s.CPU},
		Label:    map[string][]string{LabelService: {s.Service}, LabelThread: {s.Thread}},
		NumLabel: map[string][]int64{LabelSecond: {s.Second}},
		NumUnit:  map[string][]string{LabelSecond: {"seconds"}},
	}
	for _, f := range s.Frames {
		smp.Location = append(smp.Location, b.location(f))
	}
	b.samples[k] = smp
	b.p.Sample = append(b.p.Sample, smp)
}

// location returns f's location, one per function and module: sample
// addresses are left out, so that a function's samples merge.
func (b *builder) location(f Frame) *profile.Location {
	k := frameKey{f.Function, f.Module}
	if l, ok := b.locations[k]; ok {
		return l
	}
	fn, ok := b.functions[k]
	if !ok {
		fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: f.Function, SystemName: f.Function, Filename: f.Module}
		b.functions[k] = fn
		b.p.Function = append(b.p.Function, fn)
	}
	m, ok := b.mappings[f.Module]
	if !ok {
		m = &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), File: f.Module, HasFunctions: true}
		b.mappings[f.Module] = m
		b.p.Mapping = append(b.p.Mapping, m)
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Mapping: m, Line: []profile.Line{{Function: fn}}}
	b.locations[k] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

// profile returns the profile built.
func (b *builder) profile() *profile.Profile { return b.p }
