package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// precisionLines says, one line per load step, how a run in precision mode
// ended: "reached ±3% after 14 rounds over 3 starts, 11 min", or "budget
// spent: otel at ±4.2%; about 2 more starts (≈ 8 min) would reach ±3%".
// Nothing for a run with a fixed number of rounds.
func precisionLines(s *analyze.Summary) []string {
	p := s.Manifest.Precision
	if p == nil {
		return nil
	}
	var out []string
	for _, st := range p.Steps {
		line := precisionLine(st, p.Targets)
		if len(s.Steps) > 1 {
			for _, x := range s.Steps {
				if x.Index == st.Step {
					line = x.Label() + ": " + line
				}
			}
		}
		out = append(out, line)
	}
	return out
}

// precisionLine is one step's line; targets are the run's, by cost, which
// a step that reached them all names when there are several.
func precisionLine(st record.PrecisionStep, targets map[string]float64) string {
	over := ""
	if st.Starts > 1 {
		over = fmt.Sprintf(" over %d starts", st.Starts)
	}
	took := minutes(st.ElapsedS)
	label := st.Cost
	if info := analyze.Info(analyze.Cost(st.Cost)); info.Label != "" {
		label = info.Label
	}
	switch st.Stop {
	case "reached":
		return fmt.Sprintf("reached %s after %d rounds%s, %s", targetsReached(st.TargetPct, targets), st.Rounds, over, took)
	case "budget":
		var more []string
		if st.MoreStarts > 0 {
			more = append(more, plural(st.MoreStarts, "more start"))
		}
		if st.MoreRounds > 0 {
			more = append(more, plural(st.MoreRounds, "more round"))
		}
		at := "no interval yet"
		if st.HalfPct > 0 {
			at = fmt.Sprintf("at ±%.1f%%", st.HalfPct)
		}
		line := fmt.Sprintf("budget spent after %d rounds%s, %s: %s %s %s", st.Rounds, over, took, st.Variant, label, at)
		switch {
		case st.MoreRounds < 0:
			line += fmt.Sprintf("; ±%g%% is out of reach at this spread (more than %d times the budget)", st.TargetPct, analyze.OutOfReach)
		case len(more) > 0:
			line += fmt.Sprintf("; about %s (≈ %s) would reach ±%g%%", strings.Join(more, " and "), minutes(st.MoreS), st.TargetPct)
		}
		return line
	}
	return fmt.Sprintf("stopped after %d rounds%s, %s, before reaching ±%g%% (%s %s at ±%.1f%%)", st.Rounds, over, took, st.TargetPct, st.Variant, label, st.HalfPct)
}

// targetsReached writes what a step reached: "±3%" for one target, or
// every target with its cost, "±3% on CPU per request and ±10% on latency
// mean", in the costs' order.
func targetsReached(pct float64, targets map[string]float64) string {
	if len(targets) < 2 {
		return fmt.Sprintf("±%g%%", pct)
	}
	costs := make([]string, 0, len(targets))
	for c := range targets {
		costs = append(costs, c)
	}
	slices.Sort(costs)
	parts := make([]string, len(costs))
	for i, c := range costs {
		label := c
		if info := analyze.Info(analyze.Cost(c)); info.Label != "" {
			label = info.Label
		}
		parts[i] = fmt.Sprintf("±%g%% on %s", targets[c], label)
	}
	return strings.Join(parts, " and ")
}

// minutes writes seconds as "11 min", or "40 s" under a minute.
func minutes(s float64) string {
	if s < 60 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.0f min", math.Round(s/60))
}
