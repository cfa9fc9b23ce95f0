package local

import (
	"context"
	"testing"
	"time"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/scenario"
)

func TestDuetLag(t *testing.T) {
	tests := []struct {
		name      string
		placement string
		slice     time.Duration
		trial     plan.Trial
		want      time.Duration
	}{
		{"shared, open model", scenario.DuetShared, 0, plan.Trial{Rate: 200}, 2500 * time.Microsecond},
		{"shared, closed model", scenario.DuetShared, 0, plan.Trial{Users: 10}, 0},
		{"split", scenario.DuetSplit, 0, plan.Trial{Rate: 200}, 0},
		{"shared in turns", scenario.DuetShared, 50 * time.Millisecond, plan.Trial{Rate: 200}, 0},
	}
	for _, tt := range tests {
		s := &scenario.Scenario{Mode: scenario.ModeDuet, Pinning: scenario.Pinning{Duet: tt.placement}, Load: scenario.Load{Slice: scenario.Duration(tt.slice)}}
		if got := duetLag(s, &tt.trial); got != tt.want {
			t.Errorf("%s: lag %v, want %v", tt.name, got, tt.want)
		}
	}
	// Together, the interval is divided among every side.
	s := &scenario.Scenario{Mode: scenario.ModeTogether, Pinning: scenario.Pinning{Duet: scenario.DuetShared},
		Variants: make([]scenario.Variant, 5)}
	if got, want := duetLag(s, &plan.Trial{Rate: 100}), 2*time.Millisecond; got != want {
		t.Errorf("5 variants together at 100 req/s: lag %v, want %v", got, want)
	}
}

// TestLull checks where a trial's per-second work falls: midway between
// its requests, and between one side's and the other's in a shared duet,
// whose requests interleave, but not in one whose sides take turns.
func TestLull(t *testing.T) {
	tests := []struct {
		name  string
		mode  string
		duet  string
		slice time.Duration
		trial plan.Trial
		want  time.Duration
	}{
		{"sequential", scenario.ModeSequential, "", 0, plan.Trial{Rate: 100}, 5 * time.Millisecond},
		{"shared duet", scenario.ModeDuet, scenario.DuetShared, 0, plan.Trial{Rate: 100}, 2500 * time.Microsecond},
		{"shared duet in turns", scenario.ModeDuet, scenario.DuetShared, 50 * time.Millisecond, plan.Trial{Rate: 100}, 5 * time.Millisecond},
		{"split duet", scenario.ModeDuet, scenario.DuetSplit, 0, plan.Trial{Rate: 100}, 5 * time.Millisecond},
		{"closed model", scenario.ModeDuet, scenario.DuetShared, 0, plan.Trial{Users: 4}, 0},
		{"a slow rate", scenario.ModeSequential, "", 0, plan.Trial{Rate: 2}, 100 * time.Millisecond},
		{"4 variants together", scenario.ModeTogether, scenario.DuetShared, 0, plan.Trial{Rate: 100}, 1250 * time.Microsecond},
	}
	for _, tt := range tests {
		s := &scenario.Scenario{Mode: tt.mode, Pinning: scenario.Pinning{Duet: tt.duet}, Load: scenario.Load{Slice: scenario.Duration(tt.slice)},
			Variants: make([]scenario.Variant, 4)}
		if got := lull(s, &tt.trial); got != tt.want {
			t.Errorf("%s: lull %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestIdleWindow checks an idle trial's wait: to the window's planned end,
// or to when its context ends, but never before the window begins.
func TestIdleWindow(t *testing.T) {
	start := time.Now().Add(20 * time.Millisecond)
	if end := idle(context.Background(), start, 30*time.Millisecond); !end.Equal(start.Add(30*time.Millisecond)) || time.Now().Before(end) {
		t.Errorf("idle returned %v before the window's end %v", end, start.Add(30*time.Millisecond))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now().Add(time.Hour)
	if end := idle(ctx, start, time.Hour); !end.Equal(start) {
		t.Errorf("cut before its window, idle returned %v, want the window's start %v", end, start)
	}
}

// TestDuetSidesWarmTogether checks that the two sides of a duet are owed
// the variant warm-up together, so that their windows stay aligned, and
// that a side warmed before takes it again at the trial's rate, the fresh
// side at load.variant_warmup_rate.
func TestDuetSidesWarmTogether(t *testing.T) {
	s := &scenario.Scenario{Load: scenario.Load{VariantWarmupRate: 300}}
	// The load of the warm-up's first (here its only) phase.
	warmupTrial := func(s *scenario.Scenario, pt *plan.Trial, rewarm bool) *plan.Trial {
		return warmupPhases(s, false, turnNone)[0].trial(pt, rewarm)
	}
	for _, tt := range []struct {
		a, b         bool
		want         bool
		rateA, rateB float64
	}{
		{true, true, true, 0, 0},
		{true, false, false, 100, 300},
		{false, true, false, 300, 100},
		{false, false, false, 300, 300},
	} {
		a, b := &started{warmed: tt.a}, &started{warmed: tt.b}
		owedWarmup(a, b)
		if a.warmed != tt.want || b.warmed != tt.want {
			t.Errorf("warmed %v and %v: after, %v and %v, want both %v", tt.a, tt.b, a.warmed, b.warmed, tt.want)
		}
		if tt.want {
			continue // no warm-up owed
		}
		pt := &plan.Trial{Rate: 100}
		if ra, rb := warmupTrial(s, pt, a.rewarm).Rate, warmupTrial(s, pt, b.rewarm).Rate; ra != tt.rateA || rb != tt.rateB {
			t.Errorf("warmed %v and %v: warm-up rates %v and %v, want %v and %v", tt.a, tt.b, ra, rb, tt.rateA, tt.rateB)
		}
	}
	// Together, every side is owed it when any is.
	sides := []*started{{warmed: true}, {warmed: false}, {warmed: true}}
	owedWarmup(sides...)
	for i, st := range sides {
		if st.warmed || st.rewarm != (i != 1) {
			t.Errorf("side %d of 3, one fresh: warmed %v, rewarm %v; want owed, rewarmed unless fresh", i, st.warmed, st.rewarm)
		}
	}
	users := &plan.Trial{Users: 8}
	if w := warmupTrial(s, users, false); w != users {
		t.Errorf("closed-model step warmed as %+v, want it as it is", w)
	}
	s.Load = scenario.Load{VariantWarmupUsers: 3}
	for _, pt := range []*plan.Trial{{Rate: 100}, users} {
		if w := warmupTrial(s, pt, false); w.Users != 3 || w.Rate != 0 {
			t.Errorf("%+v warmed as %+v, want 3 users", pt, w)
		}
		if w := warmupTrial(s, pt, true); w != pt {
			t.Errorf("%+v warmed again as %+v, want it as it is", pt, w)
		}
	}
}

// TestSampleStart checks that a trial's sample ticks fall on its window's
// own grid, the first at or before the load's start: a whole-second
// warm-up keeps the load's grid, a fractional one (and a sliced duet's
// second side) moves it.
func TestSampleStart(t *testing.T) {
	origin := time.Unix(1000, 0)
	const ms = time.Millisecond
	for _, tt := range []struct {
		name         string
		warmup, lull time.Duration
		want         time.Duration // from origin (the grid's first tick)
	}{
		{"whole-second warm-up", 2 * time.Second, 2 * ms, -2 * ms},
		{"half-second warm-up", 500 * ms, 0, -500 * ms},
		{"a sliced duet's second side", 2050 * ms, 1667 * time.Microsecond, -951667 * time.Microsecond},
		{"no warm-up", 0, 2 * ms, -2 * ms},
	} {
		anchor := origin.Add(tt.warmup - tt.lull)
		if got := sampleStart(origin, anchor, time.Second).Sub(origin); got != tt.want {
			t.Errorf("%s: first tick %s after the origin, want %s", tt.name, got, tt.want)
		}
	}
}
