package analyze

import (
	"math"
	"testing"
	"time"

	"github.com/tollperf/toll/record"
)

// idleTrial builds an idle trial (rate: 0) of n seconds whose measured
// service uses cores of CPU and holds rssMiB, with a sink that received
// nothing.
func idleTrial(idx, round int, variant string, n int, cores float64, rssMiB uint64) *record.Trial {
	start := time.Unix(1000, 0)
	tr := &record.Trial{Index: idx, Round: round, Variant: variant, Idle: true, Exports: variant != "baseline", PlannedS: float64(n),
		Start: start.Add(-2 * time.Second), MeasureStart: start, MeasureEnd: start.Add(time.Duration(n) * time.Second),
		Services: []record.ServiceRun{{Name: "svc", Measured: true}}}
	series := record.ServiceSeries{Service: "svc"}
	for s := -2; s <= n; s++ {
		series.Points = append(series.Points, record.Sample{T: float64(s), CPU: 5 + float64(s+2)*cores, RSS: rssMiB << 20, Threads: 10})
		tr.Telemetry = append(tr.Telemetry, record.Telemetry{T: float64(s)})
	}
	tr.Samples = []record.ServiceSeries{series}
	return tr
}

// TestIdleStep checks that an idle step's trials have costs at rest (CPU,
// memory, threads) and no per-request cost at all (absent, not 0 or NaN),
// that an exporting variant that sends nothing at rest is not flagged, and
// that the step reads "idle" with a headline of its static costs.
func TestIdleStep(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "agent"}, Load: record.LoadSettings{Rates: []float64{0}}}
	var trials []*record.Trial
	noise := []float64{1.0, 1.02, 0.98, 1.01, 0.99}
	for r := 1; r <= 5; r++ {
		trials = append(trials,
			idleTrial(2*r-1, r, "baseline", 5, 0.01*noise[r-1], uint64(100*noise[r-1])),
			idleTrial(2*r, r, "agent", 5, 0.02*noise[r-1], uint64(200*noise[r-1])))
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Flags) > 0 || !s.Valid() {
		t.Errorf("flags %+v, invalid %+v", s.Flags, s.Invalidities)
	}
	for _, tc := range s.Trials {
		for _, c := range []Cost{Throughput, PeakThroughput, ErrorRate, CPUPerRequest, LatencyP50, LatencyP99, LatencyMean, SpansPerReq} {
			if v, ok := tc.Costs[c]; ok {
				t.Errorf("trial %d has %s = %v; an idle trial has no per-request cost", tc.Index, c, v)
			}
		}
		for _, v := range tc.Costs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("trial %d: %v", tc.Index, tc.Costs)
			}
		}
	}
	st := s.Steps[0]
	if st.Label() != "idle" || !st.Idle {
		t.Errorf("step %q idle=%v", st.Label(), st.Idle)
	}
	agent := st.Variants[1]
	got := map[Cost]CostResult{}
	for _, c := range agent.Costs {
		got[c.Cost] = c
	}
	if c, ok := got[RSS]; !ok || c.Delta == nil || !c.Delta.Significant || math.Abs(*c.Delta.Pct-100) > 1 {
		t.Errorf("RSS at rest doubled, not detected: %+v", c)
	}
	if c, ok := got[CPUCores]; !ok || math.Abs(c.Value-0.02) > 0.001 {
		t.Errorf("CPU at rest %+v, want 0.02 cores", c)
	}
	if len(s.Headlines) != 1 || len(s.Headlines[0].Changes) == 0 || s.Headlines[0].Changes[0].Cost != CPUCores {
		t.Errorf("headlines %+v: an idle step's begins with CPU at rest", s.Headlines)
	}
}

// TestMatrixStepLabels checks that a matrix step names its CPU limit
// beside its load, in the summary and in a partial run's missing trials.
func TestMatrixStepLabels(t *testing.T) {
	for _, tt := range []struct {
		st   Step
		want string
	}{
		{Step{Rate: 300, CPULimit: 1}, "1 CPU, 300 req/s"},
		{Step{Idle: true, CPULimit: 0.5}, "0.5 CPU, idle"},
		{Step{Users: 50, CPULimit: 2}, "2 CPU, 50 users"},
		{Step{Workload: "startup", CPULimit: 2}, "2 CPU"},
		{Step{Rate: 300}, "300 req/s"},
	} {
		if got := tt.st.Label(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.st, got, tt.want)
		}
	}
	m := &record.Manifest{Load: record.LoadSettings{Rates: []float64{0, 300}}, Matrix: &record.Matrix{CPUs: []float64{1, 0.5}}}
	for i, want := range []string{"1 CPU, idle", "1 CPU, 300 req/s", "0.5 CPU, idle", "0.5 CPU, 300 req/s", "step 4"} {
		if got := stepLabel(m, i); got != want {
			t.Errorf("step %d: %q, want %q", i, got, want)
		}
	}
}
