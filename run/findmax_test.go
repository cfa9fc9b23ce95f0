package run

import (
	"testing"

	"github.com/tollperf/toll/record"
)

// TestSearchConfirmsFailures checks the find-max search's steps: it
// doubles while trials pass, tries a failed rate again before believing
// it, bisects between the highest pass and the lowest confirmed failure,
// and stops at the precision or the trial budget.
func TestSearchConfirmsFailures(t *testing.T) {
	for _, tt := range []struct {
		name      string
		outcomes  []bool // each trial's pass, in order
		maxTrials int
		rates     []float64 // the rate of each trial
		max, fail float64
		converged bool
	}{
		{
			name:      "a stall at the first rate is tried again",
			outcomes:  []bool{false, true, true, false, false},
			maxTrials: 5,
			rates:     []float64{100, 100, 200, 400, 400},
			max:       200, fail: 400,
		},
		{
			name:      "a failure confirmed bisects",
			outcomes:  []bool{true, false, false, true, true},
			maxTrials: 12,
			rates:     []float64{100, 200, 200, 150, 175},
			max:       175, fail: 200, converged: true,
		},
		{
			name:      "one failure followed by a pass goes on rising",
			outcomes:  []bool{true, false, true, true},
			maxTrials: 4,
			rates:     []float64{100, 200, 200, 400},
			max:       400,
		},
		{
			name:      "nothing passes: the rate falls",
			outcomes:  []bool{false, false, false, false},
			maxTrials: 4,
			rates:     []float64{100, 100, 50, 50},
			fail:      50,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &search{next: 100}
			var rates []float64
			for _, pass := range tt.outcomes {
				if s.done {
					t.Fatalf("search ended after %v, want %d trials", rates, len(tt.outcomes))
				}
				rates = append(rates, s.next)
				s.advance(record.FindMaxTrial{Rate: s.next, Pass: pass}, 0.15, tt.maxTrials)
			}
			if !s.done {
				t.Errorf("search goes on after %v (next %g)", rates, s.next)
			}
			if len(rates) != len(tt.rates) {
				t.Fatalf("rates %v, want %v", rates, tt.rates)
			}
			for i := range rates {
				if rates[i] != tt.rates[i] {
					t.Fatalf("rates %v, want %v", rates, tt.rates)
				}
			}
			if s.res.MaxRate != tt.max || s.res.FailedRate != tt.fail || s.res.Converged != tt.converged {
				t.Errorf("max %g, failed at %g, converged %v; want %g, %g, %v", s.res.MaxRate, s.res.FailedRate, s.res.Converged, tt.max, tt.fail, tt.converged)
			}
		})
	}
}
