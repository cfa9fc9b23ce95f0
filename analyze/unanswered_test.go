package analyze

import (
	"strings"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestPrecisionRunWithoutInterval checks that a run in precision mode
// whose primary cost has no interval (one round when the budget ran out)
// is not valid, and says why, while one with an interval, or a run of
// fixed rounds, is judged as before.
func TestPrecisionRunWithoutInterval(t *testing.T) {
	for _, tt := range []struct {
		name      string
		rounds    int
		precision bool
		invalid   bool
	}{
		{"precision, one round", 1, true, true},
		{"precision, two rounds", 2, true, false},
		{"fixed rounds, one round", 1, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "otel"}}
			if tt.precision {
				m.Precision = &record.Precision{Targets: map[string]float64{string(CPUPerRequest): 3}}
			}
			var trials []*record.Trial
			for r := 1; r <= tt.rounds; r++ {
				trials = append(trials,
					synthetic(t, 2*r-1, r, "baseline", 5, 100, 0.001, 1000),
					synthetic(t, 2*r, r, "otel", 5, 100, 0.0012+0.00001*float64(r), 1000))
			}
			s, err := Summarize(m, trials, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(s.Invalid) > 0; got != tt.invalid {
				t.Fatalf("invalid %v (%q), want %v", got, s.Invalid, tt.invalid)
			}
			if tt.invalid && !strings.Contains(s.Invalid[0], "no interval for CPU per request (1 round compared") {
				t.Errorf("invalid %q does not say which cost lacks an interval and why", s.Invalid)
			}
		})
	}
}
