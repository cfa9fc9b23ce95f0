package report

import (
	"slices"
	"testing"

	"github.com/tollperf/toll/analyze"
)

// TestInvalidTexts checks the English of why a run is invalid, and that
// a summary read back keeps its lines.
func TestInvalidTexts(t *testing.T) {
	tests := []struct {
		name string
		s    analyze.Summary
		want []string
	}{
		{"no request succeeded", analyze.Summary{Invalidities: []analyze.Invalidity{{Code: analyze.InvalidUnsound, Variant: "otel", Step: "100 req/s", Trials: 3, Failed: 3}}},
			[]string{"otel at 100 req/s: all 3 trials failed or were flagged (no request succeeded in 3)"}},
		{"flagged", analyze.Summary{Invalidities: []analyze.Invalidity{{Code: analyze.InvalidUnsound, Variant: "otel", Step: "100 req/s", Trials: 3,
			Flagged: []analyze.FlagCount{{Code: analyze.FlagInterrupted, Trials: 3}, {Code: analyze.FlagRateMissed, Trials: 3}}}}},
			[]string{"otel at 100 req/s: all 3 trials failed or were flagged (flagged interrupted in 3; flagged rate-missed in 3)"}},
		{"a job, unanalysed", analyze.Summary{Invalidities: []analyze.Invalidity{{Code: analyze.InvalidUnsound, Variant: "agent", Step: "job", Trials: 1, Failed: 1, Jobs: true, Unanalysed: 1}}},
			[]string{"agent at job: its only trial failed or was flagged (1 failed; 1 could not be analysed)"}},
		{"unanswered", analyze.Summary{Invalidities: []analyze.Invalidity{{Code: analyze.InvalidUnanswered, Variant: "otel", Step: "100 req/s", Costs: []string{"CPU per request", "RSS"}, Rounds: 1}}},
			[]string{"otel at 100 req/s: no interval for CPU per request, RSS (1 round compared; an interval needs 2): the precision run ended before it had one, so it answers nothing about it; a longer budget gives more rounds (precision.budget, toll run --budget)"}},
		{"read back", analyze.Summary{Invalid: []string{"as written"}}, []string{"as written"}},
		{"valid", analyze.Summary{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InvalidTexts(&tt.s); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
