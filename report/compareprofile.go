package report

import (
	"fmt"

	"github.com/tollperf/toll/analyze"
)

// compareProfileTables builds, for each variant both runs profiled at a
// load step, the tables of the packages, the functions and the causes
// charged with its added CPU per request, then of the sampled functions,
// their packages and origins, whose added CPU per request moved most
// between run A and run B, with the profiled total below each.
func compareProfileTables(rc *analyze.RunComparison) []Table {
	var ts []Table
	for _, st := range rc.Steps {
		for _, v := range st.Variants {
			pc := v.Profile
			if pc == nil {
				continue
			}
			header := []string{"origin", "A: Δ ms/request", "B: Δ ms/request", "B − A"}
			for _, by := range []struct {
				what, title string
				rows        []analyze.ProfileRowChange
			}{
				{"package", fmt.Sprintf("Where %s's added CPU per request moved at %s, by the package that asked for the work (A: %d rounds, B: %d)",
					v.Name, st.Label(), pc.RoundsA, pc.RoundsB), pc.ChargedPackages},
				{"function", fmt.Sprintf("By the function that asked for the work: %s at %s (the %d largest changes of %d)",
					v.Name, st.Label(), len(pc.Charged), pc.ChargedCompared), pc.Charged},
				{"origin", fmt.Sprintf("By cause: %s at %s", v.Name, st.Label()), pc.Causes},
				{"function", fmt.Sprintf("By the function sampled: %s at %s (own CPU, the %d largest changes of %d)",
					v.Name, st.Label(), len(pc.Functions), pc.FunctionsCompared), pc.Functions},
				{"package", fmt.Sprintf("By the package sampled: %s at %s", v.Name, st.Label()), pc.Packages},
				{"origin", fmt.Sprintf("By origin of the function sampled: %s at %s", v.Name, st.Label()), pc.Origins},
			} {
				t := Table{Title: by.title, Header: append([]string{by.what}, header...)}
				if by.what == "origin" {
					t.Header = append([]string{by.what}, header[1:]...)
				}
				row := func(r analyze.ProfileRowChange) []Cell {
					cells := []Cell{TextCell(r.Name)}
					if by.what != "origin" {
						cells = append(cells, TextCell(r.Origin))
					}
					return append(cells, profileSideCell(r.A, r.Bound), profileSideCell(r.B, r.Bound), profileChangeCell(r))
				}
				for _, r := range by.rows {
					t.Rows = append(t.Rows, row(r))
				}
				total := pc.Total
				total.Name, total.Origin = "total profiled", ""
				t.Rows = append(t.Rows, row(total))
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// profileSideCell is one run's added CPU per request with its interval:
// "+0.0400 ± 0.0021"; for a row the run left out among smaller changes,
// the bound of its change there.
func profileSideCell(r *analyze.ProfileRow, bound float64) Cell {
	if r == nil {
		return Cell{Text: "within ±" + num(bound, 4), Kind: KindText}
	}
	c := msChangeCell(r.Delta, r.CILow, r.CIHigh, r.Direction)
	if r.HalfWidth != nil {
		c.Text += " ± " + num(*r.HalfWidth, 4)
	}
	return c
}

// profileChangeCell is a row's change B − A: "+0.0400 ± 0.0030" when its
// interval excludes 0, "~ (+0.0001 ± 0.0030)" when it holds it.
func profileChangeCell(r analyze.ProfileRowChange) Cell {
	c := msChangeCell(r.Change, r.CILow, r.CIHigh, r.Direction)
	switch c.Verdict {
	case VerdictNA:
		c.Text += " (no interval)"
	case VerdictSame:
		c.Text = "~ (" + c.Text + " ± " + num(*r.HalfWidth, 4) + ")"
	default:
		c.Text += " ± " + num(*r.HalfWidth, 4)
	}
	return c
}

// msChangeCell is a change of v ms per request with its interval [lo, hi]
// and its direction.
func msChangeCell(v float64, lo, hi *float64, dir analyze.Direction) Cell {
	c := Cell{Text: signed(v, 4), Kind: KindChange, Value: &v, Unit: "ms", Low: lo, High: hi, Verdict: VerdictNA}
	if lo == nil || hi == nil {
		return c
	}
	c.Bounds = "[" + signed(*lo, 4) + ", " + signed(*hi, 4) + "]"
	c.Verdict = verdictOf(dir)
	return c
}

// compareProfileNotes are the lines that follow a comparison's profile
// tables: what they show, or which run has profiles when only one has.
func compareProfileNotes(rc *analyze.RunComparison) []string {
	switch rc.ProfilesIn {
	case analyze.ProfilesInAOnly:
		return []string{"Profiles are in run A only (toll run --profile): where the CPU went is not compared."}
	case analyze.ProfilesInBOnly:
		return []string{"Profiles are in run B only (toll run --profile): where the CPU went is not compared."}
	case analyze.ProfilesInNeither:
		return nil
	}
	var compared, bounded bool
	for _, st := range rc.Steps {
		for _, v := range st.Variants {
			if v.Profile == nil {
				continue
			}
			compared = true
			for _, rows := range [][]analyze.ProfileRowChange{v.Profile.Functions, v.Profile.Packages} {
				for _, r := range rows {
					bounded = bounded || r.A == nil || r.B == nil
				}
			}
		}
	}
	if !compared {
		return []string{"Both runs have profiles, but of no variant at the same load step: where the CPU went is not compared."}
	}
	lines := []string{"In the profile tables, each run's Δ is the variant's own CPU per request less its baseline's, in ms, with its 95% interval over that run's paired rounds. " +
		"B − A is its change between the runs; the runs are independent, so its interval adds both runs' variances (Welch). ~ means the interval contains 0; " +
		"at 95% each, about one in twenty functions that did not move reads a change by chance."}
	if bounded {
		lines = append(lines, fmt.Sprintf("within ±x: the run kept its %d largest changes, and this one is not among them: its change there is at most x either way, and B − A's interval is widened by as much.", analyze.MaxProfileRows))
	}
	return lines
}
