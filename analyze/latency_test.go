package analyze

import (
	"math"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestLatencyStatistics checks the figures the published benchmarks print
// beside toll's percentiles: min and mean latency (Jetty, SkyWalking Go,
// Sermant), p95 (Sermant, EaseAgent), the best second's throughput
// (Sermant's max TPS), and each request's throughput, mean and p90 in a mix
// (EaseAgent's URIs).
func TestLatencyStatistics(t *testing.T) {
	tr := synthetic(t, 1, 1, "v", 2, 100, 0.001, 1000)
	var vals []int64
	for v := int64(1000); v <= 100_000; v += 1000 { // 1 to 100 ms
		vals = append(vals, v)
	}
	tr.Intervals[0].Histogram = encode(t, vals...)
	tr.Intervals[0].Completed, tr.Intervals[0].OK = 100, 100
	tr.Intervals[1].Histogram = encode(t, vals...)
	tr.Intervals[1].Completed, tr.Intervals[1].OK = 150, 150
	tr.Load.Requests = []record.RequestTotals{
		{Name: "fast", Completed: 200, OK: 200, Histogram: encode(t, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 4000, 10_000)},
		{Name: "slow", Completed: 50, OK: 50, Histogram: encode(t, 50_000)},
	}
	tc, err := SummarizeTrial(tr, Trim{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Cost]float64{
		LatencyMin: 1, LatencyMean: 50.5, LatencyP50: 50, LatencyP95: 95, LatencyMax: 100,
		Throughput: 125, PeakThroughput: 150,
		RequestCost("fast", Throughput): 100, RequestCost("slow", Throughput): 25,
		RequestCost("fast", LatencyMean): 3, RequestCost("fast", LatencyP90): 4, RequestCost("slow", LatencyP90): 50,
	}
	for c, w := range want {
		got, ok := tc.Costs[c]
		if !ok || math.Abs(got-w) > w*0.002 {
			t.Errorf("%s = %v (%v), want %v", Info(c).Label, got, ok, w)
		}
	}
}

// TestLatencyWithinRun checks that a run whose latency changes have
// intervals says that they hold its rounds only, and that one whose
// latencies do not compare (a shared duet loaded at once) does not.
func TestLatencyWithinRun(t *testing.T) {
	for _, tt := range []struct {
		name   string
		m      *record.Manifest
		within bool
	}{
		{"one variant at a time", &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "v"}, Restart: "per-round", Mode: "sequential", Workload: "load"}, true},
		{"a shared duet", &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "v"}, Restart: "per-round", Mode: "duet",
			Workload: "load", Layout: record.Layout{DuetCPUs: []string{"1", "1"}}}, false},
	} {
		var trials []*record.Trial
		for r := 1; r <= 6; r++ {
			for _, v := range tt.m.Variants {
				trials = append(trials, synthetic(t, len(trials)+1, r, v, 4, 100, 0.001, int64(1000+100*r+len(v))))
			}
		}
		s, err := Summarize(tt.m, trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.LatencyWithinRun != tt.within {
			t.Errorf("%s: latency_within_run %v, want %v", tt.name, s.LatencyWithinRun, tt.within)
		}
	}
}
