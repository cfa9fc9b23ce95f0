package analyze

import (
	"reflect"
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
			if got := len(s.Invalidities) > 0; got != tt.invalid {
				t.Fatalf("invalid %v (%+v), want %v", got, s.Invalidities, tt.invalid)
			}
			want := Invalidity{Code: InvalidUnanswered, Variant: "otel", Step: "100 req/s", Costs: []string{"CPU per request"}, Rounds: 1}
			if tt.invalid && !reflect.DeepEqual(s.Invalidities[0], want) {
				t.Errorf("invalid %+v does not say which cost lacks an interval and why: want %+v", s.Invalidities, want)
			}
		})
	}
}

// TestIdleStepAnswersNoTarget checks that an idle step of a run in
// precision mode, which has no request for CPU per request, does not make
// the run invalid: its rounds measure the costs at rest.
func TestIdleStepAnswersNoTarget(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "agent"}, Load: record.LoadSettings{Rates: []float64{0}},
		Precision: &record.Precision{Targets: map[string]float64{string(CPUPerRequest): 3}}}
	var trials []*record.Trial
	for r := 1; r <= 5; r++ {
		trials = append(trials, idleTrial(2*r-1, r, "baseline", 5, 0.01, 100), idleTrial(2*r, r, "agent", 5, 0.02, 200))
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Invalidities) > 0 {
		t.Errorf("an idle step makes the run invalid: %+v", s.Invalidities)
	}
}
