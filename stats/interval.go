package stats

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

// Mean returns the arithmetic mean of xs, 0 when xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Variance returns the sample variance of xs, Σ(x − mean)² / (n − 1).
func Variance(xs []float64) float64 {
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(xs)-1)
}

// TQuantile returns the two-sided Confidence quantile of Student's t with
// df degrees of freedom: t(0.975, df).
func TQuantile(df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Confidence)/2)
}

// ZQuantile returns the two-sided Confidence quantile of the standard
// normal distribution: z(0.975) ≈ 1.96.
func ZQuantile() float64 {
	return distuv.UnitNormal.Quantile(1 - (1-Confidence)/2)
}

// Detectable returns the smallest true change that an interval of
// half-width half excludes from 0 with probability power (for power
// above one half): half · (z(1−α/2) + z(power)) / z(1−α/2). An interval's
// own half-width is detected half the time.
func Detectable(half, power float64) float64 {
	z := ZQuantile()
	return half * (z + distuv.UnitNormal.Quantile(power)) / z
}

// tSurvival2 returns the two-sided p-value of the statistic x under
// Student's t with df degrees of freedom.
func tSurvival2(x, df float64) float64 {
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(x))
}

// TInterval returns the mean of xs with its t confidence interval:
// mean ± t(0.975, n-1) · s/√n.
func TInterval(xs []float64) Interval {
	n := len(xs)
	iv := Interval{N: n}
	if n == 0 {
		return iv
	}
	iv.Mean = Mean(xs)
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
	q := TQuantile(float64(n - 1))
	iv.Low, iv.High = iv.Mean-q*se, iv.Mean+q*se
	iv.HasCI = true
	if se == 0 {
		iv.PValue = 1
		if iv.Mean != 0 {
			iv.PValue = 0
		}
	} else {
		iv.PValue = tSurvival2(iv.Mean/se, float64(n-1))
	}
	iv.Excludes = iv.Low > 0 || iv.High < 0
	return iv
}

// Widened returns iv with v added to the variance of its mean: a source
// of error that the values' own spread cannot show, such as an effect that
// stays the same in every round of a run. The t quantile keeps iv's
// degrees of freedom.
func (iv Interval) Widened(v float64) Interval {
	if !iv.HasCI || !(v > 0) {
		return iv
	}
	n := float64(iv.N)
	se := math.Sqrt(iv.StdDev*iv.StdDev/n + v)
	q := TQuantile(n - 1)
	iv.Low, iv.High = iv.Mean-q*se, iv.Mean+q*se
	iv.PValue = tSurvival2(iv.Mean/se, n-1)
	iv.Excludes = iv.Low > 0 || iv.High < 0
	return iv
}

// AtLeast returns iv with the variance of its mean raised to v where its
// values' spread reads less: a floor known from elsewhere, such as the
// spread that the rounds under each of a few starts give the starts'
// means, which two values' spread can undercut by any amount. The t
// quantile keeps iv's degrees of freedom.
func (iv Interval) AtLeast(v float64) Interval {
	n := float64(iv.N)
	if !iv.HasCI || !(v > iv.StdDev*iv.StdDev/n) {
		return iv
	}
	return iv.Widened(v - iv.StdDev*iv.StdDev/n)
}

// Welch returns mean(xs) − mean(ys) with its two-sided 95% Welch t
// interval: the samples are independent and may have different variances;
// the degrees of freedom follow Welch–Satterthwaite. fixed is a variance
// added to the difference's that the samples' spread cannot show (effects
// that stay the same through each sample); the degrees of freedom stay the
// samples'. StdDev holds the difference's standard error.
func Welch(xs, ys []float64, fixed float64) Interval {
	nx, ny := float64(len(xs)), float64(len(ys))
	iv := Interval{N: len(xs) + len(ys), Mean: Mean(xs) - Mean(ys)}
	iv.Low, iv.High = iv.Mean, iv.Mean
	if nx < 2 || ny < 2 {
		return iv
	}
	vx, vy := Variance(xs)/nx, Variance(ys)/ny
	se := math.Sqrt(vx + vy + max(fixed, 0))
	iv.HasCI = true
	if se == 0 {
		iv.Excludes = iv.Mean != 0
		iv.PValue = 1
		if iv.Excludes {
			iv.PValue = 0
		}
		return iv
	}
	df := nx + ny - 2
	if vx+vy > 0 {
		df = WelchDF(vx, vy, nx-1, ny-1)
	}
	q := TQuantile(df)
	iv.Low, iv.High = iv.Mean-q*se, iv.Mean+q*se
	iv.StdDev = se
	iv.PValue = tSurvival2(iv.Mean/se, df)
	iv.Excludes = iv.Low > 0 || iv.High < 0
	return iv
}

// WelchDF returns the Welch–Satterthwaite degrees of freedom of a sum of
// two squared standard errors va and vb whose own degrees of freedom are
// dfa and dfb: (va + vb)² / (va²/dfa + vb²/dfb).
func WelchDF(va, vb, dfa, dfb float64) float64 {
	return (va + vb) * (va + vb) / (va*va/dfa + vb*vb/dfb)
}

// DiffOfIntervals returns the 95% interval of b − a from two independent
// t intervals given only as a mean and bounds, over na and nb values:
// each one's standard error is read back from its half-width, and the two
// are combined as Welch's. With both standard errors 0 the interval is the
// difference alone.
func DiffOfIntervals(aMean, aLow, aHigh float64, na int, bMean, bLow, bHigh float64, nb int) (low, high float64) {
	se := func(lo, hi float64, n int) float64 {
		if n < 2 {
			return 0
		}
		return (hi - lo) / 2 / TQuantile(float64(n-1))
	}
	sa, sb := se(aLow, aHigh, na), se(bLow, bHigh, nb)
	va, vb := sa*sa, sb*sb
	change := bMean - aMean
	if va+vb == 0 {
		return change, change
	}
	half := TQuantile(WelchDF(va, vb, float64(na-1), float64(nb-1))) * math.Sqrt(va+vb)
	return change - half, change + half
}

// Bootstrap returns the percentile bootstrap 95% interval of the mean of
// xs, from b resamples drawn with a fixed seed (so reports repeat).
func Bootstrap(xs []float64, b int) (low, high float64) {
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
