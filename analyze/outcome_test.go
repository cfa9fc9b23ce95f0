package analyze

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tollperf/toll/record"
)

// run3 returns three rounds of a baseline and an otel variant, otel using
// 10% more CPU per request.
func run3(t *testing.T) (*record.Manifest, []*record.Trial) {
	t.Helper()
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 3}
	var trials []*record.Trial
	for r := 1; r <= 3; r++ {
		trials = append(trials,
			synthetic(t, 2*r-1, r, "baseline", 5, 100, 0.001, 1000),
			synthetic(t, 2*r, r, "otel", 5, 100, 0.0011, 1000))
	}
	return m, trials
}

// cut makes tr a trial interrupted after 0.46 s of its window, as Ctrl-C
// leaves one: a short window with a tenth of the CPU per request.
func cut(tr *record.Trial) {
	tr.Interrupted, tr.Error = true, "interrupted"
	tr.MeasureEnd = tr.MeasureStart.Add(460 * time.Millisecond)
	tr.Intervals = tr.Intervals[:1]
	for i := range tr.Samples[0].Points {
		tr.Samples[0].Points[i].CPU /= 10
	}
}

// TestInterruptedLeftOut checks that a trial cut short is left out of the
// comparison unless asked for, and listed (flagged, marked excluded) either way.
func TestInterruptedLeftOut(t *testing.T) {
	for _, include := range []bool{false, true} {
		m, trials := run3(t)
		cut(trials[5]) // otel, round 3
		s, err := Summarize(m, trials, Options{IncludeInterrupted: include})
		if err != nil {
			t.Fatal(err)
		}
		otel := s.Steps[0].Variants[1]
		wantRounds := 2
		if include {
			wantRounds = 3
		}
		if otel.Rounds != wantRounds {
			t.Errorf("include %v: otel has %d rounds in the comparison, want %d", include, otel.Rounds, wantRounds)
		}
		if len(s.Trials) != 6 {
			t.Errorf("include %v: %d trials listed, want all 6", include, len(s.Trials))
		}
		if got := s.Trials[5].Excluded; got == include {
			t.Errorf("include %v: the cut trial's excluded is %v", include, got)
		}
		var flagged bool
		for _, f := range s.Flags {
			flagged = flagged || (f.Trial == 6 && f.Code == FlagInterrupted)
		}
		if !flagged {
			t.Errorf("include %v: the cut trial is not flagged: %+v", include, s.Flags)
		}
		if s.IncludeInterrupted != include {
			t.Errorf("summary's include_interrupted is %v", s.IncludeInterrupted)
		}
	}
}

// failAll makes every request of tr fail, as a variant whose service
// answers 500 to everything.
func failAll(tr *record.Trial) {
	for i := range tr.Intervals {
		iv := &tr.Intervals[i]
		iv.Errors.HTTP5xx, iv.OK = iv.Completed, 0
	}
	tr.Load.Completed, tr.Load.OK = tr.Load.Sent, 0
}

// TestInvalidRun checks which runs analyze calls invalid: those where some
// variant has no sound trial at some step.
func TestInvalidRun(t *testing.T) {
	tests := []struct {
		name    string
		spoil   func([]*record.Trial)
		opt     Options
		invalid *Invalidity // nil for a valid run
	}{
		{"clean", func([]*record.Trial) {}, Options{}, nil},
		{"every request failed", func(ts []*record.Trial) {
			for _, tr := range every2(ts, 1) {
				failAll(tr)
			}
		}, Options{}, &Invalidity{Code: InvalidUnsound, Variant: "otel", Step: "100 req/s", Trials: 3, Failed: 3}},
		{"one sound trial left", func(ts []*record.Trial) { failAll(ts[1]); failAll(ts[3]) }, Options{}, nil},
		{"every trial flagged", func(ts []*record.Trial) {
			for _, tr := range every2(ts, 0) {
				tr.TargetRate = 200 // achieved 100: rate missed
			}
		}, Options{}, &Invalidity{Code: InvalidUnsound, Variant: "baseline", Step: "200 req/s", Trials: 3, Flagged: []FlagCount{{FlagRateMissed, 3}}}},
		{"flags that do not invalidate", func(ts []*record.Trial) {
			for _, tr := range every2(ts, 1) {
				n := len(tr.Samples[0].Points)
				tr.Samples[0].Points[n-1].NrThrottled = 5
			}
		}, Options{}, nil},
		{"cut short, left out", func(ts []*record.Trial) {
			// The only trial of a variant, cut short: missing, not failed.
			cut(ts[1])
		}, Options{}, nil},
		{"cut short, kept", func(ts []*record.Trial) {
			for _, tr := range every2(ts, 1) {
				cut(tr)
			}
		}, Options{IncludeInterrupted: true}, &Invalidity{Code: InvalidUnsound, Variant: "otel", Step: "100 req/s", Trials: 3,
			Flagged: []FlagCount{{FlagInterrupted, 3}, {FlagRateMissed, 3}, {FlagShort, 3}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, trials := run3(t)
			tt.spoil(trials)
			s, err := Summarize(m, trials, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			var want []Invalidity
			if tt.invalid != nil {
				want = []Invalidity{*tt.invalid}
			}
			if s.Valid() != (tt.invalid == nil) || !reflect.DeepEqual(s.Invalidities, want) {
				t.Errorf("invalid %+v, want %+v", s.Invalidities, want)
			}
		})
	}
}

// TestPartialRun checks that a run that did not carry out its plan says so,
// and names what is missing.
func TestPartialRun(t *testing.T) {
	plan := func(rounds int, steps ...float64) *record.Manifest {
		m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: rounds,
			Load: record.LoadSettings{Rates: steps}, Finished: time.Unix(2000, 0)}
		i := 0
		for st := range steps {
			for r := 1; r <= rounds; r++ {
				for o, v := range []string{"otel", "baseline"} {
					i++
					m.Planned = append(m.Planned, record.PlannedTrial{Index: i, Round: r, Order: o, Step: st, Variant: v})
				}
			}
		}
		return m
	}
	// ran returns the planned trials of m up to index n as trial files.
	ran := func(t *testing.T, m *record.Manifest, n int) []*record.Trial {
		var out []*record.Trial
		for _, pt := range m.Planned[:n] {
			tr := synthetic(t, pt.Index, pt.Round, pt.Variant, 5, m.Load.Rates[pt.Step], 0.001, 1000)
			tr.Step = pt.Step
			out = append(out, tr)
		}
		return out
	}
	tests := []struct {
		name  string
		setup func(t *testing.T) (*record.Manifest, []*record.Trial)
		want  *Partial // nil for a complete run: the fields of its words
	}{
		{"complete", func(t *testing.T) (*record.Manifest, []*record.Trial) {
			m := plan(3, 100)
			return m, ran(t, m, 6)
		}, nil},
		{"interrupted in round 4 of 10", func(t *testing.T) (*record.Manifest, []*record.Trial) {
			m := plan(10, 100)
			m.Interrupted = true
			ts := ran(t, m, 8)
			cut(ts[7]) // round 4's second trial, cut short
			return m, ts
		}, &Partial{Interrupted: true, Planned: 20, Complete: 7, Gaps: []Gap{{First: 4, Last: 4, Variants: []string{"baseline"}}, {First: 5, Last: 10}}}},
		{"killed", func(t *testing.T) (*record.Manifest, []*record.Trial) {
			m := plan(3, 100)
			m.Finished = time.Time{}
			return m, ran(t, m, 5)
		}, &Partial{Unfinished: true, Planned: 6, Complete: 5, Gaps: []Gap{{First: 3, Last: 3, Variants: []string{"baseline"}}}}},
		{"stopped by an error, two steps", func(t *testing.T) (*record.Manifest, []*record.Trial) {
			m := plan(2, 100, 200)
			m.Error = "variant otel: start otel/app: exited before ready: exit status 1; last 1 log lines:\n\tboom"
			return m, ran(t, m, 3)
		}, &Partial{Cause: "variant otel: start otel/app: exited before ready: exit status 1", Planned: 8, Complete: 3,
			Gaps: []Gap{{Step: "100 req/s", First: 2, Last: 2, Variants: []string{"baseline"}}, {Step: "200 req/s", First: 1, Last: 2}}}},
		{"no plan recorded", func(t *testing.T) (*record.Manifest, []*record.Trial) {
			m := plan(3, 100)
			ts := ran(t, m, 4)
			m.Planned, m.Interrupted = nil, true
			return m, ts
		}, &Partial{Interrupted: true, Complete: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, trials := tt.setup(t)
			s, err := Summarize(m, trials, Options{})
			if err != nil {
				t.Fatal(err)
			}
			switch p := s.Partial; {
			case tt.want == nil && p != nil:
				t.Errorf("complete run called partial: %+v", p)
			case tt.want != nil && p == nil:
				t.Errorf("partial run not called partial; want %+v", tt.want)
			case tt.want == nil:
			case p.Interrupted != tt.want.Interrupted || p.Unfinished != tt.want.Unfinished || p.Cause != tt.want.Cause ||
				p.Planned != tt.want.Planned || p.Complete != tt.want.Complete || !reflect.DeepEqual(p.Gaps, tt.want.Gaps):
				t.Errorf("got  %+v\nwant %+v", p, tt.want)
			}
		})
	}
}

// every2 returns ts[from], ts[from+2], …: one variant's trials of run3.
func every2(ts []*record.Trial, from int) []*record.Trial {
	var out []*record.Trial
	for i := from; i < len(ts); i += 2 {
		out = append(out, ts[i])
	}
	return out
}

// TestCompareRunsLeavesOutWhatTheRunDid checks that comparing two runs
// pairs only the trials each run's own comparison kept: a trial cut short,
// with ten times the CPU, must not move the change.
func TestCompareRunsLeavesOutWhatTheRunDid(t *testing.T) {
	summarize := func(cutOne bool) *Summary {
		m, trials := run3(t)
		if cutOne {
			tr := trials[5]
			tr.Interrupted = true
			for i := range tr.Samples[0].Points {
				tr.Samples[0].Points[i].CPU *= 10
			}
		}
		s, err := Summarize(m, trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	rc, err := CompareRuns(summarize(false), summarize(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc.Steps[0].Variants[0].Costs {
		if c.Cost == CPUPerRequest && (c.Pct > 0.01 || c.Pct < -0.01) {
			t.Errorf("CPU per request changed %+.2f%% between two runs that differ only in a trial left out", c.Pct)
		}
	}
}

// TestCutBeforeTheWindowIsListed checks that a trial cut short in its
// warm-up, with nothing to analyse, is still named in the summary.
func TestCutBeforeTheWindowIsListed(t *testing.T) {
	m, trials := run3(t)
	tr := trials[5]
	tr.Interrupted, tr.Error = true, "load: run interrupted at 282ms: context canceled"
	tr.MeasureEnd, tr.Intervals = tr.MeasureStart, nil
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := warn(WarnTrialCutShort, 6, "otel", 3, "load: run interrupted at 282ms: context canceled")
	if !slices.ContainsFunc(s.Warnings, func(w Warning) bool { return reflect.DeepEqual(w, want) }) {
		t.Errorf("warnings %+v lack %+v", s.Warnings, want)
	}
}
