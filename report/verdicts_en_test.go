package report

import (
	"testing"

	"github.com/tollperf/toll/analyze"
)

// TestDeltaVerdict checks the English of each reading of a change against
// the baseline, from analyze's own comparisons, and that a change read
// back from a summary.json keeps the words it was written with.
func TestDeltaVerdict(t *testing.T) {
	margin := func(d analyze.Delta) analyze.Delta { d.JudgeEquivalence(50); return d }
	tests := []struct {
		name string
		d    analyze.Delta
		want string
	}{
		{"no pairs", analyze.Compare(analyze.Info(analyze.CPUPerRequest), nil, nil, 0), "n/a (no paired rounds)"},
		{"one round", analyze.Compare(analyze.Info(analyze.CPUPerRequest), []float64{1}, []float64{1.2}, 0), "+20.0% (1 round: no interval)"},
		{"one round of a difference", analyze.Compare(analyze.Info(analyze.Spans), []float64{0}, []float64{1200}, 0), "+1200.0 /s (1 round: no interval)"},
		{"two starts", analyze.Compare(analyze.Info(analyze.JVMInit), []float64{54, 42}, []float64{70, 58}, 0), "+33.8% (2 starts: too few for an interval)"},
		{"one start", analyze.Compare(analyze.Info(analyze.JVMInit), []float64{54}, []float64{70}, 0), "+29.6% (1 start: no interval)"},
		{"same", analyze.Compare(analyze.Info(analyze.CPUPerRequest), []float64{1, 1.02, 0.98, 1.01, 0.99}, []float64{1.01, 0.99, 1.00, 1.02, 0.98}, 0), "~"},
		{"equivalent", margin(analyze.Compare(analyze.Info(analyze.CPUPerRequest), []float64{1, 1.02, 0.98, 1.01, 0.99}, []float64{1.01, 0.99, 1.00, 1.02, 0.98}, 0)), "equivalent: no change beyond ±50%"},
		{"ratio", analyze.Compare(analyze.Info(analyze.CPUPerRequest), []float64{1, 1.02, 0.98}, []float64{0.9, 0.91, 0.89}, 0), "-10.0% ± 2.0%"},
		{"difference", analyze.Compare(analyze.Info(analyze.Threads), []float64{1, 1, 1, 1}, []float64{3, 2.5, 3, 3}, 0), "+2 ± 0 "}, // threads have no unit
		{"shared duet", analyze.Delta{Reading: analyze.Reading{Code: analyze.ReadNotComparable, Why: analyze.WhySharedDuet}}, "n/a (shared duet: each side waits for the other's CPU)"},
		{"one machine", analyze.Delta{Reading: analyze.Reading{Code: analyze.ReadNotComparable, Why: analyze.WhyOneMachine, Mode: "together"}}, "n/a (together: every side reads the one machine at once)"},
		{"one start each", analyze.Delta{Reading: analyze.Reading{Code: analyze.ReadNoInterval, Why: analyze.WhyOneStartEach, Estimate: 4, Ratio: true}},
			"+4.0% (1 start per variant: what differs between two starts is in no interval)"},
		{"read back", analyze.Delta{Verdict: "+3.1% ± 0.8%"}, "+3.1% ± 0.8%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DeltaVerdict(&tt.d); got != tt.want {
				t.Errorf("DeltaVerdict = %q, want %q (%+v)", got, tt.want, tt.d.Reading)
			}
		})
	}
}

// TestChangeVerdict checks the English of each reading of a change
// between two runs, which keeps its estimate when it holds no change.
func TestChangeVerdict(t *testing.T) {
	read := func(code analyze.ReadingCode, why analyze.WhyCode, count int) analyze.CostChange {
		return analyze.CostChange{Reading: analyze.Reading{Code: code, Why: why, Count: count, Estimate: -2.04, HalfWidth: 1.55, Ratio: true, Unit: "%"}}
	}
	tests := []struct {
		name string
		c    analyze.CostChange
		want string
	}{
		{"few rounds", read(analyze.ReadNoInterval, analyze.WhyFewRounds, 0), "-2.0% (too few rounds for an interval)"},
		{"few starts", read(analyze.ReadNoInterval, analyze.WhyFewStarts, 2), "-2.0% (2 starts: too few for an interval)"},
		{"same", read(analyze.ReadSame, "", 0), "~ (-2.0% ± 1.6%)"},
		{"change", read(analyze.ReadChange, "", 0), "-2.0% ± 1.6%"},
		{"read back", analyze.CostChange{Verdict: "~ (+0.4% ± 1.2%)"}, "~ (+0.4% ± 1.2%)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ChangeVerdict(&tt.c); got != tt.want {
				t.Errorf("ChangeVerdict = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestGateFindingText checks the English of a gate's findings within a
// run and between two runs.
func TestGateFindingText(t *testing.T) {
	pct := func(x float64) *float64 { return &x }
	r := analyze.GateResult{Gate: "cpu_per_request > +5%"}
	within := &analyze.Delta{Pct: pct(12.04), CILow: pct(8.01), CIHigh: pct(16.2), CIUnit: "%"}
	oneRound := &analyze.Delta{Reading: analyze.Reading{Code: analyze.ReadNoInterval, Why: analyze.WhyOneRound, Estimate: 12, Ratio: true}}
	between := &analyze.CostChange{Reading: analyze.Reading{Code: analyze.ReadChange, Estimate: 9, HalfWidth: 2, Ratio: true}}
	fewRounds := &analyze.CostChange{Reading: analyze.Reading{Code: analyze.ReadNoInterval, Why: analyze.WhyFewRounds, Estimate: 9, Ratio: true}}
	at := analyze.GateFinding{Variant: "otel", Step: "400 req/s", Label: "CPU per request", Baseline: "none"}
	with := func(d *analyze.Delta, c *analyze.CostChange) analyze.GateFinding {
		f := at
		f.Delta, f.Change = d, c
		return f
	}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"failed within a run", GateFailureText(r, with(within, nil)),
			"otel at 400 req/s: CPU per request +12.0% [+8.0%, +16.2%] against none, beyond cpu_per_request > +5%"},
		{"unjudged within a run", GateUnjudgedText(with(oneRound, nil)),
			"otel at 400 req/s: CPU per request is +12.0% (1 round: no interval) against none: no interval in percent to judge"},
		{"failed between runs", GateFailureText(r, with(nil, between)),
			"otel at 400 req/s: CPU per request changed +9.0% ± 2.0%, beyond cpu_per_request > +5%"},
		{"unjudged between runs", GateUnjudgedText(with(nil, fewRounds)),
			"otel at 400 req/s: CPU per request changed +9.0% (too few rounds for an interval)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// TestControlBiasWords checks the A/A control's warning from its numbers,
// and from the words a summary written before held.
func TestControlBiasWords(t *testing.T) {
	tests := []struct {
		name string
		args analyze.Args
		want string
	}{
		{"numbers", analyze.Args{-10.13, 4.94, "%", 3, "400 req/s"}, "-10.1% ± 4.9%"},
		{"numbers read back", analyze.Args{-10.13, 4.94, "%", 3.0, "400 req/s"}, "-10.1% ± 4.9%"},
		{"a difference", analyze.Args{0.0123, 0.004, "ms", 3, "400 req/s"}, "+0.012 ± 0.004 ms"},
		{"words", analyze.Args{"-10.1% ± 4.9%", "400 req/s"}, "-10.1% ± 4.9%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := "the A/A control (a copy of the baseline) read " + tt.want + " CPU per request at 400 req/s: the method had a bias of about that size in this run, and every variant's change is corrected by the control's"
			if got := WarningText(analyze.Warning{Code: analyze.WarnControlBias, Args: tt.args}); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
