package history

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/tollperf/toll/changepoint"
	"github.com/tollperf/toll/stats"
)

// Series is one cost of one variant at one load step, over the runs of
// one scenario on machines of one fingerprint, oldest first.
type Series struct {
	Scenario string `json:"scenario"`
	Machine  string `json:"machine"`
	Step     string `json:"step"`
	Variant  string `json:"variant"`
	Cost     string `json:"cost"`
	Label    string `json:"label"`
	// Unit is "%" for a change in percent (method log-ratio), or the
	// cost's unit (method difference).
	Unit    string  `json:"unit"`
	Points  []Point `json:"points"`
	Changes []Shift `json:"changes,omitempty"`
}

// Point is one run's change in a series.
type Point struct {
	Run     int64             `json:"run"`
	Started string            `json:"started"`
	Labels  map[string]string `json:"labels,omitempty"`
	Dir     string            `json:"dir"`
	// Change, Low and High are in the series' unit; Low and High are
	// absent for a run of one round, which is shown but weighs in no
	// change point.
	Change float64  `json:"change"`
	Low    *float64 `json:"low,omitempty"`
	High   *float64 `json:"high,omitempty"`
}

// Shift is a change of level found in a series: from the run at Index
// on (an index into Points), the cost's change against the baseline moved
// from Before to After. For a change in percent, Shift is the relative
// change of the variant's cost against its baseline between the two
// levels (+3% when +7% became +10.2%), in percent; otherwise the
// difference, in the cost's unit.
type Shift struct {
	Index  int     `json:"index"`
	Run    int64   `json:"run"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Shift  float64 `json:"shift"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	// Labels are the labels that differ between the run before the change
	// and the run at it, each as [before, after].
	Labels map[string][2]string `json:"labels,omitempty"`
}

// Beyond says whether the shift's whole interval lies beyond pct: above
// it for a positive pct, below it for a negative one.
func (s Shift) Beyond(pct float64) bool {
	if pct >= 0 {
		return s.Low > pct
	}
	return s.High < pct
}

// Trends groups the valid runs' estimates into series, oldest run first,
// and finds each series' changes of level. Runs of machines with
// different fingerprints are never in one series.
func Trends(runs []*Run, o changepoint.Options) []*Series {
	byKey := map[[6]string]*Series{}
	for _, r := range runs {
		if !r.Valid {
			continue
		}
		for _, e := range r.Estimates {
			if e.Change == nil {
				continue
			}
			unit := e.Unit
			if e.Method == "log-ratio" {
				unit = "%"
			}
			k := [6]string{r.Scenario, r.Machine.Fingerprint(), e.Step, e.Variant, e.Cost, unit}
			s := byKey[k]
			if s == nil {
				s = &Series{Scenario: k[0], Machine: k[1], Step: k[2], Variant: k[3], Cost: k[4], Label: e.Label, Unit: unit}
				byKey[k] = s
			}
			s.Points = append(s.Points, Point{Run: r.ID, Started: r.Started.UTC().Format("2006-01-02 15:04"), Labels: r.Labels, Dir: r.Dir,
				Change: *e.Change, Low: e.Low, High: e.High})
		}
	}
	out := slices.Collect(maps.Values(byKey))
	slices.SortFunc(out, func(a, b *Series) int {
		return cmp.Or(cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Machine, b.Machine), cmp.Compare(a.Step, b.Step),
			cmp.Compare(a.Variant, b.Variant), cmp.Compare(a.Cost, b.Cost), cmp.Compare(a.Unit, b.Unit))
	})
	for _, s := range out {
		s.Changes = s.detect(o)
	}
	return out
}

// scale puts a point on the scale changes add on: the log of the ratio
// for a change in percent, the difference itself otherwise; se is its
// standard error from its interval, and ok false for a point without one.
func (s *Series) scale(p Point) (cp changepoint.Point, ok bool) {
	if p.Low == nil || p.High == nil || !(*p.High >= *p.Low) {
		return cp, false
	}
	if s.Unit != "%" {
		return changepoint.Point{Y: p.Change, SE: (*p.High - *p.Low) / (2 * stats.ZQuantile())}, true
	}
	if *p.Low <= -100 {
		return cp, false
	}
	y, se := LogRatio(p.Change, *p.Low, *p.High)
	return changepoint.Point{Y: y, SE: se}, true
}

// LogRatio puts a change in percent with its 95% interval [low, high] on
// the scale on which changes add: the log of the ratio, and its standard
// error from the interval. low must be above -100%.
func LogRatio(change, low, high float64) (y, se float64) {
	lr := func(pct float64) float64 { return math.Log1p(pct / 100) }
	return lr(change), (lr(high) - lr(low)) / (2 * stats.ZQuantile())
}

// unscale puts a level back in the series' unit.
func (s *Series) unscale(y float64) float64 {
	if s.Unit != "%" {
		return y
	}
	return math.Expm1(y) * 100
}

// weighed returns the points that have an interval on the additive scale,
// and each one's index in Points.
func (s *Series) weighed() ([]changepoint.Point, []int) {
	var pts []changepoint.Point
	var at []int
	for i, p := range s.Points {
		if cp, ok := s.scale(p); ok {
			pts = append(pts, cp)
			at = append(at, i)
		}
	}
	return pts, at
}

// detect finds the series' changes of level.
func (s *Series) detect(o changepoint.Options) []Shift {
	pts, at := s.weighed()
	var out []Shift
	for _, c := range changepoint.Detect(pts, o) {
		out = append(out, s.shift(at[c.Index], c.Before.Mean, c.After.Mean, c.Shift, c.ShiftSE))
	}
	return out
}

// shift describes a change of level at Points[i] from level before to
// after (on the additive scale), d ± z·se apart (stats.ZQuantile).
func (s *Series) shift(i int, before, after, d, se float64) Shift {
	sh := Shift{Index: i, Run: s.Points[i].Run, Before: s.unscale(before), After: s.unscale(after),
		Shift: s.unscale(d), Low: s.unscale(d - stats.ZQuantile()*se), High: s.unscale(d + stats.ZQuantile()*se)}
	if i > 0 {
		a, b := s.Points[i-1].Labels, s.Points[i].Labels
		for _, k := range slices.Sorted(maps.Keys(a)) {
			if a[k] != b[k] {
				sh.Labels = setPair(sh.Labels, k, a[k], b[k])
			}
		}
		for _, k := range slices.Sorted(maps.Keys(b)) {
			if _, ok := a[k]; !ok {
				sh.Labels = setPair(sh.Labels, k, "", b[k])
			}
		}
	}
	return sh
}

func setPair(m map[string][2]string, k, a, b string) map[string][2]string {
	if m == nil {
		m = map[string][2]string{}
	}
	m[k] = [2]string{a, b}
	return m
}

// Newest says whether the series' newest run starts a change: its change
// against the level since the series' last change of level (or its
// start), with an interval that carries both and the spread between runs.
// ok is false when the newest run has no interval, or fewer than two runs
// with one precede it since the last change.
func (s *Series) Newest() (sh Shift, ok bool) {
	pts, at := s.weighed()
	if len(at) == 0 || at[len(at)-1] != len(s.Points)-1 {
		return sh, false
	}
	since := 0
	for _, c := range s.Changes {
		if c.Index < len(s.Points)-1 {
			since = slices.Index(at, c.Index)
		}
	}
	d, se, before, ok := changepoint.Newest(pts, since)
	if !ok {
		return sh, false
	}
	return s.shift(len(s.Points)-1, before.Mean, before.Mean+d, d, se), true
}
