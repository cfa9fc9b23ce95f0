package report

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tollperf/toll/history"
)

// HistoryText writes each series as a table of its runs, oldest first,
// with the changes of level found in it under the run each starts at.
func HistoryText(w io.Writer, series []*history.Series) error {
	if len(series) == 0 {
		_, err := fmt.Fprintln(w, "no run in the history matches")
		return err
	}
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s · %s at %s · %s, change against the baseline (%s)\n  on %s\n", s.Scenario, s.Variant, s.Step, s.Label, s.Unit, s.Machine)
		fmt.Fprintf(w, "  %5s  %-16s  %-28s  %s\n", "run", "started", "change [95% interval]", "labels")
		at := map[int]history.Shift{}
		for _, c := range s.Changes {
			at[c.Index] = c
		}
		for j, p := range s.Points {
			if c, ok := at[j]; ok {
				fmt.Fprintf(w, "  %s\n", shiftLine(s, c))
			}
			fmt.Fprintf(w, "  %5d  %-16s  %-28s  %s\n", p.Run, p.Started, pointText(s, p), labelsText(p.Labels))
		}
		if len(s.Changes) == 0 {
			fmt.Fprintf(w, "  no change of level in %d runs\n", len(s.Points))
		}
	}
	return nil
}

// pointText is a run's change with its interval.
func pointText(s *history.Series, p history.Point) string {
	if p.Low == nil || p.High == nil {
		return formatChange(s.Unit, p.Change) + " (no interval)"
	}
	return fmt.Sprintf("%s [%s, %s]", formatChange(s.Unit, p.Change), formatChange(s.Unit, *p.Low), formatChange(s.Unit, *p.High))
}

// formatChange writes a change in percent with its sign, or in the
// cost's unit.
func formatChange(unit string, v float64) string {
	if unit == "%" {
		return fmt.Sprintf("%+.1f%%", v)
	}
	return fmt.Sprintf("%+.4g %s", v, unit)
}

// shiftLine says where a series changed level, by how much, and which
// labels changed there.
func shiftLine(s *history.Series, c history.Shift) string {
	by := "a step of"
	if s.Unit == "%" {
		by = "the variant's cost against its baseline moved by"
	}
	line := fmt.Sprintf("▲ change of level from run %d: %s → %s, %s %s [%s, %s]", c.Run,
		formatChange(s.Unit, c.Before), formatChange(s.Unit, c.After), by,
		formatChange(s.Unit, c.Shift), formatChange(s.Unit, c.Low), formatChange(s.Unit, c.High))
	if len(c.Labels) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
			parts = append(parts, fmt.Sprintf("%s %s → %s", k, orNone(c.Labels[k][0]), orNone(c.Labels[k][1])))
		}
		line += "; labels changed: " + strings.Join(parts, ", ")
	}
	return line
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// labelsText writes labels as k=v, sorted.
func labelsText(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, " ")
}

// HistoryHTML writes a self-contained page that charts each series: every
// run's change with its interval, the levels between changes, each change
// marked, and each run linking to its report.
func HistoryHTML(w io.Writer, title string, series []*history.Series) error {
	type chart struct {
		Title, Machine string
		SVG            template.HTML
		Changes        []string
		Runs           []runLink
	}
	var charts []chart
	for _, s := range series {
		c := chart{Title: fmt.Sprintf("%s · %s at %s · %s (%s)", s.Scenario, s.Variant, s.Step, s.Label, s.Unit), Machine: s.Machine,
			SVG: template.HTML(historySVG(s))}
		for _, sh := range s.Changes {
			c.Changes = append(c.Changes, shiftLine(s, sh))
		}
		for _, p := range s.Points {
			c.Runs = append(c.Runs, runLink{ID: p.Run, Started: p.Started, Change: pointText(s, p), Labels: labelsText(p.Labels), Report: p.Dir + "/report.html"})
		}
		charts = append(charts, c)
	}
	return historyPage.Execute(w, struct {
		Title  string
		Charts []chart
	}{title, charts})
}

// runLink is a run's row under its chart.
type runLink struct {
	ID                              int64
	Started, Change, Labels, Report string
}

// historySVG draws a series: x the runs in order, y the change; each run a
// dot with its interval, each level a line, each change a dashed mark.
func historySVG(s *history.Series) string {
	const wd, ht, right, top, bottom = 720.0, 240.0, 16.0, 12.0, 28.0
	n := len(s.Points)
	if n == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range s.Points {
		lo, hi = min(lo, p.Change), max(hi, p.Change)
		if p.Low != nil && p.High != nil {
			lo, hi = min(lo, *p.Low), max(hi, *p.High)
		}
	}
	lo, hi = min(lo, 0), max(hi, 0)
	if hi == lo {
		hi = lo + 1
	}
	pad := (hi - lo) * 0.08
	ticks := []float64{lo, (lo + hi) / 2, hi}
	lo, hi = lo-pad, hi+pad
	labels := make([]string, len(ticks))
	left := 64.0 // wide enough for "+100.0%"
	for i, v := range ticks {
		labels[i] = formatChange(s.Unit, v)
		// About 6.5 px a character at 11 px, and 6 px to the axis.
		left = max(left, 6.5*float64(len([]rune(labels[i])))+12)
	}
	x := func(i float64) float64 { return left + (i+0.5)*(wd-left-right)/float64(n) }
	y := func(v float64) float64 { return top + (hi-v)*(ht-top-bottom)/(hi-lo) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img">`, wd, ht, wd, ht)
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#999"/>`, left, wd-right, y(0), y(0))
	for i, v := range ticks {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="end">%s</text>`, left-6, y(v)+4, template.HTMLEscapeString(labels[i]))
	}
	// Levels: from each change (or the start) to the next.
	starts := []int{0}
	levels := []float64{}
	for _, c := range s.Changes {
		starts = append(starts, c.Index)
		levels = append(levels, c.Before)
	}
	if len(s.Changes) > 0 {
		levels = append(levels, s.Changes[len(s.Changes)-1].After)
		for k, st := range starts {
			end := n
			if k+1 < len(starts) {
				end = starts[k+1]
			}
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#2a7" stroke-width="2"/>`, x(float64(st)-0.4), x(float64(end-1)+0.4), y(levels[k]), y(levels[k]))
		}
	}
	for _, c := range s.Changes {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#c33" stroke-dasharray="4 3"><title>%s</title></line>`,
			x(float64(c.Index)-0.5), x(float64(c.Index)-0.5), top, ht-bottom, template.HTMLEscapeString(shiftLine(s, c)))
	}
	for i, p := range s.Points {
		xi := x(float64(i))
		if p.Low != nil && p.High != nil {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#357"/>`, xi, xi, y(*p.Low), y(*p.High))
		}
		fmt.Fprintf(&b, `<a href="%s"><circle cx="%.1f" cy="%.1f" r="4" fill="#357"><title>run %d, %s: %s %s</title></circle></a>`,
			template.HTMLEscapeString(p.Dir+"/report.html"), xi, y(p.Change), p.Run, p.Started, template.HTMLEscapeString(pointText(s, p)), template.HTMLEscapeString(labelsText(p.Labels)))
		if n <= 30 || i%(n/30+1) == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle">%d</text>`, xi, ht-8, p.Run)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

var historyPage = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}h2{font-size:1.05em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em}td,th{padding:.15em .6em;text-align:left}.chg{color:#c33}small{color:#666}</style>
</head><body><h1>{{.Title}}</h1>
{{range .Charts}}<h2>{{.Title}}</h2><small>on {{.Machine}}</small>
<div>{{.SVG}}</div>
{{range .Changes}}<p class="chg">{{.}}</p>{{else}}<p>No change of level.</p>{{end}}
<details><summary>runs</summary><table><tr><th>run</th><th>started</th><th>change [95% interval]</th><th>labels</th></tr>
{{range .Runs}}<tr><td><a href="{{.Report}}">{{.ID}}</a></td><td>{{.Started}}</td><td>{{.Change}}</td><td>{{.Labels}}</td></tr>{{end}}
</table></details>
{{else}}<p>No run in the history matches.</p>{{end}}
</body></html>
`))
