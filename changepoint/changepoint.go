// Package changepoint finds where a series of estimates, each with its own
// standard error, changed level: an agent's overhead measured run after
// run, each run's change against its baseline with the interval the run
// gave it.
//
// A stretch of the series is judged by the difference of its mean and
// the rest's, each weighted by its points' errors, over its error scaled
// by the spread left within the two groups (a weighted t statistic); a
// stretch that reaches an end of the series is a step, one inside it a
// level that came and went (two changes, which a search for one split
// alone does not see). The largest statistic over all stretches is tested
// against the same over random orders of the same points (a permutation
// test: no assumption about its distribution, so runs that disagree more
// than their intervals say raise the bar rather than read as a change),
// and the search goes on in each piece a change found leaves. A series too
// short for that test ever to reach the significance asked (under nine
// points at 2%: a step between 4 points and 3 is one of only 35 orders of
// them, and 2 of those are as extreme) is judged instead by Student's t
// with n-2 degrees of freedom, the p-value multiplied by the number of
// stretches searched (Bonferroni), so that a step far beyond the runs'
// spread is not lost for want of runs. A change's
// levels and shift are then given as random-effects means: each point
// weighted by its error and by what the runs spread beyond their errors
// (DerSimonian and Laird's estimator, from both sides about their own
// levels), so that the shift's interval carries that spread.
//
// The package is pure: no I/O, and nothing of toll's.
package changepoint

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/combin"
	"gonum.org/v1/gonum/stat/distuv"
)

// Point is one run's estimate on a scale on which changes add (a
// log-ratio or a difference) and its standard error.
type Point struct {
	Y, SE float64
}

// Estimate is a segment's random-effects mean.
type Estimate struct {
	// Mean is the weighted mean, SE its standard error.
	Mean, SE float64
	// Tau is the spread between points beyond their own errors.
	Tau float64
	// N is the number of points.
	N int
}

// Change is a change of level found in a series.
type Change struct {
	// Index is the first point of the new level.
	Index int
	// Before and After are the levels of the segments either side, as
	// bounded by the changes found around this one.
	Before, After Estimate
	// Shift is After's mean less Before's, ShiftSE its standard error.
	Shift, ShiftSE float64
}

// Options set the test. The zero value asks for the defaults.
type Options struct {
	// Alpha is the significance each change must reach; default 0.02,
	// which on histories of 15 real A/A runs read no change in 40 of 40
	// (history's TestRealHistories).
	Alpha float64
	// MinSize is the fewest points a segment may hold; default 3.
	MinSize int
	// Permutations is the number of random orders the statistic is
	// compared with; default 999.
	Permutations int
	// Seed makes the random orders reproducible.
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 {
		o.Alpha = 0.02
	}
	if o.MinSize < 1 {
		o.MinSize = 3
	}
	if o.Permutations < 1 {
		o.Permutations = 999
	}
	return o
}

// Pool is the random-effects mean of pts: each weighted by the inverse of
// its variance plus the between-point variance, estimated by DerSimonian
// and Laird's method of moments.
func Pool(pts []Point) Estimate {
	q, c, df := moments(pts)
	return pooled(pts, tau2(q, c, df))
}

// moments returns Cochran's Q of pts about their fixed-effect mean, the
// scaling term C = Σw - Σw²/Σw, and the degrees of freedom.
func moments(pts []Point) (q, c float64, df int) {
	var sw, sw2, swy float64
	for _, p := range pts {
		w := weight(p.SE, 0)
		sw += w
		sw2 += w * w
		swy += w * p.Y
	}
	if sw == 0 {
		return 0, 0, 0
	}
	m := swy / sw
	for _, p := range pts {
		d := p.Y - m
		q += weight(p.SE, 0) * d * d
	}
	return q, sw - sw2/sw, len(pts) - 1
}

// tau2 is DerSimonian and Laird's between-point variance.
func tau2(q, c float64, df int) float64 {
	if c <= 0 || q <= float64(df) {
		return 0
	}
	return (q - float64(df)) / c
}

// weight is the inverse of a point's variance plus t2; a point without an
// error counts as a precise one.
func weight(se, t2 float64) float64 {
	v := se*se + t2
	if v <= 0 {
		v = 1e-12
	}
	return 1 / v
}

// pooled is the mean of pts weighted with between-point variance t2.
func pooled(pts []Point, t2 float64) Estimate {
	var sw, swy float64
	for _, p := range pts {
		w := weight(p.SE, t2)
		sw += w
		swy += w * p.Y
	}
	if sw == 0 {
		return Estimate{Mean: math.NaN(), SE: math.NaN(), N: len(pts)}
	}
	return Estimate{Mean: swy / sw, SE: math.Sqrt(1 / sw), Tau: math.Sqrt(t2), N: len(pts)}
}

// sums are a group of points' weighted sums (weights the inverse of each
// point's variance): Σw, Σwy, Σwy².
type sums struct{ w, wy, wy2 float64 }

func (s sums) minus(o sums) sums { return sums{s.w - o.w, s.wy - o.wy, s.wy2 - o.wy2} }

// mean is the group's weighted mean and q Cochran's Q about it.
func (s sums) mean() float64 { return s.wy / s.w }
func (s sums) q() float64    { return max(0, s.wy2-s.wy*s.wy/s.w) }

// prefix returns the sums of pts[:i] for every i.
func prefix(pts []Point) []sums {
	out := make([]sums, len(pts)+1)
	for i, p := range pts {
		w := weight(p.SE, 0)
		out[i+1] = sums{out[i].w + w, out[i].wy + w*p.Y, out[i].wy2 + w*p.Y*p.Y}
	}
	return out
}

// contrast is the difference of the means of the points inside and
// outside a stretch, each weighted by its points' errors, over its
// standard error scaled up by how much more the points spread about their
// own group's mean than their errors say (Birge's ratio, never below 1):
// a weighted t statistic, the one stretches are searched and tested by.
// The stretch that explains the series' structure leaves little spread
// within the groups and so stands out among random orders of the same
// points, whose groups mix levels.
func contrast(in, out sums, n int) float64 {
	if in.w == 0 || out.w == 0 {
		return 0
	}
	se := math.Sqrt(1/in.w + 1/out.w)
	if df := n - 2; df > 0 {
		se *= math.Sqrt(max(1, (in.q()+out.q())/float64(df)))
	}
	return (in.mean() - out.mean()) / se
}

// best is the stretch pts[i:j] whose level differs most from the rest's:
// a step (i = 0 or j = len(pts)) or a level that came and went. Each piece
// it leaves holds at least min points; j is 0 when none can be made. m is
// the number of stretches it searched.
func best(pts []Point, min int) (i, j int, z float64, m int) {
	n := len(pts)
	ps := prefix(pts)
	for a := 0; a <= n-min; a++ {
		for b := a + min; b <= n; b++ {
			if !stretch(a, b, n, min) {
				continue
			}
			m++
			in := ps[b].minus(ps[a])
			if zi := contrast(in, ps[n].minus(in), n); math.Abs(zi) > math.Abs(z) || j == 0 {
				i, j, z = a, b, zi
			}
		}
	}
	return i, j, z, m
}

// stretch says whether points [a, b) of n may be judged against the rest:
// every piece it leaves holds at least min points, and it is not all of
// them.
func stretch(a, b, n, min int) bool {
	switch {
	case b-a < min, a == 0 && b == n:
		return false
	case a > 0 && a < min, b < n && n-b < min:
		return false
	}
	return n-(b-a) >= min
}

// permutationFloor is the least p-value the permutation test can give a
// stretch of k of n points: the share of orders of them in which those k
// points again form a stretch it searches, as extreme as the observed.
func permutationFloor(n, k, min int) float64 {
	places := 0
	for a := 0; a+k <= n; a++ {
		if stretch(a, a+k, n, min) {
			places++
		}
	}
	return float64(places) / math.Exp(combin.LogGeneralizedBinomial(float64(n), float64(k)))
}

// studentP is the two-sided p-value of the best of m stretches' statistic
// z over n points under Student's t with n-2 degrees of freedom, times m.
func studentP(z float64, n, m int) float64 {
	if n < 3 {
		return 1
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}
	return math.Min(1, float64(m)*2*t.Survival(math.Abs(z)))
}

// Detect returns the changes of level in pts, in order of Index.
func Detect(pts []Point, o Options) []Change {
	o = o.withDefaults()
	rng := rand.New(rand.NewPCG(o.Seed, 0x746f6c6c))
	var idx []int
	var segment func(a, b int)
	segment = func(a, b int) {
		seg := pts[a:b]
		i, j, z, m := best(seg, o.MinSize)
		if j == 0 || z == 0 {
			return
		}
		var p float64
		if permutationFloor(len(seg), j-i, o.MinSize) >= o.Alpha {
			p = studentP(z, len(seg), m)
		} else {
			p = permutationP(seg, math.Abs(z), o, rng)
		}
		if p >= o.Alpha {
			return
		}
		cuts := []int{a}
		for _, k := range []int{a + i, a + j} {
			if k > a && k < b {
				idx = append(idx, k)
				cuts = append(cuts, k)
			}
		}
		cuts = append(cuts, b)
		for c := 1; c < len(cuts); c++ {
			segment(cuts[c-1], cuts[c])
		}
	}
	segment(0, len(pts))
	sort.Ints(idx)
	out := make([]Change, len(idx))
	for c, k := range idx {
		a, b := 0, len(pts)
		if c > 0 {
			a = idx[c-1]
		}
		if c+1 < len(idx) {
			b = idx[c+1]
		}
		before, after := levels(pts[a:k], pts[k:b])
		out[c] = Change{Index: k, Before: before, After: after, Shift: after.Mean - before.Mean,
			ShiftSE: math.Hypot(before.SE, after.SE)}
	}
	return out
}

// levels are the random-effects means of two adjacent segments, with one
// between-point variance estimated from both about their own means.
func levels(left, right []Point) (before, after Estimate) {
	ql, cl, dl := moments(left)
	qr, cr, dr := moments(right)
	t2 := tau2(ql+qr, cl+cr, dl+dr)
	return pooled(left, t2), pooled(right, t2)
}

// permutationP is the share of random orders of pts whose best stretch is
// at least as far from the rest as obs (with the observed order counted
// once).
func permutationP(pts []Point, obs float64, o Options, rng *rand.Rand) float64 {
	perm := append([]Point(nil), pts...)
	hits := 1
	for range o.Permutations {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, _, z, _ := best(perm, o.MinSize); math.Abs(z) >= obs {
			hits++
		}
	}
	return float64(hits) / float64(o.Permutations+1)
}

// Newest compares the last point of pts with the level of the points
// from since up to it: the shift, its standard error, and the level
// before. It is what a CI run asks of a history: does the run just
// recorded start a change? since is the index of the last change found
// (0 for none); fewer than two points before the newest give no answer
// (ok false).
func Newest(pts []Point, since int) (shift, se float64, before Estimate, ok bool) {
	n := len(pts)
	if since < 0 || n-1-since < 2 {
		return 0, 0, Estimate{}, false
	}
	before = Pool(pts[since : n-1])
	last := pts[n-1]
	t2 := before.Tau * before.Tau
	se = math.Sqrt(before.SE*before.SE + last.SE*last.SE + t2)
	return last.Y - before.Mean, se, before, true
}
