package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
)

// palette colours variants in order.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// colorOf returns the i-th variant colour.
func colorOf(i int) string { return palette[i%len(palette)] }

// chartSeries is one polyline of a chart.
type chartSeries struct {
	Color  string
	Width  float64
	Points [][2]float64 // data coordinates
	// Band, when set, is shaded from Band[i][1] to Band[i][2] at x
	// Band[i][0] (a quartile band around the median in Points).
	Band [][3]float64
	// Markers draws a dot at every point (few points, as load steps).
	Markers bool
}

// chartBand is a shaded x range.
type chartBand struct {
	From, To float64
	Fill     string
}

// chartTick is one labelled tick position, in data coordinates.
type chartTick struct {
	At    float64
	Label string
}

// legendItem is one entry of a chart's legend.
type legendItem struct {
	Label, Color string
	Swatch       string // "line" or "band"
}

// lineChart describes a line chart. XTicks, when set, replaces the automatic
// x ticks (used for the log-scaled percentile axis).
type lineChart struct {
	Title, XLabel, YLabel string
	Width, Height         int
	Series                []chartSeries
	Bands                 []chartBand
	Legend                []legendItem
	XTicks                []chartTick
	XMin, XMax            *float64
	// ZeroLine draws y = 0 (a chart of changes, which may be negative).
	ZeroLine bool
}

const (
	padL, padR, padT, padB = 64.0, 28.0, 28.0, 48.0
)

// esc escapes text for SVG (XML) content and attributes.
func esc(s string) string { return template.HTMLEscapeString(s) }

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

// fmtTick formats a tick value compactly.
func fmtTick(v float64) string {
	if math.Abs(v) < 1e-12 {
		return "0"
	}
	s := fmt.Sprintf("%.4g", v)
	return s
}

// shorten cuts s to at most n runes, marking the cut with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// extent returns the range of the chart's axes: its points', bands' and
// background bands' (from 0 up, or below 0 with ZeroLine), within XMin and
// XMax where set, and never empty.
func (c lineChart) extent() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = 0.0, math.Inf(-1)
	if c.ZeroLine {
		ymax = 0
	}
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !finite(p[0]) || !finite(p[1]) {
				continue
			}
			xmin, xmax = math.Min(xmin, p[0]), math.Max(xmax, p[0])
			ymin, ymax = math.Min(ymin, p[1]), math.Max(ymax, p[1])
		}
		for _, p := range s.Band {
			if finite(p[1]) && finite(p[2]) {
				ymin, ymax = math.Min(ymin, p[1]), math.Max(ymax, p[2])
			}
		}
	}
	for _, b := range c.Bands {
		xmin, xmax = math.Min(xmin, b.From), math.Max(xmax, b.To)
	}
	if c.XMin != nil {
		xmin = *c.XMin
	}
	if c.XMax != nil {
		xmax = *c.XMax
	}
	if !finite(xmin) || !finite(xmax) {
		xmin, xmax = 0, 1
	}
	if xmax <= xmin {
		xmax = xmin + 1
	}
	if !finite(ymax) || ymax <= ymin {
		ymax = ymin + 1
	}
	return xmin, xmax, ymin, ymax
}

// svg renders the chart as an inline SVG element.
func (c lineChart) svg() template.HTML {
	w, h := float64(c.Width), float64(c.Height)
	if w == 0 {
		w = 560
	}
	if h == 0 {
		h = 260
	}
	xmin, xmax, ymin, ymax := c.extent()
	// Headroom above the highest value, so no line runs along the frame.
	yt := niceTicks(ymin, ymin+(ymax-ymin)*1.15, 5)
	ymax = math.Max(ymax, yt[len(yt)-1])
	pw, ph := w-padL-padR, h-padT-padB
	X := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*pw }
	Y := func(y float64) float64 { return padT + ph - (y-ymin)/(ymax-ymin)*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, w, h, esc(c.Title))
	fmt.Fprintf(&b, `<text x="%.1f" y="16" class="title">%s</text>`, padL, esc(c.Title))
	for _, bd := range c.Bands {
		x0, x1 := X(math.Max(bd.From, xmin)), X(math.Min(bd.To, xmax))
		if x1 > x0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x0, padT, x1-x0, ph, esc(bd.Fill))
		}
	}
	// Axes and grid.
	for _, v := range yt {
		y := Y(v)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, padL, y, padL+pw, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="yt">%s</text>`, padL-4, y+4, fmtTick(v))
	}
	xt := c.XTicks
	if xt == nil {
		for _, v := range niceTicks(xmin, xmax, 8) {
			xt = append(xt, chartTick{v, fmtTick(v)})
		}
	}
	for _, t := range xt {
		if t.At < xmin-1e-9 || t.At > xmax+1e-9 {
			continue
		}
		x := X(t.At)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, x, padT, x, padT+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xt">%s</text>`, x, padT+ph+14, esc(t.Label))
	}
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="frame"/>`, padL, padT, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xl">%s</text>`, padL+pw/2, h-18, esc(c.XLabel))
	fmt.Fprintf(&b, `<text x="12" y="%.1f" class="yl" transform="rotate(-90 12 %.1f)">%s</text>`, padT+ph/2, padT+ph/2, esc(c.YLabel))
	// Bands, under every line.
	for _, s := range c.Series {
		var up, down []string
		for _, p := range s.Band {
			if !finite(p[0]) || !finite(p[1]) || !finite(p[2]) || p[0] < xmin || p[0] > xmax {
				continue
			}
			up = append(up, fmt.Sprintf("%.1f,%.1f", X(p[0]), Y(p[2])))
			down = append(down, fmt.Sprintf("%.1f,%.1f", X(p[0]), Y(p[1])))
		}
		if len(up) > 0 {
			// The polygon runs along the top and back along the bottom.
			slices.Reverse(down)
			fmt.Fprintf(&b, `<polygon fill="%s" fill-opacity="0.18" stroke="none" points="%s"/>`, esc(s.Color), strings.Join(append(up, down...), " "))
		}
	}
	// Series.
	for _, s := range c.Series {
		var pts []string
		for _, p := range s.Points {
			if !finite(p[0]) || !finite(p[1]) || p[0] < xmin || p[0] > xmax {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(p[0]), Y(p[1])))
		}
		if len(pts) == 0 {
			continue
		}
		wd := s.Width
		if wd == 0 {
			wd = 1.5
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%.2f" stroke-opacity="0.85" points="%s"/>`, esc(s.Color), wd, strings.Join(pts, " "))
		if s.Markers {
			for _, p := range pts {
				x, y, _ := strings.Cut(p, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`, x, y, esc(s.Color))
			}
		}
	}
	if c.ZeroLine && ymin < 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="zero"/>`, padL, Y(0), padL+pw, Y(0))
	}
	b.WriteString(legendRow(c.Legend, w-padR, 16))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// legendRow draws legend entries in a row that ends at x, on the title's
// line y: above the plot, never on its lines.
func legendRow(items []legendItem, right, y float64) string {
	var b strings.Builder
	x := right
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		label := shorten(it.Label, 24)
		x -= float64(len([]rune(label)))*6.2 + 22
		if it.Swatch == "band" {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="9" fill="%s" stroke="#999" stroke-width="0.5"/>`, x, y-8, esc(it.Color))
		} else {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="3" fill="%s"/>`, x, y-5, esc(it.Color))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="lg">%s</text>`, x+17, y, esc(label))
	}
	return b.String()
}

// legendSVG draws legend entries in a column from (x, y).
func legendSVG(items []legendItem, x, y float64) string {
	var b strings.Builder
	if len(items) > 0 {
		longest := 0
		for _, it := range items {
			longest = max(longest, len([]rune(shorten(it.Label, 40))))
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fff" fill-opacity="0.8" stroke="#ddd"/>`,
			x-4, y-4, float64(longest)*6.2+28, float64(len(items))*14+6)
	}
	for i, it := range items {
		yy := y + float64(i)*14
		if it.Swatch == "band" {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="9" fill="%s" stroke="#999" stroke-width="0.5"/>`, x, yy, esc(it.Color))
		} else {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="3" fill="%s"/>`, x, yy+3, esc(it.Color))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="lg">%s</text>`, x+18, yy+9, esc(shorten(it.Label, 40)))
	}
	return b.String()
}

// deltaBar is one row of a Δ% chart.
type deltaBar struct {
	Label     string
	Pct       float64
	Low, High float64
	Verdict   Verdict
	Size      string
}

// changeFill is the colour of a change: red shades for a cost that grew,
// green for one that shrank, by its size; grey when unresolved.
func changeFill(v Verdict, size string) string {
	shades := map[Verdict]map[string]string{
		VerdictUp:   {"small": "#f4b6b0", "medium": "#e4675c", "large": "#b3261e"},
		VerdictDown: {"small": "#b7e0bf", "medium": "#5cb270", "large": "#1e7b34"},
	}
	if c, ok := shades[v][size]; ok {
		return c
	}
	return "#b9b9b9"
}

// deltaBars renders each change as a bar at its estimate with a whisker
// over its 95% interval, coloured by direction and size, the figures
// written beside it, and a zero line.
func deltaBars(title string, rows []deltaBar) template.HTML {
	const rowH, labelW, textW, w = 20.0, 230.0, 215.0, 920.0
	h := padT + float64(len(rows))*rowH + 30
	// The axis spans the estimates and the intervals of resolved changes;
	// a wider interval (a noisy latency tail) is cut at the frame, its
	// figures written beside it, so that it cannot squash the rest.
	lo, hi := 0.0, 0.0
	for _, r := range rows {
		vs := []float64{r.Pct}
		if r.Verdict == VerdictUp || r.Verdict == VerdictDown {
			vs = append(vs, r.Low, r.High)
		}
		for _, v := range vs {
			if finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	pad := math.Max((hi-lo)*0.3, 5)
	lo, hi = math.Min(lo, 0)-pad, math.Max(hi, 0)+pad
	if lo > -pad {
		lo = -pad
	}
	ticks := niceTicks(lo, hi, 6)
	lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	pw := w - labelW - textW - 10
	X := func(v float64) float64 { return labelW + (v-lo)/(hi-lo)*pw }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, w, h, esc(title))
	fmt.Fprintf(&b, `<text x="8" y="16" class="title">%s</text>`, esc(title))
	bottom := padT + float64(len(rows))*rowH
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, X(t), padT, X(t), bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xt">%s%%</text>`, X(t), bottom+14, fmtTick(t))
	}
	for i, r := range rows {
		y := padT + float64(i)*rowH
		cy := y + rowH/2
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="yt">%s<title>%s</title></text>`, labelW-6, cy+4, esc(shorten(r.Label, 38)), esc(r.Label))
		x0, x1 := X(0), X(r.Pct)
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		fill := changeFill(r.Verdict, r.Size)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %+.2f%%</title></rect>`, x0, y+4, math.Max(x1-x0, 1), rowH-8, fill, esc(r.Label), r.Pct)
		wl, wh := X(math.Max(r.Low, lo)), X(math.Min(r.High, hi))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="whisker"/>`, wl, cy, wh, cy)
		for _, e := range []struct {
			x   float64
			cut bool
			dir float64
		}{{wl, r.Low < lo, -1}, {wh, r.High > hi, 1}} {
			if e.cut { // an arrowhead: the interval goes on past the frame
				fmt.Fprintf(&b, `<path d="M%.1f,%.1f l%.1f,4 l%.1f,4 z" fill="#222"/>`, e.x-6*e.dir, cy-4, 6*e.dir, -6*e.dir)
				continue
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="whisker"/>`, e.x, cy-5, e.x, cy+5)
		}
		est := fmt.Sprintf("%+.1f%%", r.Pct)
		if r.Verdict == VerdictSame {
			est = "~ " + est
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="fig"><tspan class="est">%s</tspan> [%+.1f%%, %+.1f%%]</text>`, labelW+pw+12, cy+4, esc(est), r.Low, r.High)
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="zero"/>`, X(0), padT-4, X(0), bottom)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xl">bar: estimate; whisker: 95%% interval (arrow: it runs on past the frame); grey: the interval holds 0</text>`, labelW+pw/2, h-4)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// dotRow is a dot plot's data: each paired round's change of one cost.
type dotRow struct {
	Label     string
	Rounds    []float64
	Est       float64
	Low, High float64
	HasCI     bool
	Color     string
}

// dotPlot draws every round's paired change of one cost as a dot on its
// own axis, with the estimate and its 95% interval behind them: the
// evidence of the interval.
func dotPlot(r dotRow, unit string) template.HTML {
	const w, h, l, rr, top = 440.0, 74.0, 14.0, 14.0, 24.0
	lo, hi := 0.0, 0.0
	for _, v := range append([]float64{r.Est, r.Low, r.High}, r.Rounds...) {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-1, hi+1
	}
	ticks := niceTicks(lo, hi, 6)
	lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	pw := w - l - rr
	X := func(v float64) float64 { return l + (v-lo)/(hi-lo)*pw }
	cy, band := top+14, 22.0
	title := r.Label
	if r.HasCI {
		title += fmt.Sprintf(": %+.1f%s [%+.1f%s, %+.1f%s]", r.Est, unit, r.Low, unit, r.High, unit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, w, h, esc(title))
	fmt.Fprintf(&b, `<text x="%.1f" y="15" class="title">%s</text>`, l, esc(title))
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, X(t), cy-band/2, X(t), cy+band/2)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xt">%s%s</text>`, X(t), cy+band/2+13, fmtTick(t), esc(unit))
	}
	if r.HasCI {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.15"/>`, X(r.Low), cy-band/2, math.Max(X(r.High)-X(r.Low), 1), band, esc(r.Color))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="zero"/>`, X(0), cy-band/2-2, X(0), cy+band/2+2)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"/>`, X(r.Est), cy-band/2, X(r.Est), cy+band/2, esc(r.Color))
	for j, v := range r.Rounds {
		if !finite(v) {
			continue
		}
		// Rounds alternate a little up and down, so equal values stay apart.
		dy := float64(j%3-1) * 5
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.4" fill="%s" fill-opacity="0.8" stroke="#fff" stroke-width="0.6"><title>round %d: %s%s</title></circle>`, X(v), cy+dy, esc(r.Color), j+1, fmtTick(v), esc(unit))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
