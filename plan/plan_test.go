package plan

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tollperf/toll/scenario"
)

func scen(restart string, rounds int, rates ...float64) *scenario.Scenario {
	return &scenario.Scenario{
		Variants: []scenario.Variant{{Name: "baseline"}, {Name: "a"}, {Name: "b"}},
		Rounds:   rounds,
		Restart:  restart,
		Load:     scenario.Load{Rates: rates},
	}
}

func TestEveryRoundRunsEveryVariantOnce(t *testing.T) {
	for _, restart := range []string{scenario.RestartPerTrial, scenario.RestartPerRound, scenario.RestartOnce} {
		p := New(scen(restart, 5, 100, 200), 42)
		trials := p.Trials()
		if len(trials) != 3*5*2 {
			t.Fatalf("%s: %d trials", restart, len(trials))
		}
		seen := map[[3]any]int{}
		for i, tr := range trials {
			if tr.Index != i+1 {
				t.Errorf("%s: trial %d has index %d", restart, i, tr.Index)
			}
			seen[[3]any{tr.Step, tr.Round, tr.Variant}]++
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("%s: %v ran %d times", restart, k, n)
			}
		}
		// Every Run is preceded by a Start of its variant with no Stop between.
		up := map[string]bool{}
		for _, a := range p.Actions {
			followServices(t, restart, a, up)
			if a.Kind == Run && !up[a.Variant] {
				t.Errorf("%s: %s run while down", restart, a.Variant)
			}
		}
		for v, u := range up {
			if u {
				t.Errorf("%s: %s left running", restart, v)
			}
		}
	}
}

func TestStartsPerPolicy(t *testing.T) {
	tests := []struct {
		restart string
		starts  int
	}{
		{scenario.RestartPerTrial, 3 * 4},
		{scenario.RestartPerRound, 3 * 4},
		{scenario.RestartOnce, 3},
	}
	for _, tt := range tests {
		p := New(scen(tt.restart, 4, 100), 1)
		n := 0
		for _, a := range p.Actions {
			if a.Kind == Start {
				n++
			}
		}
		if n != tt.starts {
			t.Errorf("%s: %d starts, want %d", tt.restart, n, tt.starts)
		}
	}
}

func TestSeededOrder(t *testing.T) {
	order := func(seed int64) []string {
		var vs []string
		for _, tr := range New(scen(scenario.RestartOnce, 20, 1), seed).Trials() {
			vs = append(vs, tr.Variant)
		}
		return vs
	}
	if !reflect.DeepEqual(order(7), order(7)) {
		t.Error("same seed, different order")
	}
	if reflect.DeepEqual(order(7), order(8)) {
		t.Error("different seeds, same order over 20 rounds")
	}
	first := map[string]int{}
	for _, tr := range New(scen(scenario.RestartOnce, 60, 1), 3).Trials() {
		if tr.Order == 0 {
			first[tr.Variant]++
		}
	}
	for _, v := range []string{"baseline", "a", "b"} {
		if first[v] < 8 {
			t.Errorf("%s went first in %d of 60 rounds; order is not random", v, first[v])
		}
	}
}

func TestDuetPairsBaselineWithEachVariant(t *testing.T) {
	s := scen(scenario.RestartOnce, 3, 100)
	s.Mode, s.Baseline = scenario.ModeDuet, "baseline"
	p := New(s, 7)
	var duets int
	for _, a := range p.Actions {
		if a.Kind == Run {
			t.Fatalf("a duet plan has a single run: %+v", a)
		}
		if a.Kind != RunAtOnce {
			continue
		}
		duets++
		b, v := a.Sides[0], a.Sides[1]
		if b.Variant != "baseline" || b.Pair != v.Variant || v.Variant == "baseline" || b.Round != v.Round || b.Rate != v.Rate {
			t.Errorf("bad duet %+v %+v", b, v)
		}
	}
	if duets != 2*3 {
		t.Errorf("%d duets, want 6 (2 variants × 3 rounds)", duets)
	}
	if n := len(p.Trials()); n != 12 {
		t.Errorf("%d trials, want 12", n)
	}
}

// followServices follows a plan's starts and stops of variants' services
// in up, failing t on a start of services already up or a stop of services
// down.
func followServices(t *testing.T, label string, a Action, up map[string]bool) {
	t.Helper()
	switch a.Kind {
	case Start:
		if up[a.Variant] {
			t.Errorf("%s: %s started twice", label, a.Variant)
		}
		up[a.Variant] = true
	case Stop:
		if !up[a.Variant] {
			t.Errorf("%s: %s stopped while down", label, a.Variant)
		}
		up[a.Variant] = false
	}
}

func TestDuetRestartPolicies(t *testing.T) {
	tests := []struct {
		restart string
		starts  int // 3 variants, 4 rounds, 2 duets a round
	}{
		{scenario.RestartOnce, 3},
		// Each duet's pair starts afresh under both: a baseline started
		// once a round would come to its second duet warm.
		{scenario.RestartPerRound, 2 * 2 * 4},
		{scenario.RestartPerTrial, 2 * 2 * 4},
	}
	for _, tt := range tests {
		s := scen(tt.restart, 4, 100)
		s.Mode, s.Baseline = scenario.ModeDuet, "baseline"
		p := New(s, 5)
		up := map[string]bool{}
		ran := map[string]bool{} // ran a duet since its last start
		starts, duets := 0, 0
		for _, a := range p.Actions {
			followServices(t, tt.restart, a, up)
			switch a.Kind {
			case Start:
				starts++
				ran[a.Variant] = false
			case RunAtOnce:
				duets++
				b, v := a.Sides[0].Variant, a.Sides[1].Variant
				if !up[b] || !up[v] {
					t.Errorf("%s: duet %s beside %s with a side down", tt.restart, b, v)
				}
				// Restarted services come to each duet with the same
				// history: neither side has run a duet since it started.
				if tt.restart != scenario.RestartOnce && (ran[b] || ran[v]) {
					t.Errorf("%s: duet %s beside %s, a side has run a duet since its start (%v)", tt.restart, b, v, ran)
				}
				ran[b], ran[v] = true, true
			case Run:
				t.Errorf("%s: a duet plan has a single run", tt.restart)
			}
		}
		if starts != tt.starts || duets != 2*4 {
			t.Errorf("%s: %d starts and %d duets, want %d and 8", tt.restart, starts, duets, tt.starts)
		}
		for v, u := range up {
			if u {
				t.Errorf("%s: %s left running", tt.restart, v)
			}
		}
	}
}

// TestTogetherRunsEveryVariantAtOnce checks mode: together: one action a
// round and step holding the baseline's trial first and every other
// variant's, indices in order, no pairing (the baseline's trial serves
// every variant), each side's place in the order of requests moving round
// by round, and services up whenever trials run, under every policy.
func TestTogetherRunsEveryVariantAtOnce(t *testing.T) {
	tests := []struct {
		restart string
		starts  int // 3 variants, 6 rounds, 2 steps
	}{
		{scenario.RestartOnce, 3},
		{scenario.RestartPerRound, 3 * 6 * 2},
		{scenario.RestartPerTrial, 3 * 6 * 2},
	}
	for _, tt := range tests {
		s := scen(tt.restart, 6, 100, 200)
		s.Mode, s.Baseline = scenario.ModeTogether, "baseline"
		p := New(s, 11)
		up := map[string]bool{}
		starts, groups, index := 0, 0, 0
		orders := map[string]map[int]bool{}
		for _, a := range p.Actions {
			followServices(t, tt.restart, a, up)
			switch a.Kind {
			case Start:
				starts++
			case Run:
				t.Fatalf("%s: a together plan has a single run: %+v", tt.restart, a)
			case RunAtOnce:
				groups++
				if len(a.Sides) != 3 || a.Sides[0].Variant != "baseline" {
					t.Fatalf("%s: sides %+v, want the baseline and both variants", tt.restart, a.Sides)
				}
				seen := map[string]bool{}
				places := map[int]bool{}
				for _, tr := range a.Sides {
					index++
					if tr.Index != index || tr.Round != a.Sides[0].Round || tr.Rate != a.Sides[0].Rate || tr.Pair != "" || !up[tr.Variant] {
						t.Errorf("%s: side %+v (want index %d, round and rate of the baseline's, no pair, services up)", tt.restart, tr, index)
					}
					seen[tr.Variant], places[tr.Order] = true, true
					if orders[tr.Variant] == nil {
						orders[tr.Variant] = map[int]bool{}
					}
					orders[tr.Variant][tr.Order] = true
				}
				if len(seen) != 3 || len(places) != 3 {
					t.Errorf("%s: sides %v in places %v, want 3 variants in 3 places", tt.restart, seen, places)
				}
			}
		}
		if starts != tt.starts || groups != 6*2 || len(p.Trials()) != 3*6*2 {
			t.Errorf("%s: %d starts, %d groups, %d trials; want %d, 12, 36", tt.restart, starts, groups, len(p.Trials()), tt.starts)
		}
		for v, o := range orders {
			if len(o) != 3 {
				t.Errorf("%s: %s took places %v over 12 groups, want every place", tt.restart, v, o)
			}
		}
		for v, u := range up {
			if u {
				t.Errorf("%s: %s left running", tt.restart, v)
			}
		}
	}
}

func TestWorkloadPlans(t *testing.T) {
	variants := []scenario.Variant{{Name: "baseline"}, {Name: "otel"}}
	tests := []struct {
		name          string
		s             *scenario.Scenario
		trials, steps int
		starts        int
	}{
		{"startup with two CPU limits", &scenario.Scenario{Variants: variants, Restart: scenario.RestartPerTrial,
			Startup: &scenario.Startup{Repetitions: 3, CPULimits: []float64{1, 2}}}, 2 * 3 * 2, 2, 0},
		{"job", &scenario.Scenario{Variants: variants, Restart: scenario.RestartOnce,
			Job: &scenario.Job{Repetitions: 4, Command: []string{"true"}}}, 2 * 4, 1, 2},
	}
	for _, tt := range tests {
		p := New(tt.s, 7)
		trials := p.Trials()
		if len(trials) != tt.trials {
			t.Errorf("%s: %d trials, want %d", tt.name, len(trials), tt.trials)
		}
		steps := map[int]float64{}
		orders := map[string]bool{}
		for _, tr := range trials {
			steps[tr.Step] = tr.CPULimit
			if tr.Order == 0 {
				orders[tr.Variant] = true
			}
		}
		if len(steps) != tt.steps {
			t.Errorf("%s: %d steps, want %d", tt.name, len(steps), tt.steps)
		}
		if tt.s.Startup != nil && (steps[0] != 1 || steps[1] != 2) {
			t.Errorf("%s: CPU limits by step %v, want 1 and 2", tt.name, steps)
		}
		if len(orders) != 2 {
			t.Errorf("%s: the same variant went first in every repetition: the order is not interleaved", tt.name)
		}
		starts := 0
		for _, a := range p.Actions {
			if a.Kind == Start {
				starts++
			}
		}
		if starts != tt.starts {
			t.Errorf("%s: %d start actions, want %d", tt.name, starts, tt.starts)
		}
	}
}

// TestMatrixStartsEachLimitAfresh checks a load test's matrix: every
// trial runs under its step's CPU limit, on services started under that
// limit, which with restart: once means a start of every variant per
// setting (a JVM sizes itself from the CPUs it sees at start), and in a
// duet too.
func TestMatrixStartsEachLimitAfresh(t *testing.T) {
	for _, tt := range []struct {
		restart, mode string
		starts        int
	}{
		{scenario.RestartOnce, scenario.ModeSequential, 2 * 3},
		{scenario.RestartPerRound, scenario.ModeSequential, 2 * 2 * 2 * 3},
		{scenario.RestartPerTrial, scenario.ModeSequential, 2 * 2 * 2 * 3},
		{scenario.RestartOnce, scenario.ModeDuet, 2 * 3},
	} {
		s := scen(tt.restart, 2, 0, 100)
		s.Mode = tt.mode
		s.Baseline = "baseline"
		s.Matrix.CPUs = []float64{1, 0.5}
		p := New(s, 7)
		limit := map[string]float64{} // the limit each running variant started under
		starts := 0
		for _, a := range p.Actions {
			switch a.Kind {
			case Start:
				starts++
				limit[a.Variant] = a.CPULimit
			case Stop:
				delete(limit, a.Variant)
			case Run, RunAtOnce:
				ts := []*Trial{a.Trial}
				if a.Kind == RunAtOnce {
					ts = a.Sides
				}
				for _, tr := range ts {
					got, up := limit[tr.Variant]
					if !up || got != tr.CPULimit {
						t.Errorf("%s %s: trial %d (%s, step %d, %v CPU) runs on services started under %v (running %v)", tt.restart, tt.mode, tr.Index, tr.Variant, tr.Step, tr.CPULimit, got, up)
					}
					if want := []float64{1, 1, 0.5, 0.5}[tr.Step]; tr.CPULimit != want {
						t.Errorf("%s %s: trial %d at step %d has limit %v, want %v", tt.restart, tt.mode, tr.Index, tr.Step, tr.CPULimit, want)
					}
					if tr.Idle != (tr.Step%2 == 0) {
						t.Errorf("%s %s: trial %d at step %d idle=%v", tt.restart, tt.mode, tr.Index, tr.Step, tr.Idle)
					}
				}
			}
		}
		if starts != tt.starts {
			t.Errorf("%s %s: %d starts, want %d", tt.restart, tt.mode, starts, tt.starts)
		}
		if len(limit) > 0 {
			t.Errorf("%s %s: left running: %v", tt.restart, tt.mode, limit)
		}
	}
}

// TestSeveralStarts checks that a run starting its services once but
// several times over (starts) starts every variant afresh at the first
// round of each span, and no more, in every schedule, and that each trial
// names the start it ran under.
func TestSeveralStarts(t *testing.T) {
	for _, mode := range []string{scenario.ModeSequential, scenario.ModeDuet, scenario.ModeTogether} {
		s := scen(scenario.RestartOnce, 7, 100)
		s.Mode, s.Baseline, s.Starts = mode, "baseline", 3
		p := New(s, 9)
		up := map[string]bool{}
		launches, launch := 0, -1 // starts of the baseline; the span now running
		for _, a := range p.Actions {
			followServices(t, mode, a, up)
			switch a.Kind {
			case Start:
				if a.Variant == "baseline" {
					launches++
					launch++
				}
			case Run, RunAtOnce:
				trials := a.Sides
				if a.Kind == Run {
					trials = []*Trial{a.Trial}
				}
				for _, tr := range trials {
					if !up[tr.Variant] {
						t.Errorf("%s: %s run while down", mode, tr.Variant)
					}
					if want := s.Launch(tr.Round); tr.Launch != want || tr.Launch != launch {
						t.Errorf("%s: round %d ran under start %d and says %d, want %d", mode, tr.Round, launch, tr.Launch, want)
					}
				}
			}
		}
		if launches != 3 {
			t.Errorf("%s: the services started %d times, want 3", mode, launches)
		}
		for v, u := range up {
			if u {
				t.Errorf("%s: %s left running", mode, v)
			}
		}
	}
}

// TestStepsShareStarts plans a run in precision mode whose services start
// once: every round runs every load step, under the one start, in an
// order that varies between rounds; the trials are numbered in the order
// they run. Run step after step, the same scenario runs each step's rounds
// together.
func TestStepsShareStarts(t *testing.T) {
	for _, mode := range []string{scenario.ModeSequential, scenario.ModeDuet} {
		s := scen(scenario.RestartOnce, 6, 100, 200, 300)
		s.Mode = mode
		s.Precision.On = true
		p := New(s, 7)
		trials := p.Trials()
		s.Precision.On = false
		inTurn := New(s, 7).Trials()
		if len(trials) != len(inTurn) {
			t.Fatalf("%s: %d trials, %d step after step", mode, len(trials), len(inTurn))
		}
		orders := map[string]bool{}
		var order []int
		for i, tr := range trials {
			if tr.Index != i+1 {
				t.Errorf("%s: trial %d has index %d", mode, i, tr.Index)
			}
			if i > 0 && tr.Round < trials[i-1].Round {
				t.Fatalf("%s: round %d after round %d", mode, tr.Round, trials[i-1].Round)
			}
			if len(order) == 0 || order[len(order)-1] != tr.Step {
				order = append(order, tr.Step)
			}
			if i == len(trials)-1 || trials[i+1].Round != tr.Round {
				if len(order) != 3 {
					t.Errorf("%s: round %d ran steps %v", mode, tr.Round, order)
				}
				orders[fmt.Sprint(order)] = true
				order = nil
			}
		}
		if len(orders) < 2 {
			t.Errorf("%s: every round ran its steps in the order %v", mode, orders)
		}
		starts := 0
		for i, a := range p.Actions {
			if a.Kind == Start {
				starts++
				if i >= len(s.Variants) {
					t.Errorf("%s: a start at action %d", mode, i)
				}
			}
		}
		if starts != len(s.Variants) {
			t.Errorf("%s: %d starts", mode, starts)
		}

		for i := 1; i < len(inTurn); i++ {
			if inTurn[i].Step < inTurn[i-1].Step {
				t.Fatalf("%s, fixed rounds: step %d after step %d", mode, inTurn[i].Step, inTurn[i-1].Step)
			}
		}
	}
}
