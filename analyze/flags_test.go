package analyze

import (
	"testing"

	"github.com/tollperf/toll/record"
)

// TestRateMissedAllowsTheWholeRequest checks that a window due a fraction of
// a request (25 req/s for 1.5 s: 37.5) is not flagged for sending the whole
// number on time, and that a rate really missed still is.
func TestRateMissedAllowsTheWholeRequest(t *testing.T) {
	for _, tt := range []struct {
		got  float64
		want bool
	}{{37 / 1.5, false}, {34 / 1.5, true}} {
		tr := &record.Trial{Index: 1, Variant: "v", TargetRate: 25}
		tc := &TrialCosts{Window: Window{From: 0, To: 1.5}, Costs: map[Cost]float64{Throughput: tt.got}}
		flagged := false
		for _, f := range flagTrial(tr, tc, 0, 0) {
			flagged = flagged || f.Code == FlagRateMissed
		}
		if flagged != tt.want {
			t.Errorf("%.2f req/s of 25 over 1.5 s: rate-missed %v, want %v", tt.got, flagged, tt.want)
		}
	}
}

// TestGroupFlags checks that flags are grouped by cause, each trial counted
// once, with the worst figure in each cause's direction (the highest
// lateness, the lowest share of the target rate), the causes that
// invalidate trials first, then the commonest.
func TestGroupFlags(t *testing.T) {
	var flags []Flag
	for _, f := range []struct {
		trial int
		code  string
		value float64
	}{
		{1, FlagLateArrival, 300}, {2, FlagLateArrival, 964}, {2, FlagSteal, 2.5}, {3, FlagLateArrival, 120},
		{3, FlagThrottled, 4}, {3, FlagThrottled, 9}, // two services of one trial
		{4, FlagRateMissed, 97.5}, {5, FlagRateMissed, 95.1}, {6, FlagInterrupted, 0},
	} {
		flags = append(flags, Flag{Trial: f.trial, Code: f.code, Value: f.value, Message: "m"})
	}
	gs := groupFlags(flags, 20, func(trial int) bool { return trial == 6 })
	type want struct {
		code        string
		trials      int
		worst       float64 // -1: none
		invalidates bool
		excluded    int
	}
	wants := []want{
		{FlagRateMissed, 2, 95.1, true, 0},
		{FlagInterrupted, 1, -1, true, 1},
		{FlagLateArrival, 3, 964, false, 0},
		{FlagSteal, 1, 2.5, false, 0},
		{FlagThrottled, 1, 9, false, 0},
	}
	if len(gs) != len(wants) {
		t.Fatalf("%d groups, want %d: %+v", len(gs), len(wants), gs)
	}
	for i, w := range wants {
		g := gs[i]
		worst := -1.0
		if g.Worst != nil {
			worst = *g.Worst
		}
		if g.Code != w.code || len(g.Trials) != w.trials || worst != w.worst || g.Invalidates != w.invalidates || g.Excluded != w.excluded || g.Of != 20 {
			t.Errorf("group %d: %s, %d trials of %d, worst %g, invalidates %v, %d excluded; want %+v",
				i, g.Code, len(g.Trials), g.Of, worst, g.Invalidates, g.Excluded, w)
		}
	}
}

// TestLateArrivalsFigure checks that a late-arrivals flag carries the
// trial's p99 lateness as its figure, which the group's worst is read from.
func TestLateArrivalsFigure(t *testing.T) {
	tr := &record.Trial{Index: 1, Variant: "v"}
	tr.Load.LatenessP99US = 964
	tc := &TrialCosts{Costs: map[Cost]float64{}}
	for _, f := range flagTrial(tr, tc, 0, 0) {
		if f.Code == FlagLateArrival && f.Value == 964 {
			return
		}
	}
	t.Errorf("no late-arrivals flag with figure 964 among %+v", flagTrial(tr, tc, 0, 0))
}

// TestTooWide checks which intervals a headline calls too wide to tell.
func TestTooWide(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, tt := range []struct {
		name string
		d    Delta
		base float64
		want bool
	}{
		{"two rounds of a tail", Delta{Pct: f(74.9), CILow: f(-100), CIHigh: f(1058331)}, 7, true},
		{"a factor of 30", Delta{Pct: f(74.9), CILow: f(-69), CIHigh: f(874)}, 7, true},
		{"a useful one", Delta{Pct: f(37), CILow: f(15), CIHigh: f(64)}, 1, false},
		{"unresolved but narrow", Delta{Pct: f(1), CILow: f(-2), CIHigh: f(4)}, 1, false},
		{"no interval", Delta{Pct: f(12)}, 1, false},
		{"a difference wider than the baseline thrice", Delta{Abs: 1, CILow: f(-20), CIHigh: f(22)}, 10, true},
		{"a narrow difference", Delta{Abs: 1, CILow: f(0.5), CIHigh: f(1.5)}, 10, false},
	} {
		if got := tooWide(&tt.d, tt.base); got != tt.want {
			t.Errorf("%s: too wide %v, want %v", tt.name, got, tt.want)
		}
	}
}
