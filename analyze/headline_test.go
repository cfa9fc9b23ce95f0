package analyze

import "testing"

// TestHeadlineByChance checks that a headline names as a change only
// what survives the correction for the number of costs tested: a latency
// change whose own interval excludes 0 but which Holm's correction calls
// chance is marked so, a throughput change of that kind is left out, and
// the primary cost keeps its own verdict.
func TestHeadlineByChance(t *testing.T) {
	lo, hi := 1.0, 9.0
	pct := 5.0
	delta := func(significant, corrected bool) *Delta {
		return &Delta{N: 5, Pct: &pct, CILow: &lo, CIHigh: &hi, Significant: significant, SignificantCorrected: corrected}
	}
	for _, tt := range []struct {
		name       string
		cost       Cost
		d          *Delta
		inHeadline bool
		wantChance bool
	}{
		{"p99 by chance", LatencyP99, delta(true, false), true, true},
		{"p99 that survives", LatencyP99, delta(true, true), true, false},
		{"p99 unresolved", LatencyP99, delta(false, false), true, false},
		{"throughput by chance", Throughput, delta(true, false), false, false},
		{"throughput that survives", Throughput, delta(true, true), true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Summary{Baseline: "baseline", Steps: []Step{{Rate: 50, Variants: []VariantResult{
				{Name: "baseline"},
				{Name: "otel", Costs: []CostResult{
					{Cost: CPUPerRequest, Value: 1, Delta: delta(true, true)},
					{Cost: tt.cost, Value: 2, Delta: tt.d},
				}},
			}}}}
			hs := headlines(s)
			if len(hs) != 1 {
				t.Fatalf("%d headlines, want 1", len(hs))
			}
			var found *HeadlineCost
			for i, c := range hs[0].Changes {
				if c.Cost == CPUPerRequest && c.ByChance {
					t.Errorf("the primary cost is marked by chance")
				}
				if c.Cost == tt.cost {
					found = &hs[0].Changes[i]
				}
			}
			if (found != nil) != tt.inHeadline {
				t.Fatalf("%s in the headline: %v, want %v (%+v)", tt.cost, found != nil, tt.inHeadline, hs[0].Changes)
			}
			if found != nil && found.ByChance != tt.wantChance {
				t.Errorf("%s: by chance %v, want %v", tt.cost, found.ByChance, tt.wantChance)
			}
		})
	}
}
