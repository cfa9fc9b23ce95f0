package report

import (
	"fmt"
	"strconv"

	"github.com/tollperf/toll/analyze"
)

// profileTopRows is how many functions a profile's table shows.
const profileTopRows = 10

// profileTables are, per profiled variant and load step, the table of the
// functions its added CPU per request goes to (the ten largest) and the
// table of the origins (agent, runtime, kernel, application).
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
		header := []string{"", "Δ ms/request", "95% interval", "share", s.Baseline, d.Variant}
		t := Table{
			Title: fmt.Sprintf("Where %s's %s ms per request goes%s (own CPU per function, %d rounds; %s)",
				d.Variant, signed(d.Total.Delta, 3), at, d.Rounds, d.File),
			Header: append([]string{"function", "origin"}, header[1:]...),
		}
		for i, r := range d.Functions {
			if i == profileTopRows {
				break
			}
			t.Rows = append(t.Rows, append([]Cell{TextCell(r.Name), TextCell(r.Origin)}, profileCells(r)...))
		}
		t.Rows = append(t.Rows, append([]Cell{TextCell("total profiled"), TextCell("")}, profileCells(d.Total)...))
		ts = append(ts, t)
		o := Table{Title: fmt.Sprintf("By origin: %s%s", d.Variant, at), Header: append([]string{"origin"}, header[1:]...)}
		for _, r := range d.Origins {
			o.Rows = append(o.Rows, append([]Cell{TextCell(r.Name)}, profileCells(r)...))
		}
		ts = append(ts, o)
		c := Table{Title: fmt.Sprintf("By cause: %s%s (the runtime's and the kernel's work charged to the agent when it asked for it)", d.Variant, at),
			Header: append([]string{"cause"}, header[1:]...)}
		for _, r := range d.Causes {
			c.Rows = append(c.Rows, append([]Cell{TextCell(r.Name)}, profileCells(r)...))
		}
		ts = append(ts, c)
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
		switch {
		case *r.CILow > 0:
			change.Verdict = VerdictUp
		case *r.CIHigh < 0:
			change.Verdict = VerdictDown
		default:
			change.Verdict = VerdictSame
		}
	}
	share := r.SharePct
	base, vari := r.Baseline, r.Variant
	return []Cell{change, bounds,
		{Text: strconv.FormatFloat(r.SharePct, 'f', 0, 64) + "%", Kind: KindValue, Value: &share, Unit: "%"},
		{Text: strconv.FormatFloat(r.Baseline, 'f', 4, 64), Kind: KindValue, Value: &base, Unit: "ms"},
		{Text: strconv.FormatFloat(r.Variant, 'f', 4, 64), Kind: KindValue, Value: &vari, Unit: "ms"}}
}
