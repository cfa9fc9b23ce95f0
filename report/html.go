package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// HTML writes report.html: one self-contained file (inline CSS and inline
// SVG, no scripts, no network) with the run's environment, the summary
// tables, Δ% bars with their 95% intervals, per-second time series of every
// variant's trials and each variant's latency percentile spectrum. trials
// are the run's trials as recorded (they may be nil: the charts that need
// them are then left out).
func HTML(w io.Writer, s *analyze.Summary, trials []*record.Trial) error {
	if s == nil {
		return fmt.Errorf("html report: no summary")
	}
	d := htmlData{Scenario: s.Scenario, Baseline: s.Baseline, Warnings: s.Warnings, Invalid: s.Invalid}
	if s.Partial != nil {
		d.Partial = s.Partial.Text
	}
	m := s.Manifest
	if m == nil {
		m = &record.Manifest{}
	}
	d.M = m
	d.Command = strings.Join(m.Command, " ")
	if !m.Started.IsZero() {
		d.Started = m.Started.UTC().Format("2006-01-02 15:04:05 MST")
	}
	if m.Host.MemoryBytes > 0 {
		d.Memory = fmt.Sprintf("%.1f GiB", float64(m.Host.MemoryBytes)/(1<<30))
	}
	colors := map[string]string{}
	for i, v := range s.Variants {
		colors[v] = colorOf(i)
		d.Variants = append(d.Variants, variantRef{Name: v, Color: colorOf(i), Baseline: v == s.Baseline})
	}
	for _, f := range s.Flags {
		d.Flags = append(d.Flags, flagLine(s, f))
	}
	tables := Tables(s)
	for i, t := range tables {
		st := htmlStep{Title: t.Title, Header: t.Header}
		for _, r := range t.Rows {
			var row []htmlCell
			for j, c := range r {
				row = append(row, htmlCell{Text: c, Class: verdictClass(j, c)})
			}
			st.Rows = append(st.Rows, row)
		}
		if i < len(s.Steps) {
			st.Bars = stepBars(s, s.Steps[i], colors)
			st.Series, st.Spectrum = stepCharts(s, s.Steps[i], trials, colors)
			st.Series = append(stepDotPlots(s.Steps[i], colors), st.Series...)
		}
		d.Steps = append(d.Steps, st)
	}
	return htmlTemplate.Execute(w, d)
}

type variantRef struct {
	Name, Color string
	Baseline    bool
}

type htmlCell struct{ Text, Class string }

type htmlStep struct {
	Title    string
	Header   []string
	Rows     [][]htmlCell
	Bars     template.HTML
	Series   []template.HTML
	Spectrum template.HTML
}

type htmlData struct {
	Scenario, Baseline string
	M                  *record.Manifest
	Command, Started   string
	Memory             string
	Variants           []variantRef
	Steps              []htmlStep
	Warnings, Flags    []string
	// Partial says what a partial run is missing; Invalid why the run's
	// measurement is not valid.
	Partial string
	Invalid []string
}

// verdictClass styles the Δ% columns of a summary table (column 4, 7, …).
func verdictClass(col int, cell string) string {
	if col < 4 || col%3 != 1 {
		return ""
	}
	switch {
	case strings.HasPrefix(cell, "~"):
		return "same"
	case strings.Contains(cell, "no CI"):
		return "na" // an estimate without an interval is no verdict
	case strings.HasPrefix(cell, "±"):
		return "na" // additive costs: the interval alone
	case strings.HasPrefix(cell, "+"):
		return "up"
	case strings.HasPrefix(cell, "-"):
		return "down"
	}
	return "na"
}

// stepBars builds the Δ% chart of one step: every cost of every variant
// whose difference has a percentage and an interval.
func stepBars(s *analyze.Summary, st analyze.Step, colors map[string]string) template.HTML {
	var rows []deltaBar
	for _, v := range st.Variants {
		if v.Name == s.Baseline {
			continue
		}
		for _, c := range v.Costs {
			dl := c.Delta
			if dl == nil || dl.Pct == nil || dl.CILow == nil || dl.CIHigh == nil {
				continue
			}
			rows = append(rows, deltaBar{Label: v.Name + ": " + c.Label, Color: colors[v.Name], Pct: *dl.Pct,
				Low: *dl.CILow, High: *dl.CIHigh, HasCI: true, Significant: dl.Significant})
		}
	}
	if len(rows) == 0 {
		return ""
	}
	return deltaBars("Δ% vs "+s.Baseline+" with 95% intervals", rows)
}

// stepCharts builds the per-second charts and the percentile spectrum of one
// step from the trials that ran at it.
func stepCharts(s *analyze.Summary, st analyze.Step, trials []*record.Trial, colors map[string]string) ([]template.HTML, template.HTML) {
	var mine []*record.Trial
	for _, t := range trials {
		if t != nil && t.Step == st.Index {
			mine = append(mine, t)
		}
	}
	if len(mine) == 0 {
		return nil, ""
	}
	m := s.Manifest
	if m == nil {
		m = &record.Manifest{}
	}
	metrics := []struct {
		title, ylabel string
		series        func(*record.Trial) [][2]float64
	}{
		{"CPU of measured services", "cores", cpuSeries},
		{"RSS of measured services", "MiB", func(t *record.Trial) [][2]float64 {
			return sumSeries(t, func(p record.Sample) (float64, bool) { return float64(p.RSS) / (1 << 20), true })
		}},
		{"JVM heap used", "MiB", func(t *record.Trial) [][2]float64 {
			return sumSeries(t, func(p record.Sample) (float64, bool) {
				if p.JVM == nil {
					return 0, false
				}
				return float64(p.JVM.HeapUsed) / (1 << 20), true
			})
		}},
		{"Latency p50 per second", "ms", func(t *record.Trial) [][2]float64 { return latencySeries(t, 50) }},
		{"Latency p99 per second", "ms", func(t *record.Trial) [][2]float64 { return latencySeries(t, 99) }},
		{"Achieved rate", "req/s", rateSeries},
	}
	// Shaded regions: warm-up (negative T) and the trimmed ends.
	warm, window := 0.0, 0.0
	for _, t := range mine {
		if !t.Start.IsZero() && t.MeasureStart.After(t.Start) {
			warm = math.Max(warm, t.MeasureStart.Sub(t.Start).Seconds())
		}
		for _, ss := range t.Samples {
			if len(ss.Points) > 0 {
				warm = math.Max(warm, -ss.Points[0].T)
			}
		}
		window = math.Max(window, t.Window().Seconds())
	}
	var bands []chartBand
	legendBands := []legendItem{}
	if warm > 0 {
		bands = append(bands, chartBand{-warm, 0, "#eeeeee"})
		legendBands = append(legendBands, legendItem{"warm-up", "#eeeeee", "band"})
	}
	if m.TrimStartS > 0 || m.TrimEndS > 0 {
		if m.TrimStartS > 0 {
			bands = append(bands, chartBand{0, m.TrimStartS, "#fdf0d5"})
		}
		if m.TrimEndS > 0 && window > 0 {
			bands = append(bands, chartBand{window - m.TrimEndS, window, "#fdf0d5"})
		}
		legendBands = append(legendBands, legendItem{"trimmed", "#fdf0d5", "band"})
	}
	var out []template.HTML
	for _, mt := range metrics {
		c := lineChart{Title: mt.title, XLabel: "seconds from measure start", YLabel: mt.ylabel, Bands: bands}
		used := map[string]bool{}
		for _, t := range mine {
			pts := mt.series(t)
			if len(pts) == 0 {
				continue
			}
			used[t.Variant] = true
			c.Series = append(c.Series, chartSeries{Color: colors[t.Variant], Width: 1.2, Points: pts})
		}
		if len(c.Series) == 0 {
			continue
		}
		c.Legend = append(variantLegend(s, used, colors), legendBands...)
		out = append(out, c.svg())
	}
	return out, spectrum(s, mine, m, colors)
}

// variantLegend lists the variants in used, in the run's order.
func variantLegend(s *analyze.Summary, used map[string]bool, colors map[string]string) []legendItem {
	var l []legendItem
	for _, v := range s.Variants {
		if used[v] {
			l = append(l, legendItem{Label: v, Color: colors[v], Swatch: "line"})
		}
	}
	return l
}

// measured returns the series of t's measured services (all of them when
// none is marked measured).
func measured(t *record.Trial) []record.ServiceSeries {
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

// at interpolates a service's value at time x (clamped at the ends).
func at(pts []record.Sample, x float64, f func(record.Sample) float64) float64 {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].T >= x })
	switch {
	case i == 0:
		return f(pts[0])
	case i == len(pts):
		return f(pts[len(pts)-1])
	}
	a, b := pts[i-1], pts[i]
	if b.T == a.T {
		return f(b)
	}
	return f(a) + (f(b)-f(a))*(x-a.T)/(b.T-a.T)
}

// cpuSeries is the CPU use of t's measured services in cores: the
// derivative of their summed cumulative CPU, on the first service's grid.
func cpuSeries(t *record.Trial) [][2]float64 {
	ss := measured(t)
	if len(ss) == 0 {
		return nil
	}
	cpu := func(p record.Sample) float64 { return p.CPU }
	grid := ss[0].Points
	total := func(x float64) float64 {
		sum := 0.0
		for _, s := range ss {
			sum += at(s.Points, x, cpu)
		}
		return sum
	}
	var out [][2]float64
	for i := 1; i < len(grid); i++ {
		dt := grid[i].T - grid[i-1].T
		if dt <= 0 {
			continue
		}
		out = append(out, [2]float64{grid[i].T, (total(grid[i].T) - total(grid[i-1].T)) / dt})
	}
	return out
}

// sumSeries sums f over t's measured services that have it, on the first
// such service's grid.
func sumSeries(t *record.Trial, f func(record.Sample) (float64, bool)) [][2]float64 {
	var ss []record.ServiceSeries
	for _, s := range measured(t) {
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
	g := func(p record.Sample) float64 { v, _ := f(p); return v }
	var out [][2]float64
	for _, p := range ss[0].Points {
		sum := 0.0
		for _, s := range ss {
			sum += at(s.Points, p.T, g)
		}
		out = append(out, [2]float64{p.T, sum})
	}
	return out
}

// decode returns an interval's latency histogram, or nil.
func decode(s string) *hdr.Histogram {
	if s == "" {
		return nil
	}
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil
	}
	return h
}

// latencySeries is the q-th latency percentile of each second, in ms.
func latencySeries(t *record.Trial, q float64) [][2]float64 {
	var out [][2]float64
	for _, iv := range t.Intervals {
		h := decode(iv.Histogram)
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		out = append(out, [2]float64{iv.T, float64(h.ValueAtQuantile(q)) / 1000})
	}
	return out
}

// rateSeries is the requests completed in each second.
func rateSeries(t *record.Trial) [][2]float64 {
	var out [][2]float64
	for _, iv := range t.Intervals {
		out = append(out, [2]float64{iv.T, float64(iv.Completed)})
	}
	return out
}

// spectrum plots each variant's latency by percentile on a log scale of
// 1/(1-p), from the merged per-second histograms inside the trimmed window.
func spectrum(s *analyze.Summary, trials []*record.Trial, m *record.Manifest, colors map[string]string) template.HTML {
	merged := map[string]*hdr.Histogram{}
	for _, t := range trials {
		to := t.Window().Seconds() - m.TrimEndS
		for _, iv := range t.Intervals {
			if iv.T < m.TrimStartS || (to > 0 && iv.T >= to) {
				continue
			}
			h := decode(iv.Histogram)
			if h == nil {
				continue
			}
			if merged[t.Variant] == nil {
				merged[t.Variant] = hdr.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
			}
			merged[t.Variant].Merge(h)
		}
	}
	c := lineChart{Title: "Latency by percentile (merged trials)", XLabel: "percentile", YLabel: "ms",
		XTicks: []chartTick{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}}}
	lo, hi := 0.0, 4.0
	c.XMin, c.XMax = &lo, &hi
	used := map[string]bool{}
	for _, v := range s.Variants {
		h := merged[v]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		used[v] = true
		var pts [][2]float64
		for x := 0.0; x <= 4.0001; x += 0.05 {
			p := 100 * (1 - math.Pow(10, -x))
			pts = append(pts, [2]float64{x, float64(h.ValueAtQuantile(p)) / 1000})
		}
		c.Series = append(c.Series, chartSeries{Color: colors[v], Width: 2, Points: pts})
	}
	if len(c.Series) == 0 {
		return ""
	}
	c.Width = 760
	c.Legend = variantLegend(s, used, colors)
	return c.svg()
}

var htmlTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>toll report: {{.Scenario}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1240px}
h1{font-size:1.5em;margin-bottom:4px}
h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:2px;margin-top:28px}
h3{font-size:1.05em}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#f4f4f4}
td:first-child,th:first-child{text-align:left}
td.up{background:#fde2e1;color:#8b0000;font-weight:600}
td.down{background:#dff3e1;color:#0b5d1e;font-weight:600}
td.same{color:#777}
td.na{color:#999}
dl.env{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:14px}
dl.env dt{font-weight:600}
dl.env dd{margin:0}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:middle;margin-right:4px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{background:#fff;border:1px solid #eee}
svg text{font-size:11px;fill:#333}
svg text.title{font-size:13px;font-weight:600}
svg text.yt{text-anchor:end}
svg text.xt,svg text.xl,svg text.yl{text-anchor:middle}
svg line.grid{stroke:#eee}
svg rect.frame{fill:none;stroke:#999}
svg line.zero{stroke:#000;stroke-width:1.2}
svg line.whisker{stroke:#222;stroke-width:1.2}
.warn{color:#8a5300}
p.alert{padding:6px 10px;font-weight:600;border-left:4px solid}
p.partial{background:#fff4e0;border-color:#d88a00;color:#6b4300}
p.invalid{background:#fde2e1;border-color:#b00000;color:#8b0000}
ul.flags li{white-space:pre-wrap}
code{font-size:12px}
</style>
</head>
<body>
<h1>toll report: {{.Scenario}}</h1>
<p>Baseline <b>{{.Baseline}}</b> against
{{range .Variants}}{{if not .Baseline}}<span class="swatch" style="background:{{.Color}}"></span><b>{{.Name}}</b> {{end}}{{end}}
— {{.M.Rounds}} round(s), mode {{.M.Mode}}, seed {{.M.Seed}}{{if .M.Restart}}, restart {{.M.Restart}}{{end}}.</p>
{{if .Partial}}<p class="alert partial">{{.Partial}}</p>{{end}}
{{range .Invalid}}<p class="alert invalid">✗ invalid run: {{.}}</p>{{end}}
<h2>Environment</h2>
<dl class="env">
<dt>variants</dt><dd>{{range .Variants}}<span class="swatch" style="background:{{.Color}}"></span>{{.Name}}{{if .Baseline}} (baseline){{end}} &nbsp; {{end}}</dd>
{{if .Started}}<dt>started</dt><dd>{{.Started}}</dd>{{end}}
<dt>host</dt><dd>{{.M.Host.Name}} ({{.M.Host.OS}}/{{.M.Host.Arch}})</dd>
<dt>kernel</dt><dd>{{.M.Host.Kernel}}</dd>
<dt>CPU</dt><dd>{{.M.Host.CPUModel}}, {{.M.Host.Cores}} cores{{if .Memory}}, {{.Memory}} memory{{end}}</dd>
<dt>cgroup</dt><dd>{{.M.Layout.Cgroup}}{{if .M.Layout.CgroupNote}} ({{.M.Layout.CgroupNote}}){{end}}</dd>
<dt>pinning</dt><dd>load/toll CPUs {{or .M.Layout.LoadCPUs "—"}}; service CPUs {{or .M.Layout.ServiceCPUs "—"}}{{if .M.Layout.DuetCPUs}}; duet CPUs {{range $i, $c := .M.Layout.DuetCPUs}}{{if $i}}, {{end}}{{$c}}{{end}}{{end}}</dd>
{{if .M.Layout.Network}}<dt>network</dt><dd>{{if eq .M.Layout.Network "isolated"}}isolated: a namespace of the run's own, loopback only{{else}}{{.M.Layout.Network}}{{end}}</dd>{{end}}
<dt>load</dt><dd>{{.M.Load.Model}}, warm-up {{.M.Load.WarmupS}} s, window {{.M.Load.DurationS}} s, trim {{.M.TrimStartS}} s / {{.M.TrimEndS}} s{{if .M.Load.Target}}, target <code>{{.M.Load.Target}}</code>{{end}}</dd>
<dt>toll</dt><dd>{{.M.TollVersion}} ({{.M.GoVersion}})</dd>
{{if .Command}}<dt>command</dt><dd><code>{{.Command}}</code></dd>{{end}}
{{if .M.ScenarioFile}}<dt>scenario file</dt><dd><code>{{.M.ScenarioFile}}</code></dd>{{end}}
{{if .M.Notes}}<dt>notes</dt><dd><ul>{{range .M.Notes}}<li>{{.}}</li>{{end}}</ul></dd>{{end}}
{{if .M.Interrupted}}<dt>interrupted</dt><dd class="warn">the run was cut short</dd>{{end}}
</dl>
{{if .Warnings}}<h2>Warnings</h2><ul class="warn">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Flags}}<h2>Flagged trials</h2><ul class="warn flags">{{range .Flags}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range .Steps}}
<h2>Load step {{.Title}}</h2>
<table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{if .Bars}}<h3>Differences</h3>
{{.Bars}}{{end}}
{{if .Series}}<h3>Per second, every trial</h3>
<div class="charts">{{range .Series}}{{.}}
{{end}}</div>{{end}}
{{if .Spectrum}}<h3>Latency spectrum</h3>
{{.Spectrum}}{{end}}
{{end}}
<p style="color:#888;font-size:12px">Generated by toll. Shaded grey: warm-up; shaded amber: trimmed from the analysis.</p>
</body>
</html>
`))
