package report

import (
	"fmt"

	"github.com/tollperf/toll/analyze"
)

// Headlines are a start-up or job experiment's ratios, as hyperfine says
// them: "otel at 1 CPU: 1.07 ± 0.02 × baseline wall time", with "(~)"
// when the interval holds 1. They come from analyze's Ratio; none for a
// load test.
func Headlines(s *analyze.Summary) []string {
	var out []string
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			if v.Ratio == nil {
				continue
			}
			line := v.Name
			if len(s.Steps) > 1 {
				line += " at " + st.Label()
			}
			line += ": " + v.Ratio.String()
			if !v.Ratio.Significant {
				line += " (~: the interval holds 1)"
			}
			out = append(out, line)
		}
	}
	return out
}

// repetitionWord is what a run's trials are called: rounds of a load
// test, repetitions of a start-up or job experiment.
func repetitionWord(s *analyze.Summary) string {
	if w := s.Manifest.Workload; w != "" && w != "load" {
		return fmt.Sprintf("%s experiment, repetition(s)", w)
	}
	return "round(s)"
}
