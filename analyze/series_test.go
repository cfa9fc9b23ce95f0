package analyze

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tollperf/toll/record"
)

// endingTrial is a 5-second trial at 100 req/s whose service uses 0.5
// cores, its cumulative CPU read in 10 ms ticks (as cgroup v1 counts it),
// sampled every second from -2 s with the sampler's last reading landing
// 4 ms after the one before it at the window's end, and a last partial
// load interval past the window.
func endingTrial(t *testing.T, idx, round int, variant string) *record.Trial {
	tr := synthetic(t, idx, round, variant, 5, 100, 0.005, 1000)
	var pts []record.Sample
	for _, x := range []float64{-2, -1, 0, 1, 2, 3, 4, 4.996, 5.000} {
		cpu := math.Floor((10+0.5*x)*100) / 100
		pts = append(pts, record.Sample{T: x, CPU: cpu, RSS: 50 << 20, Threads: 10})
	}
	pts[len(pts)-1].CPU = pts[len(pts)-2].CPU // no tick in the last 4 ms
	tr.Samples[0].Points = pts
	tr.Intervals = append(tr.Intervals, record.Interval{T: 5, Scheduled: 30, Sent: 30, Completed: 30, OK: 30,
		Histogram: encode(t, 1000)})
	return tr
}

func endingSummary(t *testing.T) *Summary {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "otel"}}
	var trials []*record.Trial
	for r := 1; r <= 3; r++ {
		trials = append(trials, endingTrial(t, 2*r-1, r, "baseline"), endingTrial(t, 2*r, r, "otel"))
	}
	s, err := Summarize(m, trials, Options{Trim: Trim{Start: 1, End: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func metric(t *testing.T, set SeriesSet, name string) Series {
	t.Helper()
	for _, m := range set.Metrics {
		if m.Metric == name {
			return m
		}
	}
	t.Fatalf("%s has no %s series", set.Variant, name)
	return Series{}
}

// TestCPUSeriesNoDropAtWindowEnd: the CPU line holds its level to the
// window's last second, although the last sample came 4 ms after the one
// before it with no CPU tick between them.
func TestCPUSeriesNoDropAtWindowEnd(t *testing.T) {
	s := endingSummary(t)
	for _, set := range s.Steps[0].Series {
		cpu := metric(t, set, "cpu")
		if len(cpu.T) == 0 || cpu.T[len(cpu.T)-1] != 4 {
			t.Fatalf("%s: CPU series ends at %v, want its last second to start at 4", set.Variant, cpu.T)
		}
		for i, v := range cpu.Median {
			if math.Abs(v-0.5) > 0.05 {
				t.Errorf("%s: CPU in second [%g, %g+1) is %.3f cores, want 0.5", set.Variant, cpu.T[i], cpu.T[i], v)
			}
		}
	}
}

// TestSeriesShareTimeBase: every series stands for whole seconds
// [T, T+1) on one time base, the window's seconds are the same in each,
// and the partial interval past the window is in none.
func TestSeriesShareTimeBase(t *testing.T) {
	s := endingSummary(t)
	st := s.Steps[0]
	if st.Window == nil || st.Window.From != 1 || st.Window.To != 4 {
		t.Errorf("step window %+v, want 1 to 4 s", st.Window)
	}
	want := []float64{0, 1, 2, 3, 4}
	for _, set := range st.Series {
		if len(set.Metrics) < 5 {
			t.Errorf("%s: %d series, want cpu, rss, latency p50, p99 and rate", set.Variant, len(set.Metrics))
		}
		for _, m := range set.Metrics {
			var inWindow []float64
			for i, x := range m.T {
				if x != math.Trunc(x) {
					t.Errorf("%s %s: point at %g is not a second's start", set.Variant, m.Metric, x)
				}
				if m.Low[i] > m.Median[i] || m.Median[i] > m.High[i] || m.Trials[i] != 3 {
					t.Errorf("%s %s at %g: band %g ≤ %g ≤ %g over %d trials", set.Variant, m.Metric, x, m.Low[i], m.Median[i], m.High[i], m.Trials[i])
				}
				if x >= 0 {
					inWindow = append(inWindow, x)
				}
			}
			if !slices.Equal(inWindow, want) {
				t.Errorf("%s %s: window seconds %v, want %v", set.Variant, m.Metric, inWindow, want)
			}
		}
		if rate := metric(t, set, "rate"); slices.Contains(rate.Median, 30) {
			t.Errorf("%s: the partial interval past the window is in the rate series: %v", set.Variant, rate.Median)
		}
	}
	if len(st.Spectra) != 2 || len(st.Spectra[0].Ms) != len(st.Spectra[0].Percentiles) {
		t.Errorf("spectra %+v", st.Spectra)
	}
}

func TestSizeOfChange(t *testing.T) {
	info := CostInfo{Cost: Threads, Label: "threads"}
	for _, tt := range []struct {
		name       string
		base, vari []float64
		want       Size
	}{
		{"+50% CPU", []float64{1, 1.02, 0.98, 1.01}, []float64{1.5, 1.53, 1.47, 1.52}, SizeLarge},
		{"+1 thread of 40", []float64{40, 40, 40, 40.2}, []float64{41, 41, 41, 41.1}, SizeSmall},
		{"+10%", []float64{10, 10.1, 9.9, 10}, []float64{11, 11.1, 10.9, 11}, SizeMedium},
		{"noise", []float64{10, 11, 9, 10}, []float64{10.5, 10, 10, 9.5}, SizeNone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(info, tt.base, tt.vari, fixedVariance(record.DefaultCalibration(), info.Cost, 0))
			if d.Size != tt.want {
				t.Errorf("size %q, want %q (%+v)", d.Size, tt.want, d)
			}
			if len(d.Rounds) != len(tt.base) {
				t.Errorf("%d per-round changes, want %d", len(d.Rounds), len(tt.base))
			}
		})
	}
	add := Compare(CostInfo{Cost: SpansPerReq, Additive: true}, []float64{0, 0, 0}, []float64{4, 4.1, 3.9}, 0)
	if add.Size != SizeNone || !add.FromZero || !add.Significant || add.Rounds[1] != 4.1 {
		t.Errorf("spans from none: size %q (want none: no baseline to size it by), from zero %v, significant %v, rounds %v",
			add.Size, add.FromZero, add.Significant, add.Rounds)
	}
}

func TestHeadlines(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "heavy"}}
	var trials []*record.Trial
	noise := []float64{1.0, 1.03, 0.97, 1.01, 0.99}
	for r := 1; r <= 5; r++ {
		trials = append(trials,
			synthetic(t, 2*r-1, r, "baseline", 5, 100, 0.001*noise[r-1], 1000),
			synthetic(t, 2*r, r, "heavy", 5, 100, 0.002*noise[r-1], 1000))
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Headlines) != 1 || s.Headlines[0].Variant != "heavy" {
		t.Fatalf("headlines %+v", s.Headlines)
	}
	h := s.Headlines[0]
	if len(h.Changes) == 0 || h.Changes[0].Cost != CPUPerRequest || math.Abs(*h.Changes[0].Delta.Pct-100) > 1 {
		t.Errorf("first change %+v, want CPU per request +100%%", h.Changes)
	}
	for _, c := range h.Changes {
		if c.Cost == Throughput || c.Cost == ErrorRate {
			t.Errorf("unchanged %s in the headline", c.Label)
		}
	}
	if len(h.Values) == 0 || h.Values[0].Cost != SpansPerReq || h.Values[0].Value <= 0 {
		t.Errorf("values %+v, want the spans per request the variant sends", h.Values)
	}
}

// TestSeriesLeaveOutVariantWarmup checks that a first trial's variant
// warm-up (load.variant_warmup) stays out of the step's per-second series:
// they begin where the trials' own warm-up does.
func TestSeriesLeaveOutVariantWarmup(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline"}}
	var trials []*record.Trial
	for r := 1; r <= 3; r++ {
		tr := synthetic(t, r, r, "baseline", 5, 100, 0.005, 1000)
		tr.Start = tr.MeasureStart.Add(-2 * time.Second)
		if r == 1 {
			// 30 s of variant warm-up before the trial's own 2 s.
			tr.VariantWarmupS, tr.Start = 30, tr.MeasureStart.Add(-32*time.Second)
			var pts []record.Sample
			for x := -32; x <= 5; x++ {
				pts = append(pts, record.Sample{T: float64(x), CPU: 10 + 0.5*float64(x+32), RSS: 50 << 20})
			}
			tr.Samples[0].Points = pts
		}
		trials = append(trials, tr)
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range s.Steps[0].Series {
		for _, name := range []string{"cpu", "rss"} {
			if ts := metric(t, set, name).T; len(ts) == 0 || ts[0] < -2 {
				t.Errorf("%s series begins at %v, before the trials' own warm-up of 2 s", name, ts[:min(len(ts), 1)])
			}
		}
	}
}

// TestSeriesEvery checks the buckets of a series sampled every few seconds:
// each the mean of its seconds, a gap in the seconds kept as a gap, a short
// last bucket kept, and the fewest trials of its seconds.
func TestSeriesEvery(t *testing.T) {
	s := Series{Metric: "cpu", Unit: "cores",
		T:      []float64{-2, -1, 0, 1, 2, 3, 4, 8, 9},
		Median: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9},
		Low:    []float64{0, 1, 2, 3, 4, 5, 6, 7, 8},
		High:   []float64{2, 3, 4, 5, 6, 7, 8, 9, 10},
		Trials: []int{3, 3, 2, 3, 3, 3, 3, 3, 1},
	}
	got := s.Every(5)
	want := Series{Metric: "cpu", Unit: "cores",
		T:      []float64{-2, 3, 8},
		Median: []float64{3, 6.5, 8.5},
		Low:    []float64{2, 5.5, 7.5},
		High:   []float64{4, 7.5, 9.5},
		Trials: []int{2, 3, 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Every(5):\n got %+v\nwant %+v", got, want)
	}
	if one := s.Every(1); !reflect.DeepEqual(one, s) {
		t.Errorf("Every(1) changed the series: %+v", one)
	}
}
