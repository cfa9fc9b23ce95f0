package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// HTML writes report.html from the summary alone: one self-contained file
// (inline CSS and inline SVG, no scripts, no network), read top-down. First
// the answer: a headline per variant in words and the Δ% chart; then the
// tables with each interval as its bounds, coloured by direction and size;
// the per-round paired changes behind each interval as dot plots; for runs
// of several load steps, overhead against load; the per-second series as
// median and quartile band per variant on one time base; the latency
// spectrum; and last, warnings, flags and the environment. Its footer says
// the page was generated from an analysis of the run's trials, as toll run
// and toll report make it; HTMLFromSummary writes the page that toll report
// --from-summary makes.
func HTML(w io.Writer, s *analyze.Summary) error { return writeHTML(w, s, false) }

// HTMLFromSummary writes report.html as HTML does, for a summary read from
// summary.json rather than analysed from the trials (toll report
// --from-summary): its footer says so, which only such a page may.
func HTMLFromSummary(w io.Writer, s *analyze.Summary) error { return writeHTML(w, s, true) }

// writeHTML writes report.html from s; fromSummary says that s was read
// from summary.json, not analysed from the trials, for the footer.
func writeHTML(w io.Writer, s *analyze.Summary, fromSummary bool) error {
	if s == nil {
		return fmt.Errorf("html report: no summary")
	}
	d := htmlData{Scenario: s.Scenario, Baseline: s.Baseline, Warnings: warningTexts(s.Warnings), Invalid: InvalidTexts(s), FromSummary: fromSummary}
	if s.Partial != nil {
		d.Partial = PartialText(s.Partial)
	}
	if s.Arrivals != nil {
		d.Arrivals = ArrivalsNote(s.Arrivals)
	}
	m := s.Manifest
	if m == nil {
		m = &record.Manifest{}
	}
	d.M = m
	d.Command = strings.Join(m.Command, " ")
	d.VariantWarmup = strings.TrimPrefix(variantWarmup(m), ", ")
	d.Mode = modeOf(m)
	if s.Manifest != nil {
		d.Rounds = roundsText(s)
	}
	d.Schedule = scheduleLine(m)
	d.Warmups = warmupsLine(s)
	d.Settling = settlingLine(s)
	d.WarmupStarts = warmupStartsLine(s)
	d.Multiplicity = runMultiplicity(s)
	if line := latencyLine(s); line != "" {
		d.Multiplicity = append(d.Multiplicity, line)
	}
	d.Precision = precisionLines(s)
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
	if len(s.FlagGroups) > 0 {
		d.FlagsHeading = flagsHeading(s)
		d.InvalidCauses, d.ConditionCauses = flagCauses(s, true), flagCauses(s, false)
	}
	for _, g := range s.FlagGroups {
		f := htmlFlag{Text: FlagGroupText(s, g), Class: "cond"}
		if g.Invalidates {
			f.Mark, f.Class = markInvalid+" ", "invalid"
		}
		d.Flags = append(d.Flags, f)
	}
	for _, v := range s.Variants {
		if t, ok := s.Targets[v]; ok {
			d.Targets = append(d.Targets, variantTarget{Name: v, Target: t})
		}
	}
	labels := map[int]string{}
	for _, st := range s.Steps {
		labels[st.Index] = st.Label()
	}
	for _, h := range s.Headlines {
		hl := htmlHeadline{Variant: h.Variant, Color: colors[h.Variant], Text: HeadlineText(h)}
		if len(s.Steps) > 1 {
			hl.Step = labels[h.Step]
		}
		d.Headlines = append(d.Headlines, hl)
	}
	for _, st := range s.Steps {
		if bars := stepBars(s, st); bars != "" {
			d.Bars = append(d.Bars, bars)
		}
	}
	if len(s.Steps) > 1 {
		d.Load = append(loadCharts(s, colors), costCurveCharts(s, colors)...)
	}
	tables := Tables(s)
	// The profile tables come last, three per difference: its flame graph
	// goes with the first of them.
	firstProfile := len(tables) - 3*len(s.Profiles)
	for i, t := range tables {
		ht := htmlTable{Title: t.Title, Header: t.Header}
		for _, r := range t.Rows {
			var row []htmlCell
			for j, c := range r {
				hc := htmlCellOf(c)
				// A change's interval goes under it, unless the next
				// column shows it already (the profile tables).
				if hc.Sub != "" && j+1 < len(r) && r[j+1].Text == c.Bounds {
					hc.Sub = ""
				}
				row = append(row, hc)
			}
			ht.Rows = append(ht.Rows, row)
		}
		var hs htmlStep
		if i < len(s.Steps) {
			st := s.Steps[i]
			hs.Dots = append(stepDotPlots(st, colors), stepDots(s, st, colors)...)
			hs.Series = stepSeriesCharts(s, st, colors)
			hs.Spectrum = spectrum(s, st, colors)
		}
		if k := i - firstProfile; k >= 0 && k%3 == 0 {
			d := s.Profiles[k/3]
			if svg := flameSVG(d); svg != "" {
				hs.Flame = &htmlFlame{ID: flameID(d, s.Profiles), Variant: d.Variant, SVG: svg}
			}
		}
		hs.Table = ht
		d.Steps = append(d.Steps, hs)
	}
	return htmlTemplate.Execute(w, d)
}

type variantRef struct {
	Name, Color string
	Baseline    bool
}

// htmlCell is a table cell as the page shows it: its text, a second line
// (a change's interval as bounds) and its style.
type htmlCell struct{ Text, Sub, Class string }

// htmlCellOf styles a cell by what it is: a change by its verdict and size.
func htmlCellOf(c Cell) htmlCell {
	hc := htmlCell{Text: c.Text}
	switch c.Kind {
	case KindChange:
		hc.Class = "chg " + string(c.Verdict)
		if c.Verdict == VerdictUp || c.Verdict == VerdictDown {
			hc.Class += " " + string(c.Size)
		}
		if c.Value != nil && c.Bounds != "" {
			if c.Unit == "%" {
				hc.Text = pctBound(*c.Value, 1)
			} else {
				hc.Text = c.Text
			}
			switch c.Verdict {
			case VerdictSame:
				hc.Text = "~ " + hc.Text
			case VerdictEquivalent:
				hc.Text = "= " + hc.Text
			}
			if c.Chance && c.Unit == "%" {
				hc.Text += " " + ChanceMark
			}
			hc.Sub = c.Bounds
		}
	case KindNone:
		hc.Class = "na"
	case KindDelta:
		hc.Class = "dlt"
	}
	return hc
}

type htmlTable struct {
	Title  string
	Header []string
	Rows   [][]htmlCell
}

// htmlFlag is a cause's line among the flags: its mark and style (a
// cause that invalidates its trials, or a condition) and its text.
type htmlFlag struct{ Mark, Class, Text string }

type variantTarget struct{ Name, Target string }

type htmlHeadline struct {
	Variant, Color, Step, Text string
}

type htmlStep struct {
	Table    htmlTable
	Dots     []template.HTML
	Series   []template.HTML
	Spectrum template.HTML
	Flame    *htmlFlame
}

// htmlFlame is a variant's differential flame graph under its own heading,
// in an element with an id a link or a screenshot can name
// (scripts/screenshot.sh's SECTION).
type htmlFlame struct {
	ID, Variant string
	SVG         template.HTML
}

type htmlData struct {
	Scenario, Baseline string
	M                  *record.Manifest
	Command, Started   string
	Memory             string
	Variants           []variantRef
	Headlines          []htmlHeadline
	Bars               []template.HTML
	Load               []template.HTML
	Steps              []htmlStep
	Warnings           []string
	// Flags are the flags, a line per cause; FlagsHeading introduces
	// them; InvalidCauses and ConditionCauses name in brief the causes
	// that invalidate trials and the others, for the headline's note.
	Flags                          []htmlFlag
	FlagsHeading                   string
	InvalidCauses, ConditionCauses string
	Targets                        []variantTarget
	// Arrivals is how the open model's requests arrived (summary's note).
	Arrivals string
	// Partial says what a partial run is missing; Invalid why the run's
	// measurement is not valid.
	Partial string
	Invalid []string
	// FromSummary says the page was rendered from summary.json alone,
	// not from an analysis of the trials, for the footer.
	FromSummary bool

	// VariantWarmup is "variant warm-up 1m0s" when the run had one.
	VariantWarmup string
	// Mode is how the variants met the load (modeOf); Rounds how many
	// times they ran (roundsText).
	Mode, Rounds string
	// Warmups is how the variant warm-ups until the JIT settled went, when
	// the run had them.
	Warmups string
	// Settling is which starts' leading rounds were left out while their
	// JIT settled (settlingLine).
	Settling string
	// WarmupStarts is which rounds were left out as a start ahead of its
	// turn began its warm-up beside them (warmupStartsLine).
	WarmupStarts string
	// Schedule says what toll chose of the schedule (scheduleLine).
	Schedule string
	// Multiplicity says, per comparison, how many costs were tested at
	// once and which changes chance likely gave (runMultiplicity).
	Multiplicity []string
	// Precision is how a run in precision mode ended, a line per step.
	Precision []string
}

// chartedCosts are the costs the Δ% chart shows, when measured: what a
// reader asks of an agent first, on the first screen; the table below holds
// every cost, coloured by its change.
func chartedCosts() []analyze.Cost {
	return []analyze.Cost{analyze.CPUPerRequest, analyze.CPUCores, analyze.RSS, analyze.Memory,
		analyze.JVMHeapUsed, analyze.LatencyP50, analyze.LatencyP99, analyze.Throughput}
}

// stepBars builds the Δ% chart of one step: for every variant, the charted
// costs whose difference has a percentage and an interval.
func stepBars(s *analyze.Summary, st analyze.Step) template.HTML {
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
			if !slices.Contains(chartedCosts(), c.Cost) {
				continue
			}
			label := c.Label
			if len(s.Variants) > 2 {
				label = v.Name + ": " + label
			}
			cell := ChangeCell(analyze.Info(c.Cost), dl)
			rows = append(rows, deltaBar{Label: label, Pct: *dl.Pct, Low: *dl.CILow, High: *dl.CIHigh,
				Verdict: cell.Verdict, Size: string(cell.Size)})
		}
	}
	if len(rows) == 0 {
		return ""
	}
	title := "Δ% vs " + s.Baseline + " with 95% intervals"
	if len(s.Variants) == 2 {
		title = nonBaseline(s)[0] + ": " + title
	}
	if len(s.Steps) > 1 {
		title += ", at " + st.Label()
	}
	return deltaBars(title, rows)
}

// stepDots builds the dot plots of one step: per variant, for each
// headline cost and each resolved change with a relative change, each
// round's paired change.
func stepDots(s *analyze.Summary, st analyze.Step, colors map[string]string) []template.HTML {
	headline := map[string]map[analyze.Cost]bool{}
	for _, h := range s.Headlines {
		if h.Step != st.Index {
			continue
		}
		headline[h.Variant] = map[analyze.Cost]bool{}
		for _, c := range h.Changes {
			headline[h.Variant][c.Cost] = true
		}
	}
	var out []template.HTML
	for _, v := range st.Variants {
		if v.Name == s.Baseline {
			continue
		}
		for _, c := range v.Costs {
			dl := c.Delta
			if dl == nil || dl.Pct == nil || len(dl.Rounds) == 0 || !(dl.Significant || headline[v.Name][c.Cost]) {
				continue
			}
			r := dotRow{Label: c.Label, Rounds: dl.Rounds, Est: *dl.Pct, Color: colors[v.Name]}
			if len(s.Variants) > 2 {
				r.Label = v.Name + ": " + r.Label
			}
			if dl.CILow != nil && dl.CIHigh != nil {
				r.Low, r.High, r.HasCI = *dl.CILow, *dl.CIHigh, true
			}
			out = append(out, dotPlot(r, "%"))
		}
	}
	return out
}

// loadCharts plots, for a run of several load steps, each variant's
// change in the headline costs against the step's load, with its interval
// as a band: how the agent's cost grows with rate or users. A matrix of
// CPU limits gets a set of charts per limit, or, with one load step,
// one set against the CPU limit.
func loadCharts(s *analyze.Summary, colors map[string]string) []template.HTML {
	var groups [][]analyze.Step // steps by CPU limit, in order
	for i, st := range s.Steps {
		if i == 0 || st.CPULimit != s.Steps[i-1].CPULimit {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], st)
	}
	if len(groups) > 1 && len(groups) == len(s.Steps) {
		return deltaCharts(s, s.Steps, colors, "against CPU limit", "CPU limit (cores)", func(st analyze.Step) float64 { return st.CPULimit })
	}
	xlabel := "target rate (req/s)"
	if len(s.Steps) > 0 && s.Steps[0].Users > 0 {
		xlabel = "users"
	}
	load := func(st analyze.Step) float64 {
		if st.Users > 0 {
			return float64(st.Users)
		}
		return st.Rate
	}
	var out []template.HTML
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		title := "against load"
		if len(groups) > 1 {
			title += " at " + strconv.FormatFloat(g[0].CPULimit, 'f', -1, 64) + " CPU"
		}
		out = append(out, deltaCharts(s, g, colors, title, xlabel, load)...)
	}
	return out
}

// deltaCharts plots each variant's change in the headline costs over
// steps, each at at(step), with its interval as a band.
func deltaCharts(s *analyze.Summary, steps []analyze.Step, colors map[string]string, title, xlabel string, at func(analyze.Step) float64) []template.HTML {
	var out []template.HTML
	for _, cost := range []analyze.Cost{analyze.CPUPerRequest, analyze.LatencyP99, analyze.RSS} {
		info := analyze.Info(cost)
		c := lineChart{Title: "Δ% " + info.Label + " " + title, XLabel: xlabel, YLabel: "Δ% vs " + s.Baseline, Width: 560, ZeroLine: true}
		used := map[string]bool{}
		for _, v := range s.Variants {
			if v == s.Baseline {
				continue
			}
			var sr chartSeries
			sr.Color, sr.Width = colors[v], 2
			for _, st := range steps {
				x := at(st)
				for _, vr := range st.Variants {
					cr, ok := find(vr.Costs, cost)
					if vr.Name != v || !ok || cr.Delta == nil || cr.Delta.Pct == nil {
						continue
					}
					sr.Points = append(sr.Points, [2]float64{x, *cr.Delta.Pct})
					if cr.Delta.CILow != nil && cr.Delta.CIHigh != nil {
						sr.Band = append(sr.Band, [3]float64{x, *cr.Delta.CILow, *cr.Delta.CIHigh})
					}
				}
			}
			if len(sr.Points) > 0 {
				used[v] = true
				sr.Markers = true
				c.Series = append(c.Series, sr)
			}
		}
		if len(c.Series) == 0 {
			continue
		}
		c.Legend = variantLegend(s, used, colors)
		out = append(out, c.svg())
	}
	return out
}

// seriesChartPoints is the most points a per-second chart draws per
// series: about one per pixel of its plot (lineChart's default width).
const seriesChartPoints = 480

// stepSeriesCharts draws each per-second metric of a step as every
// variant's median line with its quartile band, all charts on one x
// range: the step's seconds, warm-up shaded and the trimmed seconds
// marked.
func stepSeriesCharts(s *analyze.Summary, st analyze.Step, colors map[string]string) []template.HTML {
	if len(st.Series) == 0 {
		return nil
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	var order []string
	byMetric := map[string][]chartSeries{}
	meta := map[string]analyze.Series{}
	used := map[string]map[string]bool{}
	for _, set := range st.Series {
		for _, m := range set.Metrics {
			if _, ok := meta[m.Metric]; !ok {
				order = append(order, m.Metric)
				meta[m.Metric] = m
				used[m.Metric] = map[string]bool{}
			}
			sr := chartSeries{Color: colors[set.Variant], Width: 2}
			// A chart is a few hundred pixels wide: a day's seconds
			// would only weigh down the page (series.csv keeps them).
			for _, t := range m.T {
				xmin, xmax = math.Min(xmin, t), math.Max(xmax, t+1)
			}
			m := m.Downsample(seriesChartPoints)
			for i, t := range m.T {
				// A value stands for the second [t, t+1): drawn at its middle.
				x := t + 0.5
				sr.Points = append(sr.Points, [2]float64{x, m.Median[i]})
				sr.Band = append(sr.Band, [3]float64{x, m.Low[i], m.High[i]})
			}
			byMetric[m.Metric] = append(byMetric[m.Metric], sr)
			used[m.Metric][set.Variant] = true
		}
	}
	var bands []chartBand
	var legendBands []legendItem
	if xmin < 0 {
		bands = append(bands, chartBand{xmin, 0, "#ececec"})
		legendBands = append(legendBands, legendItem{"warm-up", "#ececec", "band"})
	}
	if w := st.Window; w != nil {
		trimmed := false
		if w.From > 0 {
			bands = append(bands, chartBand{0, w.From, "#fdf0d5"})
			trimmed = true
		}
		if w.To < xmax {
			bands = append(bands, chartBand{w.To, xmax, "#fdf0d5"})
			trimmed = true
		}
		if trimmed {
			legendBands = append(legendBands, legendItem{"trimmed", "#fdf0d5", "band"})
		}
	}
	var out []template.HTML
	for _, name := range order {
		m := meta[name]
		c := lineChart{Title: m.Label, XLabel: "seconds from measure start", YLabel: m.Unit,
			Bands: bands, Series: byMetric[name], XMin: &xmin, XMax: &xmax}
		c.Legend = append(variantLegend(s, used[name], colors), legendBands...)
		out = append(out, c.svg())
	}
	return out
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

// spectrum plots each variant's latency by percentile on a log scale of
// 1/(1-p), from the step's merged histograms.
func spectrum(s *analyze.Summary, st analyze.Step, colors map[string]string) template.HTML {
	c := lineChart{Title: "Latency by percentile (trials merged, analysis window)", XLabel: "percentile", YLabel: "ms",
		XTicks: []chartTick{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}}}
	lo, hi := 0.0, 4.0
	c.XMin, c.XMax = &lo, &hi
	used := map[string]bool{}
	for _, sp := range st.Spectra {
		var pts [][2]float64
		for i, p := range sp.Percentiles {
			if p >= 100 {
				continue
			}
			pts = append(pts, [2]float64{-math.Log10(1 - p/100), sp.Ms[i]})
		}
		if len(pts) == 0 {
			continue
		}
		used[sp.Variant] = true
		c.Series = append(c.Series, chartSeries{Color: colors[sp.Variant], Width: 2, Points: pts})
	}
	if len(c.Series) == 0 {
		return ""
	}
	c.Width = 900
	c.Legend = variantLegend(s, used, colors)
	return c.svg()
}

var htmlTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>toll report: {{.Scenario}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:20px 24px;color:#222;max-width:1240px}
h1{font-size:1.35em;margin:0 0 2px}
p.sub{margin:0 0 10px;color:#555}
h2{font-size:1.15em;border-bottom:1px solid #ddd;padding-bottom:2px;margin-top:26px}
h3{font-size:1.02em;margin:14px 0 6px}
.headline{border:1px solid #ddd;border-radius:6px;padding:8px 14px;margin:8px 0 12px;background:#fafafa}
.headline p{margin:5px 0;font-size:17px;line-height:1.4}
.headline b{font-weight:700}
.headline .step{color:#666;font-weight:400}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right;white-space:nowrap;vertical-align:top}
th{background:#f4f4f4}
td:first-child,th:first-child{text-align:left}
td .sub{display:block;font-size:11px;font-weight:400;opacity:.85}
td.chg.up.small{background:#fdeceb;color:#8b0000}
td.chg.up.medium{background:#f9c9c5;color:#8b0000;font-weight:600}
td.chg.up.large{background:#e4675c;color:#fff;font-weight:700}
td.chg.down.small{background:#edf7ef;color:#0b5d1e}
td.chg.down.medium{background:#c6e8cd;color:#0b5d1e;font-weight:600}
td.chg.down.large{background:#3d9a55;color:#fff;font-weight:700}
td.chg.same{color:#777}
td.na,td.chg.na{color:#999}
td.dlt{color:#555}
dl.env{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:13px}
dl.env dt{font-weight:600}
dl.env dd{margin:0}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:baseline;margin-right:5px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{background:#fff;border:1px solid #eee;display:block}
svg text{font-size:11px;fill:#333}
svg text.title{font-size:13px;font-weight:600}
svg text.fig{font-size:12px}
svg tspan.est{font-weight:700}
svg text.yt{text-anchor:end}
svg text.xt,svg text.xl,svg text.yl{text-anchor:middle}
svg line.grid{stroke:#eee}
svg rect.frame{fill:none;stroke:#bbb}
svg line.zero{stroke:#000;stroke-width:1.2}
svg line.whisker{stroke:#222;stroke-width:1.4}
.warn{color:#8a5300}
p.alert{padding:6px 10px;font-weight:600;border-left:4px solid;margin:6px 0}
p.partial{background:#fff4e0;border-color:#d88a00;color:#6b4300}
p.invalid{background:#fde2e1;border-color:#b00000;color:#8b0000}
ul.flags li{white-space:pre-wrap}
ul.flags li.cond{color:#555}
ul.flags li.invalid{color:#8b0000;font-weight:600}
code{font-size:12px}
p.note{color:#666;font-size:12px;margin:4px 0}
.headline p.flagnote{font-size:13px;color:#666;margin:6px 0 2px}
.headline p.flagnote.invalid{color:#8b0000;font-weight:600}
</style>
</head>
<body>
<h1>toll: {{.Scenario}}</h1>
<p class="sub">{{range .Variants}}{{if not .Baseline}}<span class="swatch" style="background:{{.Color}}"></span><b>{{.Name}}</b> {{end}}{{end}}
against {{if eq .Baseline "baseline"}}<b>baseline</b>{{else}}baseline <b>{{.Baseline}}</b>{{end}} — {{.Rounds}}, {{if .M.Mode}}{{.Mode}}, {{end}}{{with .VariantWarmup}}{{.}}, {{end}}seed {{.M.Seed}}{{if .Started}}, {{.Started}}{{end}}</p>
{{with .Schedule}}<p class="note">{{.}}</p>{{end}}
{{with .Warmups}}<p class="note">{{.}}</p>{{end}}
{{with .Settling}}<p class="note">{{.}}</p>{{end}}
{{with .WarmupStarts}}<p class="note">{{.}}</p>{{end}}
{{range .Precision}}<p class="note">{{.}}</p>{{end}}
{{if .Partial}}<p class="alert partial">⚠ partial run: {{.Partial}}</p>{{end}}
{{range .Invalid}}<p class="alert invalid">✗ invalid run: {{.}}</p>{{end}}
{{if .Headlines}}<div class="headline">
{{range .Headlines}}<p><span class="swatch" style="background:{{.Color}}"></span><b>{{.Variant}}</b>{{if .Step}} <span class="step">at {{.Step}}</span>{{end}}: {{.Text}}</p>
{{end}}{{with .InvalidCauses}}<p class="flagnote invalid">✗ trials that did not measure what was planned: {{.}}; see <a href="#flags">Flagged trials</a> below.</p>{{end}}{{with .ConditionCauses}}<p class="flagnote">Conditions noted on trials, none of which invalidates them: {{.}}; see <a href="#flags">Flagged trials</a> below.</p>{{end}}</div>{{end}}
{{range .Bars}}{{.}}
{{end}}
<p class="note">Changes are against <b>{{.Baseline}}</b>: the geometric mean of the per-round paired ratios, with its 95% interval as [low, high]; ~ or grey: the interval holds 0, no difference this run can resolve; † after a change: its interval excludes 0 at its own 95% but not once corrected for the number of costs tested, it may be chance. Colour deepens with the size of the change (under 5%, 5–20%, 20% and more); red: the cost grew, green: it shrank.</p>
{{range .Multiplicity}}<p class="note">{{.}}</p>
{{end}}{{if .Load}}<h2>Overhead against load</h2>
<div class="charts">{{range .Load}}{{.}}
{{end}}</div>{{end}}
{{range .Steps}}
<h2>{{.Table.Title}}</h2>
<table>
<thead><tr>{{range .Table.Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Table.Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}{{if .Sub}}<span class="sub">{{.Sub}}</span>{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{if .Dots}}<h3>The evidence: each round's paired change vs {{$.Baseline}} (dots), the estimate (line) and its 95% interval (shaded)</h3>
<div class="charts">{{range .Dots}}{{.}}
{{end}}</div>{{end}}
{{if .Series}}<h3>Per second: median over trials, band from first to third quartile</h3>
<div class="charts">{{range .Series}}{{.}}
{{end}}</div>{{end}}
{{if .Spectrum}}<h3>Latency spectrum</h3>
{{.Spectrum}}{{end}}
{{with .Flame}}<div class="flamegraph" id="{{.ID}}"><h3>Differential flame graph: {{.Variant}}'s stacks against {{$.Baseline}}, each frame as wide as its CPU per request</h3>
{{.SVG}}</div>{{end}}
{{end}}
{{if .Warnings}}<h2>Warnings</h2><ul class="warn">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Flags}}<h2 id="flags">Flagged trials</h2><p class="note">{{.FlagsHeading}}</p><ul class="flags">{{range .Flags}}<li class="{{.Class}}">{{.Mark}}{{.Text}}</li>{{end}}</ul>{{end}}
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
<dt>load</dt><dd>{{.M.Load.Model}}, warm-up {{.M.Load.WarmupS}} s, window {{.M.Load.DurationS}} s, trim {{.M.TrimStartS}} s / {{.M.TrimEndS}} s{{if and .M.Load.Target (not .Targets)}}, target <code>{{.M.Load.Target}}</code>{{end}}</dd>
{{if .Arrivals}}<dt>arrivals</dt><dd>{{.Arrivals}}</dd>{{end}}
{{if .Targets}}<dt>target</dt><dd>{{range $i, $t := .Targets}}{{if $i}}; {{end}}{{$t.Name}} <code>{{$t.Target}}</code>{{end}}</dd>{{end}}
<dt>toll</dt><dd>{{.M.TollVersion}} ({{.M.GoVersion}})</dd>
{{if .Command}}<dt>command</dt><dd><code>{{.Command}}</code></dd>{{end}}
{{if .M.ScenarioFile}}<dt>scenario file</dt><dd><code>{{.M.ScenarioFile}}</code></dd>{{end}}
{{if .M.Notes}}<dt>notes</dt><dd><ul>{{range .M.Notes}}<li>{{.}}</li>{{end}}</ul></dd>{{end}}
{{if .M.Interrupted}}<dt>interrupted</dt><dd class="warn">the run was cut short</dd>{{end}}
</dl>
<p class="note">{{if .FromSummary}}Generated by <code>toll report --from-summary</code> from summary.json alone, without analysing the trials again.{{else}}Generated by toll from its analysis of the run's trials, which summary.json beside this page holds.{{end}} Shaded grey: warm-up; shaded amber: trimmed from the analysis.</p>
</body>
</html>
`))
