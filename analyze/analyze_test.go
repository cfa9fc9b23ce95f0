package analyze

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/stats"
)

func TestCompareVerdicts(t *testing.T) {
	info := Info(CPUPerRequest)
	base := []float64{1.00, 1.02, 0.98, 1.01, 0.99}
	tests := []struct {
		name    string
		factor  []float64
		wantSig bool
		wantPct float64
		reading ReadingCode
	}{
		{"plus ten percent", []float64{1.10, 1.11, 1.09, 1.10, 1.10}, true, 10, ReadChange},
		{"no change", []float64{1.01, 0.99, 1.00, 1.02, 0.98}, false, 0, ReadSame},
		{"minus five", []float64{0.95, 0.95, 0.96, 0.94, 0.95}, true, -5, ReadChange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v []float64
			for i := range base {
				v = append(v, base[i]*tt.factor[i])
			}
			d := Compare(info, base, v, fixedVariance(record.DefaultCalibration(), info.Cost, 0))
			if d.Significant != tt.wantSig {
				t.Errorf("significant=%v, want %v (%+v)", d.Significant, tt.wantSig, d)
			}
			if math.Abs(*d.Pct-tt.wantPct) > 1 {
				t.Errorf("pct %.2f, want ≈ %.0f", *d.Pct, tt.wantPct)
			}
			if r := d.Reading; r.Code != tt.reading || r.Code == ReadChange && (!r.Ratio || r.Estimate != *d.Pct || r.HalfWidth != *d.HalfWidth) {
				t.Errorf("reading %+v, want %s of the estimate ± the half-width", r, tt.reading)
			}
			if *d.CILow > *d.Pct || *d.CIHigh < *d.Pct {
				t.Errorf("estimate outside its interval: %+v", d)
			}
		})
	}
}

func TestCompareAdditiveAndZeros(t *testing.T) {
	d := Compare(Info(Spans), []float64{0, 0, 0}, []float64{1200, 1190, 1210}, 0)
	if d.Method != "difference" || d.Pct != nil || !d.Significant || math.Abs(d.Abs-1200) > 1e-9 {
		t.Errorf("spans: %+v", d)
	}
	d = Compare(Info(ErrorRate), []float64{0, 0, 0}, []float64{0, 0, 0}, 0)
	if d.Significant || d.Reading.Code != ReadSame {
		t.Errorf("zero errors: %+v", d)
	}
	d = Compare(Info(CPUPerRequest), []float64{1}, []float64{1.2}, fixedVariance(record.DefaultCalibration(), CPUPerRequest, 0))
	if d.CILow != nil || d.Reading.Code != ReadNoInterval || d.Reading.Why != WhyOneRound {
		t.Errorf("one round: %+v", d)
	}
}

// TestCompareSmallCounts: a count of a few (threads, open files) is
// compared by its difference, in whole units, where the geometric mean of
// its ratios read 1 thread to 3 as "+181.5%"; a count of many, and a cost
// that is no count, keep their ratio.
func TestCompareSmallCounts(t *testing.T) {
	tests := []struct {
		cost       Cost
		base, vari []float64
		ratio      bool
		abs        float64
	}{
		{Threads, []float64{1, 1, 1, 1}, []float64{3, 2.5, 3, 3}, false, 1.875},
		{FDs, []float64{8, 8, 9, 8}, []float64{10, 10, 11, 10}, false, 2},
		{JVMThreads, []float64{5, 5, 5}, []float64{7, 7, 7.5}, false, 2.1666666666666667},
		{Threads, []float64{40, 41, 40}, []float64{44, 45, 44}, true, 4},
		{CPUCores, []float64{1, 1.02, 0.98}, []float64{3, 3.1, 2.9}, true, 2},
	}
	for _, tt := range tests {
		d := Compare(Info(tt.cost), tt.base, tt.vari, 0)
		if ratio := d.Pct != nil; ratio != tt.ratio || (d.Method == "log-ratio") != tt.ratio {
			t.Errorf("%s %v → %v: method %s, Δ%% %v; want a ratio: %v", tt.cost, tt.base, tt.vari, d.Method, d.Pct, tt.ratio)
		}
		if math.Abs(d.Abs-tt.abs) > 1e-9 {
			t.Errorf("%s %v → %v: Δ %g, want %g", tt.cost, tt.base, tt.vari, d.Abs, tt.abs)
		}
		if !tt.ratio && (d.CIUnit != Info(tt.cost).Unit || d.Reading.Ratio || d.Reading.Unit != Info(tt.cost).Unit) {
			t.Errorf("%s %v → %v: reading %+v in %q, want a difference in the cost's unit", tt.cost, tt.base, tt.vari, d.Reading, d.CIUnit)
		}
	}
}

// TestCompareStartsSmallCounts: a count of a few compared over starts of
// the services averages each start's rounds by their mean, as its
// difference is taken, where it took their geometric mean, the average of
// a ratio: JVM threads 4 and 6 to 5 and 7 in each start read +1.02, not +1.
// A count of many and a cost that is no count keep their ratio.
func TestCompareStartsSmallCounts(t *testing.T) {
	tests := []struct {
		cost       Cost
		base, vari []float64
		ratio      bool
		abs        float64
	}{
		{JVMThreads, []float64{4, 6, 4, 6, 4, 6}, []float64{5, 7, 5, 7, 5, 7}, false, 1},
		{Threads, []float64{1, 3, 1, 3, 1, 3}, []float64{2, 4, 2, 4, 2, 4}, false, 1},
		{JVMThreads, []float64{40, 60, 40, 60, 40, 60}, []float64{50, 70, 50, 70, 50, 70}, true, math.Sqrt(50*70) - math.Sqrt(40*60)},
		{CPUCores, []float64{1, 3, 1, 3, 1, 3}, []float64{2, 4, 2, 4, 2, 4}, true, math.Sqrt(8) - math.Sqrt(3)},
	}
	launches := []int{0, 0, 1, 1, 2, 2}
	for _, tt := range tests {
		d := compareStarts(Info(tt.cost), tt.base, tt.vari, launches, 0)
		if (d.Pct != nil) != tt.ratio {
			t.Errorf("%s %v → %v: method %s; want a ratio: %v", tt.cost, tt.base, tt.vari, d.Method, tt.ratio)
		}
		if math.Abs(d.Abs-tt.abs) > 1e-9 {
			t.Errorf("%s %v → %v: Δ %g, want %g", tt.cost, tt.base, tt.vari, d.Abs, tt.abs)
		}
	}
}

// TestComparePerStart: a cost measured once per start of the services
// (JVM init, start-up) pairs starts; two give no interval, where t with one
// degree of freedom read ±37131% on JVM init, or ±0 ms where the two
// differences agreed to the millisecond. Three do, and a cost measured
// every round keeps its interval over two rounds.
func TestComparePerStart(t *testing.T) {
	tests := []struct {
		name       string
		cost       Cost
		base, vari []float64
		wantCI     bool
		why        WhyCode
	}{
		{"JVM init, two starts", JVMInit, []float64{54, 42}, []float64{70, 58}, false, WhyFewStarts},
		{"JVM init, one start", JVMInit, []float64{54}, []float64{70}, false, WhyOneStart},
		{"start-up, two starts", Startup, []float64{5759, 5800}, []float64{15511, 9000}, false, WhyFewStarts},
		{"start-up, three starts", Startup, []float64{5759, 5800, 6100}, []float64{15511, 15000, 16800}, true, ""},
		{"CPU per request, two rounds", CPUPerRequest, []float64{1.0, 1.02}, []float64{1.2, 1.21}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(Info(tt.cost), tt.base, tt.vari, 0)
			if got := d.CILow != nil; got != tt.wantCI {
				t.Errorf("interval %v, want %v: %+v", got, tt.wantCI, d)
			}
			if got := d.AbsCILow != nil; got != tt.wantCI {
				t.Errorf("interval of the difference %v, want %v: %+v", got, tt.wantCI, d)
			}
			if r := d.Reading; r.Why != tt.why || (r.Code == ReadNoInterval) == tt.wantCI || r.Why == WhyFewStarts && r.Count != len(tt.base) {
				t.Errorf("reading %+v, want why %q", r, tt.why)
			}
			if !tt.wantCI && d.Significant {
				t.Errorf("significant without an interval: %+v", d)
			}
		})
	}
}

// TestCompareRunsPerStart: toll compare of a cost measured once per start
// gives it an interval only when each run has three starts, as one run does.
func TestCompareRunsPerStart(t *testing.T) {
	two, three := []float64{0.30, 0.35}, []float64{0.30, 0.35, 0.32}
	for _, tt := range []struct {
		name   string
		cost   Cost
		xa, xb []float64
		wantCI bool
	}{
		{"JVM init, two starts a run", JVMInit, two, two, false},
		{"JVM init, two starts in one run", JVMInit, three, two, false},
		{"JVM init, three starts a run", JVMInit, three, three, true},
		{"CPU per request, two rounds a run", CPUPerRequest, two, two, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cc := costChange(CostResult{Cost: tt.cost}, CostResult{Cost: tt.cost}, tt.xa, tt.xb, 0)
			if got := cc.CILow != nil; got != tt.wantCI {
				t.Errorf("interval %v, want %v: %+v", got, tt.wantCI, cc)
			}
			if !tt.wantCI && (cc.Significant || cc.Reading.Why != WhyFewStarts || cc.Reading.Count != 2) {
				t.Errorf("reading %+v, significant %v", cc.Reading, cc.Significant)
			}
		})
	}
}

func encode(t *testing.T, vals ...int64) string {
	h := hdr.New(1, 60_000_000, 3)
	for _, v := range vals {
		h.RecordValue(v)
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// synthetic builds a trial of n seconds at rate req/s whose measured service
// uses cpuPerReq seconds of CPU per request and answers in latUS µs.
func synthetic(t *testing.T, idx, round int, variant string, n int, rate float64, cpuPerReq float64, latUS int64) *record.Trial {
	start := time.Unix(1000, 0)
	tr := &record.Trial{Index: idx, Round: round, Variant: variant, TargetRate: rate, PlannedS: float64(n),
		MeasureStart: start, MeasureEnd: start.Add(time.Duration(n) * time.Second),
		Services: []record.ServiceRun{{Name: "svc", Measured: true}}}
	series := record.ServiceSeries{Service: "svc"}
	for s := -2; s <= n; s++ {
		series.Points = append(series.Points, record.Sample{T: float64(s), CPU: 5 + float64(s+2)*rate*cpuPerReq, RSS: 50 << 20, Threads: 10})
		tr.Telemetry = append(tr.Telemetry, record.Telemetry{T: float64(s), Spans: uint64(float64(s+2) * rate * 4)})
	}
	for s := 0; s < n; s++ {
		vals := make([]int64, int(rate))
		for i := range vals {
			vals[i] = latUS
		}
		tr.Intervals = append(tr.Intervals, record.Interval{T: float64(s), Scheduled: uint64(rate), Sent: uint64(rate),
			Completed: uint64(rate), OK: uint64(rate), Histogram: encode(t, vals...)})
	}
	tr.Samples = []record.ServiceSeries{series}
	return tr
}

// deltaOf returns variant v's comparison of cost c in s's first step,
// failing t when it has none.
func deltaOf(t *testing.T, s *Summary, v string, c Cost) *Delta {
	t.Helper()
	for _, vr := range s.Steps[0].Variants {
		for _, cr := range vr.Costs {
			if vr.Name == v && cr.Cost == c {
				return cr.Delta
			}
		}
	}
	t.Fatalf("%s has no %s", v, c)
	return nil
}

func TestSummarizeTrial(t *testing.T) {
	tr := synthetic(t, 1, 1, "otel", 10, 100, 0.002, 1500)
	tc, err := SummarizeTrial(tr, Trim{Start: 2, End: 1})
	if err != nil {
		t.Fatal(err)
	}
	checks := map[Cost]float64{CPUPerRequest: 2, CPUCores: 0.2, Throughput: 100, RSS: 50, Threads: 10, Spans: 400, LatencyP50: 1.5, LatencyP99: 1.5}
	for c, want := range checks {
		if got := tc.Costs[c]; math.Abs(got-want) > want*0.01 {
			t.Errorf("%s = %g, want %g", c, got, want)
		}
	}
	if tc.Window.Length() != 7 {
		t.Errorf("window %+v", tc.Window)
	}
	if len(tc.Flags) != 0 {
		t.Errorf("unexpected flags %+v", tc.Flags)
	}
}

func TestFlags(t *testing.T) {
	tr := synthetic(t, 1, 1, "otel", 5, 100, 0.001, 1000)
	tr.TargetRate = 200
	tr.Exports = true
	tr.Telemetry = nil
	tr.Intervals[2].Errors.HTTP5xx = 3
	tr.Load.Errors.HTTP5xx = 3
	tr.Load.ErrorExamples = &record.ErrorExamples{HTTP5xx: "HTTP 503 Service Unavailable"}
	m := &record.Manifest{Scenario: "x", Baseline: "otel", Variants: []string{"otel"}}
	sum, err := Summarize(m, []*record.Trial{tr}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range sum.Flags {
		got[f.Code] = true
		// The flag says why the requests failed, not only how many.
		if f.Code == FlagErrors && (!slices.Equal(f.Args.Ints(1), []int{0, 0, 0, 3, 0}) || f.Args.Strs(2)[3] != "HTTP 503 Service Unavailable") {
			t.Errorf("errors flag %+v does not say how the requests failed", f.Args)
		}
	}
	for _, want := range []string{FlagRateMissed, FlagErrors, FlagNoTelemetry} {
		if !got[want] {
			t.Errorf("missing flag %s in %+v", want, sum.Flags)
		}
	}
}

// TestTelemetryCycleEndsAtStop runs three trials of a variant restarted
// every round whose exporter sends nothing inside its windows: it flushes
// 500 spans as it stops, and 100 more as it starts again. Each trial gets
// its own 500 (5 spans per request) and none is flagged no-telemetry, as
// on this project's VM a Java agent's trials read 245, 177 and 0 spans/s
// and were all flagged before the cycle ended at the stop.
func TestTelemetryCycleEndsAtStop(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "otel", Variants: []string{"otel"}}
	var trials []*record.Trial
	var spans uint64
	for round := 1; round <= 3; round++ {
		tr := synthetic(t, round, round, "otel", 1, 100, 0.001, 1000)
		tr.Exports = true
		tr.Start, tr.Load.Sent = tr.MeasureStart, 100
		spans += 100 // sent as the services started, before the trial
		tr.Telemetry = []record.Telemetry{{T: 0, Spans: spans}, {T: 1, Spans: spans}}
		spans += 500 // flushed as the services stopped
		tr.TelemetryEnd = &record.Telemetry{T: 2, Spans: spans}
		trials = append(trials, tr)
	}
	sum, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sum.Flags {
		if f.Code == FlagNoTelemetry {
			t.Errorf("flagged: %+v", f)
		}
	}
	for _, tc := range sum.Trials {
		if got := tc.Costs[SpansPerReq]; math.Abs(got-5) > 1e-9 {
			t.Errorf("trial %d: %.3f spans per request, want 5", tc.Index, got)
		}
	}
}

func TestSummarizeDetectsOverhead(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "heavy"}}
	var trials []*record.Trial
	noise := []float64{1.0, 1.03, 0.97, 1.01, 0.99}
	for r := 1; r <= 5; r++ {
		trials = append(trials,
			synthetic(t, 2*r-1, r, "baseline", 5, 100, 0.001*noise[r-1], 1000),
			synthetic(t, 2*r, r, "heavy", 5, 100, 0.004*noise[r-1], 1000))
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	heavy := s.Steps[0].Variants[1]
	for _, c := range heavy.Costs {
		if c.Cost == CPUPerRequest {
			if c.Delta == nil || !c.Delta.Significant || math.Abs(*c.Delta.Pct-300) > 1 {
				t.Errorf("4x CPU not detected: %+v", c.Delta)
			}
			return
		}
	}
	t.Error("no CPU per request row")
}

// TestTelemetryOverTheCycle checks that spans a batch exporter flushes after
// a window (while the variant is idle) are still attributed to that trial.
func TestTelemetryOverTheCycle(t *testing.T) {
	a := synthetic(t, 1, 1, "otel", 4, 300, 0.001, 1000)
	b := synthetic(t, 3, 2, "otel", 4, 300, 0.001, 1000)
	a.Start = a.MeasureStart.Add(-time.Second) // 1 s of warm-up: 300 requests
	a.Load.Sent = 1200
	// Inside the window the sink saw whole batches only (9 × 512), and
	// 6000 spans arrived in the whole cycle: 4 per request.
	a.Telemetry = []record.Telemetry{{T: -1, Spans: 0}, {T: 0, Spans: 512}, {T: 4, Spans: 512 + 9*512}}
	b.Telemetry = []record.Telemetry{{T: -1, Spans: 6000}, {T: 4, Spans: 9000}}
	m := &record.Manifest{Scenario: "x", Baseline: "otel", Variants: []string{"otel"}}
	s, err := Summarize(m, []*record.Trial{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tc := s.Trials[0]
	if got := tc.Costs[SpansPerReq]; math.Abs(got-4) > 1e-9 {
		t.Errorf("spans per request %g, want 4", got)
	}
	if got := tc.Costs[Spans]; math.Abs(got-1200) > 1e-6 {
		t.Errorf("spans/s %g, want 1200", got)
	}
}

// TestDuetPairsWithTheTrialBeside checks that in a duet each variant is
// compared with the baseline trial that ran beside it, not another one.
func TestDuetPairsWithTheTrialBeside(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "a", "b"}}
	var trials []*record.Trial
	idx := 0
	for r := 1; r <= 4; r++ {
		drift := []float64{1, 1.5, 0.7, 1.2}[r-1] // differs between the two duets of a round
		for i, v := range []string{"a", "b"} {
			d := drift
			if i == 1 {
				d = 1 / drift
			}
			bt := synthetic(t, idx+1, r, "baseline", 3, 100, 0.001*d, 1000)
			bt.Pair = v
			trials = append(trials, bt, synthetic(t, idx+2, r, v, 3, 100, 0.0011*d, 1000))
			idx += 2
		}
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range s.Steps[0].Variants[1:] {
		for _, c := range v.Costs {
			if c.Cost == CPUPerRequest && (c.Delta == nil || math.Abs(*c.Delta.Pct-10) > 0.01 || !c.Delta.Significant) {
				t.Errorf("%s: %+v, want exactly +10%%", v.Name, c.Delta)
			}
		}
	}
}

func TestMachineFlags(t *testing.T) {
	tests := []struct {
		name       string
		cpu0Busy   float64 // share of CPU 0 (toll's) busy per second
		steal      float64 // share of all CPUs stolen per second
		idle       []record.NeighbourCPU
		wantFlags  []string
		wantCPUPct float64
	}{
		{"quiet", 0.2, 0, nil, nil, 35},
		{"generator starved", 0.95, 0, nil, []string{FlagSaturated}, 72.5},
		{"shared host", 0.2, 0.05, nil, []string{FlagSteal}, 35},
		// A start warmed ahead of its turn at idle priority on CPUs 0-1
		// took 0.8 of a core: 40% of CPU 0, which the generator left idle.
		{"busy at idle priority", 0.95, 0, []record.NeighbourCPU{{Variant: "v#2", CPUS: 4 * 0.8, S: 4, IdleCPUs: "0-1"}}, nil, 72.5},
		{"busy beside a neighbour at its own priority", 0.95, 0, []record.NeighbourCPU{{Variant: "w", CPUS: 4 * 0.8, S: 4}}, []string{FlagSaturated}, 72.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := synthetic(t, 1, 1, "v", 4, 100, 0.001, 1000)
			tr.Services[0].CPUs = "1"
			tr.Neighbours = tt.idle
			for s := 0; s <= 4; s++ {
				x := float64(s)
				// CPU 1 (the service's) is half busy throughout.
				tr.Machine = append(tr.Machine, record.MachineSample{T: x,
					Busy: x * (tt.cpu0Busy + 0.5), Total: 2 * x, Steal: 2 * x * tt.steal,
					PerCPUBusy: []float64{x * tt.cpu0Busy, x * 0.5}, PerCPUTotal: []float64{x, x}, MemUsed: 0.25})
			}
			tc, err := SummarizeTrial(tr, Trim{})
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.Costs[MachineCPU]; math.Abs(got-tt.wantCPUPct) > 1e-6 {
				t.Errorf("machine CPU %.2f%%, want %.2f%%", got, tt.wantCPUPct)
			}
			if got := tc.Costs[CPUBusy(1)]; math.Abs(got-50) > 1e-9 {
				t.Errorf("CPU 1 busy %.2f%%, want 50%%", got)
			}
			if got := Info(CPUBusy(1)).Label; got != "machine CPU 1" {
				t.Errorf("label %q", got)
			}
			if got := tc.Costs[MachineMem]; math.Abs(got-25) > 1e-9 {
				t.Errorf("memory %.1f%%", got)
			}
			var got []string
			for _, f := range tc.Flags {
				got = append(got, f.Code)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantFlags, ",") {
				t.Errorf("flags %v, want %v", got, tt.wantFlags)
			}
		})
	}
}

// TestMachineCPUFromIdleTime reads a machine whose kernel charged busy time
// by the tick and missed most of it, as seen on this project's VM (services
// using 0.17 cores of CPU 1 by their cgroups, /proc/stat's ticks showing 1%
// busy): the busy share must come from the exactly measured idle time.
func TestMachineCPUFromIdleTime(t *testing.T) {
	tr := synthetic(t, 1, 1, "v", 4, 100, 0.001, 1000)
	tr.Services[0].CPUs = "1"
	for s := 0; s <= 4; s++ {
		x := float64(s)
		// CPU 0 idles 0.9 s a second, CPU 1 0.83 s; ticks saw 0.1 and 0.01 busy.
		tr.Machine = append(tr.Machine, record.MachineSample{T: x,
			Busy: x * 0.11, Total: x * (0.11 + 0.9 + 0.83),
			PerCPUBusy: []float64{x * 0.1, x * 0.01}, PerCPUTotal: []float64{x * 1.0, x * 0.84}})
	}
	tc, err := SummarizeTrial(tr, Trim{})
	if err != nil {
		t.Fatal(err)
	}
	for cost, want := range map[Cost]float64{CPUBusy(0): 10, CPUBusy(1): 17, MachineCPU: 13.5} {
		if got := tc.Costs[cost]; math.Abs(got-want) > 1e-6 {
			t.Errorf("%s %.2f%%, want %.2f%%", Info(cost).Label, got, want)
		}
	}
}

func TestGates(t *testing.T) {
	for _, tt := range []struct {
		text string
		cost Cost
		pct  float64
		bad  bool
	}{
		{"cpu_per_request > +5%", CPUPerRequest, 5, false},
		{"p99 > 10%", LatencyP99, 10, false},
		{"throughput_rps > -3%", Throughput, -3, false},
		{"cpu_per_request > 5", "", 0, true},
		{"cpus > +5%", "", 0, true},
		{"latency < 5%", "", 0, true},
		{"cpu_per_request > -100%", "", 0, true},
		{"cpu_per_request > NaN%", "", 0, true},
		{"cpu_per_request > +Inf%", "", 0, true},
	} {
		g, err := ParseGate(tt.text)
		if (err != nil) != tt.bad || (!tt.bad && (g.Cost != tt.cost || g.Pct != tt.pct)) {
			t.Errorf("%q: got %+v, %v", tt.text, g, err)
		}
	}
}

// TestCompareRunsGate checks that a known +10% more overhead in run B fails
// a +5% gate and that an A/A pair passes it.
func TestCompareRunsGate(t *testing.T) {
	run := func(overhead float64, drift float64) *Summary {
		m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "agent"}}
		var trials []*record.Trial
		noise := []float64{1, 1.02, 0.98, 1.01, 0.99, 1.0}
		for r := 1; r <= 6; r++ {
			base := 0.001 * drift * noise[r-1]
			trials = append(trials, synthetic(t, 2*r-1, r, "baseline", 3, 100, base, 1000),
				synthetic(t, 2*r, r, "agent", 3, 100, base*overhead*(1+0.005*float64(r%3)), 1000))
		}
		s, err := Summarize(m, trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	g, _ := ParseGate("cpu_per_request > +5%")
	a := run(1.20, 1)
	// The machine ran 15% slower during run B: overheads still compare.
	for _, tt := range []struct {
		name string
		b    *Summary
		fail bool
	}{
		{"same agent", run(1.20, 1.15), false},
		{"agent 10% heavier", run(1.32, 1.15), true},
	} {
		rc, err := CompareRuns(a, tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Check(rc); got.Failed() != tt.fail {
			t.Errorf("%s: gate says %v", tt.name, got)
		}
	}
}

// TestCheckRun checks the gate within one run: a variant that costs twice
// the baseline's CPU per request fails a +10% gate, one that costs the
// same passes it, one whose interval only reaches the threshold passes,
// and a negative threshold fails only on a decrease wholly below it.
func TestCheckRun(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "same", "double", "near", "half"}}
	var trials []*record.Trial
	noise := []float64{1, 1.02, 0.98, 1.01, 0.99, 1.0}
	factor := map[string]float64{"baseline": 1, "same": 1, "double": 2, "near": 1.10, "half": 0.5}
	i := 0
	for r := 1; r <= 6; r++ {
		for _, v := range m.Variants {
			i++
			per := 0.001 * noise[r-1] * factor[v]
			if v != "baseline" {
				per *= 1 + 0.01*float64(r%3-1) // paired noise of ±1%
			}
			trials = append(trials, synthetic(t, i, r, v, 3, 100, per, 1000))
		}
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		gate string
		fail []string
	}{
		{"cpu_per_request > +10%", []string{"double"}},
		{"cpu_per_request > +5%", []string{"double", "near"}},
		{"cpu_per_request > -20%", []string{"half"}},
		{"cpu_per_request > -60%", nil},
		{"cpu_per_request > +150%", nil},
	} {
		g, err := ParseGate(tt.gate)
		if err != nil {
			t.Fatal(err)
		}
		r := g.CheckRun(s)
		var got []string
		for _, f := range r.Failures {
			got = append(got, f.Variant)
		}
		if strings.Join(got, ",") != strings.Join(tt.fail, ",") {
			t.Errorf("%s: fails %v, want %v", tt.gate, got, tt.fail)
		}
		if len(r.Unjudged) > 0 {
			t.Errorf("%s: unjudged %v", tt.gate, r.Unjudged)
		}
	}
}

// TestCheckRunOneRound: with one round there is no interval, and the gate
// says it could not judge instead of passing in silence.
func TestCheckRunOneRound(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "double"}}
	trials := []*record.Trial{synthetic(t, 1, 1, "baseline", 3, 100, 0.001, 1000), synthetic(t, 2, 1, "double", 3, 100, 0.002, 1000)}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := ParseGate("cpu_per_request > +10%")
	r := g.CheckRun(s)
	if r.Failed() || len(r.Unjudged) != 1 {
		t.Errorf("one round: %+v", r)
	}
}

// TestJVMInitOnlyWhereStarted checks that the JVM's start-up time is a cost
// of the trial its service started for only: with restart: once it was
// repeated in every round and compared as if measured each time
// (-45.5% ± 0.0%).
func TestJVMInitOnlyWhereStarted(t *testing.T) {
	for _, started := range []bool{true, false} {
		tr := synthetic(t, 1, 1, "v", 3, 100, 0.001, 1000)
		tr.Services[0].Started = started
		for i := range tr.Samples[0].Points {
			tr.Samples[0].Points[i].JVM = &record.JVMSample{InitS: 0.25, Threads: 20}
		}
		tc, err := SummarizeTrial(tr, Trim{})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := tc.Costs[JVMInit]
		if started && (!ok || math.Abs(got-250) > 1e-9) {
			t.Errorf("started for the trial: JVM init %v (%v), want 250 ms", got, ok)
		}
		if !started && ok {
			t.Errorf("running since an earlier trial: JVM init %v ms reported again", got)
		}
		if tc.Costs[JVMThreads] != 20 {
			t.Errorf("started %v: JVM threads %v, want 20", started, tc.Costs[JVMThreads])
		}
	}
}

// TestSharedDuetLatencyNotCompared checks that a shared duet, where each
// side's requests wait for the other's CPU, gives its latencies no verdict,
// however different they read, while its CPU costs are compared: such runs
// printed significant latency Δs beside a footnote saying they don't
// compare. A shared duet whose loads took turns (load.slice) compares them,
// as a split duet does; and no duet compares the machine's readings, which
// both sides take of the one machine at once.
func TestSharedDuetLatencyNotCompared(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cpus    []string
		sliceS  float64
		latency bool
	}{
		{"shared", []string{"1", "1"}, 0, false},
		{"shared in turns", []string{"1", "1"}, 0.05, true},
		{"split", []string{"1", "2"}, 0, true},
	} {
		m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "a"}, Mode: "duet",
			Layout: record.Layout{DuetCPUs: tt.cpus}, Load: record.LoadSettings{SliceS: tt.sliceS}}
		machine := func(tr *record.Trial, busy float64) {
			tr.Machine = []record.MachineSample{{T: 0, Busy: 10, Total: 100, PerCPUBusy: []float64{5, 5}, PerCPUTotal: []float64{50, 50}},
				{T: 3, Busy: 10 + busy, Total: 700, PerCPUBusy: []float64{5 + busy/2, 5 + busy/2}, PerCPUTotal: []float64{350, 350}}}
		}
		var trials []*record.Trial
		for r := 1; r <= 5; r++ {
			bt := synthetic(t, 2*r-1, r, "baseline", 3, 100, 0.001, 1000+int64(r))
			bt.Pair = "a"
			at := synthetic(t, 2*r, r, "a", 3, 100, 0.0012, 2000+int64(7*r))
			machine(bt, 100+float64(r))
			machine(at, 200+float64(3*r))
			trials = append(trials, bt, at)
		}
		s, err := Summarize(m, trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		seen := false
		for _, c := range s.Steps[0].Variants[1].Costs {
			switch {
			case c.Cost == CPUPerRequest && !c.Delta.Significant:
				t.Errorf("%s: CPU per request not significant: %+v", tt.name, c.Delta)
			case c.Cost == LatencyP50 && !tt.latency && (c.Delta.Significant || c.Delta.CILow != nil || c.Delta.Reading != Reading{Code: ReadNotComparable, Why: WhySharedDuet}):
				t.Errorf("%s: latency p50 compared: %+v", tt.name, c.Delta)
			case c.Cost == LatencyP50 && tt.latency && !c.Delta.Significant:
				t.Errorf("%s: latency p50 not compared: %+v", tt.name, c.Delta)
			case c.Cost == MachineCPU:
				seen = true
				if c.Delta.Significant || c.Delta.Reading != (Reading{Code: ReadNotComparable, Why: WhyOneMachine, Mode: "duet"}) {
					t.Errorf("%s: the machine's CPU compared between a duet's sides: %+v", tt.name, c.Delta)
				}
			}
		}
		if !seen {
			t.Errorf("%s: no machine CPU row", tt.name)
		}
	}
}

// TestLoadShareRates checks a sliced duet side's trial, whose load ran in
// half its window: its rates are per second of its own load (throughput
// and CPU in cores twice the window's), its CPU per request and latency
// are as they were, and its per-second series read the same rates.
func TestLoadShareRates(t *testing.T) {
	whole := synthetic(t, 1, 1, "a", 4, 100, 0.001, 1000)
	half := synthetic(t, 1, 1, "a", 4, 50, 0.001, 1000)
	half.LoadShare = 0.5
	w, err := SummarizeTrial(whole, Trim{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := SummarizeTrial(half, Trim{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Cost{Throughput, PeakThroughput, CPUCores, CPUPerRequest, LatencyP50, Spans, SpansPerReq} {
		if got, want := h.Costs[c], w.Costs[c]; math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("%s: %g in half a window at 50 req/s, want the %g of a whole window at 100", c, got, want)
		}
	}
	for i, sec := range h.Seconds {
		if sec.Throughput != 100 || math.Abs(sec.Services[0].CPU-0.1) > 1e-9 {
			t.Errorf("second %d: %g req/s and %g cores, want 100 and 0.1", i, sec.Throughput, sec.Services[0].CPU)
		}
	}
}

// TestCompareAbsInterval checks that every comparison carries the interval
// of its change in the cost's unit (a proxy hop's latency in ms), which
// excludes zero for a steady +0.3 ms and is absent for one round.
func TestCompareAbsInterval(t *testing.T) {
	base := []float64{1.00, 1.10, 0.95, 1.05, 1.02}
	vari := []float64{1.31, 1.38, 1.27, 1.36, 1.30}
	d := Compare(Info(LatencyP50), base, vari, fixedVariance(record.DefaultCalibration(), LatencyP50, 0))
	if d.AbsCILow == nil || d.AbsCIHigh == nil {
		t.Fatalf("no interval in ms: %+v", d)
	}
	if !(*d.AbsCILow > 0.2 && *d.AbsCIHigh < 0.4 && *d.AbsCILow < d.Abs && d.Abs < *d.AbsCIHigh) {
		t.Errorf("interval [%.3f, %.3f] around %.3f, want it inside (0.2, 0.4) around the mean", *d.AbsCILow, *d.AbsCIHigh, d.Abs)
	}
	if one := Compare(Info(LatencyP50), base[:1], vari[:1], fixedVariance(record.DefaultCalibration(), LatencyP50, 0)); one.AbsCILow != nil {
		t.Errorf("one round gave an interval: %+v", one)
	}
}

// TestRunNoiseFloor: a run cannot resolve a change finer than its
// variants' run-level effect (the calibration's RunNoisePct). A variant 0.3% dearer than the
// baseline in every one of 10 rounds, with next to no round-to-round noise,
// reads ~ where the rounds alone would call it significant at ±0.01%; a
// +3% change still reads as one; an additive cost is left as it was.
func TestRunNoiseFloor(t *testing.T) {
	base := make([]float64, 10)
	for i := range base {
		base[i] = 1 + 0.0001*float64(i%3)
	}
	scaled := func(f float64) []float64 {
		out := make([]float64, len(base))
		for i, b := range base {
			out[i] = b * f * (1 + 0.00001*float64(i%2))
		}
		return out
	}
	info := Info(CPUPerRequest)
	tests := []struct {
		name    string
		factor  float64
		signif  bool
		minHalf float64 // smallest half-width allowed, in percent
	}{
		{"A/A", 1, false, 0.7},
		{"+0.3% in every round", 1.003, false, 0.7},
		{"+3%", 1.03, true, 0.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(info, base, scaled(tt.factor), fixedVariance(record.DefaultCalibration(), info.Cost, 0))
			if d.Significant != tt.signif {
				t.Errorf("significant %v, want %v (%+v)", d.Significant, tt.signif, d.Reading)
			}
			if half := (*d.CIHigh - *d.CILow) / 2; half < tt.minHalf {
				t.Errorf("half-width %.3f%%, want at least %.1f%%: the run-level effect is not in the interval", half, tt.minHalf)
			}
		})
	}
	d := Compare(Info(Spans), []float64{10, 10.1, 9.9}, []float64{20, 20.1, 19.9}, 0)
	if !d.Significant || *d.CIHigh-*d.CILow > 0.01 {
		t.Errorf("additive cost: %+v [%v, %v], want the rounds' own exact interval", d.Reading, *d.CILow, *d.CIHigh)
	}
}

// TestAbsoluteIntervalCarriesFixedTerms checks that a ratio cost's
// interval in its own unit carries the run's fixed terms as its interval
// in percent does: an identical twin whose rounds agree closely, under a
// JVM's start-to-start term, reads no change in either.
func TestAbsoluteIntervalCarriesFixedTerms(t *testing.T) {
	base := []float64{0.540, 0.542, 0.538, 0.541, 0.539, 0.540, 0.541, 0.539}
	twin := []float64{0.545, 0.546, 0.543, 0.546, 0.544, 0.545, 0.546, 0.544}
	fixed := fixedVariance(record.DefaultCalibration(), CPUNoJIT, 2)
	d := Compare(Info(CPUNoJIT), base, twin, fixed)
	if d.CILow == nil || d.AbsCILow == nil {
		t.Fatalf("no interval: %+v", d)
	}
	pctHolds0 := *d.CILow <= 0 && 0 <= *d.CIHigh
	absHolds0 := *d.AbsCILow <= 0 && 0 <= *d.AbsCIHigh
	if !pctHolds0 || absHolds0 != pctHolds0 {
		t.Errorf("twin: [%+.2f%%, %+.2f%%] and [%+.4f, %+.4f] ms, want both to hold 0", *d.CILow, *d.CIHigh, *d.AbsCILow, *d.AbsCIHigh)
	}
	// Each bound in its unit matches the one in percent of the baseline
	// to within a tenth of the width.
	mb := 0.540
	if lo := 100 * *d.AbsCILow / mb; math.Abs(lo-*d.CILow) > 0.1*(*d.CIHigh-*d.CILow) {
		t.Errorf("low bound %+.2f%% of the baseline in ms, %+.2f%% as a ratio", lo, *d.CILow)
	}
}

// TestTelemetryPooledOverRounds replays three trials of a Java agent on a
// busy machine (4 spans per request): the first trial's cycle holds the
// variant warm-up's 724 requests, and a batch of its last spans reached
// the sink only in the variant's next trial, which read 4.7 spans per
// request against 3.9 for its predecessor. The variant's value counts
// every span over every request, 4.0, where the mean of the rounds read
// 4.2; the rounds keep their own values.
func TestTelemetryPooledOverRounds(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "otel", Variants: []string{"otel"}}
	counts := []uint64{0, 3046, 3610, 4098}
	warm := []uint64{724, 60, 60}
	var trials []*record.Trial
	for i := range 3 {
		tr := synthetic(t, i+1, i+1, "otel", 3, 20, 0.001, 1000)
		tr.Exports = true
		tr.Start = tr.MeasureStart.Add(-3 * time.Second)
		tr.Load.Sent, tr.Load.WarmupCompleted = 60, warm[i]
		tr.Telemetry = []record.Telemetry{{T: -3, Spans: counts[i]}, {T: 3, Spans: counts[i+1]}}
		trials = append(trials, tr)
	}
	trials[2].TelemetryEnd = &record.Telemetry{T: 4, Spans: counts[3]}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{3046.0 / 784, 564.0 / 120, 488.0 / 120}
	for i, tc := range s.Trials {
		if got := tc.Costs[SpansPerReq]; math.Abs(got-want[i]) > 1e-9 {
			t.Errorf("trial %d: %.3f spans per request, want %.3f", tc.Index, got, want[i])
		}
	}
	got := map[Cost]float64{}
	for _, cr := range s.Steps[0].Variants[0].Costs {
		got[cr.Cost] = cr.Value
	}
	if v := got[SpansPerReq]; math.Abs(v-4098.0/1024) > 1e-9 {
		t.Errorf("the variant's spans per request %.3f, want %.3f (every span over every request)", v, 4098.0/1024)
	}
	m.Variants = []string{"baseline", "otel"}
	m.Baseline = "baseline"
	for i := range 3 {
		b := synthetic(t, 10+i, i+1, "baseline", 3, 20, 0.001, 1000) // no agent: it exports nothing
		b.Start = b.MeasureStart.Add(-3 * time.Second)
		b.Telemetry = []record.Telemetry{{T: -3}, {T: 3}}
		b.TelemetryEnd = &record.Telemetry{T: 4}
		trials = append(trials, b)
	}
	paired, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := deltaOf(t, paired, "otel", SpansPerReq); math.Abs(d.Abs-4098.0/1024) > 1e-9 {
		t.Errorf("otel's difference from a baseline that exports nothing: %+.3f spans per request, want %+.3f (%+v)", d.Abs, 4098.0/1024, *d)
	}
	if v, tp := got[Spans], got[Throughput]; math.Abs(v-tp*4098.0/1024) > 1e-6 {
		t.Errorf("the variant's spans/s %.3f, want %.3f spans per request × %.1f req/s", v, 4098.0/1024, tp)
	}
}

// TestWarmupAtOtherLoadLeftOut runs three rounds of a variant whose
// first trial's cycle began with a variant warm-up of 16 users: 26,496
// requests at hundreds a second, at which its exporter dropped spans (2.43
// a request), where every trial at its own 50 req/s sends 4. The variant
// reads 4 spans per request, as its trials do, and the first trial no
// telemetry, and is not flagged as having sent none: weighed by its
// requests, it pulled the figure to 2.5. A variant whose only trial began
// so keeps what it counted.
func TestWarmupAtOtherLoadLeftOut(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "otel", Variants: []string{"otel"}}
	const warm = 26496
	var trials []*record.Trial
	spans := uint64(0)
	for i := range 3 {
		tr := synthetic(t, i+1, i+1, "otel", 8, 50, 0.001, 1000)
		tr.Exports = true
		tr.Start = tr.MeasureStart.Add(-2 * time.Second)
		tr.Load.Sent, tr.Load.WarmupCompleted = 400, 100
		from := spans
		spans += 4 * 500
		if i == 0 {
			tr.Load.WarmupCompleted += warm
			tr.Load.WarmupAtOtherLoad = true
			spans += 64385 // 2.43 a request
		}
		tr.Telemetry = []record.Telemetry{{T: -2, Spans: from}, {T: 8, Spans: spans}}
		tr.TelemetryEnd = &record.Telemetry{T: 9, Spans: spans}
		trials = append(trials, tr)
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Trials[0].Costs[SpansPerReq]; ok {
		t.Errorf("the first trial reads %.3f spans per request, want none", s.Trials[0].Costs[SpansPerReq])
	}
	// It is not judged to have sent nothing, nor left out: its other
	// costs (a start's, say) stand.
	for _, f := range s.Flags {
		if f.Trial == 1 {
			t.Errorf("the first trial is flagged %s", f.Code)
		}
	}
	for _, cr := range s.Steps[0].Variants[0].Costs {
		if cr.Cost == SpansPerReq && math.Abs(cr.Value-4) > 1e-9 {
			t.Errorf("the variant's spans per request %.3f, want 4, its trials' own", cr.Value)
		}
	}
	alone, err := Summarize(m, trials[:1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := alone.Trials[0].Costs[SpansPerReq]; !ok {
		t.Error("a variant's only trial lost its telemetry")
	}
}

// TestEffectiveStarts checks the count of starts a mean of rounds averages
// as the start-to-start term sees it.
func TestEffectiveStarts(t *testing.T) {
	rounds := func(ns ...int) []int {
		var ls []int
		for l, n := range ns {
			for range n {
				ls = append(ls, l)
			}
		}
		return ls
	}
	tests := []struct {
		name     string
		launches []int
		want     float64
	}{
		{"no rounds", nil, 0},
		{"one start", rounds(12), 1},
		{"three starts alike", rounds(10, 10, 10), 3},
		{"the last start one round of 81", rounds(40, 40, 1), 81.0 * 81 / (1600 + 1600 + 1)},
		{"one start ran most", rounds(34, 48, 1), 83.0 * 83 / (34*34 + 48*48 + 1)},
	}
	for _, tt := range tests {
		if got := effectiveStarts(tt.launches); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: %.3f starts, want %.3f", tt.name, got, tt.want)
		}
	}
}

// TestUnevenStartsCarryMore checks that a JVM's start-to-start term in a
// change's interval weighs each start by its rounds: three starts of which
// the last ran one round of 81 carry about as much as two starts, not as
// little as three.
func TestUnevenStartsCarryMore(t *testing.T) {
	cal := record.DefaultCalibration()
	xs := make([]float64, 81) // no spread between the starts: the calibration's term
	even := make([]int, 81)
	uneven := make([]int, 81)
	for i := range xs {
		even[i] = i * 3 / 81
		uneven[i] = min(i/40, 2)
	}
	evenV, _ := sideFixedLog(cal, CPUPerRequest, 3, xs, even)
	unevenV, _ := sideFixedLog(cal, CPUPerRequest, 3, xs, uneven)
	two := fixedVariance(cal, CPUPerRequest, 2)
	if math.Abs(evenV-fixedVariance(cal, CPUPerRequest, 3)) > 1e-12 {
		t.Errorf("three starts alike: %.3g, want three starts' %.3g", evenV, fixedVariance(cal, CPUPerRequest, 3))
	}
	if unevenV < 0.95*two || unevenV > two {
		t.Errorf("three starts, the last one round of 81: %.3g, want about two starts' %.3g (three starts alike: %.3g)", unevenV, two, evenV)
	}
}

// TestMoreStartsCountFromTheRoundsWeight checks that the estimate of what
// more starts would reach counts the starts so far as the interval does, by
// their rounds: a run of three starts whose last ran one round has not
// less to go than a run of the first two alone.
func TestMoreStartsCountFromTheRoundsWeight(t *testing.T) {
	cal := record.DefaultCalibration()
	series := func(n int, launch func(i int) int) PairedSeries {
		s := PairedSeries{Variant: "v", Cost: CPUPerRequest, LogRatios: make([]float64, n), Launches: make([]int, n)}
		for i := range n {
			s.Launches[i] = launch(i)
		}
		return s
	}
	two := series(80, func(i int) int { return i / 40 })
	three := series(81, func(i int) int { return min(i/40, 2) })
	// A target that five starts alike reach and four do not.
	five := fixedVariance(cal, CPUPerRequest, 5)
	target := 100 * math.Sinh(stats.TQuantileN(80)*math.Sqrt(2*five))
	progress := func(starts, rounds int) Progress {
		return Progress{Rounds: rounds, Starts: starts, Elapsed: time.Duration(rounds) * time.Second,
			RoundTime: time.Second, StartTime: 10 * time.Second, Calibration: cal}
	}
	w2 := widthOf(two, target, progress(2, 80), 2, 2, 0)
	w3 := widthOf(three, target, progress(3, 81), 2, 2, 0)
	if w2.MoreStarts != 3 {
		t.Fatalf("two starts of 40 rounds: %d more starts, want 3", w2.MoreStarts)
	}
	if w3.MoreStarts > w2.MoreStarts {
		t.Errorf("starts of 40, 40 and 1 rounds: %d more starts, more than the %d that two starts of 40 need", w3.MoreStarts, w2.MoreStarts)
	}
}

// TestDecisionHeld checks that a target counts as held only when every
// variant's series of its cost meets it.
func TestDecisionHeld(t *testing.T) {
	d := Decision{Widths: []Width{
		{Variant: "a", Cost: CPUPerRequest, Reached: true},
		{Variant: "b", Cost: CPUPerRequest, Reached: false},
		{Variant: "a", Cost: CPUNoJIT, Reached: true},
		{Variant: "b", Cost: CPUNoJIT, Reached: true},
	}}
	if got := d.Held(); !slices.Equal(got, []Cost{CPUNoJIT}) {
		t.Errorf("held %v, want only %s", got, CPUNoJIT)
	}
	if got := (Decision{}).Held(); got != nil {
		t.Errorf("no series: held %v", got)
	}
}
