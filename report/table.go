package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// Table is the summary table of one load step: one row per cost, a column
// for the baseline and, per variant, its value, Δ and Δ%.
type Table struct {
	Title  string
	Header []string
	Rows   [][]Cell
}

// Cell is one cell of a table: its text as every renderer shows it and,
// for a figure, what it is, so that a renderer styles it without reading
// the text.
type Cell struct {
	Text string
	// Kind says what the cell holds.
	Kind CellKind
	// Value is the figure shown (KindValue, KindDelta, KindChange); Unit
	// its unit ("%" for a relative change).
	Value *float64
	Unit  string
	// Low and High bound a change's 95% interval, in Unit.
	Low, High *float64
	// Bounds is the interval written as bounds ("[+30.6%, +72.2%]").
	Bounds string
	// Verdict says which way a change was resolved; Size how large it is.
	Verdict Verdict
	Size    analyze.Size
	// Chance marks a change that the correction for the number of costs
	// tested does not keep (report.Chance).
	Chance bool
}

// CellKind says what a Cell holds.
type CellKind string

// The kinds of cell.
const (
	KindText   CellKind = "text"   // a label or a note
	KindValue  CellKind = "value"  // a cost's value
	KindDelta  CellKind = "delta"  // a difference in the cost's unit
	KindChange CellKind = "change" // a difference with its interval and verdict
	KindNone   CellKind = "none"   // nothing to show ("—")
)

// Verdict is which way a change was resolved.
type Verdict string

// The verdicts of a change.
const (
	VerdictUp   Verdict = "up"   // the interval lies above 0
	VerdictDown Verdict = "down" // the interval lies below 0
	VerdictSame Verdict = "same" // the interval holds 0
	VerdictNA   Verdict = "na"   // no interval
	// VerdictEquivalent: the interval holds 0 and lies within the cost's
	// margin (its precision target): no change beyond it.
	VerdictEquivalent Verdict = "equivalent"
)

// verdictOf is the verdict a cell shows for a change's direction.
func verdictOf(d analyze.Direction) Verdict {
	switch d {
	case analyze.DirectionUp:
		return VerdictUp
	case analyze.DirectionDown:
		return VerdictDown
	case analyze.DirectionSame:
		return VerdictSame
	}
	return VerdictNA
}

// TextCell is a cell of text.
func TextCell(s string) Cell { return Cell{Text: s, Kind: KindText} }

// TextCells are cells of text.
func TextCells(ss ...string) []Cell {
	out := make([]Cell, len(ss))
	for i, s := range ss {
		out[i] = TextCell(s)
	}
	return out
}

// Texts returns the cells' text.
func Texts(r []Cell) []string {
	out := make([]string, len(r))
	for i, c := range r {
		out[i] = c.Text
	}
	return out
}

var noneCell = Cell{Text: "—", Kind: KindNone}

func valueCell(v float64, info analyze.CostInfo) Cell {
	return Cell{Text: num(v, info.Digits), Kind: KindValue, Value: &v, Unit: info.Unit}
}

func deltaCell(d *analyze.Delta, info analyze.CostInfo) Cell {
	v := d.Abs
	c := Cell{Text: DeltaAbs(info, d), Kind: KindDelta, Value: &v, Unit: info.Unit}
	if info.Unit == "ms" && d.AbsCILow != nil && d.AbsCIHigh != nil {
		c.Low, c.High = d.AbsCILow, d.AbsCIHigh
	}
	return c
}

// ChangeCell is the Δ% cell of a difference: its text (DeltaPct), its
// estimate, interval bounds, verdict and size.
func ChangeCell(info analyze.CostInfo, d *analyze.Delta) Cell {
	c := Cell{Text: DeltaPct(info, d), Kind: KindChange, Unit: d.CIUnit, Low: d.CILow, High: d.CIHigh,
		Verdict: VerdictNA, Size: d.Size, Chance: Chance(d)}
	est := d.Abs
	if d.Pct != nil {
		est = *d.Pct
	}
	c.Value = &est
	if d.FromZero && d.Pct == nil {
		// No ratio to a baseline of 0: the Δ column holds the change.
		c.Low, c.High = nil, nil
		if d.CILow != nil && !d.Significant {
			c.Verdict = VerdictSame
		}
		c.Size = analyze.SizeNone
		return c
	}
	if d.CILow != nil {
		c.Bounds = Bounds(info, d)
		c.Verdict = verdictOf(d.Direction)
		if d.Direction == analyze.DirectionSame && d.Equivalent {
			c.Verdict = VerdictEquivalent
		}
	}
	if c.Size == "" {
		c.Size = analyze.SizeNone
	}
	return c
}

// Bounds writes a difference's 95% interval as its bounds: "[+30.6%,
// +72.2%]", or in the cost's unit for an additive cost.
func Bounds(info analyze.CostInfo, d *analyze.Delta) string {
	if d.CILow == nil || d.CIHigh == nil {
		return ""
	}
	if d.Pct != nil {
		return fmt.Sprintf("[%s, %s]", pctBound(*d.CILow, 1), pctBound(*d.CIHigh, 1))
	}
	u := ""
	if info.Unit != "" {
		u = " " + info.Unit
	}
	return fmt.Sprintf("[%s, %s]%s", signed(*d.CILow, info.Digits), signed(*d.CIHigh, info.Digits), u)
}

// Tables builds one table per load step of s and, when there are several
// steps, a last one that sets the steps side by side.
func Tables(s *analyze.Summary) []Table {
	var ts []Table
	for _, st := range s.Steps {
		ts = append(ts, stepTable(s, st))
	}
	if len(s.Steps) > 1 {
		ts = append(ts, stepsTable(s))
	}
	for _, st := range s.Steps {
		if len(st.Binned) > 0 {
			ts = append(ts, binnedTable(st))
		}
	}
	return append(ts, profileTables(s)...)
}

// seconds writes a number of seconds as short as it is exact.
func seconds(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// binnedTable is a step's time series as a table (toll report
// --series-every): a row per span of seconds, and per variant its measured
// services' CPU (the median over trials, and the quartiles' range) and
// throughput.
func binnedTable(st analyze.Step) Table {
	every := st.Binned[0].Every
	t := Table{Title: fmt.Sprintf("at %s, every %s s (median over trials)", st.Label(), seconds(every)), Header: []string{"seconds"}}
	cpu, tput := analyze.Info(analyze.CPUCores), analyze.Info(analyze.Throughput)
	spans := map[float64]bool{}
	var froms []float64
	for _, b := range st.Binned {
		t.Header = append(t.Header, b.Variant+": CPU (cores)", b.Variant+": CPU quartiles", b.Variant+": throughput (req/s)")
		for _, bin := range b.Bins {
			if !spans[bin.From] {
				spans[bin.From] = true
				froms = append(froms, bin.From)
			}
		}
	}
	slices.Sort(froms)
	for _, from := range froms {
		row := []Cell{TextCell(seconds(from) + "–" + seconds(from+every))}
		for _, b := range st.Binned {
			i := slices.IndexFunc(b.Bins, func(x analyze.Bin) bool { return x.From == from })
			if i < 0 {
				row = append(row, Cell{Kind: KindNone}, Cell{Kind: KindNone}, Cell{Kind: KindNone})
				continue
			}
			bin := b.Bins[i]
			row = append(row, valueCell(bin.CPU, cpu),
				TextCell("["+num(bin.CPULow, cpu.Digits)+", "+num(bin.CPUHigh, cpu.Digits)+"]"),
				valueCell(bin.Throughput, tput))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// stepsTable sets the load steps side by side (the Sermant benchmark's
// 50- and 100-thread columns): one row per cost, and per step a column
// group of the baseline's value and each variant's Δ%.
func stepsTable(s *analyze.Summary) Table {
	t := Table{Title: "all load steps: " + s.Baseline + " and each variant's Δ% (its Δ where " + s.Baseline + " is 0)", Header: []string{"cost"}}
	others := nonBaseline(s)
	for _, st := range s.Steps {
		t.Header = append(t.Header, st.Label()+": "+s.Baseline)
		for _, v := range others {
			t.Header = append(t.Header, st.Label()+": "+v)
		}
	}
	var costs []analyze.Cost
	seen := map[analyze.Cost]bool{}
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			for _, c := range v.Costs {
				if !seen[c.Cost] {
					seen[c.Cost] = true
					costs = append(costs, c.Cost)
				}
			}
		}
	}
	for _, c := range costs {
		info := analyze.Info(c)
		label := info.Label
		if info.Unit != "" {
			label += " (" + info.Unit + ")"
		}
		row := []Cell{TextCell(label)}
		for _, st := range s.Steps {
			cell := func(name string) (analyze.CostResult, bool) {
				for _, v := range st.Variants {
					if v.Name == name {
						return find(v.Costs, c)
					}
				}
				return analyze.CostResult{}, false
			}
			if bc, ok := cell(s.Baseline); ok {
				row = append(row, valueCell(bc.Value, info))
			} else {
				row = append(row, Cell{Kind: KindNone})
			}
			for _, v := range others {
				vc, ok := cell(v)
				switch {
				case ok && vc.Delta != nil && vc.Delta.FromZero && vc.Delta.Pct == nil:
					// No ratio to a baseline of 0: the change itself.
					row = append(row, deltaCell(vc.Delta, info))
				case ok && vc.Delta != nil:
					row = append(row, ChangeCell(info, vc.Delta))
				default:
					row = append(row, Cell{Kind: KindNone})
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func stepTable(s *analyze.Summary, st analyze.Step) Table {
	t := Table{Title: "at " + st.Label()}
	t.Header = []string{"cost"}
	var base *analyze.VariantResult
	var others []analyze.VariantResult
	for i := range st.Variants {
		if st.Variants[i].Name == s.Baseline {
			base = &st.Variants[i]
		} else {
			others = append(others, st.Variants[i])
		}
	}
	if base == nil {
		return t
	}
	t.Header = append(t.Header, fmt.Sprintf("%s (n=%d)", base.Name, base.Rounds))
	for _, v := range others {
		t.Header = append(t.Header, fmt.Sprintf("%s (n=%d)", v.Name, v.Rounds), "Δ", "Δ%")
	}
	for _, bc := range base.Costs {
		info := analyze.Info(bc.Cost)
		var shown []analyze.CostResult
		for _, v := range others {
			if vc, ok := find(v.Costs, bc.Cost); ok {
				shown = append(shown, vc)
			}
		}
		info.Digits = agreeingDigits(info.Digits, bc.Value, shown)
		label := cmp.Or(bc.Label, info.Label) // analyze may name it for this run ("wall time per 1000000 messages")
		if info.Unit != "" {
			label += " (" + info.Unit + ")"
		}
		if bc.Cost == analyze.Throughput && st.Users == 0 {
			label = fmt.Sprintf("throughput (req/s, target %s)", num(st.Rate, 0))
		}
		row := []Cell{TextCell(label), valueCell(bc.Value, info)}
		for _, v := range others {
			vc, ok := find(v.Costs, bc.Cost)
			if !ok {
				row = append(row, noneCell, noneCell, noneCell)
				continue
			}
			row = append(row, valueCell(vc.Value, info))
			if vc.Delta == nil {
				row = append(row, noneCell, noneCell)
				continue
			}
			row = append(row, deltaCell(vc.Delta, info), ChangeCell(info, vc.Delta))
		}
		t.Rows = append(t.Rows, row)
	}
	t.Rows = append(t.Rows, serviceRows(base, others)...)
	return t
}

// agreeingDigits is the number of decimals, digits or up to three more,
// at which a row's values and each variant's Δ agree: a change the
// columns show (6 → 7) is not written 0, and no change they hide (6 → 6)
// is written +1. base is the baseline's value, vs the variants' results.
func agreeingDigits(digits int, base float64, vs []analyze.CostResult) int {
	agree := func(dg int) bool {
		p := math.Pow10(dg)
		for _, v := range vs {
			if v.Delta == nil {
				continue
			}
			shown := math.Round(v.Value*p) - math.Round(base*p)
			abs := math.Round(v.Delta.Abs * p)
			if sign(shown) != sign(abs) {
				return false
			}
		}
		return true
	}
	for dg := digits; dg < digits+3; dg++ {
		if agree(dg) {
			return dg
		}
	}
	return digits + 3
}

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// serviceRows gives each measured service its own rows, after the totals:
// an agent daemon or sidecar next to the application it serves.
func serviceRows(base *analyze.VariantResult, others []analyze.VariantResult) [][]Cell {
	all := append([]analyze.VariantResult{*base}, others...)
	var names []string
	roles := map[string]string{}
	for _, v := range all {
		for _, sr := range v.Services {
			if _, ok := roles[sr.Name]; !ok {
				names = append(names, sr.Name)
				roles[sr.Name] = sr.Role
			}
		}
	}
	// The costs every service may have, then those of its own (scraped
	// metrics, NMT) in the order analyze gives them.
	costs := analyze.ServiceCosts()
	for _, v := range all {
		for _, sr := range v.Services {
			for _, cr := range sr.Costs {
				if !slices.Contains(costs, cr.Cost) {
					costs = append(costs, cr.Cost)
				}
			}
		}
	}
	var rows [][]Cell
	for _, n := range names {
		for _, c := range costs {
			info := analyze.Info(c)
			label := fmt.Sprintf("%s (%s): %s", n, roles[n], info.Label)
			if info.Unit != "" {
				label += " (" + info.Unit + ")"
			}
			row := []Cell{TextCell(label)}
			if bc, ok := serviceCost(*base, n, c); ok {
				var shown []analyze.CostResult
				for _, v := range others {
					if cr, ok := serviceCost(v, n, c); ok {
						shown = append(shown, cr)
					}
				}
				info.Digits = agreeingDigits(info.Digits, bc.Value, shown)
			}
			any := false
			for i, v := range all {
				cr, ok := serviceCost(v, n, c)
				switch {
				case !ok && i == 0:
					row = append(row, noneCell)
				case !ok:
					row = append(row, noneCell, noneCell, noneCell)
				case i == 0:
					row = append(row, valueCell(cr.Value, info))
					any = true
				case cr.Delta == nil:
					row = append(row, valueCell(cr.Value, info), noneCell, noneCell)
					any = true
				default:
					row = append(row, valueCell(cr.Value, info), deltaCell(cr.Delta, info), ChangeCell(info, cr.Delta))
					any = true
				}
			}
			if any {
				rows = append(rows, row)
			}
		}
	}
	return rows
}

func serviceCost(v analyze.VariantResult, service string, c analyze.Cost) (analyze.CostResult, bool) {
	for _, sr := range v.Services {
		if sr.Name == service {
			return find(sr.Costs, c)
		}
	}
	return analyze.CostResult{}, false
}

func find(cs []analyze.CostResult, c analyze.Cost) (analyze.CostResult, bool) {
	for _, x := range cs {
		if x.Cost == c {
			return x, true
		}
	}
	return analyze.CostResult{}, false
}

// ChanceMark follows a change whose 95% interval excludes 0 but that the
// correction for the number of costs tested does not keep (Chance).
const ChanceMark = "†"

// Chance reports whether d reads a change at its own 95% that the
// correction for the number of costs its comparison tested at once does
// not keep: about one such in twenty costs that do not change.
func Chance(d *analyze.Delta) bool {
	return d.Significant && !d.SignificantCorrected && d.PValue != nil && d.CILow != nil
}

// DeltaPct formats a difference for the Δ% column: a ratio's estimate
// with its 95% interval as bounds, "+27.3% [+0.8%, +60.6%]" (an interval
// of a ratio is not symmetric about its estimate), an additive cost's
// interval as its half-width, "~" before either exactly when the interval
// contains 0, ChanceMark after one the correction for the costs tested
// does not keep, and the reason when there is no interval. A change from
// a baseline of 0 has no ratio: the Δ column holds it.
func DeltaPct(info analyze.CostInfo, d *analyze.Delta) string {
	s := deltaPct(info, d)
	if Chance(d) {
		s += " " + ChanceMark
	}
	return s
}

// deltaPct is DeltaPct without ChanceMark.
func deltaPct(info analyze.CostInfo, d *analyze.Delta) string {
	if d.FromZero && d.Pct == nil {
		if d.CILow != nil && !d.Significant {
			return "~ (baseline 0)"
		}
		return "n/a (baseline 0)"
	}
	if d.NoVerdict == analyze.NoVerdictFewStarts {
		// What differs between two starts is in no interval: the
		// estimate, and why it has no verdict.
		if d.Pct != nil {
			return fmt.Sprintf("%+.1f%% (1 start per variant: no verdict)", *d.Pct)
		}
		return "n/a (1 start per variant: no verdict)"
	}
	if d.Pct == nil {
		// Additive cost: the interval is in the cost's unit.
		if d.HalfWidth == nil {
			return "n/a"
		}
		half := *d.HalfWidth
		if !d.Significant {
			return fmt.Sprintf("~ (± %s)", num(half, info.Digits))
		}
		return fmt.Sprintf("± %s", num(half, info.Digits))
	}
	if d.CILow == nil {
		return fmt.Sprintf("%+.1f%% (no CI, n=%d)", *d.Pct, d.N)
	}
	s := pctBound(*d.Pct, 1) + " " + Bounds(info, d)
	if !d.Significant && d.Equivalent && d.MarginPct != nil {
		return fmt.Sprintf("= within ±%g%% (%s)", *d.MarginPct, s)
	}
	if !d.Significant {
		return "~ " + s
	}
	return s
}

// pctBound writes a percentage with its sign to digits decimals, or to as
// many more as it takes for a figure that is not 0 not to read as 0: an
// interval that excludes 0 never looks as if it held it.
func pctBound(x float64, digits int) string {
	for ; digits < 6; digits++ {
		if s := fmt.Sprintf("%+.*f", digits, x); x == 0 || strings.Trim(s, "+-0.") != "" {
			break
		}
	}
	return fmt.Sprintf("%+.*f%%", digits, x)
}

func num(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	s := fmt.Sprintf("%.*f", digits, v)
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s, "-0.") == "" {
		s = s[1:]
	}
	return s
}

// DeltaAbs renders a change in the cost's unit: "+0.412", and for costs in
// milliseconds (latencies, CPU per request), whose absolute change is read
// as often as the relative one (a proxy's extra hop), with the half-width
// of its 95% interval: "+0.412 ± 0.120".
func DeltaAbs(info analyze.CostInfo, d *analyze.Delta) string {
	s := signed(d.Abs, info.Digits)
	if info.Unit == "ms" && d.AbsHalfWidth != nil {
		s += " ± " + num(*d.AbsHalfWidth, info.Digits)
	}
	return s
}

func signed(v float64, digits int) string {
	s := num(v, digits)
	if !strings.HasPrefix(s, "-") && strings.Trim(s, "0.") != "" {
		s = "+" + s
	}
	return s
}
