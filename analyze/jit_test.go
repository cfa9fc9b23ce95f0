package analyze

import (
	"reflect"
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

// TestWarmupsWarnOfAnUnsettledJIT checks that variant warm-ups are
// summarized per variant, and that one that reached its maximum with a JVM
// still compiling is warned of, naming the variant and its last rate,
// while one with no JVM to wait for is not.
func TestWarmupsWarnOfAnUnsettledJIT(t *testing.T) {
	until := &record.WarmupUntil{JITBelowMs: 5, OverS: 10}
	trials := []*record.Trial{
		{Index: 0, Round: 1, Variant: "baseline", VariantWarmupS: 31, VariantWarmup: &record.VariantWarmup{MaxS: 120, Settled: true, JITMsPerS: map[string]float64{"app": 2}}},
		{Index: 1, Round: 1, Variant: "otel", VariantWarmupS: 120, VariantWarmup: &record.VariantWarmup{MaxS: 120, JITMsPerS: map[string]float64{"app": 17.25}}},
		{Index: 2, Round: 1, Variant: "go", VariantWarmupS: 120, VariantWarmup: &record.VariantWarmup{MaxS: 120, NoJVM: true}},
		{Index: 3, Round: 2, Variant: "baseline", VariantWarmupS: 25, VariantWarmup: &record.VariantWarmup{MaxS: 120, Settled: true}},
		{Index: 4, Round: 2, Variant: "otel", VariantWarmupS: 48, VariantWarmup: &record.VariantWarmup{MaxS: 120, Settled: true}},
		{Index: 5, Round: 2, Variant: "otel"}, // not a first trial
	}
	got, warns := warmups([]string{"baseline", "otel", "go"}, trials, until)
	want := []Warmup{
		{Variant: "baseline", Count: 2, Settled: 2, ShortestS: 25, LongestS: 31},
		{Variant: "otel", Count: 2, Settled: 1, ShortestS: 48, LongestS: 120},
		{Variant: "go", Count: 1, NoJVM: true, ShortestS: 120, LongestS: 120},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warmups\n%+v, want\n%+v", got, want)
	}
	if len(warns) != 1 {
		t.Fatalf("warnings %q, want one, for otel", warns)
	}
	for _, s := range []string{"otel's variant warm-up before trial 1 (round 1)", "maximum of 120 s", "app 17.2 ms/s", "below 5 ms/s over 10 s"} {
		if !strings.Contains(warns[0], s) {
			t.Errorf("warning %q lacks %q", warns[0], s)
		}
	}
	if got, _ := warmups([]string{"baseline"}, []*record.Trial{{Variant: "baseline", VariantWarmupS: 60}}, nil); got != nil {
		t.Errorf("a fixed warm-up is summarized: %+v", got)
	}
}
