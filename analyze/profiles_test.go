package analyze

import (
	"math"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestProfilesReceived checks that profiles a variant's profiler uploaded
// are reported per second of its windows and compared with the baseline's
// none, and that a run without any profile has no profiles row.
func TestProfilesReceived(t *testing.T) {
	run := func(profiler bool) *Summary {
		t.Helper()
		m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "agent"}}
		var trials []*record.Trial
		for r := 1; r <= 3; r++ {
			base := synthetic(t, 2*r-1, r, "baseline", 10, 100, 0.001, 1000)
			agent := synthetic(t, 2*r, r, "agent", 10, 100, 0.001, 1000)
			if profiler {
				// One upload every 2 s, the first at t = 0.
				for i := range agent.Telemetry {
					if tt := agent.Telemetry[i].T; tt >= 0 {
						agent.Telemetry[i].Profiles = uint64(tt)/2 + 1
					}
				}
			}
			trials = append(trials, base, agent)
		}
		s, err := Summarize(m, trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	find := func(vr VariantResult) (CostResult, bool) {
		for _, c := range vr.Costs {
			if c.Cost == Profiles {
				return c, true
			}
		}
		return CostResult{}, false
	}

	s := run(true)
	base, agent := s.Steps[0].Variants[0], s.Steps[0].Variants[1]
	bc, ok := find(base)
	if !ok || bc.Value != 0 {
		t.Fatalf("baseline profiles row = %+v (present %v), want 0", bc, ok)
	}
	ac, ok := find(agent)
	if !ok {
		t.Fatal("no profiles row for the variant that uploads profiles")
	}
	// 5 uploads from t = 0 to t = 10 (the 6th, at t = 10, closes the
	// window): 5 in 10 s.
	if math.Abs(ac.Value-0.5) > 1e-9 {
		t.Errorf("profiles received = %g/s, want 0.5", ac.Value)
	}
	if ac.Delta == nil || math.Abs(ac.Delta.Abs-0.5) > 1e-9 || ac.Delta.Method != "difference" {
		t.Errorf("profiles delta = %+v, want +0.5 by difference", ac.Delta)
	}

	s = run(false)
	for _, vr := range s.Steps[0].Variants {
		if c, ok := find(vr); ok {
			t.Errorf("%s has a profiles row %+v in a run without profiles", vr.Name, c)
		}
	}
}
