package analyze

import (
	"math"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestSecondsAndBins checks a trial's per-second rows (series.csv) and the
// per-N-second table built from them: a variant that uses 4× the CPU per
// request shows it in every span.
func TestSecondsAndBins(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "heavy"}}
	var trials []*record.Trial
	for r := 1; r <= 3; r++ {
		trials = append(trials,
			synthetic(t, 2*r-1, r, "baseline", 10, 100, 0.001, 1000),
			synthetic(t, 2*r, r, "heavy", 10, 100, 0.004, 2000))
	}
	for _, every := range []float64{0, 5} {
		s, err := Summarize(m, trials, Options{SeriesEvery: every})
		if err != nil {
			t.Fatal(err)
		}
		tc := s.Trials[1]
		if len(tc.Seconds) != 10 {
			t.Fatalf("trial 2 has %d seconds, want the window's 10", len(tc.Seconds))
		}
		for i, sec := range tc.Seconds {
			if sec.T != float64(i) || sec.Throughput != 100 || len(sec.Services) != 1 {
				t.Fatalf("second %d: %+v", i, sec)
			}
			if sv := sec.Services[0]; math.Abs(sv.CPU-0.4) > 1e-9 || sv.RSS != 50 || sv.Name != "svc" {
				t.Errorf("second %d: service %+v, want 0.4 cores and 50 MiB", i, sv)
			}
			if sec.LatencyP99 == nil || math.Abs(*sec.LatencyP99-2) > 0.01 {
				t.Errorf("second %d: p99 %v, want 2 ms", i, sec.LatencyP99)
			}
		}
		binned := s.Steps[0].Binned
		if every == 0 {
			if binned != nil {
				t.Errorf("bins not asked for: %+v", binned)
			}
			continue
		}
		if len(binned) != 2 {
			t.Fatalf("binned: %+v, want both variants", binned)
		}
		for i, want := range []float64{0.1, 0.4} {
			b := binned[i]
			if len(b.Bins) != 2 || b.Bins[0].From != 0 || b.Bins[1].To != 10 {
				t.Fatalf("%s: bins %+v, want [0,5) and [5,10)", b.Variant, b.Bins)
			}
			for _, bin := range b.Bins {
				if math.Abs(bin.CPU-want) > 1e-9 || bin.Throughput != 100 || bin.Trials != 3 {
					t.Errorf("%s: bin %+v, want %.1f cores, 100 req/s over 3 trials", b.Variant, bin, want)
				}
			}
		}
	}
}
