package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// dotCosts are the costs a start-up or job experiment's HTML report plots
// every repetition of, per variant.
var dotCosts = []analyze.Cost{analyze.StartupReady, analyze.StartupJVM, analyze.StartupApp, analyze.StartupCPU,
	analyze.JobWall, analyze.JobWallPerWork, analyze.JobCPU}

// stepDotPlots plots, for a start-up or job experiment's step, every
// repetition of each variant as a dot, one row per variant, with the mean
// as a bar: the spread a reader judges the interval by. The values are
// analyze's (CostResult.Values); a failed repetition is not among them.
func stepDotPlots(st analyze.Step, colors map[string]string) []template.HTML {
	if st.Workload == "" {
		return nil
	}
	var out []template.HTML
	for _, c := range dotCosts {
		var rows []repetitionRow
		label := analyze.Info(c).Label
		for _, v := range st.Variants {
			for _, cr := range v.Costs {
				if cr.Cost == c && len(cr.Values) > 0 {
					rows = append(rows, repetitionRow{Label: v.Name, Color: colors[v.Name], Values: cr.Values, Mean: cr.Value})
					label = cr.Label
				}
			}
		}
		if len(rows) > 0 {
			out = append(out, repetitionPlot(fmt.Sprintf("%s, every repetition (%s)", label, st.Label()), analyze.Info(c).Unit, rows))
		}
	}
	return out
}

// repetitionRow is one variant's repetitions.
type repetitionRow struct {
	Label, Color string
	Values       []float64
	Mean         float64
}

// repetitionPlot renders one row of dots per variant on a shared axis, each
// variant's mean a vertical bar.
func repetitionPlot(title, unit string, rows []repetitionRow) template.HTML {
	const rowH, labelW, w = 26.0, 160.0, 760.0
	h := padT + float64(len(rows))*rowH + 36
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		for _, v := range r.Values {
			if finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if !finite(lo) || !finite(hi) {
		return ""
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-1, hi+1
	}
	ticks := niceTicks(lo, hi, 6)
	lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	pw := w - labelW - padR
	X := func(v float64) float64 { return labelW + (v-lo)/(hi-lo)*pw }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, w, h, esc(title))
	fmt.Fprintf(&b, `<text x="8" y="16" class="title">%s</text>`, esc(title))
	bottom := padT + float64(len(rows))*rowH
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, X(t), padT, X(t), bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xt">%s</text>`, X(t), bottom+14, fmtTick(t))
	}
	for i, r := range rows {
		y := padT + float64(i)*rowH + rowH/2
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="yt">%s</text>`, labelW-6, y+4, esc(shorten(r.Label, 24)))
		for k, v := range r.Values {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" fill-opacity="0.6"><title>%s, repetition %d: %s %s</title></circle>`,
				X(v), y, esc(r.Color), esc(r.Label), k+1, fmtTick(v), esc(unit))
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"><title>%s mean: %s %s</title></line>`,
			X(r.Mean), y-9, X(r.Mean), y+9, esc(r.Color), esc(r.Label), fmtTick(r.Mean), esc(unit))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="xl">%s (dot: one repetition; bar: mean)</text>`, labelW+pw/2, h-6, esc(unit))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
