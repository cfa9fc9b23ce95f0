package analyze

import (
	"encoding/json"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestTrialCacheSummarizesAlike: a run summarized after every round with a
// cache reads as it does without one, round after round, though each
// summary flags trials (a short window, no telemetry), attributes their
// telemetry and leaves some out; and the cache reads each trial once.
func TestTrialCacheSummarizesAlike(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "agent"}}
	noise := []float64{1.0, 1.03, 0.97, 1.01, 0.99, 1.02}
	var trials []*record.Trial
	cache := NewTrialCache()
	for r := 1; r <= len(noise); r++ {
		b := withExports(synthetic(t, 2*r-1, r, "baseline", 5, 100, 0.001*noise[r-1], 1000), 10, 0)
		a := withExports(synthetic(t, 2*r, r, "agent", 5, 100, 0.0012*noise[r-1], 1100), 40, 1)
		switch r {
		case 3:
			a.PlannedS = 10 // cut short: flagged, and left out
		case 4:
			a = withExports(a, 0, 0) // nothing received: flagged by the summary
		}
		trials = append(trials, b, a)
		for _, opt := range []Options{{CostsOnly: true}, {}} {
			want, err := Summarize(m, trials, opt)
			if err != nil {
				t.Fatal(err)
			}
			cached := opt
			cached.Cache = cache
			for range 2 {
				got, err := Summarize(m, trials, cached)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := summaryJSON(t, got), summaryJSON(t, want); g != w {
					t.Fatalf("round %d (costs only %v): with the cache\n%s\nwithout\n%s", r, opt.CostsOnly, g, w)
				}
			}
		}
	}
	if n := len(cache.trials); n != len(trials) {
		t.Errorf("the cache holds %d trials, want %d", n, len(trials))
	}
}

// summaryJSON renders s as the run's summary.json would hold it.
func summaryJSON(t *testing.T, s *Summary) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
