package report

import (
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestPartialText checks the English line of a partial run, from what
// analyze found missing, and that a summary read back keeps its line.
func TestPartialText(t *testing.T) {
	tests := []struct {
		name string
		p    analyze.Partial
		want string
	}{
		{"interrupted", analyze.Partial{Interrupted: true, Planned: 20, Complete: 7,
			Gaps: []analyze.Gap{{First: 4, Last: 4, Variants: []string{"baseline"}}, {First: 5, Last: 10}}},
			"partial run (interrupted): 7 of 20 trials complete; missing: round 4 baseline, rounds 5-10"},
		{"killed", analyze.Partial{Unfinished: true, Planned: 6, Complete: 5, Gaps: []analyze.Gap{{First: 3, Last: 3, Variants: []string{"baseline"}}}},
			"partial run (toll did not finish it: killed, or still running): 5 of 6 trials complete; missing: round 3 baseline"},
		{"stopped by an error, two steps", analyze.Partial{Error: "exit status 1; last 1 log lines:\n\tboom", Cause: "exit status 1", Planned: 8, Complete: 3,
			Gaps: []analyze.Gap{{Step: "100 req/s", First: 2, Last: 2, Variants: []string{"baseline"}}, {Step: "200 req/s", First: 1, Last: 1}, {Step: "200 req/s", First: 2, Last: 2, Variants: []string{"otel"}}}},
			"partial run (stopped by an error: exit status 1): 3 of 8 trials complete; missing: 100 req/s: round 2 baseline; 200 req/s: round 1, round 2 otel"},
		{"no plan recorded", analyze.Partial{Interrupted: true, Complete: 4},
			"partial run (interrupted): 4 trials complete; the manifest does not list the trials planned"},
		{"unreadable", analyze.Partial{Planned: 2, Complete: 1, Unreadable: []record.Unreadable{{Reason: "bad JSON\nat line 3"}}},
			"partial run: 1 of 2 trials complete; left out, unreadable: bad JSON"},
		{"read back", analyze.Partial{Interrupted: true, Text: "partial run (interrupted): as written"}, "partial run (interrupted): as written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PartialText(&tt.p); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
