// Package bisect finds, in an ordered list of versions (an agent's
// releases, an application's commits), the first whose cost differs from
// the last good one's beyond a stated size: a binary search whose every
// step judges measured estimates with their errors, measures again when
// it cannot yet tell, and confirms the culprit with fresh measurements
// before naming it.
//
// The package is pure: what a measurement is (a run of toll in precision
// mode) is the caller's Measure.
package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Estimate is one measurement of a version: its cost on a scale on which
// changes add (the log of its ratio to a baseline) and its standard error.
type Estimate struct {
	Y, SE float64
}

// pool is the inverse-variance mean of es.
func pool(es []Estimate) Estimate {
	var sw, swy float64
	for _, e := range es {
		w := 1 / math.Max(e.SE*e.SE, 1e-12)
		sw += w
		swy += w * e.Y
	}
	return Estimate{Y: swy / sw, SE: math.Sqrt(1 / sw)}
}

// Measure measures version i once more.
type Measure func(ctx context.Context, i int) (Estimate, error)

// Options set the search.
type Options struct {
	// SizePct is the change, in percent of the cost, that counts: a
	// version differs when its whole 95% interval against the other lies
	// beyond ±SizePct, and is alike when it lies within.
	SizePct float64
	// MaxMeasures is how many times one version may be measured before a
	// comparison that still cannot tell is given up; default 3.
	MaxMeasures int
}

// Verdict is what one comparison of two versions found.
type Verdict int

// The verdicts of a comparison.
const (
	// Alike: the change lies within ±SizePct.
	Alike Verdict = iota
	// Differs: the change lies beyond ±SizePct.
	Differs
	// Unclear: the interval reaches across ±SizePct even after the
	// most measurements allowed.
	Unclear
)

// Step is one comparison the search made. A version between a good and
// a bad one is judged Alike (at the good one's level) or Differs (at the
// bad one's); the first and last versions, and the culprit and the last
// good one, are judged against the size.
type Step struct {
	// Good is the index of the version compared against, Candidate the
	// one judged.
	Good, Candidate int
	// Change is Candidate's cost against Good's in percent, Low and High
	// its 95% interval.
	Change, Low, High float64
	Verdict           Verdict
	// Confirm is set for the comparison that confirmed the culprit.
	Confirm bool
	// Bad is the known bad version when Candidate was judged by which
	// level it is nearer to (Good's or Bad's); 0 for a comparison
	// against the size.
	Bad int
}

// Result is what the search found.
type Result struct {
	// Culprit is the first version found to differ from LastGood (its
	// predecessor), -1 when the last version is alike the first.
	Culprit, LastGood int
	// Confirmed is set when fresh measurements of both said so again.
	Confirmed bool
	// Change, Low and High are the culprit's change against LastGood
	// in percent over every measurement of both.
	Change, Low, High float64
	Steps             []Step
	// Measures counts the measurements made of each version.
	Measures map[int]int
}

// ErrUnclear is returned when a comparison could not tell within the
// measurements allowed: two versions differ by about SizePct, or a
// version lies about halfway between two levels.
var ErrUnclear = errors.New("could not tell whether the versions differ beyond the size")

// searcher holds the measurements made so far.
type searcher struct {
	measure Measure
	o       Options
	got     map[int][]Estimate
	res     *Result
}

// Search bisects versions 0 … n-1. It checks first that the last
// version differs from the first beyond the size (if it is alike, there is
// nothing to find). Then each version halfway between the last known good
// and the first known bad is judged by which of their two levels it is
// nearer to, measuring again (the least precise of the three) until that
// is clear at 95%; the first bad version found is the culprit, and its
// difference from the last good one is confirmed beyond the size with
// fresh measurements of both.
func Search(ctx context.Context, n int, measure Measure, o Options) (*Result, error) {
	if n < 2 {
		return nil, fmt.Errorf("bisect: %d versions, want at least 2", n)
	}
	if !(o.SizePct > 0) {
		return nil, fmt.Errorf("bisect: a size of %v%%, want a positive one", o.SizePct)
	}
	if o.MaxMeasures < 1 {
		o.MaxMeasures = 3
	}
	s := &searcher{measure: measure, o: o, got: map[int][]Estimate{}, res: &Result{Culprit: -1, LastGood: 0, Measures: map[int]int{}}}
	v, err := s.compare(ctx, 0, n-1, false)
	if err != nil {
		return s.res, err
	}
	if v == Alike {
		return s.res, nil // nothing to find
	}
	good, bad := 0, n-1
	for bad-good > 1 {
		mid := good + (bad-good)/2
		isBad, err := s.classify(ctx, good, mid, bad)
		if err != nil {
			return s.res, err
		}
		if isBad {
			bad = mid
		} else {
			good = mid
		}
	}
	s.res.Culprit, s.res.LastGood = bad, good
	// Confirm with fresh measurements of both, pooled with the earlier.
	for _, i := range []int{good, bad} {
		if err := s.once(ctx, i); err != nil {
			return s.res, err
		}
	}
	v, err = s.compare(ctx, good, bad, true)
	s.res.Confirmed = err == nil && v == Differs
	st := s.res.Steps[len(s.res.Steps)-1]
	s.res.Change, s.res.Low, s.res.High = st.Change, st.Low, st.High
	return s.res, err
}

// classify says whether version m is at bad's level rather than good's:
// its distance from the point halfway between them, in the direction
// from good to bad, over its standard error, beyond z95 either way. Until
// then it measures again whichever of the three is least precise.
func (s *searcher) classify(ctx context.Context, g, m, b int) (bool, error) {
	if len(s.got[m]) == 0 {
		if err := s.once(ctx, m); err != nil {
			return false, err
		}
	}
	for {
		eg, em, eb := pool(s.got[g]), pool(s.got[m]), pool(s.got[b])
		dir := math.Copysign(1, eb.Y-eg.Y)
		z := dir * (em.Y - (eg.Y+eb.Y)/2) / math.Sqrt(em.SE*em.SE+(eg.SE*eg.SE+eb.SE*eb.SE)/4)
		st := s.judge(g, m)
		st.Bad, st.Verdict = b, Unclear
		switch {
		case z > z95:
			st.Verdict = Differs
		case z < -z95:
			st.Verdict = Alike
		}
		if st.Verdict != Unclear {
			s.res.Steps = append(s.res.Steps, st)
			return st.Verdict == Differs, nil
		}
		next := -1
		for _, i := range []int{m, g, b} {
			if len(s.got[i]) < s.o.MaxMeasures && (next < 0 || pool(s.got[i]).SE > pool(s.got[next]).SE) {
				next = i
			}
		}
		if next < 0 {
			s.res.Steps = append(s.res.Steps, st)
			return false, fmt.Errorf("version %d between %d and %d: as near one level as the other after %d measurements each: %w",
				m, g, b, s.o.MaxMeasures, ErrUnclear)
		}
		if err := s.once(ctx, next); err != nil {
			return false, err
		}
	}
}

// once measures version i once more.
func (s *searcher) once(ctx context.Context, i int) error {
	e, err := s.measure(ctx, i)
	if err != nil {
		return fmt.Errorf("bisect: measure version %d: %w", i, err)
	}
	s.got[i] = append(s.got[i], e)
	s.res.Measures[i]++
	return nil
}

// compare judges version c against version g, measuring either (the
// less precise first) until the verdict is clear or both have been
// measured MaxMeasures times.
func (s *searcher) compare(ctx context.Context, g, c int, confirm bool) (Verdict, error) {
	for _, i := range []int{g, c} {
		if len(s.got[i]) == 0 {
			if err := s.once(ctx, i); err != nil {
				return Unclear, err
			}
		}
	}
	for {
		st := s.judge(g, c)
		st.Confirm = confirm
		if st.Verdict != Unclear {
			s.res.Steps = append(s.res.Steps, st)
			return st.Verdict, nil
		}
		next := g
		if pool(s.got[c]).SE > pool(s.got[g]).SE {
			next = c
		}
		if len(s.got[next]) >= s.o.MaxMeasures {
			next = g + c - next
		}
		if len(s.got[next]) >= s.o.MaxMeasures {
			s.res.Steps = append(s.res.Steps, st)
			return Unclear, fmt.Errorf("version %d against %d: %+.1f%% [%+.1f%%, %+.1f%%] after %d measurements each: %w",
				c, g, st.Change, st.Low, st.High, s.o.MaxMeasures, ErrUnclear)
		}
		if err := s.once(ctx, next); err != nil {
			return Unclear, err
		}
	}
}

// judge compares c's pooled estimate with g's.
func (s *searcher) judge(g, c int) Step {
	a, b := pool(s.got[g]), pool(s.got[c])
	d, se := b.Y-a.Y, math.Hypot(a.SE, b.SE)
	pct := func(y float64) float64 { return math.Expm1(y) * 100 }
	st := Step{Good: g, Candidate: c, Change: pct(d), Low: pct(d - z95*se), High: pct(d + z95*se)}
	size := s.o.SizePct
	lo, hi := math.Log1p(-size/100), math.Log1p(size/100)
	switch {
	case d-z95*se > hi || d+z95*se < lo:
		st.Verdict = Differs
	case d-z95*se >= lo && d+z95*se <= hi:
		st.Verdict = Alike
	default:
		st.Verdict = Unclear
	}
	return st
}
