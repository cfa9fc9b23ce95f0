package analyze

import (
	"strings"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestJITStillCompilingWarns gives a variant's JVM 300 ms/s of JIT
// compilation in its first two rounds and next to none after: the summary
// warns about those rounds, with the advice to warm up longer; a JVM that
// compiles 2 ms/s throughout draws no warning.
func TestJITStillCompilingWarns(t *testing.T) {
	withJIT := func(tr *record.Trial, msPerS float64) *record.Trial {
		for i := range tr.Samples {
			for j := range tr.Samples[i].Points {
				p := &tr.Samples[i].Points[j]
				p.JVM = &record.JVMSample{Pid: 1, HeapUsed: 1 << 20, ClassesLoaded: 1000,
					JITCompiles: int64(100 + 10*j), JITTime: msPerS / 1000 * p.T}
			}
		}
		return tr
	}
	for _, tt := range []struct {
		name  string
		jit   []float64 // ms/s per round
		warns string
	}{
		{"warming up", []float64{300, 120, 5, 2, 1}, "rounds 1, 2"},
		{"warm", []float64{2, 2, 2, 2, 2}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline"}}
			var trials []*record.Trial
			for r := 1; r <= 5; r++ {
				trials = append(trials, withJIT(synthetic(t, r, r, "baseline", 4, 100, 0.001, 1000), tt.jit[r-1]))
			}
			s, err := Summarize(m, trials, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, w := range s.Warnings {
				if strings.Contains(w, "JIT-compiling") {
					got = w
				}
			}
			switch {
			case tt.warns == "" && got != "":
				t.Errorf("warning for a warm JVM: %s", got)
			case tt.warns != "" && (!strings.Contains(got, tt.warns) || !strings.Contains(got, "variant_warmup")):
				t.Errorf("warning %q, want one naming %s and load.variant_warmup (all: %q)", got, tt.warns, s.Warnings)
			}
		})
	}
}
