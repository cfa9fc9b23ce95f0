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
