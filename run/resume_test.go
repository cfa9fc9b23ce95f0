package run

import (
	"testing"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/scenario"
)

// TestRemaining checks that a resumed plan runs exactly the trials that did
// not finish, each with its variant's services up, and starts nothing that
// would run no trial (but every variant again with restart: once).
func TestRemaining(t *testing.T) {
	tests := []struct {
		restart string
		mode    string
		keep    func(*plan.Trial) bool
		// wantStarts is how many starts the remaining plan has.
		wantStarts int
	}{
		// 3 variants × 4 rounds; rounds 1-2 finished.
		{scenario.RestartPerRound, scenario.ModeSequential, func(t *plan.Trial) bool { return t.Round <= 2 }, 2 * 3},
		{scenario.RestartPerTrial, scenario.ModeSequential, func(t *plan.Trial) bool { return t.Round <= 2 }, 2 * 3},
		{scenario.RestartOnce, scenario.ModeSequential, func(t *plan.Trial) bool { return t.Round <= 2 }, 3},
		// Only variant a's trials are missing: each round starts a alone.
		{scenario.RestartPerRound, scenario.ModeSequential, func(t *plan.Trial) bool { return t.Variant != "a" }, 4},
		// Nothing left: nothing starts.
		{scenario.RestartOnce, scenario.ModeSequential, func(t *plan.Trial) bool { return true }, 0},
		// Duets: round 1 finished; a duet whose baseline trial finished but
		// whose partner did not runs again whole.
		// A duet restarted per round starts its own pair: 3 rounds, 2
		// duets, 2 starts each.
		{scenario.RestartPerRound, scenario.ModeDuet, func(t *plan.Trial) bool { return t.Round == 1 }, 3 * 2 * 2},
		{scenario.RestartPerTrial, scenario.ModeDuet, func(t *plan.Trial) bool { return t.Round == 1 || t.Variant == "baseline" }, 3 * 2 * 2},
	}
	for _, tt := range tests {
		s := &scenario.Scenario{
			Variants: []scenario.Variant{{Name: "baseline"}, {Name: "a"}, {Name: "b"}},
			Baseline: "baseline", Rounds: 4, Restart: tt.restart, Mode: tt.mode,
			Load: scenario.Load{Rates: []float64{100}},
		}
		p := plan.New(s, 7)
		kept := map[int]bool{}
		want := map[int]bool{}
		for _, tr := range p.Trials() {
			if tt.keep(tr) {
				kept[tr.Index] = true
			} else {
				want[tr.Index] = true
			}
		}
		if tt.mode == scenario.ModeDuet {
			// A duet whose partner reruns reruns its baseline trial too.
			for _, a := range p.Actions {
				if a.Kind == plan.RunAtOnce && (want[a.Sides[0].Index] || want[a.Sides[1].Index]) {
					want[a.Sides[0].Index], want[a.Sides[1].Index] = true, true
				}
			}
		}
		got := remaining(p.Actions, kept, tt.restart == scenario.RestartOnce)
		up := map[string]bool{}
		starts := 0
		ran := map[int]bool{}
		for _, a := range got {
			switch a.Kind {
			case plan.Start:
				starts++
				up[a.Variant] = true
			case plan.Stop:
				if !up[a.Variant] {
					t.Errorf("%s/%s: %s stopped while down", tt.mode, tt.restart, a.Variant)
				}
				up[a.Variant] = false
			case plan.Run:
				if !up[a.Variant] {
					t.Errorf("%s/%s: %s runs while down", tt.mode, tt.restart, a.Variant)
				}
				ran[a.Trial.Index] = true
			case plan.RunAtOnce:
				for _, d := range a.Sides {
					if !up[d.Variant] {
						t.Errorf("%s/%s: %s runs while down", tt.mode, tt.restart, d.Variant)
					}
					ran[d.Index] = true
				}
			}
		}
		for v, u := range up {
			if u {
				t.Errorf("%s/%s: %s left running", tt.mode, tt.restart, v)
			}
		}
		if len(ran) != len(want) || countTrials(got) != len(want) {
			t.Errorf("%s/%s: %d trials run (%d counted), want %d", tt.mode, tt.restart, len(ran), countTrials(got), len(want))
		}
		for i := range want {
			if !ran[i] {
				t.Errorf("%s/%s: trial %d is not run again", tt.mode, tt.restart, i)
			}
		}
		if starts != tt.wantStarts {
			t.Errorf("%s/%s: %d starts, want %d", tt.mode, tt.restart, starts, tt.wantStarts)
		}
	}
}

// TestRemainingStarts checks that a resumed run that starts its services
// several times (starts:) starts nothing for a start whose trials all
// finished, and every variant for one with any trial left.
func TestRemainingStarts(t *testing.T) {
	for _, mode := range []string{scenario.ModeSequential, scenario.ModeTogether} {
		s := &scenario.Scenario{
			Variants: []scenario.Variant{{Name: "baseline"}, {Name: "a"}, {Name: "b"}},
			Baseline: "baseline", Rounds: 6, Starts: 3, Restart: scenario.RestartOnce, Mode: mode,
			Load: scenario.Load{Rates: []float64{100}},
		}
		p := plan.New(s, 7)
		kept := map[int]bool{}
		for _, tr := range p.Trials() {
			// The first start's two rounds finished, and the baseline's
			// trial of round 3 (the second start's first).
			if tr.Round <= 2 || tr.Round == 3 && tr.Variant == "baseline" {
				kept[tr.Index] = true
			}
		}
		starts, ran := 0, 0
		for _, a := range remaining(p.Actions, kept, true) {
			switch a.Kind {
			case plan.Start:
				starts++
			case plan.Run:
				ran++
			case plan.RunAtOnce:
				ran += len(a.Sides)
			}
		}
		if starts != 2*3 {
			t.Errorf("%s: %d starts, want every variant for the second and third starts (6)", mode, starts)
		}
		if want := 4*3 - 1; mode == scenario.ModeSequential && ran != want {
			t.Errorf("%s: %d trials run, want %d", mode, ran, want)
		}
	}
}
