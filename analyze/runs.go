package analyze

import (
	"fmt"
	"math"
	"sort"

	"github.com/tollperf/toll/stats"
)

// RunComparison compares two runs of the same scenario (two releases of an
// agent, before and after a change). What is compared is each variant's
// overhead: its per-round log ratio to the baseline of its own run. Those
// are unpaired between runs (their rounds ran at different times), so the
// difference of their means gets a Welch t interval. Comparing overheads,
// not raw values, cancels what changed between the runs for baseline and
// variant alike: the machine's speed drifts by more than the overheads
// being measured.
type RunComparison struct {
	A, B     string       `json:"-"`
	Baseline string       `json:"baseline"`
	Steps    []StepChange `json:"steps"`
	// ProfilesIn says which runs have differential profiles (profile:
	// true): with both, each variant profiled in both at a step has its
	// VariantChange's Profile.
	ProfilesIn ProfileSides `json:"profiles_in,omitempty"`
	// Differences are the ways the two runs did not run alike (machine,
	// services: MachineDifferences, ServiceDifferences) that the user
	// chose to compare anyway; a report says so before anything else.
	Differences []RunDifference `json:"differences,omitempty"`
}

// StepChange is one load step's comparison.
type StepChange struct {
	Rate  float64 `json:"target_rate"`
	Users int     `json:"target_users,omitempty"`
	// Idle is set for a step of rate 0 (no load).
	Idle bool `json:"idle,omitempty"`
	// CPULimit and Workload are those of a start-up or job experiment's
	// step; CPULimit also a load test's matrix step's.
	CPULimit float64         `json:"cpu_limit,omitempty"`
	Workload string          `json:"workload,omitempty"`
	Variants []VariantChange `json:"variants"`
}

// Label names the step as Step.Label does.
func (st StepChange) Label() string {
	return Step{Rate: st.Rate, Users: st.Users, Idle: st.Idle, CPULimit: st.CPULimit, Workload: st.Workload}.Label()
}

// VariantChange is one variant's overheads in both runs and their change.
type VariantChange struct {
	Name  string       `json:"name"`
	Costs []CostChange `json:"costs"`
	// Multiplicity is how many changes were tested at once, how many
	// would read significant by chance, and how many stay significant
	// once corrected for their number; nil when none had an interval.
	Multiplicity *Multiplicity `json:"multiplicity,omitempty"`
	// Profile is where the variant's added CPU per request moved between
	// the runs; nil unless both profiled it at this step.
	Profile *ProfileChange `json:"profile,omitempty"`
}

// CostChange is one cost of one variant: its overhead in run A and run B
// (as in each run's own report) and the change of B's overhead against
// A's, in percent with a 95% Welch interval.
type CostChange struct {
	Cost        Cost     `json:"cost"`
	Label       string   `json:"label"`
	A           *Delta   `json:"a"`
	B           *Delta   `json:"b"`
	Pct         float64  `json:"pct"`
	CILow       *float64 `json:"ci_low,omitempty"`
	CIHigh      *float64 `json:"ci_high,omitempty"`
	Significant bool     `json:"significant"`
	// PValue is the Welch test's two-sided p-value of no change; absent
	// without an interval.
	PValue *float64 `json:"p_value,omitempty"`
	// SignificantCorrected is Significant once the variant's changes are
	// corrected for their number (VariantChange's Multiplicity).
	SignificantCorrected bool `json:"significant_corrected"`
	// Direction is where the interval lies against no change, and
	// HalfWidth half its width in percent (absent without an interval).
	Direction Direction `json:"direction,omitempty"`
	HalfWidth *float64  `json:"half_width,omitempty"`
	// Verdict is the change in words, which report fills in from Reading
	// when it writes the comparison; analyze leaves it empty.
	Verdict string `json:"verdict"`
	// Reading is how the change reads, for a report to put in words: an
	// estimate in percent, and without an interval why.
	Reading Reading `json:"-"`
}

// CompareRuns compares the overheads of every variant run in both a and b,
// and, for each one both profiled at a step (Summary.Profiles), where its
// added CPU per request moved (compareProfiles).
func CompareRuns(a, b *Summary) (*RunComparison, error) {
	if a.Baseline != b.Baseline {
		return nil, fmt.Errorf("the runs have different baselines (%q and %q)", a.Baseline, b.Baseline)
	}
	rc := &RunComparison{Baseline: a.Baseline, ProfilesIn: profileSides(a, b)}
	for _, sa := range a.Steps {
		sb, ok := stepAt(b, sa)
		if !ok {
			continue
		}
		st := StepChange{Rate: sa.Rate, Users: sa.Users, Idle: sa.Idle, CPULimit: sa.CPULimit, Workload: sa.Workload}
		for _, va := range sa.Variants {
			vb, ok := variantOf(sb, va.Name)
			if !ok || va.Name == a.Baseline {
				continue
			}
			vc := VariantChange{Name: va.Name}
			for _, ca := range va.Costs {
				cb, ok := find(vb.Costs, ca.Cost)
				if !ok || ca.Delta == nil || cb.Delta == nil || ca.Delta.Pct == nil || cb.Delta.Pct == nil {
					continue
				}
				xa, ok1 := logRatios(a, sa, va.Name, ca.Cost)
				xb, ok2 := logRatios(b, sb, vb.Name, ca.Cost)
				if !ok1 || !ok2 {
					continue
				}
				// Each run's overhead carries the effects fixed for that
				// run, of its variant and its baseline alike.
				fa, fb := math.Log1p(ca.Delta.FixedPct/100), math.Log1p(cb.Delta.FixedPct/100)
				fixed := fa*fa + fb*fb
				vc.Costs = append(vc.Costs, costChange(ca, cb, xa, xb, fixed))
			}
			vc.Multiplicity = correctChanges(vc.Costs)
			if pa, ok := profileDiffOf(a, sa.Index, va.Name); ok {
				if pb, ok := profileDiffOf(b, sb.Index, va.Name); ok {
					vc.Profile = compareProfiles(pa, pb)
				}
			}
			st.Variants = append(st.Variants, vc)
		}
		rc.Steps = append(rc.Steps, st)
	}
	if len(rc.Steps) == 0 {
		return nil, fmt.Errorf("the runs share no load step")
	}
	return rc, nil
}

func costChange(ca, cb CostResult, xa, xb []float64, fixed float64) CostChange {
	cc := CostChange{Cost: ca.Cost, Label: ca.Label, A: ca.Delta, B: cb.Delta}
	iv := stats.Welch(xb, xa, fixed)
	pct := func(x float64) float64 { return 100 * (math.Exp(x) - 1) }
	cc.Pct = pct(iv.Mean)
	cc.Reading = Reading{Code: ReadNoInterval, Estimate: cc.Pct, Ratio: true, Unit: "%", Digits: 1}
	if !iv.HasCI {
		cc.Reading.Why = WhyFewRounds
		return cc
	}
	n := min(len(xa), len(xb))
	if few := fewStarts(ca.Cost, n); few != "" {
		// As within a run (Compare): what is measured once per start
		// needs three starts in each run for an interval.
		cc.Reading = cc.Reading.withWhy(few, n)
		return cc
	}
	lo, hi := pct(iv.Low), pct(iv.High)
	cc.CILow, cc.CIHigh = &lo, &hi
	p := iv.PValue
	cc.PValue = &p
	cc.Significant = iv.Excludes
	cc.Direction, cc.HalfWidth = boundsDirection(cc.CILow, cc.CIHigh), halfWidth(cc.CILow, cc.CIHigh)
	cc.Reading.Code, cc.Reading.HalfWidth = ReadSame, *cc.HalfWidth
	if cc.Significant {
		cc.Reading.Code = ReadChange
	}
	return cc
}

// logRatios returns the per-round log ratios variant/baseline of cost c.
func logRatios(s *Summary, st Step, variant string, c Cost) ([]float64, bool) {
	// Pair by round through the trials, as the run's own report did.
	rounds := map[int][2]float64{}
	for _, t := range s.Trials {
		if t.Step != st.Index || t.Excluded {
			continue // the run's own comparison left it out too
		}
		val, ok := t.Costs[c]
		if !ok {
			continue
		}
		r := rounds[t.Round]
		switch t.Variant {
		case s.Baseline:
			r[0] = val
		case variant:
			r[1] = val
		default:
			continue
		}
		rounds[t.Round] = r
	}
	var keys []int
	for k := range rounds {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var out []float64
	for _, k := range keys {
		r := rounds[k]
		if r[0] > 0 && r[1] > 0 {
			out = append(out, math.Log(r[1]/r[0]))
		}
	}
	return out, len(out) > 0
}

func stepAt(s *Summary, want Step) (Step, bool) {
	for _, st := range s.Steps {
		if st.Rate == want.Rate && st.Users == want.Users && st.CPULimit == want.CPULimit && st.Workload == want.Workload {
			return st, true
		}
	}
	return Step{}, false
}

func variantOf(st Step, name string) (VariantResult, bool) {
	for _, v := range st.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return VariantResult{}, false
}

func find(cs []CostResult, c Cost) (CostResult, bool) {
	for _, x := range cs {
		if x.Cost == c {
			return x, true
		}
	}
	return CostResult{}, false
}
