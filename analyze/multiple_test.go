package analyze

import (
	"fmt"
	"math"
	"testing"
)

// TestCorrect checks the correction for the number of costs compared at
// once: a lone secondary change at p = 0.03 among 17 costs is what chance
// gives and is not significant once corrected; a change at p = 0.0001
// stays; the primary cost keeps its own 95% verdict; and the counts say
// how many changes were tested and would read significant by chance.
func TestCorrect(t *testing.T) {
	type in struct {
		cost Cost
		p    float64
	}
	// filler returns n secondary costs that did not change.
	filler := func(n int) []in {
		var out []in
		for i := range n {
			out = append(out, in{Cost(fmt.Sprintf("cost%d", i)), 0.2 + 0.04*float64(i)})
		}
		return out
	}
	for _, tt := range []struct {
		name          string
		tests         []in
		wantSig       int
		wantCorrected int
		corrected     map[Cost]bool
	}{
		{"one of 17 by chance", append([]in{{LatencyP999, 0.03}}, filler(16)...), 1, 0, map[Cost]bool{LatencyP999: false}},
		{"a real secondary change", append([]in{{RSS, 0.0001}, {LatencyP999, 0.03}}, filler(15)...), 2, 1, map[Cost]bool{RSS: true, LatencyP999: false}},
		{"primary at its own 95%", append([]in{{CPUPerRequest, 0.03}, {LatencyP999, 0.03}}, filler(15)...), 2, 1, map[Cost]bool{CPUPerRequest: true, LatencyP999: false}},
		{"two costs, both real", []in{{RSS, 0.01}, {Threads, 0.02}}, 2, 2, map[Cost]bool{RSS: true, Threads: true}},
		{"Holm stops at the first that fails", []in{{RSS, 0.001}, {Threads, 0.04}, {FDs, 0.04}}, 3, 1, map[Cost]bool{RSS: true, Threads: false, FDs: false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := map[Cost]*bool{}
			var ts []test
			for _, x := range tt.tests {
				b := new(bool)
				*b = true // correct must set every verdict, false too
				got[x.cost] = b
				ts = append(ts, test{cost: x.cost, p: x.p, significant: x.p < 0.05, corrected: b})
			}
			m := correct(ts)
			if m.Tested != len(tt.tests) || m.Significant != tt.wantSig || m.SignificantCorrected != tt.wantCorrected {
				t.Errorf("%+v, want %d tested, %d significant, %d corrected", m, len(tt.tests), tt.wantSig, tt.wantCorrected)
			}
			if want := 0.05 * float64(len(tt.tests)); math.Abs(m.ExpectedByChance-want) > 1e-9 {
				t.Errorf("expected by chance %g, want %g", m.ExpectedByChance, want)
			}
			for c, want := range tt.corrected {
				if *got[c] != want {
					t.Errorf("%s: corrected %v, want %v", c, *got[c], want)
				}
			}
		})
	}
}

// TestSummaryMultiplicity checks that a run's summary carries, for each
// variant compared with the baseline, the count of costs tested and the
// corrected verdicts, and none for the baseline.
func TestSummaryMultiplicity(t *testing.T) {
	s := endingSummary(t)
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			if v.Name == s.Baseline {
				if v.Multiplicity != nil {
					t.Errorf("the baseline has a multiplicity: %+v", v.Multiplicity)
				}
				continue
			}
			m := v.Multiplicity
			if m == nil || m.Tested == 0 || m.Primary != CPUPerRequest {
				t.Fatalf("%s: multiplicity %+v", v.Name, m)
			}
			for _, c := range v.Costs {
				if c.Delta != nil && c.Delta.SignificantCorrected && !c.Delta.Significant {
					t.Errorf("%s: corrected verdict without a verdict", c.Cost)
				}
				if c.Cost == CPUPerRequest && c.Delta.SignificantCorrected != c.Delta.Significant {
					t.Errorf("the primary cost's verdict changed")
				}
			}
		}
	}
}
