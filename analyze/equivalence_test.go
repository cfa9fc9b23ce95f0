package analyze

import (
	"testing"

	"github.com/tollperf/toll/record"
)

// TestEquivalenceVerdict checks that a change whose whole interval lies
// within the precision target reads equivalent, and that a change whose
// interval holds 0 but reaches past the target reads the same.
func TestEquivalenceVerdict(t *testing.T) {
	tests := []struct {
		name       string
		noise      []float64 // the variant's per-round ratio to the baseline
		equivalent bool
		reading    ReadingCode
	}{
		{"narrow around 0", []float64{1.004, 0.996, 1.002, 0.998, 1.001, 0.999}, true, ReadEquivalent},
		{"wide around 0", []float64{1.08, 0.92, 1.06, 0.94, 1.07, 0.93}, false, ReadSame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "otel"},
				Precision: &record.Precision{Targets: map[string]float64{string(CPUPerRequest): 3}}}
			var trials []*record.Trial
			for r := 1; r <= len(tt.noise); r++ {
				trials = append(trials,
					synthetic(t, 2*r-1, r, "baseline", 5, 100, 0.001, 1000),
					synthetic(t, 2*r, r, "otel", 5, 100, 0.001*tt.noise[r-1], 1000))
			}
			s, err := Summarize(m, trials, Options{})
			if err != nil {
				t.Fatal(err)
			}
			d := deltaOf(t, s, "otel", CPUPerRequest)
			if d.Equivalent != tt.equivalent || d.Reading.Code != tt.reading || *d.MarginPct != 3 || d.Significant {
				t.Errorf("equivalent %v reading %q [%v, %v], want %v %q", d.Equivalent, d.Reading.Code, *d.CILow, *d.CIHigh, tt.equivalent, tt.reading)
			}
			// A run with fixed rounds states no margin.
			m.Precision = nil
			s, err = Summarize(m, trials, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := deltaOf(t, s, "otel", CPUPerRequest); d.Equivalent || d.Reading.Code != ReadSame {
				t.Errorf("without a margin: equivalent %v reading %q", d.Equivalent, d.Reading.Code)
			}
		})
	}
}
