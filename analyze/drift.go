package analyze

import (
	"math"
	"sort"

	"github.com/tollperf/toll/stats"
)

// Drift is a trend in a variant's per-round values of a cost at one load
// step: a service still warming up (a JIT compiling for minutes, caches
// filling) or a machine that changed speed during the run. Every interval
// then measures a moving target.
type Drift struct {
	Variant string `json:"variant"`
	Step    int    `json:"step"`
	Cost    Cost   `json:"cost"`
	Rounds  int    `json:"rounds"`
	// ChangePct is the change over the rounds, in percent: of the fitted
	// trend from the first round to the last, or first to last value
	// when there are too few rounds to fit one.
	ChangePct float64 `json:"change_pct"`
	// PValue is the two-sided p-value of the trend's slope; absent when
	// there were too few rounds to fit one.
	PValue *float64 `json:"p_value,omitempty"`
	// RatioChangePct is the change over the rounds of the variant's
	// per-round ratio to the baseline's trial of the same round (for the
	// baseline, the largest of every variant's ratio to it), as ChangePct
	// is of the cost; absent when fewer than 3 rounds pair.
	RatioChangePct *float64 `json:"ratio_change_pct,omitempty"`
	// RatioTrend says whether that ratio drifted too. When it did not, and
	// moved less than 5% (ratioSteady), the sides moved alike (the machine
	// changed speed, or every side warmed up together), and a comparison
	// paired within each round holds.
	RatioTrend bool `json:"ratio_trend,omitempty"`

	baseline bool        // the drift is the baseline's own
	by       warmupOwner // who chose the warm-up
}

// ratioDrift looks for a trend in the per-round ratio of x's cost c to
// base's (the baseline's trials of the same rounds): its change over the
// rounds, whether it is a trend, and whether at least 3 rounds paired.
func ratioDrift(x, base map[int]*TrialCosts, c Cost) (change float64, trend, ok bool) {
	ratios := map[int]float64{}
	for r, tc := range x {
		b := base[r]
		if b == nil {
			continue
		}
		if v, w := tc.Costs[c], b.Costs[c]; v > 0 && w > 0 {
			ratios[r] = v / w
		}
	}
	if len(ratios) < 3 {
		return 0, false, false
	}
	change, _, trend = findDrift(ratios)
	return change, trend, true
}

// Drift thresholds: a trend is reported when the fit over 5 or more rounds
// has a slope significant at 1% and changes the cost by at least 10% over
// the run, or when 3 or 4 rounds move one way only by at least 20% (as a
// JVM's CPU per request does over the first rounds while its JIT warms up:
// docs/method.md, "A JVM still compiling").
const (
	driftMinFitRounds = 5
	driftPValue       = 0.01
	driftFitChange    = 10
	driftFewChange    = 20
	// ratioSteady is the most a drifting variant's ratio to the baseline
	// may change over the run, without a trend, for the warning to say
	// that its comparison holds.
	ratioSteady = 5
)

// findDrift looks for a trend in the values of one cost by round.
func findDrift(byRound map[int]float64) (change float64, p *float64, ok bool) {
	var rounds []int
	for r, v := range byRound {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, nil, false
		}
		rounds = append(rounds, r)
	}
	n := len(rounds)
	if n < 3 {
		return 0, nil, false
	}
	sort.Ints(rounds)
	xs, ys := make([]float64, n), make([]float64, n)
	for i, r := range rounds {
		xs[i], ys[i] = float64(r), math.Log(byRound[r])
	}
	if n < driftMinFitRounds {
		up, down := true, true
		for i := 1; i < n; i++ {
			up = up && ys[i] > ys[i-1]
			down = down && ys[i] < ys[i-1]
		}
		change = 100 * (math.Exp(ys[n-1]-ys[0]) - 1)
		return change, nil, (up || down) && math.Abs(change) >= driftFewChange
	}
	beta, pv := stats.Slope(xs, ys)
	change = 100 * (math.Exp(beta*(xs[n-1]-xs[0])) - 1)
	return change, &pv, pv < driftPValue && math.Abs(change) >= driftFitChange
}

// warning is what a drift means: a comparison whose per-round ratio did
// not drift holds, since each round pairs the sides at the same moments
// (WarnDriftPaired); one whose ratio drifted too measures a moving target
// (WarnDrift).
func (d Drift) warning(stepLabel string) Warning {
	rose, label := !(d.ChangePct < 0), Info(d.Cost).Label
	if d.RatioChangePct != nil && !d.RatioTrend && math.Abs(*d.RatioChangePct) < ratioSteady {
		return warn(WarnDriftPaired, d.Variant, label, rose, math.Abs(d.ChangePct), d.Rounds, stepLabel, d.baseline, *d.RatioChangePct)
	}
	return warn(WarnDrift, d.Variant, label, rose, math.Abs(d.ChangePct), d.Rounds, stepLabel, d.by.arg())
}
