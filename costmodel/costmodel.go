// Package costmodel fits what an agent adds to a cost across load as a
// fixed part plus a part per request, from load steps measured with their
// intervals, checks that the line fits, and predicts the cost at a load
// between the steps with a prediction interval.
//
// An agent has costs that grow with requests (a span per request and its
// export) and costs that do not (exporter threads, metric collection, a
// profiler's sampling): a per-request figure taken at one rate does not
// carry to another, a line through several does.
//
// The package is pure: no I/O, and nothing of toll's.
package costmodel

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tollperf/toll/stats"
)

// Step is one load step's added cost: at Rate requests a second, the
// variant's cost less the baseline's, Added, and its standard error.
type Step struct {
	Rate, Added, SE float64
}

// FitAlpha is the significance at which a line is said not to fit: the
// steps scatter about it more than their errors allow with probability
// below it.
const FitAlpha = 0.01

// Model is a fitted line: Added(rate) = Fixed + PerRequest·rate.
type Model struct {
	// Fixed is the added cost at no load, PerRequest the added cost per
	// request a second (for a cost in cores, CPU-seconds per request).
	Fixed, PerRequest float64
	// FixedSE and PerRequestSE are their standard errors, and Cov their
	// covariance, each scaled up by Scale.
	FixedSE, PerRequestSE, Cov float64
	// ChiSquare is the weighted residuals' sum of squares on DF degrees
	// of freedom (steps less two), and FitP the chance of a scatter that
	// large were the line right; 1 for two steps, which any line fits.
	ChiSquare float64
	DF        int
	FitP      float64
	// Scale multiplies the errors when the steps scatter more than their
	// own errors say (never below 1): Birge's ratio, sqrt(χ²/DF).
	Scale float64
	// MinRate and MaxRate bound the rates measured: predictions outside
	// them are refused.
	MinRate, MaxRate float64
	// Steps are the steps fitted.
	Steps []Step
}

// Fits says whether the line fits the steps: their scatter about it is
// within what their errors allow at FitAlpha. Two steps cannot tell.
func (m *Model) Fits() bool { return m.DF == 0 || m.FitP >= FitAlpha }

// ErrFewSteps is returned for fewer than two steps at different rates.
var ErrFewSteps = errors.New("a line needs steps at two rates at least")

// Fit fits the line to steps by weighted least squares, each step
// weighted by the inverse of its variance.
func Fit(steps []Step) (*Model, error) {
	var sw, swx, swy, swxx, swxy float64
	m := &Model{MinRate: math.Inf(1), MaxRate: math.Inf(-1), Steps: steps}
	for _, s := range steps {
		if !(s.SE > 0) || math.IsNaN(s.Added) || math.IsInf(s.Added, 0) || s.Rate < 0 {
			return nil, fmt.Errorf("step at %g req/s: added %g ± %g: want a finite cost with a positive error", s.Rate, s.Added, s.SE)
		}
		w := 1 / (s.SE * s.SE)
		sw += w
		swx += w * s.Rate
		swy += w * s.Added
		swxx += w * s.Rate * s.Rate
		swxy += w * s.Rate * s.Added
		m.MinRate, m.MaxRate = min(m.MinRate, s.Rate), max(m.MaxRate, s.Rate)
	}
	det := sw*swxx - swx*swx
	if len(steps) < 2 || !(m.MaxRate > m.MinRate) || det <= 0 {
		return nil, ErrFewSteps
	}
	m.PerRequest = (sw*swxy - swx*swy) / det
	m.Fixed = (swy - m.PerRequest*swx) / sw
	for _, s := range steps {
		r := (s.Added - m.Fixed - m.PerRequest*s.Rate) / s.SE
		m.ChiSquare += r * r
	}
	m.DF = len(steps) - 2
	m.Scale, m.FitP = 1, 1
	if m.DF > 0 {
		m.FitP = distuv.ChiSquared{K: float64(m.DF)}.Survival(m.ChiSquare)
		m.Scale = math.Sqrt(max(1, m.ChiSquare/float64(m.DF)))
	}
	s2 := m.Scale * m.Scale
	m.FixedSE = math.Sqrt(s2 * swxx / det)
	m.PerRequestSE = math.Sqrt(s2 * sw / det)
	m.Cov = -s2 * swx / det
	return m, nil
}

// Interval is an estimate and its 95% bounds.
type Interval struct {
	Value, Low, High float64
}

// ErrOutside is returned for a prediction at a rate outside the steps'.
var ErrOutside = errors.New("outside the rates measured")

// Load is a fleet's load: instances each at its rate (requests a second).
// A single rate for n instances is n copies of it.
type Load struct {
	Rates []float64
}

// Predict is the added cost, in total over load's instances, with a
// prediction interval: the line's own error at those rates, plus what one
// measurement scatters about the line there (the larger error of the two
// steps around each rate, scaled as the line's), taken as the same for
// every instance (what makes one run read high, the machine, the build,
// makes its instances read high together), so that a run at a load
// between the steps falls within it. A rate outside the steps' range is
// refused.
func (m *Model) Predict(l Load) (Interval, error) {
	if len(l.Rates) == 0 {
		return Interval{}, errors.New("no instance")
	}
	var n, sr, near float64
	for _, r := range l.Rates {
		if r < m.MinRate-1e-9 || r > m.MaxRate+1e-9 {
			return Interval{}, fmt.Errorf("%g req/s: %w (%g to %g req/s): measure a step there", r, ErrOutside, m.MinRate, m.MaxRate)
		}
		n++
		sr += r
		near = max(near, m.stepSE(r))
	}
	v := n*m.Fixed + m.PerRequest*sr
	line := n*n*m.FixedSE*m.FixedSE + sr*sr*m.PerRequestSE*m.PerRequestSE + 2*n*sr*m.Cov
	scatter := n * m.Scale * near
	se := math.Sqrt(max(0, line) + scatter*scatter)
	return around(v, se), nil
}

// stepSE is the larger standard error of the steps nearest rate on either
// side (the step's own at a measured rate): what a measurement there
// scatters by.
func (m *Model) stepSE(rate float64) float64 {
	below, above := -1.0, -1.0
	var seBelow, seAbove float64
	for _, s := range m.Steps {
		if s.Rate <= rate && (below < 0 || s.Rate > below || (s.Rate == below && s.SE > seBelow)) {
			below, seBelow = s.Rate, s.SE
		}
		if s.Rate >= rate && (above < 0 || s.Rate < above || (s.Rate == above && s.SE > seAbove)) {
			above, seAbove = s.Rate, s.SE
		}
	}
	return max(seBelow, seAbove)
}

// At is the line at rate with its 95% confidence interval: the line's
// own error, without a new measurement's scatter (Predict has that).
func (m *Model) At(rate float64) Interval {
	v := m.Fixed + m.PerRequest*rate
	se := math.Sqrt(max(0, m.FixedSE*m.FixedSE+rate*rate*m.PerRequestSE*m.PerRequestSE+2*rate*m.Cov))
	return around(v, se)
}

// around returns v with its 95% interval for a normal error of standard
// deviation se.
func around(v, se float64) Interval {
	z := stats.ZQuantile()
	return Interval{Value: v, Low: v - z*se, High: v + z*se}
}

// FixedInterval and PerRequestInterval are the line's two parts with
// their 95% intervals.
func (m *Model) FixedInterval() Interval {
	return around(m.Fixed, m.FixedSE)
}

// PerRequestInterval is the part per request with its 95% interval.
func (m *Model) PerRequestInterval() Interval {
	return around(m.PerRequest, m.PerRequestSE)
}
