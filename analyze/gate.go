package analyze

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tollperf/toll/scenario"
)

// Gate is a CI threshold: fail when a cost's change lies beyond Pct.
type Gate struct {
	// Cost is the cost the gate watches.
	Cost Cost
	// Pct is the threshold in percent: positive fails on an increase
	// beyond it, negative on a decrease beyond it.
	Pct float64
	// Text is the gate as written.
	Text string
}

// GateResult is what one gate found in a run (each variant against the
// baseline) or in a comparison of two runs. report puts its findings in
// words.
type GateResult struct {
	// Gate is the gate as written.
	Gate string
	// Failures has one finding per variant and step whose change lies
	// wholly beyond the threshold.
	Failures []GateFinding
	// Unjudged has one finding per variant and step whose change of the
	// gate's cost has no interval in percent to judge: a single round, or
	// a cost compared by difference because some round's value was 0.
	Unjudged []GateFinding
}

// GateFinding is one variant and step at which a gate failed or could
// not judge the change of its cost: Delta, against Baseline, within a
// run (CheckRun), or Change between two runs (Check).
type GateFinding struct {
	// Variant is the variant's name, Step its load step's label and
	// Label the cost's.
	Variant string
	Step    string
	Label   string
	// Baseline is the run's baseline, for a Delta.
	Baseline string
	Delta    *Delta
	Change   *CostChange
}

// Failed says whether the gate failed anywhere.
func (r GateResult) Failed() bool { return len(r.Failures) > 0 }

// ParseGate reads a gate such as "cpu_per_request > +5%" or "p99 > 10%".
// The cost may be any cost's name, or its name without the unit suffix
// (cpu_per_request), or min, mean, p50, p90, p95, p99, p999, max for latency.
func ParseGate(text string) (Gate, error) {
	name, thr, ok := strings.Cut(text, ">")
	if !ok {
		return Gate{}, fmt.Errorf("gate %q: want COST > +N%%, e.g. 'cpu_per_request > +5%%'", text)
	}
	name = strings.TrimSpace(name)
	thr = strings.TrimSpace(thr)
	if !strings.HasSuffix(thr, "%") {
		return Gate{}, fmt.Errorf("gate %q: the threshold %q must be a percentage such as +5%%", text, thr)
	}
	pct, err := strconv.ParseFloat(strings.TrimSuffix(thr, "%"), 64)
	if err != nil {
		return Gate{}, fmt.Errorf("gate %q: threshold %q is not a number", text, thr)
	}
	// A threshold of -100% or below can never be crossed by a ratio, and
	// NaN or an infinity is no threshold at all.
	if pct != pct || pct <= -100 || pct > 1e6 {
		return Gate{}, fmt.Errorf("gate %q: threshold %q must lie in (-100%%, +1000000%%]: a cost cannot fall by 100%% or more", text, thr)
	}
	c, err := costNamed(name)
	if err != nil {
		return Gate{}, fmt.Errorf("gate %q: %w", text, err)
	}
	return Gate{Cost: c, Pct: pct, Text: strings.TrimSpace(text)}, nil
}

func costNamed(name string) (Cost, error) {
	alias := map[string]Cost{"min": LatencyMin, "mean": LatencyMean, "p50": LatencyP50, "p90": LatencyP90, "p95": LatencyP95, "p99": LatencyP99, "p999": LatencyP999, "p99.9": LatencyP999, "max": LatencyMax}
	if c, ok := alias[name]; ok {
		return c, nil
	}
	if _, ok := logCostInfo(Cost(name)); ok {
		return Cost(name), nil // a log_metrics figure: log_NAME
	}
	var names []string
	for _, ci := range append(Costs(), workloadCosts()...) {
		if string(ci.Cost) == name || strings.HasPrefix(string(ci.Cost), name+"_") {
			return ci.Cost, nil
		}
		names = append(names, string(ci.Cost))
	}
	if near := nearestCost(name, names, slices.Collect(maps.Keys(alias))); near != "" {
		return "", fmt.Errorf("no cost %q (did you mean %q?)", name, near)
	}
	return "", fmt.Errorf("no cost %q (costs: %s; log_NAME for a log_metrics figure; or min, mean, p50, p90, p95, p99, p999, max)", name, strings.Join(names, ", "))
}

// nearestCost returns the name a gate most likely meant by name, a cost
// toll does not know: the closest, within a few edits, of the costs'
// names (written as gates write them, without their unit:
// cpu_per_request), their full names and the aliases; "" when none is
// close.
func nearestCost(name string, costs, aliases []string) string {
	var known []string
	for _, c := range costs {
		if i := strings.LastIndexByte(c, '_'); i > 0 {
			known = append(known, c[:i])
		}
	}
	known = append(known, costs...)
	slices.Sort(aliases)
	known = append(known, aliases...)
	return scenario.Suggest(name, known)
}

// beyond says whether the interval [lo, hi] lies wholly beyond the
// threshold: above it for a positive one, below it for a negative one.
func (g Gate) beyond(lo, hi float64) bool {
	if g.Pct >= 0 {
		return lo > g.Pct
	}
	return hi < g.Pct
}

// Check judges the change of g's cost between two runs, for every
// variant and step: it fails where the change's whole 95% interval lies
// beyond the threshold (above Pct, or below it for a negative Pct). A
// change whose interval merely reaches the threshold does not fail.
func (g Gate) Check(rc *RunComparison) GateResult {
	r := GateResult{Gate: g.Text}
	for _, st := range rc.Steps {
		for _, v := range st.Variants {
			for i, c := range v.Costs {
				f := GateFinding{Variant: v.Name, Step: st.Label(), Label: c.Label, Change: &v.Costs[i]}
				switch {
				case c.Cost != g.Cost:
				case c.CILow == nil:
					r.Unjudged = append(r.Unjudged, f)
				case g.beyond(*c.CILow, *c.CIHigh):
					r.Failures = append(r.Failures, f)
				}
			}
		}
	}
	return r
}

// CheckRun judges every variant of one run against that run's baseline,
// at every step: it fails where the variant's paired 95% interval of the
// change of g's cost lies wholly beyond the threshold, as Check does for
// two runs. The baseline itself is not judged.
func (g Gate) CheckRun(s *Summary) GateResult {
	r := GateResult{Gate: g.Text}
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			if v.Name == s.Baseline {
				continue
			}
			for _, c := range v.Costs {
				if c.Cost != g.Cost || c.Delta == nil {
					continue
				}
				d := c.Delta
				f := GateFinding{Variant: v.Name, Step: st.Label(), Label: c.Label, Baseline: s.Baseline, Delta: d}
				if d.CIUnit != "%" || d.CILow == nil || d.CIHigh == nil {
					r.Unjudged = append(r.Unjudged, f)
					continue
				}
				if g.beyond(*d.CILow, *d.CIHigh) {
					r.Failures = append(r.Failures, f)
				}
			}
		}
	}
	return r
}
