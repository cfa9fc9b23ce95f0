package analyze

import "github.com/tollperf/toll/stats"

// Multiplicity says how many costs one comparison (a variant against the
// baseline at one step, or a variant's overhead in two runs) tested at
// once, and what that many tests read by chance alone. Each cost's
// interval is a 95% one: of 17 costs that do not change, about 0.85 read
// a change anyway. The primary cost (PrimaryCost) keeps its own 95%; the
// others are corrected together by Holm's step-down method, which keeps
// the chance of any false change among them at 5%.
type Multiplicity struct {
	// Tested counts the costs with an interval.
	Tested int `json:"tested"`
	// Significant counts those whose 95% interval excludes no change.
	Significant int `json:"significant"`
	// ExpectedByChance is how many of Tested would read significant if
	// none changed: (1 − stats.Confidence) × Tested.
	ExpectedByChance float64 `json:"expected_by_chance"`
	// Primary is the cost judged at its own 95% ("" when none was
	// tested).
	Primary Cost `json:"primary,omitempty"`
	// SignificantCorrected counts the costs still significant after the
	// correction: the primary's own verdict, and the others' by Holm.
	SignificantCorrected int `json:"significant_corrected"`
}

// PrimaryCost returns the cost a comparison of the given costs is about,
// judged at its own 95% while the rest are corrected for their number:
// CPU per request for a load test, the time to ready for a start-up
// experiment, a job's CPU time for a job; "" when none is among them.
func PrimaryCost(costs []Cost) Cost {
	for _, p := range []Cost{CPUPerRequest, StartupReady, JobCPU} {
		for _, c := range costs {
			if c == p {
				return p
			}
		}
	}
	return ""
}

// test is one cost's test within a comparison: its p-value, whether its
// interval excludes no change, and where its corrected verdict goes.
type test struct {
	cost        Cost
	p           float64
	significant bool
	corrected   *bool
}

// correct sets each test's corrected verdict and returns the comparison's
// Multiplicity. The primary cost keeps its verdict; the others are
// corrected together by Holm's method (stats.Holm). A change must also
// have been significant on its own: the correction only removes verdicts.
func correct(ts []test) Multiplicity {
	alpha := 1 - stats.Confidence
	var costs []Cost
	for _, t := range ts {
		costs = append(costs, t.cost)
	}
	m := Multiplicity{Tested: len(ts), ExpectedByChance: alpha * float64(len(ts)), Primary: PrimaryCost(costs)}
	var rest []test
	var ps []float64
	for _, t := range ts {
		if t.significant {
			m.Significant++
		}
		if t.cost == m.Primary {
			*t.corrected = t.significant
			if t.significant {
				m.SignificantCorrected++
			}
			continue
		}
		rest = append(rest, t)
		ps = append(ps, t.p)
	}
	for i, holds := range stats.Holm(ps, alpha) {
		*rest[i].corrected = holds && rest[i].significant
		if *rest[i].corrected {
			m.SignificantCorrected++
		}
	}
	return m
}

// correctDeltas corrects the deltas of one variant's costs at one step
// (those with an interval and a p-value) for their number.
func correctDeltas(costs []CostResult) *Multiplicity {
	var ts []test
	for i := range costs {
		d := costs[i].Delta
		if d == nil || d.CILow == nil || d.PValue == nil {
			continue
		}
		ts = append(ts, test{cost: costs[i].Cost, p: *d.PValue, significant: d.Significant, corrected: &d.SignificantCorrected})
	}
	if len(ts) == 0 {
		return nil
	}
	m := correct(ts)
	return &m
}

// correctChanges corrects the changes of one variant's overheads between
// two runs (those with an interval) for their number.
func correctChanges(changes []CostChange) *Multiplicity {
	var ts []test
	for i := range changes {
		c := &changes[i]
		if c.CILow == nil || c.PValue == nil {
			continue
		}
		ts = append(ts, test{cost: c.Cost, p: *c.PValue, significant: c.Significant, corrected: &c.SignificantCorrected})
	}
	if len(ts) == 0 {
		return nil
	}
	m := correct(ts)
	return &m
}
