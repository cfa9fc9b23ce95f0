package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// CostCurvesText writes what each variant adds across load: for a cost
// that adds up, its fixed part and its part per request with their
// intervals (and Istio's form, per 1,000 requests a second), or that the
// steps do not lie on a line and the steps themselves; for a latency, the
// steps.
func CostCurvesText(w io.Writer, curves []analyze.CostCurve) error {
	if len(curves) == 0 {
		return nil
	}
	fmt.Fprintln(w, "  what each variant adds across load (a fixed part plus a part per request, fitted to the steps):")
	for _, cc := range curves {
		switch {
		case cc.Summed && cc.Fits:
			fmt.Fprintf(w, "    %s, %s: %s %s whatever the load, plus %s %s per 1,000 req/s%s\n", cc.Variant, cc.Label,
				boundsText(*cc.Fixed), cc.Unit, boundsText(*cc.PerThousand), cc.Unit, perRequestNote(cc))
		case cc.Summed:
			fmt.Fprintf(w, "    %s, %s: the steps do not lie on a line (p = %.2g), as they are: %s\n", cc.Variant, cc.Label, cc.FitP, pointsText(cc))
		default:
			fmt.Fprintf(w, "    %s, %s: %s\n", cc.Variant, cc.Label, pointsText(cc))
		}
	}
	return nil
}

// perRequestNote gives CPU's part per request in milliseconds of CPU, the
// form a per-request cost is read in elsewhere in the report: cores per
// 1,000 requests a second are milliseconds of CPU per request.
func perRequestNote(cc analyze.CostCurve) string {
	if cc.Cost != analyze.CPUCores || cc.PerThousand == nil {
		return ""
	}
	return fmt.Sprintf(" (%s ms of CPU per request)", boundsText(*cc.PerThousand))
}

// boundsText writes an estimate with its interval, signed.
func boundsText(b analyze.Bounds) string {
	return fmt.Sprintf("%+.3g [%+.3g, %+.3g]", b.Value, b.Low, b.High)
}

// pointsText writes a curve's steps: rate, added value and interval.
func pointsText(cc analyze.CostCurve) string {
	var parts []string
	for _, p := range cc.Points {
		parts = append(parts, fmt.Sprintf("%g req/s %+.3g %s [%+.3g, %+.3g]", p.Rate, p.Added, cc.Unit, p.Low, p.High))
	}
	return strings.Join(parts, "; ")
}

// BillText writes the bill at a fleet's load: each variant's added cost
// in total over the instances with its prediction interval, a latency at
// the instances' rate, and what the added cores and memory cost (prices,
// when priced).
func BillText(w io.Writer, load analyze.FleetLoad, lines []analyze.BillLine, prices []analyze.Price) error {
	fmt.Fprintf(w, "at %s:\n", loadText(load))
	variant := ""
	for _, l := range lines {
		if l.Variant != variant {
			priceLine(w, prices, variant)
			variant = l.Variant
			fmt.Fprintf(w, "  %s adds\n", variant)
		}
		what := "in total"
		if !l.Summed {
			what = "at each instance's rate"
		}
		if l.Refused != "" {
			fmt.Fprintf(w, "    %-22s no figure: %s\n", l.Label, l.Refused)
			continue
		}
		fmt.Fprintf(w, "    %-22s %s %s %s\n", l.Label, boundsText(l.Added), l.Unit, what)
	}
	priceLine(w, prices, variant)
	return nil
}

// priceLine writes what variant's added cores and memory cost.
func priceLine(w io.Writer, prices []analyze.Price, variant string) {
	for _, p := range prices {
		if p.Variant == variant && variant != "" {
			var of []string
			for _, c := range p.Priced {
				of = append(of, analyze.Info(c).Label)
			}
			fmt.Fprintf(w, "    %-22s %.4g [%.4g, %.4g] an hour, %.4g [%.4g, %.4g] a 30-day month (%s)\n", "price",
				p.PerHour.Value, p.PerHour.Low, p.PerHour.High, p.PerMonth.Value, p.PerMonth.Low, p.PerMonth.High, strings.Join(of, " and "))
		}
	}
}

// loadText says what the load is.
func loadText(l analyze.FleetLoad) string {
	same := true
	for _, r := range l.Rates {
		same = same && r == l.Rates[0]
	}
	if same {
		return fmt.Sprintf("%d instance(s) at %g req/s each (%g req/s in total)", len(l.Rates), l.Rates[0], l.Total())
	}
	return fmt.Sprintf("%d instances at %g req/s in total", len(l.Rates), l.Total())
}

// costCurveCharts draws, per summed cost, what each variant adds against
// the load: every step with its interval, and the fitted line with its
// confidence band where the steps lie on one.
func costCurveCharts(s *analyze.Summary, colors map[string]string) []template.HTML {
	var out []template.HTML
	for _, cost := range []analyze.Cost{analyze.CPUCores, analyze.RSS} {
		info := analyze.Info(cost)
		c := lineChart{Title: "added " + info.Label + " against load: steps, and the fitted line (fixed part + part per request)",
			XLabel: "target rate (req/s)", YLabel: "added " + info.Unit, Width: 560, ZeroLine: true}
		used := map[string]bool{}
		for _, cc := range s.CostCurves {
			if cc.Cost != cost {
				continue
			}
			steps := chartSeries{Color: colors[cc.Variant], Width: 0, Markers: true}
			for _, p := range cc.Points {
				steps.Points = append(steps.Points, [2]float64{p.Rate, p.Added})
				steps.Band = append(steps.Band, [3]float64{p.Rate, p.Low, p.High})
			}
			c.Series = append(c.Series, steps)
			if len(cc.Line) > 0 {
				line := chartSeries{Color: colors[cc.Variant], Width: 2}
				for _, p := range cc.Line {
					line.Points = append(line.Points, [2]float64{p.Rate, p.Added})
					line.Band = append(line.Band, [3]float64{p.Rate, p.Low, p.High})
				}
				c.Series = append(c.Series, line)
			}
			used[cc.Variant] = true
		}
		if len(c.Series) == 0 {
			continue
		}
		c.Legend = variantLegend(s, used, colors)
		out = append(out, c.svg())
	}
	return out
}
