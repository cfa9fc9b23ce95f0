package analyze

import (
	"github.com/tollperf/toll/probe/runtime"
	"github.com/tollperf/toll/probe/runtimes"
	"github.com/tollperf/toll/record"
)

// runtimeCostInfos returns the cost table's rows of every runtime toll
// reads, from their metrics, in their order.
func runtimeCostInfos() []CostInfo {
	var out []CostInfo
	for _, r := range runtimes.All() {
		for _, m := range r.Metrics() {
			unit, _, digits := m.Shown()
			out = append(out, CostInfo{Cost: Cost(m.Cost), Label: m.Label, Unit: unit, Digits: digits, Additive: m.Kind == runtime.Counter})
		}
	}
	return out
}

// runtimeMetric returns the runtime metric that cost c is, if it is one.
func runtimeMetric(c Cost) (runtime.Metric, bool) {
	m, _, ok := runtimes.All().Metric(string(c))
	return m, ok
}

// RuntimeMetric returns the runtime metric that cost c is, if it is one:
// what a report needs to name and scale it (its OpenMetrics family).
func RuntimeMetric(c Cost) (runtime.Metric, bool) { return runtimeMetric(c) }

// runtimeCosts adds, for each runtime the service's samples read, its
// figures over w by their metrics' kinds: a gauge's mean, a counter's
// rise from the window's first reading to its last per second, and a
// figure set at start from the first reading. Metrics toll computes by
// a rule of their own (Own) are left to it.
func runtimeCosts(s record.ServiceSeries, w Window, out map[Cost]float64) {
	for _, r := range runtimes.All() {
		var pts []map[string]float64
		var ts []float64
		for i := range s.Points {
			p := &s.Points[i]
			if rs := p.Runtime(r.Name()); rs != nil && p.T >= w.From-1e-9 && p.T <= w.To+1e-9 {
				pts = append(pts, rs.Values)
				ts = append(ts, p.T)
			}
		}
		if len(pts) == 0 {
			continue
		}
		for _, m := range r.Metrics() {
			if m.Own {
				continue
			}
			if v, ok := metricOver(m, pts, ts); ok {
				out[Cost(m.Cost)] = v
			}
		}
	}
}

// metricOver is metric m's figure over readings pts at times ts (at least
// one), in its table unit, and whether it has one.
func metricOver(m runtime.Metric, pts []map[string]float64, ts []float64) (float64, bool) {
	_, scale, _ := m.Shown()
	first, last := pts[0][m.Name], pts[len(pts)-1][m.Name]
	switch m.Kind {
	case runtime.Gauge:
		var sum float64
		for _, p := range pts {
			sum += p[m.Name]
		}
		if m.Optional && sum == 0 {
			return 0, false
		}
		return sum / float64(len(pts)) * scale, true
	case runtime.Counter:
		span := ts[len(ts)-1] - ts[0]
		if len(pts) < 2 || span <= 0 || m.Optional && last == 0 {
			return 0, false
		}
		return scale * (last - first) / span, true
	case runtime.AtStart:
		return scale * first, first > 0
	}
	return 0, false
}
