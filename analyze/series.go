package analyze

import (
	"math"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tollperf/toll/record"
)

// SeriesSet is one variant's per-second series at one load step: for each
// metric, the median over the variant's trials and the band between their
// quartiles, second by second.
//
// Every series is on one time base: point i stands for the second
// [T[i], T[i]+1) counted from the trials' MeasureStart (negative in
// warm-up), whatever the metric. CPU is the CPU used in that second, RSS and
// heap are read at its middle, latency and rate are those of the requests
// sent in it. Only whole seconds that every source covers are kept, so no
// series drops at the window's end where a last sample or a last partial
// interval holds less than a second.
type SeriesSet struct {
	Variant string   `json:"variant"`
	Metrics []Series `json:"metrics"`
}

// Series is one metric's per-second median and quartile band over trials.
type Series struct {
	// Metric names the series: "cpu", "rss", "heap", "latency_p50",
	// "latency_p99" or "rate".
	Metric string `json:"metric"`
	Label  string `json:"label"`
	Unit   string `json:"unit"`
	// T holds each second's start, in seconds from MeasureStart.
	T []float64 `json:"t"`
	// Median, Low and High are the median, first and third quartile of
	// the trials' values in each second; Trials how many trials had one.
	Median []float64 `json:"median"`
	Low    []float64 `json:"low"`
	High   []float64 `json:"high"`
	Trials []int     `json:"trials"`
}

// Spectrum is one variant's latency by percentile at one load step, from
// the histograms of its compared trials merged over their analysis windows
// (the same seconds the table's latency percentiles come from).
type Spectrum struct {
	Variant string `json:"variant"`
	// Percentiles and Ms are paired: the latency, in ms, at each percentile.
	Percentiles []float64 `json:"percentiles"`
	Ms          []float64 `json:"ms"`
}

// seriesMetric computes one metric's per-second values of a trial, keyed
// by each second's start.
type seriesMetric struct {
	metric, label, unit string
	values              func(*secondsOf) map[int]float64
}

// secondsOf is a trial with its whole seconds' latency histograms, decoded
// once for every latency series.
type secondsOf struct {
	*record.Trial
	hists map[int]*hdr.Histogram
}

// histograms returns the trial's whole seconds' latency histograms, by
// second.
func (t *secondsOf) histograms() map[int]*hdr.Histogram {
	if t.hists != nil {
		return t.hists
	}
	t.hists = map[int]*hdr.Histogram{}
	for _, iv := range t.Intervals {
		if !wholeInterval(t.Trial, iv) || iv.Histogram == "" {
			continue
		}
		h, err := decodeLatency(iv.Histogram)
		if err != nil || h.TotalCount() == 0 {
			continue
		}
		t.hists[int(iv.T)] = h
	}
	return t.hists
}

var seriesMetrics = []seriesMetric{
	{"cpu", "CPU of measured services", "cores", func(t *secondsOf) map[int]float64 { return cpuPerSecond(t.Trial) }},
	{"rss", "RSS of measured services", "MiB", func(t *secondsOf) map[int]float64 {
		return gaugePerSecond(t.Trial, func(p record.Sample) (float64, bool) { return float64(p.RSS) / (1 << 20), true })
	}},
	{"heap", "JVM heap used", "MiB", func(t *secondsOf) map[int]float64 {
		return gaugePerSecond(t.Trial, func(p record.Sample) (float64, bool) {
			j := p.Runtime("jvm")
			if j == nil {
				return 0, false
			}
			return j.Values["heap_used"] / (1 << 20), true
		})
	}},
	{"latency_p50", "Latency p50", "ms", func(t *secondsOf) map[int]float64 { return latencyPerSecond(t, 50) }},
	{"latency_p99", "Latency p99", "ms", func(t *secondsOf) map[int]float64 { return latencyPerSecond(t, 99) }},
	{"rate", "Achieved rate", "req/s", func(t *secondsOf) map[int]float64 { return ratePerSecond(t.Trial) }},
}

// seriesFrom is the first second of trial t that its step's series show:
// the start of its own warm-up, so that the variant's warm-up before a
// first trial (load.variant_warmup, a minute or more, in one trial only)
// does not stretch every chart of the step. Without one, every second.
func seriesFrom(t *record.Trial) int {
	if t.VariantWarmupS <= 0 || t.Start.IsZero() {
		return math.MinInt
	}
	own := t.MeasureStart.Sub(t.Start).Seconds() - t.VariantWarmupS
	return int(math.Ceil(-own - 1e-9))
}

// stepSeries builds every variant's per-second series at one step from
// the trials compared there.
func stepSeries(variants []string, trials []*record.Trial) []SeriesSet {
	var out []SeriesSet
	for _, v := range variants {
		var mine []*secondsOf
		for _, t := range trials {
			if t.Variant == v {
				mine = append(mine, &secondsOf{Trial: t})
			}
		}
		if len(mine) == 0 {
			continue
		}
		set := SeriesSet{Variant: v}
		for _, m := range seriesMetrics {
			byT := map[int][]float64{}
			for _, t := range mine {
				from := seriesFrom(t.Trial)
				for k, x := range m.values(t) {
					if k >= from {
						byT[k] = append(byT[k], x)
					}
				}
			}
			if len(byT) == 0 {
				continue
			}
			var ks []int
			for k := range byT {
				ks = append(ks, k)
			}
			sort.Ints(ks)
			s := Series{Metric: m.metric, Label: m.label, Unit: m.unit}
			for _, k := range ks {
				xs := byT[k]
				sort.Float64s(xs)
				s.T = append(s.T, float64(k))
				s.Median = append(s.Median, quantile(xs, 0.5))
				s.Low = append(s.Low, quantile(xs, 0.25))
				s.High = append(s.High, quantile(xs, 0.75))
				s.Trials = append(s.Trials, len(xs))
			}
			set.Metrics = append(set.Metrics, s)
		}
		out = append(out, set)
	}
	return out
}

// quantile returns the q-quantile of sorted xs, linearly interpolated.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	pos := q * float64(len(xs)-1)
	i := int(math.Floor(pos))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	f := pos - float64(i)
	return xs[i] + f*(xs[i+1]-xs[i])
}

// measuredSeries returns t's measured services' samples (every service's
// when none is marked measured).
func measuredSeries(t *record.Trial) []record.ServiceSeries {
	want := map[string]bool{}
	for _, sr := range t.Services {
		if sr.Measured {
			want[sr.Name] = true
		}
	}
	var out []record.ServiceSeries
	for _, ss := range t.Samples {
		if len(ss.Points) > 0 && (len(want) == 0 || want[ss.Service]) {
			out = append(out, ss)
		}
	}
	return out
}

// sampleSlack is how far a second may reach past a service's last sample
// and still count as covered: the sampler's last reading lands a few
// milliseconds before or after the window's end. Within the slack the
// second's CPU is the rate over the part the samples cover, never a
// clamped (flat, so falling) cumulative value.
const sampleSlack = 0.25

// seconds returns the whole seconds [k, k+1) of the trial's timeline that
// the samples in every series cover (with sampleSlack at the end) and that
// end by the measured window's end.
func seconds(t *record.Trial, ss []record.ServiceSeries) (from, to int, ok bool) {
	lo, hi := math.Inf(-1), t.Window().Seconds()
	for _, s := range ss {
		lo = math.Max(lo, s.Points[0].T)
		hi = math.Min(hi, s.Points[len(s.Points)-1].T+sampleSlack)
	}
	from, to = int(math.Ceil(lo-1e-9)), int(math.Floor(hi+1e-9))-1
	return from, to, to >= from
}

// cpuPerSecond is the CPU the measured services used in each second, in
// cores: their cumulative CPU's rise over the second divided by the part of
// the second their samples cover, and by the share of it the trial's load
// ran in (a sliced duet's side: per second of its own load).
func cpuPerSecond(t *record.Trial) map[int]float64 { return cpuPerSecondOf(t, measuredSeries(t)) }

// cpuPerSecondOf is cpuPerSecond of the services ss of t.
func cpuPerSecondOf(t *record.Trial, ss []record.ServiceSeries) map[int]float64 {
	if len(ss) == 0 {
		return nil
	}
	from, to, ok := seconds(t, ss)
	if !ok {
		return nil
	}
	out := map[int]float64{}
	for k := from; k <= to; k++ {
		sum := 0.0
		for _, s := range ss {
			ts, vs := seriesOf(s.Points, func(p record.Sample) float64 { return p.CPU })
			end := math.Min(float64(k+1), ts[len(ts)-1])
			if end <= float64(k) {
				sum = math.NaN()
				break
			}
			sum += (interpolate(ts, vs, end) - interpolate(ts, vs, float64(k))) / (end - float64(k))
		}
		if !math.IsNaN(sum) {
			out[k] = sum / t.Share()
		}
	}
	return out
}

// gaugePerSecond is a gauge summed over the measured services that report
// it, read at the middle of each second.
func gaugePerSecond(t *record.Trial, f func(record.Sample) (float64, bool)) map[int]float64 {
	return gaugePerSecondOf(t, measuredSeries(t), f)
}

// gaugePerSecondOf is gaugePerSecond of the services of t in of.
func gaugePerSecondOf(t *record.Trial, of []record.ServiceSeries, f func(record.Sample) (float64, bool)) map[int]float64 {
	var ss []record.ServiceSeries
	for _, s := range of {
		var kept []record.Sample
		for _, p := range s.Points {
			if _, ok := f(p); ok {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			ss = append(ss, record.ServiceSeries{Service: s.Service, Points: kept})
		}
	}
	if len(ss) == 0 {
		return nil
	}
	from, to, ok := seconds(t, ss)
	if !ok {
		return nil
	}
	g := func(p record.Sample) float64 { v, _ := f(p); return v }
	out := map[int]float64{}
	for k := from; k <= to; k++ {
		sum := 0.0
		for _, s := range ss {
			ts, vs := seriesOf(s.Points, g)
			sum += interpolate(ts, vs, float64(k)+0.5)
		}
		out[k] = sum
	}
	return out
}

func seriesOf(pts []record.Sample, f func(record.Sample) float64) (ts, vs []float64) {
	ts, vs = make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		ts[i], vs[i] = p.T, f(p)
	}
	return ts, vs
}

// wholeInterval says whether a load interval is a whole second inside the
// measured window (the last one may be cut short by the window's end).
func wholeInterval(t *record.Trial, iv record.Interval) bool {
	return iv.T == math.Trunc(iv.T) && iv.T+1 <= t.Window().Seconds()+1e-9
}

// latencyPerSecond is the q-th latency percentile of the requests sent in
// each second, in ms.
func latencyPerSecond(t *secondsOf, q float64) map[int]float64 {
	out := map[int]float64{}
	for k, h := range t.histograms() {
		out[k] = float64(h.ValueAtQuantile(q)) / 1000
	}
	return out
}

// ratePerSecond is the requests completed of those sent in each second,
// per second of the trial's own load (a sliced duet's side sends in half
// of each second).
func ratePerSecond(t *record.Trial) map[int]float64 {
	out := map[int]float64{}
	for _, iv := range t.Intervals {
		if wholeInterval(t, iv) {
			out[int(iv.T)] = float64(iv.Completed) / t.Share()
		}
	}
	return out
}

// spectrumPercentiles are the percentiles a Spectrum is read at: evenly
// spaced on a log scale of 1/(1-p), from 0 to 99.99.
func spectrumPercentiles() []float64 {
	var ps []float64
	for i := 0; i <= 80; i++ {
		x := float64(i) / 20
		ps = append(ps, 100*(1-math.Pow(10, -x)))
	}
	return ps
}

// stepSpectra merges each variant's histograms over its compared trials'
// analysis windows and reads its latency by percentile.
func stepSpectra(variants []string, trials []*record.Trial, trim Trim) []Spectrum {
	merged := map[string]*hdr.Histogram{}
	for _, t := range trials {
		h, err := mergeHistograms(t.Intervals, WindowOf(t, trim))
		if err != nil || h == nil || h.TotalCount() == 0 {
			continue
		}
		if merged[t.Variant] == nil {
			merged[t.Variant] = h
			continue
		}
		merged[t.Variant].Merge(h)
	}
	var out []Spectrum
	for _, v := range variants {
		h := merged[v]
		if h == nil {
			continue
		}
		sp := Spectrum{Variant: v}
		for _, p := range spectrumPercentiles() {
			sp.Percentiles = append(sp.Percentiles, p)
			sp.Ms = append(sp.Ms, float64(h.ValueAtQuantile(p))/1000)
		}
		out = append(out, sp)
	}
	return out
}

// Every returns the series in buckets of width seconds, as a table that
// samples every few seconds shows it (Jetty's "CPU every 5 s"): each
// bucket's T is its first second, and its median and quartiles are the
// means of those of its seconds (for CPU, the mean CPU over the bucket).
// Trials is the fewest trials any of its seconds had. A last bucket shorter
// than width is kept. Width 1 or less returns s.
func (s Series) Every(width int) Series {
	if width <= 1 || len(s.T) == 0 {
		return s
	}
	out := Series{Metric: s.Metric, Label: s.Label, Unit: s.Unit}
	start := s.T[0]
	for i := 0; i < len(s.T); {
		b := math.Floor((s.T[i] - start) / float64(width))
		var med, lo, hi float64
		n, trials := 0, math.MaxInt
		for ; i < len(s.T) && math.Floor((s.T[i]-start)/float64(width)) == b; i++ {
			med, lo, hi = med+s.Median[i], lo+s.Low[i], hi+s.High[i]
			trials = min(trials, s.Trials[i])
			n++
		}
		out.T = append(out.T, start+b*float64(width))
		out.Median = append(out.Median, med/float64(n))
		out.Low = append(out.Low, lo/float64(n))
		out.High = append(out.High, hi/float64(n))
		out.Trials = append(out.Trials, trials)
	}
	return out
}
