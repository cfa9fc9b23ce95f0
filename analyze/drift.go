package analyze

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
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
}

// Drift thresholds: a trend is reported when the fit over 5 or more rounds
// has a slope significant at 1% and changes the cost by at least 10% over
// the run, or when 3 or 4 rounds move one way only by at least 20% (the
// JIT's warm-up on this project's VM: 5.16, 3.83, 2.35 ms per request
// over a first load step's three rounds).
const (
	driftMinFitRounds = 5
	driftPValue       = 0.01
	driftFitChange    = 10
	driftFewChange    = 20
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
	alpha, beta := stat.LinearRegression(xs, ys, nil, false)
	var sse, sxx float64
	mx := stat.Mean(xs, nil)
	for i := range xs {
		e := ys[i] - (alpha + beta*xs[i])
		sse += e * e
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	se := math.Sqrt(sse / float64(n-2) / sxx)
	pv := 0.0
	if se > 0 {
		pv = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Survival(math.Abs(beta)/se)
	} else if beta == 0 {
		pv = 1
	}
	change = 100 * (math.Exp(beta*(xs[n-1]-xs[0])) - 1)
	return change, &pv, pv < driftPValue && math.Abs(change) >= driftFitChange
}

// message says what a drift means and what to do about it.
func (d Drift) message(stepLabel string) string {
	dir := "rose"
	if d.ChangePct < 0 {
		dir = "fell"
	}
	return fmt.Sprintf("%s's %s %s %.0f%% over its %d rounds at %s: it was still warming up (a JIT compiling, caches filling) or the machine drifted, so its comparison measures a moving target; warm each variant up once after it starts (load.variant_warmup) or every trial longer (load.warmup), restart less often, or leave the first rounds out",
		d.Variant, Info(d.Cost).Label, dir, math.Abs(d.ChangePct), d.Rounds, stepLabel)
}
