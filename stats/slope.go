package stats

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// Slope fits y = α + β·x by least squares and returns β with the two-sided
// p-value of its t test against β = 0 (n − 2 degrees of freedom): 0 when
// the points lie exactly on a sloped line, 1 on a flat one. It needs three
// points or more.
func Slope(xs, ys []float64) (beta, p float64) {
	alpha, beta := stat.LinearRegression(xs, ys, nil, false)
	var sse, sxx float64
	mx := stat.Mean(xs, nil)
	for i := range xs {
		e := ys[i] - (alpha + beta*xs[i])
		sse += e * e
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	n := len(xs)
	se := math.Sqrt(sse / float64(n-2) / sxx)
	switch {
	case se > 0:
		p = tSurvival2(beta/se, float64(n-2))
	case beta == 0:
		p = 1
	}
	return beta, p
}
