package analyze

import (
	"math"
	"reflect"
	"slices"
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
		warns []int     // the rounds warned of
	}{
		{"warming up", []float64{300, 120, 5, 2, 1}, []int{1, 2}},
		{"warm", []float64{2, 2, 2, 2, 2}, nil},
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
			var got *Warning
			for _, w := range s.Warnings {
				if w.Code == WarnJITUnderLoad {
					got = &w
				}
			}
			switch {
			case tt.warns == nil && got != nil:
				t.Errorf("warning for a warm JVM: %+v", got)
			case tt.warns != nil && (got == nil || !slices.Equal(got.Args.Ints(5), tt.warns) || got.Args.Str(2) != WarmupByUser):
				t.Errorf("warning %+v, want one naming rounds %v and the user's warm-up (all: %+v)", got, tt.warns, s.Warnings)
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
	want0 := warn(WarnWarmupUnsettled, "otel", 1, 1, false, 120.0, 120.0, true, 5.0, 10.0, false, []string{"app"}, []float64{17.25})
	if !reflect.DeepEqual(warns[0], want0) {
		t.Errorf("warning %+v, want %+v", warns[0], want0)
	}
	if got, _ := warmups([]string{"baseline"}, []*record.Trial{{Variant: "baseline", VariantWarmupS: 60}}, nil); got != nil {
		t.Errorf("a fixed warm-up is summarized: %+v", got)
	}
}

// TestCPUWithoutJIT gives a trial a JVM service whose compiler threads use
// 40 ms of CPU a second, beside a service with no JVM: CPU per request
// without JIT takes the compilers' CPU out of the JVM's and keeps the other
// service's; a trial whose samples carry no compiler CPU has neither row.
func TestCPUWithoutJIT(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		jitMsPerS            float64
		wantJIT, wantWithout float64 // ms/s, ms a request
		none                 bool
	}{
		{name: "compiling", jitMsPerS: 40, wantJIT: 40, wantWithout: 2 + 1 - 0.4},
		{name: "compiler threads not read", jitMsPerS: 0, none: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// 100 req/s; the JVM uses 2 ms a request, a Go sidecar 1 ms.
			tr := synthetic(t, 1, 1, "otel", 10, 100, 0.002, 1500)
			for j := range tr.Samples[0].Points {
				p := &tr.Samples[0].Points[j]
				p.JVM = &record.JVMSample{Pid: 1, HeapUsed: 1 << 20, JITCPU: tt.jitMsPerS / 1000 * (p.T + 2)}
			}
			other := record.ServiceSeries{Service: "sidecar"}
			for _, p := range tr.Samples[0].Points {
				other.Points = append(other.Points, record.Sample{T: p.T, CPU: (p.T + 2) * 100 * 0.001})
			}
			tr.Samples = append(tr.Samples, other)
			tr.Services = append(tr.Services, record.ServiceRun{Name: "sidecar", Measured: true})
			tc, err := SummarizeTrial(tr, Trim{Start: 2, End: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.Costs[CPUPerRequest]; math.Abs(got-3) > 0.01 {
				t.Errorf("CPU per request %g ms, want 3", got)
			}
			jit, hasJIT := tc.Costs[JITCPU]
			without, hasWithout := tc.Costs[CPUNoJIT]
			if tt.none {
				if hasJIT || hasWithout {
					t.Errorf("no compiler CPU read, yet JIT CPU %g and CPU without JIT %g", jit, without)
				}
				return
			}
			if math.Abs(jit-tt.wantJIT) > 0.01 || math.Abs(without-tt.wantWithout) > 0.01 {
				t.Errorf("JIT CPU %g ms/s, CPU per request without it %g ms; want %g and %g", jit, without, tt.wantJIT, tt.wantWithout)
			}
			if s := tc.Services["svc"]; math.Abs(s[CPUNoJIT]-1.6) > 0.01 {
				t.Errorf("the JVM service's own CPU per request without JIT %g ms, want 1.6", s[CPUNoJIT])
			}
		})
	}
}

// TestHeadlineWithoutJIT runs a JVM agent whose compilers burst in two of
// six rounds: the headline gives CPU per request and, right after it, CPU
// per request without JIT, whose interval the bursts do not widen.
func TestHeadlineWithoutJIT(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "agent"}}
	burst := []float64{0, 60, 0, 0, 80, 0} // the agent's compilers, ms/s
	noise := []float64{1.0, 1.01, 0.99, 1.0, 1.01, 0.99}
	withJIT := func(tr *record.Trial, msPerS float64) *record.Trial {
		for j := range tr.Samples[0].Points {
			p := &tr.Samples[0].Points[j]
			p.CPU += msPerS / 1000 * (p.T + 2)
			p.JVM = &record.JVMSample{Pid: 1, HeapUsed: 1 << 20, JITCPU: 0.5 + msPerS/1000*(p.T+2)}
		}
		return tr
	}
	var trials []*record.Trial
	for r := 1; r <= 6; r++ {
		trials = append(trials,
			withJIT(synthetic(t, 2*r-1, r, "baseline", 5, 100, 0.001*noise[r-1], 1000), 0),
			withJIT(synthetic(t, 2*r, r, "agent", 5, 100, 0.0015*noise[r-1], 1000), burst[r-1]))
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Headlines) != 1 || len(s.Headlines[0].Changes) < 2 {
		t.Fatalf("headlines %+v", s.Headlines)
	}
	all, without := s.Headlines[0].Changes[0], s.Headlines[0].Changes[1]
	if all.Cost != CPUPerRequest || without.Cost != CPUNoJIT {
		t.Fatalf("headline changes %s, %s; want CPU per request, then without JIT", all.Cost, without.Cost)
	}
	if math.Abs(*without.Delta.Pct-50) > 1 {
		t.Errorf("without JIT %+.1f%%, want the agent's +50%%", *without.Delta.Pct)
	}
	wide := func(d *Delta) float64 { return *d.CIHigh - *d.CILow }
	if wide(without.Delta) >= wide(all.Delta)/2 {
		t.Errorf("interval without JIT [%.1f, %.1f], with it [%.1f, %.1f]: the bursts should widen only the second",
			*without.Delta.CILow, *without.Delta.CIHigh, *all.Delta.CILow, *all.Delta.CIHigh)
	}
}
