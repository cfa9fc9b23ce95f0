package analyze

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tollperf/toll/costmodel"
)

// curveCosts are the costs whose added part a cost curve models as a
// line across load (a fixed part plus a part per request): what a fleet's
// bill adds up.
func curveCosts() []Cost { return []Cost{CPUCores, RSS, Memory} }

// curveLatencies are the latencies a cost curve reads between steps, not
// summed over instances.
func curveLatencies() []Cost { return []Cost{LatencyP50, LatencyP90, LatencyP99} }

// CurvePoint is one load step's added cost: the variant's mean less the
// baseline's, and its 95% interval, at Rate requests a second.
type CurvePoint struct {
	Rate  float64 `json:"rate"`
	Added float64 `json:"added"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// Bounds is an estimate and its 95% interval.
type Bounds struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// CostCurve is what one variant adds to one cost across a run's open-model
// load steps (idle steps included, at rate 0). For a cost in Summed, the
// added cost is fitted as Fixed plus PerRequest per request a second, with
// a check that the steps lie on that line (Fits; when they do not, the
// steps are the answer, as they are); a latency is read between steps.
type CostCurve struct {
	Variant string       `json:"variant"`
	Cost    Cost         `json:"cost"`
	Label   string       `json:"label"`
	Unit    string       `json:"unit"`
	Points  []CurvePoint `json:"points"`
	// Summed is set for a cost that adds up over instances and is fitted
	// as a line; a latency is not.
	Summed bool `json:"summed"`
	// Fixed is the added cost at no load, PerRequest the added cost per
	// request a second (for CPU in cores: CPU-seconds per request).
	Fixed      *Bounds `json:"fixed,omitempty"`
	PerRequest *Bounds `json:"per_request,omitempty"`
	// PerThousand is PerRequest per 1,000 requests a second (Istio's
	// form: "0.35 vCPU per 1,000 requests per second"); for CPU in cores
	// it is also the milliseconds of CPU per request.
	PerThousand *Bounds `json:"per_1000_rps,omitempty"`
	// Line is the fitted line with its 95% confidence band at rates
	// spread over the steps' range, for a chart; absent when it does not
	// fit.
	Line []CurvePoint `json:"line,omitempty"`
	// Fits says whether the steps lie on the line within their errors (at
	// 1%); FitP is that test's p-value, on DF degrees of freedom (steps
	// less two; 0: two steps, which any line fits).
	Fits bool    `json:"fits"`
	FitP float64 `json:"fit_p"`
	DF   int     `json:"df"`
	// model is the fitted line, for predictions.
	model *costmodel.Model
}

// CostCurves returns each variant's cost curves over s's load steps: for
// every cost of curveCosts and curveLatencies that has an interval at two
// rates or more. A run of one step, or of the closed model, has none.
func CostCurves(s *Summary) []CostCurve {
	var out []CostCurve
	for _, v := range s.Variants {
		if v == s.Baseline {
			continue
		}
		for _, c := range append(curveCosts(), curveLatencies()...) {
			if cc, ok := costCurve(s, v, c); ok {
				out = append(out, cc)
			}
		}
	}
	return out
}

// costCurve is variant v's curve of cost c, if two rates have it.
func costCurve(s *Summary, v string, c Cost) (CostCurve, bool) {
	info := Info(c)
	cc := CostCurve{Variant: v, Cost: c, Label: info.Label, Unit: info.Unit, Summed: slices.Contains(curveCosts(), c)}
	var steps []costmodel.Step
	for _, st := range s.Steps {
		// An idle step's memory is a service that has not served yet:
		// an agent's buffers and caches fill with the first requests, a
		// step no line through the loaded steps crosses. Its CPU is the
		// fixed part itself.
		if st.Users > 0 || st.Workload != "" || st.CPULimit > 0 || (st.Idle && c != CPUCores) {
			continue
		}
		for _, vr := range st.Variants {
			if vr.Name != v {
				continue
			}
			for _, cr := range vr.Costs {
				d := cr.Delta
				if cr.Cost != c || d == nil || d.AbsCILow == nil || d.AbsCIHigh == nil || !(*d.AbsCIHigh > *d.AbsCILow) {
					continue
				}
				p := CurvePoint{Rate: st.Rate, Added: d.Abs, Low: *d.AbsCILow, High: *d.AbsCIHigh}
				cc.Points = append(cc.Points, p)
				steps = append(steps, p.step())
			}
		}
	}
	slices.SortFunc(cc.Points, func(a, b CurvePoint) int { return cmpFloat(a.Rate, b.Rate) })
	if len(cc.Points) < 2 || cc.Points[0].Rate == cc.Points[len(cc.Points)-1].Rate {
		return cc, false
	}
	if !cc.Summed {
		cc.Fits = true
		return cc, true
	}
	m, err := costmodel.Fit(steps)
	if err != nil {
		return cc, false
	}
	f, p := m.FixedInterval(), m.PerRequestInterval()
	cc.Fixed, cc.PerRequest = &Bounds{f.Value, f.Low, f.High}, &Bounds{p.Value, p.Low, p.High}
	cc.PerThousand = &Bounds{p.Value * 1000, p.Low * 1000, p.High * 1000}
	cc.Fits, cc.FitP, cc.DF, cc.model = m.Fits(), m.FitP, m.DF, m
	if cc.Fits {
		const n = 20
		for i := 0; i <= n; i++ {
			r := m.MinRate + (m.MaxRate-m.MinRate)*float64(i)/n
			at := m.At(r)
			cc.Line = append(cc.Line, CurvePoint{Rate: r, Added: at.Value, Low: at.Low, High: at.High})
		}
	}
	return cc, true
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// normal95 is the normal quantile of a two-sided 95% interval.
const normal95 = 1.959963984540054

// FleetLoad is the load a bill is asked for: instances each at its rate
// (requests a second).
type FleetLoad struct {
	Rates []float64
}

// Total is the load's requests a second over every instance.
func (l FleetLoad) Total() float64 {
	var t float64
	for _, r := range l.Rates {
		t += r
	}
	return t
}

// BillLine is what one variant adds to one cost at a fleet's load.
type BillLine struct {
	Variant string `json:"variant"`
	Cost    Cost   `json:"cost"`
	Label   string `json:"label"`
	Unit    string `json:"unit"`
	// Added is, for a summed cost, the total over the fleet's instances
	// with a prediction interval; for a latency, the added latency at the
	// instances' rate (read between the two steps around it).
	Added Bounds `json:"added"`
	// Summed is set for a total over instances.
	Summed bool `json:"summed"`
	// Refused says why there is no figure, the error that refused it: a
	// rate outside the steps, a line that does not fit, instances at
	// different rates for a latency.
	Refused string `json:"refused,omitempty"`
}

// ErrNoCurve is returned by Bill for a run without a cost curve: one load
// step, or the closed model.
var ErrNoCurve = errors.New("no cost curve: the run needs open-model load steps at two rates at least")

// Bill is what each variant adds at load, cost by cost, from curves.
func Bill(curves []CostCurve, load FleetLoad) ([]BillLine, error) {
	if len(curves) == 0 {
		return nil, ErrNoCurve
	}
	if len(load.Rates) == 0 {
		return nil, errors.New("no instance")
	}
	var out []BillLine
	for _, cc := range curves {
		bl := BillLine{Variant: cc.Variant, Cost: cc.Cost, Label: cc.Label, Unit: cc.Unit, Summed: cc.Summed}
		var err error
		switch {
		case cc.Summed && !cc.Fits:
			err = fmt.Errorf("the steps do not lie on a line (p = %.2g): read the steps themselves", cc.FitP)
		case cc.Summed:
			var p costmodel.Interval
			if p, err = cc.line().Predict(costmodel.Load{Rates: load.Rates}); err == nil {
				bl.Added = Bounds{p.Value, p.Low, p.High}
			}
		default:
			bl.Added, err = cc.between(load.Rates)
		}
		if err != nil {
			// The error says why there is no figure.
			bl.Refused, bl.Added = err.Error(), Bounds{}
		}
		out = append(out, bl)
	}
	return out, nil
}

// step is p as a step of the line, its standard error from its 95%
// interval.
func (p CurvePoint) step() costmodel.Step {
	return costmodel.Step{Rate: p.Rate, Added: p.Added, SE: (p.High - p.Low) / (2 * normal95)}
}

// line is the curve's fitted line, fitted again from its points when the
// curve was read back from summary.json.
func (cc CostCurve) line() *costmodel.Model {
	if cc.model != nil {
		return cc.model
	}
	var steps []costmodel.Step
	for _, p := range cc.Points {
		steps = append(steps, p.step())
	}
	m, _ := costmodel.Fit(steps) // it fitted when the curve was made
	return m
}

// between reads a latency's added value at the instances' rate, linearly
// between the two steps around it (the interval's bounds likewise).
func (cc CostCurve) between(rates []float64) (Bounds, error) {
	r := rates[0]
	for _, x := range rates[1:] {
		if x != r {
			return Bounds{}, errors.New("instances at different rates: a latency is read at one rate")
		}
	}
	pts := cc.Points
	if r < pts[0].Rate || r > pts[len(pts)-1].Rate {
		return Bounds{}, fmt.Errorf("%g req/s: %w (%g to %g req/s): measure a step there", r, costmodel.ErrOutside, pts[0].Rate, pts[len(pts)-1].Rate)
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if r > b.Rate {
			continue
		}
		f := 0.0
		if b.Rate > a.Rate {
			f = (r - a.Rate) / (b.Rate - a.Rate)
		}
		lerp := func(x, y float64) float64 { return x + f*(y-x) }
		return Bounds{lerp(a.Added, b.Added), lerp(a.Low, b.Low), lerp(a.High, b.High)}, nil
	}
	return Bounds{}, errors.New("no step")
}

// Price is what a variant's added cores and memory (RSS) cost an hour at
// a fleet's load, with the prediction intervals' bounds.
type Price struct {
	Variant string `json:"variant"`
	// Priced are the costs priced (those with a figure).
	Priced  []Cost `json:"priced"`
	PerHour Bounds `json:"per_hour"`
	// PerMonth is PerHour over a 30-day month.
	PerMonth Bounds `json:"per_month"`
}

// Prices prices each variant's added cores and RSS in lines at
// perCoreHour a core and perGiBHour a GiB, each an hour; a variant none
// of whose priced costs has a figure has none.
func Prices(lines []BillLine, perCoreHour, perGiBHour float64) []Price {
	var out []Price
	for _, l := range lines {
		var unit float64
		switch l.Cost {
		case CPUCores:
			unit = perCoreHour
		case RSS:
			unit = perGiBHour / 1024 // RSS is in MiB
		}
		if unit == 0 || l.Refused != "" {
			continue
		}
		if len(out) == 0 || out[len(out)-1].Variant != l.Variant {
			out = append(out, Price{Variant: l.Variant})
		}
		p := &out[len(out)-1]
		p.Priced = append(p.Priced, l.Cost)
		p.PerHour.Value += l.Added.Value * unit
		p.PerHour.Low += l.Added.Low * unit
		p.PerHour.High += l.Added.High * unit
		p.PerMonth = Bounds{p.PerHour.Value * 24 * 30, p.PerHour.Low * 24 * 30, p.PerHour.High * 24 * 30}
	}
	return out
}
