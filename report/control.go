package report

import "github.com/tollperf/toll/analyze"

// controlOf names the run's A/A control variant, or is empty without one.
func controlOf(s *analyze.Summary) string {
	if s.Manifest == nil {
		return ""
	}
	return s.Manifest.Control
}
