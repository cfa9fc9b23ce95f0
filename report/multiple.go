package report

import (
	"fmt"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// multiplicityLine says, for one comparison (what, e.g. "otel at 300
// req/s"), how many costs were tested at once, how many changes chance
// alone would give, and which changes do not survive the correction for
// their number (uncorrected: their labels); "" when m is nil.
func multiplicityLine(what string, m *analyze.Multiplicity, uncorrected []string) string {
	if m == nil {
		return ""
	}
	line := fmt.Sprintf("%s: %d costs tested at 95%% each, about %.1f would read a change by chance; %d read one",
		what, m.Tested, m.ExpectedByChance, m.Significant)
	primary := "none judged alone"
	if m.Primary != "" {
		primary = analyze.Info(m.Primary).Label + " at its own 95%"
	}
	line += fmt.Sprintf(", %d once corrected for their number (Holm; %s)", m.SignificantCorrected, primary)
	if len(uncorrected) > 0 {
		line += "; by chance, likely: " + strings.Join(uncorrected, ", ")
	}
	return line + "."
}

// runMultiplicity returns the multiplicity line of each variant at each
// step of s.
func runMultiplicity(s *analyze.Summary) []string {
	var lines []string
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			var lost []string
			for _, c := range v.Costs {
				if d := c.Delta; d != nil && d.Significant && !d.SignificantCorrected {
					lost = append(lost, analyze.Info(c.Cost).Label)
				}
			}
			what := v.Name
			if len(s.Steps) > 1 {
				what += " at " + st.Label()
			}
			if line := multiplicityLine(what, v.Multiplicity, lost); line != "" {
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// anyChance reports whether a change of s reads at its own 95% but not
// once corrected for the costs tested (Chance): the reports then say
// what ChanceMark means.
func anyChance(s *analyze.Summary) bool {
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			for _, c := range v.Costs {
				if c.Delta != nil && Chance(c.Delta) {
					return true
				}
			}
		}
	}
	return false
}

// compareMultiplicity returns the multiplicity line of each variant at
// each step of a run comparison.
func compareMultiplicity(rc *analyze.RunComparison) []string {
	var lines []string
	for _, st := range rc.Steps {
		for _, v := range st.Variants {
			var lost []string
			for _, c := range v.Costs {
				if c.Significant && !c.SignificantCorrected {
					lost = append(lost, analyze.Info(c.Cost).Label)
				}
			}
			if line := multiplicityLine(v.Name+" at "+st.Label()+", B vs A", v.Multiplicity, lost); line != "" {
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// latencyLine says, when some latency change has an interval, that the
// interval holds the run's rounds only ("" otherwise).
func latencyLine(s *analyze.Summary) string {
	if !s.LatencyWithinRun {
		return ""
	}
	return "Latency intervals hold this run's rounds only, not what differs from one run to the next, which for a latency is often larger: run again and compare the runs (toll compare) before trusting a latency change of a few tenths of a millisecond."
}
