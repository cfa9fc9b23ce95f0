package analyze

import (
	"math"
	"slices"
)

// Downsample returns s in at most n points, for a chart that cannot show
// more (a point per pixel or two): s itself when it has no more than n.
// Otherwise its seconds are cut, in order, into n runs of nearly equal
// length, and each run becomes one point: Median the median of its
// seconds' medians, Low the lowest of their first quartiles and High the
// highest of their third, so that the band still spans every value the
// run held (a one-second spike shows as the band's top), Trials the
// fewest trials of any of its seconds, and T the middle of its seconds
// (a value standing for [T, T+1) is drawn at T+0.5: the run's middle).
// Values that are not finite are skipped; a run with none gets NaN. The
// per-second series itself (series.csv, summary.json) keeps every second.
func (s Series) Downsample(n int) Series {
	if n <= 0 || len(s.T) <= n {
		return s
	}
	out := Series{Metric: s.Metric, Label: s.Label, Unit: s.Unit,
		T: make([]float64, n), Median: make([]float64, n), Low: make([]float64, n), High: make([]float64, n), Trials: make([]int, n)}
	var meds []float64
	for i := range n {
		from, to := i*len(s.T)/n, (i+1)*len(s.T)/n
		out.T[i] = (s.T[from] + s.T[to-1]) / 2
		low, high := math.Inf(1), math.Inf(-1)
		meds = meds[:0]
		trials := math.MaxInt
		for j := from; j < to; j++ {
			if v := at(s.Median, j); finite(v) {
				meds = append(meds, v)
			}
			if v := at(s.Low, j); finite(v) {
				low = min(low, v)
			}
			if v := at(s.High, j); finite(v) {
				high = max(high, v)
			}
			if j < len(s.Trials) {
				trials = min(trials, s.Trials[j])
			}
		}
		out.Median[i], out.Low[i], out.High[i] = math.NaN(), math.NaN(), math.NaN()
		if len(meds) > 0 {
			slices.Sort(meds)
			out.Median[i] = quantile(meds, 0.5)
		}
		if finite(low) {
			out.Low[i] = low
		}
		if finite(high) {
			out.High[i] = high
		}
		if trials == math.MaxInt {
			trials = 0
		}
		out.Trials[i] = trials
	}
	return out
}

// at returns xs[i], or NaN past its end.
func at(xs []float64, i int) float64 {
	if i < len(xs) {
		return xs[i]
	}
	return math.NaN()
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
