package report

import (
	"fmt"
	"strconv"

	"github.com/tollperf/toll/analyze"
)

// profileTopRows is how many functions a profile's table shows.
const profileTopRows = 10

// profileTables are, per profiled variant and load step, where its added
// CPU per request goes: by the package and the function charged with it
// (the code that asked for the work, the ten largest; the first table
// ends with the total), by cause (those summed by origin), by the sampled
// function itself (own CPU, the ten largest) and by that function's
// origin.
func profileTables(s *analyze.Summary) []Table {
	var ts []Table
	for _, d := range s.Profiles {
		at := ""
		if len(s.Steps) > 1 {
			for _, st := range s.Steps {
				if st.Index == d.Step {
					at = " at " + st.Label()
				}
			}
		}
		header := []string{"Δ ms/request", "95% interval", "share", s.Baseline, d.Variant}
		top := func(title, what string, rows []analyze.ProfileRow, withOrigin, withTotal bool) Table {
			t := Table{Title: title, Header: append([]string{what}, header...)}
			if withOrigin {
				t.Header = append([]string{what, "origin"}, header...)
			}
			for i, r := range rows {
				if i == profileTopRows {
					break
				}
				cells := []Cell{TextCell(r.Name)}
				if withOrigin {
					cells = append(cells, TextCell(r.Origin))
				}
				t.Rows = append(t.Rows, append(cells, profileCells(r)...))
			}
			if withTotal {
				total := []Cell{TextCell("total profiled")}
				if withOrigin {
					total = append(total, TextCell(""))
				}
				t.Rows = append(t.Rows, append(total, profileCells(d.Total)...))
			}
			return t
		}
		ts = append(ts,
			top(fmt.Sprintf("Where %s's %s ms per request goes%s: by the package that asked for the work (%d rounds; %s)",
				d.Variant, signed(d.Total.Delta, 3), at, d.Rounds, d.File), "package", d.ChargedPackages, true, true),
			top(fmt.Sprintf("By the function that asked for the work: %s%s (its own CPU, and its allocations, locks, system calls and library calls)", d.Variant, at),
				"function", d.Charged, true, false),
			top(fmt.Sprintf("By cause: %s%s (the rows above by origin; in parentheses, work no code asked for)", d.Variant, at), "cause", d.Causes, false, false),
			top(fmt.Sprintf("By the function sampled: %s%s (own CPU, where the CPU was spent)", d.Variant, at), "function", d.Functions, true, false),
			top(fmt.Sprintf("By origin of the function sampled: %s%s", d.Variant, at), "origin", d.Origins, false, false),
		)
	}
	return ts
}

// profileCells are a profile row's figures: its change with its interval,
// its share of the total change, and both sides' own CPU per request.
func profileCells(r analyze.ProfileRow) []Cell {
	delta := r.Delta
	change := Cell{Text: signed(r.Delta, 4), Kind: KindChange, Value: &delta, Unit: "ms", Low: r.CILow, High: r.CIHigh, Verdict: VerdictNA}
	bounds := TextCell("—")
	if r.CILow != nil && r.CIHigh != nil {
		change.Bounds = "[" + signed(*r.CILow, 4) + ", " + signed(*r.CIHigh, 4) + "]"
		bounds = TextCell(change.Bounds)
		change.Verdict = verdictOf(r.Direction)
	}
	share := r.SharePct
	base, vari := r.Baseline, r.Variant
	return []Cell{change, bounds,
		{Text: strconv.FormatFloat(r.SharePct, 'f', 0, 64) + "%", Kind: KindValue, Value: &share, Unit: "%"},
		{Text: strconv.FormatFloat(r.Baseline, 'f', 4, 64), Kind: KindValue, Value: &base, Unit: "ms"},
		{Text: strconv.FormatFloat(r.Variant, 'f', 4, 64), Kind: KindValue, Value: &vari, Unit: "ms"}}
}
