package history

import (
	"time"

	"github.com/tollperf/toll/analyze"
)

// FromSummary is the run that sum analysed, as the history records it:
// every cost of every variant but the baseline, at every load step, with
// its change against the baseline. dir is the run's results directory;
// labels are the user's (agent version, commit, branch).
func FromSummary(sum *analyze.Summary, dir string, labels map[string]string, now time.Time) *Run {
	r := &Run{Scenario: sum.Scenario, Dir: dir, Labels: labels, Recorded: now,
		Valid: sum.Valid() && sum.Partial == nil}
	if m := sum.Manifest; m != nil {
		r.Started, r.Seed, r.TollVersion = m.Started, m.Seed, m.TollVersion
		r.Machine = Machine{CPUModel: m.Host.CPUModel, Cores: m.Host.Cores, Kernel: m.Host.Kernel, Cgroup: m.Layout.Cgroup}
	}
	for _, st := range sum.Steps {
		base := baselineOf(st, sum.Baseline)
		for _, v := range st.Variants {
			if v.Name == sum.Baseline {
				continue
			}
			for _, c := range v.Costs {
				if c.Delta == nil {
					continue
				}
				e := Estimate{Step: st.Label(), Variant: v.Name, Cost: string(c.Cost), Label: c.Label, Unit: c.Unit,
					Method: c.Delta.Method, Value: c.Value, Baseline: base[c.Cost], Rounds: c.Delta.N}
				if c.Delta.Method == "log-ratio" {
					e.Change = c.Delta.Pct
				} else {
					abs := c.Delta.Abs
					e.Change = &abs
				}
				e.Low, e.High = c.Delta.CILow, c.Delta.CIHigh
				r.Estimates = append(r.Estimates, e)
			}
		}
	}
	return r
}

// baselineOf maps each cost of the baseline at st to its value.
func baselineOf(st analyze.Step, baseline string) map[analyze.Cost]float64 {
	out := map[analyze.Cost]float64{}
	for _, v := range st.Variants {
		if v.Name == baseline {
			for _, c := range v.Costs {
				out[c.Cost] = c.Value
			}
		}
	}
	return out
}
