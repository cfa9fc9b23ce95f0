package run

import (
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
