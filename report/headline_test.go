package report

import (
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
)

// TestHeadlineTextByChance checks that a headline does not state as a
// change what the correction for the number of costs tested calls
// chance, while the primary cost's own verdict is stated.
func TestHeadlineTextByChance(t *testing.T) {
	lo, hi, pct := 1.0, 9.0, 5.0
	d := &analyze.Delta{N: 5, Pct: &pct, CILow: &lo, CIHigh: &hi, Abs: 0.4, Significant: true}
	h := analyze.Headline{Variant: "otel", Changes: []analyze.HeadlineCost{
		{Cost: analyze.CPUPerRequest, Label: "CPU per request", Unit: "ms", Digits: 3, Delta: d},
		{Cost: analyze.LatencyP99, Label: "latency p99", Unit: "ms", Digits: 2, Delta: d, ByChance: true},
	}}
	got := HeadlineText(h)
	for _, tt := range []struct {
		want string
		in   bool
	}{
		{"+5.0% CPU per request [+1.0%, +9.0%]", true},
		{"no resolved change in latency p99 once corrected for the costs tested", true},
		{"+0.40 ms latency p99", false},
	} {
		if strings.Contains(got, tt.want) != tt.in {
			t.Errorf("headline %q: holds %q is %v, want %v", got, tt.want, !tt.in, tt.in)
		}
	}
}
