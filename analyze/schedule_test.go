package analyze

import (
	"testing"

	"github.com/tollperf/toll/record"
)

// TestRestartOnceWarning checks that a load test whose services started
// once, and quickly, is advised to restart them every round, and that
// nothing else is.
func TestRestartOnceWarning(t *testing.T) {
	trial := func(startup float64, container string) *record.Trial {
		return &record.Trial{Services: []record.ServiceRun{
			{Name: "a", Started: true, StartupS: startup, Container: container},
			{Name: "b", Started: false, StartupS: 30}, // not started for this trial
		}}
	}
	tests := []struct {
		name   string
		m      record.Manifest
		trials []*record.Trial
		warn   bool
	}{
		{"quick services started once", record.Manifest{Restart: "once", Rounds: 10}, []*record.Trial{trial(0.05, ""), trial(0.3, "")}, true},
		{"a load test's manifest says so", record.Manifest{Restart: "once", Rounds: 10, Workload: "load"}, []*record.Trial{trial(0.05, ""), trial(0.3, "")}, true},
		{"restarted every round", record.Manifest{Restart: "per-round", Rounds: 10}, []*record.Trial{trial(0.05, "")}, false},
		{"a JVM, slow to start", record.Manifest{Restart: "once", Rounds: 10}, []*record.Trial{trial(0.05, ""), trial(12, "")}, false},
		{"one round", record.Manifest{Restart: "once", Rounds: 1}, []*record.Trial{trial(0.05, "")}, false},
		{"a start-up experiment", record.Manifest{Restart: "once", Rounds: 10, Workload: "startup"}, []*record.Trial{trial(0.05, "")}, false},
		{"find-max", record.Manifest{Restart: "once", Rounds: 10, Mode: "find-max"}, []*record.Trial{trial(0.05, "")}, false},
		{"containers", record.Manifest{Restart: "once", Rounds: 10}, []*record.Trial{trial(0.5, "podman x")}, false},
		{"nothing started (a resumed run's later trials)", record.Manifest{Restart: "once", Rounds: 10}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := restartOnceWarning(&tt.m, tt.trials)
			if ok != tt.warn {
				t.Fatalf("warning %+v, want one: %v", got, tt.warn)
			}
			if tt.warn && (got.Code != WarnRestartOnce || got.Args.Float(2) != 0.3 || got.Args.Bool(1)) {
				t.Errorf("warning %+v does not give the slowest start (0.3 s)", got)
			}
		})
	}
	// In precision mode toll chose the starts: the note names no setting.
	m := record.Manifest{Restart: "once", Rounds: 10, Precision: &record.Precision{}}
	if got, ok := restartOnceWarning(&m, []*record.Trial{trial(0.05, "")}); !ok || !got.Args.Bool(1) {
		t.Errorf("precision mode: %+v, want a note that toll chose", got)
	}
}

// TestSliceWarning checks the warning on a sliced duet whose latency tail
// outlived its turns: a p99 beyond a tenth of the slice warns, below it or
// without slices not.
func TestSliceWarning(t *testing.T) {
	rounds := func(p99s ...float64) map[int]*TrialCosts {
		out := map[int]*TrialCosts{}
		for i, p := range p99s {
			out[i+1] = &TrialCosts{Costs: map[Cost]float64{LatencyP99: p}}
		}
		return out
	}
	tests := []struct {
		name   string
		sliceS float64
		rounds map[int]*TrialCosts
		warn   bool
	}{
		{"tail within its turn", 0.05, rounds(2, 3, 4), false},
		{"tail beyond a tenth of the turn", 0.05, rounds(4, 6, 8), true},
		{"not sliced", 0, rounds(400, 600), false},
		{"no latency", 0.05, map[int]*TrialCosts{1: {Costs: map[Cost]float64{}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &record.Manifest{Load: record.LoadSettings{SliceS: tt.sliceS}}
			got, ok := sliceWarning(m, "otel", "300 req/s", tt.rounds)
			if ok != tt.warn {
				t.Fatalf("warning %+v, want one: %v", got, tt.warn)
			}
			if tt.warn && (got.Code != WarnSliceTail || got.Args.Float(2) != 6 || got.Args.Float(3) != 50) {
				t.Errorf("warning %+v does not give the p99 (6 ms) and the slice (50 ms)", got)
			}
		})
	}
}

// TestSharedCPUsBusyWarning checks the warning for sides loaded at once on
// shared CPUs that were saturated: given for a shared duet or variants
// together whose services' CPU was above SaturatedBusy in a trial, not
// when it had room (what neighbours at idle priority took left out), not
// for a run of one variant at a time or a split duet, and not for trials
// left out.
func TestSharedCPUsBusyWarning(t *testing.T) {
	trials := func(busy ...float64) []*TrialCosts {
		var tcs []*TrialCosts
		for _, b := range busy {
			tcs = append(tcs, &TrialCosts{Costs: map[Cost]float64{CPUBusy(0): 99, CPUBusy(1): b}})
		}
		return tcs
	}
	shared := record.Layout{DuetCPUs: []string{"1", "1"}}
	left := trials(95, 50)
	left[0].Excluded = true
	// A start warming ahead of its turn at idle priority took 30% of CPU 1.
	idle := trials(97, 99)
	idle[0].idleBusy = map[int]float64{1: 30}
	for _, tt := range []struct {
		name   string
		mode   string
		layout record.Layout
		tcs    []*TrialCosts
		want   []float64 // busy trials, trials, the peak; nil for none
	}{
		{"together, saturated", "together", shared, trials(99, 100, 60), []float64{2, 3, 100}},
		{"shared duet, saturated", "duet", shared, trials(95), []float64{1, 1, 95}},
		{"together, with room", "together", shared, trials(60, 70, 89), nil},
		{"the saturated trial left out", "together", shared, left, nil},
		{"busy at idle priority", "duet", shared, idle, []float64{1, 2, 99}},
		{"split duet", "duet", record.Layout{DuetCPUs: []string{"1", "2"}}, trials(99), nil},
		{"one variant at a time", "sequential", record.Layout{}, trials(99), nil},
	} {
		m := &record.Manifest{Mode: tt.mode, Layout: tt.layout}
		got, ok := sharedCPUsBusyWarning(m, tt.tcs)
		if ok != (tt.want != nil) || ok && (got.Args.Float(1) != SaturatedBusy ||
			got.Args.Float(2) != tt.want[0] || got.Args.Float(3) != tt.want[1] || got.Args.Float(4) != tt.want[2]) {
			t.Errorf("%s: %+v, want one with %v", tt.name, got, tt.want)
		}
	}
}
