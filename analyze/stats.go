package analyze

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level of every interval toll reports.
const Confidence = 0.95

// Interval is a mean with its two-sided 95% Student t confidence interval.
type Interval struct {
	N        int
	Mean     float64
	Low      float64
	High     float64
	StdDev   float64
	PValue   float64 // two-sided, H0: mean = 0
	HasCI    bool    // false when N < 2
	Excludes bool    // the interval excludes 0
}

// TInterval returns the mean of xs with its t confidence interval:
// mean ± t(0.975, n-1) · s/√n.
func TInterval(xs []float64) Interval {
	n := len(xs)
	iv := Interval{N: n}
	if n == 0 {
		return iv
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	iv.Mean = sum / float64(n)
	iv.Low, iv.High = iv.Mean, iv.Mean
	if n < 2 {
		return iv
	}
	var ss float64
	for _, x := range xs {
		ss += (x - iv.Mean) * (x - iv.Mean)
	}
	iv.StdDev = math.Sqrt(ss / float64(n-1))
	se := iv.StdDev / math.Sqrt(float64(n))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
	q := t.Quantile(1 - (1-Confidence)/2)
	iv.Low, iv.High = iv.Mean-q*se, iv.Mean+q*se
	iv.HasCI = true
	if se == 0 {
		iv.PValue = 1
		if iv.Mean != 0 {
			iv.PValue = 0
		}
	} else {
		iv.PValue = 2 * t.Survival(math.Abs(iv.Mean)/se)
	}
	iv.Excludes = iv.Low > 0 || iv.High < 0
	return iv
}

// Widened returns iv with var added to the variance of its mean: a source
// of error that the values' own spread cannot show, such as an effect that
// stays the same in every round of a run. The t quantile keeps iv's
// degrees of freedom.
func (iv Interval) Widened(v float64) Interval {
	if !iv.HasCI || !(v > 0) {
		return iv
	}
	n := float64(iv.N)
	se := math.Sqrt(iv.StdDev*iv.StdDev/n + v)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}
	q := t.Quantile(1 - (1-Confidence)/2)
	iv.Low, iv.High = iv.Mean-q*se, iv.Mean+q*se
	iv.PValue = 2 * t.Survival(math.Abs(iv.Mean)/se)
	iv.Excludes = iv.Low > 0 || iv.High < 0
	return iv
}

// BootstrapInterval returns the percentile bootstrap 95% interval of the
// mean of xs, from b resamples drawn with a fixed seed (so reports repeat).
func BootstrapInterval(xs []float64, b int) (low, high float64) {
	n := len(xs)
	if n == 0 {
		return 0, 0
	}
	rng := rand.New(rand.NewPCG(1, 2))
	means := make([]float64, b)
	for i := range means {
		var s float64
		for j := 0; j < n; j++ {
			s += xs[rng.IntN(n)]
		}
		means[i] = s / float64(n)
	}
	sort.Float64s(means)
	lo := int(math.Floor(float64(b) * (1 - Confidence) / 2))
	hi := int(math.Ceil(float64(b)*(1-(1-Confidence)/2))) - 1
	return means[lo], means[min(hi, b-1)]
}
