package run

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
		trial     plan.Trial
		want      time.Duration
	}{
		{"shared, open model", scenario.DuetShared, plan.Trial{Rate: 200}, 2500 * time.Microsecond},
		{"shared, closed model", scenario.DuetShared, plan.Trial{Users: 10}, 0},
		{"split", scenario.DuetSplit, plan.Trial{Rate: 200}, 0},
	}
	for _, tt := range tests {
		s := &scenario.Scenario{Mode: scenario.ModeDuet, Pinning: scenario.Pinning{Duet: tt.placement}}
		if got := duetLag(s, &tt.trial); got != tt.want {
			t.Errorf("%s: lag %v, want %v", tt.name, got, tt.want)
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
// the variant warm-up together, so that their windows stay aligned.
func TestDuetSidesWarmTogether(t *testing.T) {
	for _, tt := range []struct{ a, b, want bool }{
		{true, true, true},
		{true, false, false},
		{false, true, false},
		{false, false, false},
	} {
		a, b := &started{warmed: tt.a}, &started{warmed: tt.b}
		owedWarmup(a, b)
		if a.warmed != tt.want || b.warmed != tt.want {
			t.Errorf("warmed %v and %v: after, %v and %v, want both %v", tt.a, tt.b, a.warmed, b.warmed, tt.want)
		}
	}
}
