package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDownsample checks the properties a chart relies on, over random
// series (with gaps, spikes and missing values) and bucket counts: at most
// n points in time order, within the series' seconds; each point's median
// among its run's medians, its band the run's lowest first quartile to
// highest third; the band's extremes those of the whole series (a spike
// stays visible); and a series of n points or fewer unchanged.
func TestDownsample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		size := 1 + rng.IntN(5000)
		if iter%10 == 0 {
			size = 86400
		}
		s := Series{Metric: "cpu", Label: "CPU", Unit: "cores"}
		sec := float64(-rng.IntN(100))
		for range size {
			sec += float64(1 + rng.IntN(2)) // gaps where a second had no value
			med := rng.Float64()
			if rng.IntN(1000) == 0 {
				med = 1000 // a spike
			}
			low, high := med*rng.Float64(), med+rng.Float64()
			if rng.IntN(500) == 0 {
				med, low, high = math.NaN(), math.NaN(), math.NaN()
			}
			s.T = append(s.T, sec)
			s.Median, s.Low, s.High = append(s.Median, med), append(s.Low, low), append(s.High, high)
			s.Trials = append(s.Trials, 1+rng.IntN(8))
		}
		n := 1 + rng.IntN(1000)
		d := s.Downsample(n)
		if size <= n {
			if !slices.Equal(d.T, s.T) || len(d.Median) != size {
				t.Fatalf("size %d, n %d: a series that fits was changed", size, n)
			}
			continue
		}
		if len(d.T) != n || len(d.Median) != n || len(d.Low) != n || len(d.High) != n || len(d.Trials) != n {
			t.Fatalf("size %d, n %d: %d points", size, n, len(d.T))
		}
		if !slices.IsSorted(d.T) || d.T[0] < s.T[0] || d.T[n-1] > s.T[size-1] {
			t.Fatalf("size %d, n %d: times out of order or outside the series", size, n)
		}
		lowest, highest := math.Inf(1), math.Inf(-1)
		for j := range size {
			if !math.IsNaN(s.Low[j]) {
				lowest, highest = min(lowest, s.Low[j]), max(highest, s.High[j])
			}
		}
		gotLow, gotHigh := math.Inf(1), math.Inf(-1)
		for i := range n {
			from, to := i*size/n, (i+1)*size/n
			lo, hi := math.Inf(1), math.Inf(-1)
			mlo, mhi := math.Inf(1), math.Inf(-1)
			for j := from; j < to; j++ {
				if !math.IsNaN(s.Median[j]) {
					lo, hi = min(lo, s.Low[j]), max(hi, s.High[j])
					mlo, mhi = min(mlo, s.Median[j]), max(mhi, s.Median[j])
				}
			}
			if math.IsInf(lo, 1) {
				if !math.IsNaN(d.Median[i]) {
					t.Fatalf("point %d: a run of missing values got %g", i, d.Median[i])
				}
				continue
			}
			if d.Low[i] != lo || d.High[i] != hi || d.Median[i] < mlo || d.Median[i] > mhi {
				t.Fatalf("size %d, n %d, point %d: median %g band [%g, %g], want median in [%g, %g], band [%g, %g]",
					size, n, i, d.Median[i], d.Low[i], d.High[i], mlo, mhi, lo, hi)
			}
			gotLow, gotHigh = min(gotLow, d.Low[i]), max(gotHigh, d.High[i])
		}
		if gotLow != lowest || gotHigh != highest {
			t.Fatalf("size %d, n %d: band spans [%g, %g], the series [%g, %g]", size, n, gotLow, gotHigh, lowest, highest)
		}
	}
}
