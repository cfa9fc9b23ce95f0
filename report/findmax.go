package report

import (
	"fmt"
	"io"

	"github.com/tollperf/toll/analyze"
)

// FindMaxTable is the table of a find-max run: each variant's highest
// sustainable rate, and its change against the baseline's.
func FindMaxTable(f *analyze.FindMaxSummary) Table {
	t := Table{
		Title:  fmt.Sprintf("highest sustainable rate (p99 ≤ %s ms, no errors, nothing missed, ≥ 99%% of the rate achieved)", num(f.SLOP99MS, 1)),
		Header: []string{"variant", "max rate (req/s)", "Δ%", "failed at (req/s)", "trials", "search time"},
	}
	for _, v := range f.Variants {
		maxRate, delta, failed := "none passed", "", "—"
		if v.MaxRate > 0 {
			maxRate = num(v.MaxRate, 0)
			if !v.Converged {
				maxRate += " (not converged)"
			}
		}
		if v.DeltaPct != nil {
			delta = signed(*v.DeltaPct, 1) + "%"
		}
		if v.FailedRate > 0 {
			failed = num(v.FailedRate, 0)
		}
		t.Rows = append(t.Rows, TextCells(v.Name, maxRate, delta, failed, fmt.Sprint(len(v.Trials)), fmt.Sprintf("%.0fs", v.SearchS)))
	}
	return t
}

// FindMaxText writes a find-max run's result as aligned text, with each
// variant's trials.
func FindMaxText(w io.Writer, f *analyze.FindMaxSummary) error {
	ew := &errWriter{w: w}
	t := FindMaxTable(f)
	fmt.Fprintf(ew, "\n  %s\n", t.Title)
	writeAligned(ew, t)
	for _, v := range f.Variants {
		fmt.Fprintf(ew, "\n  %s:", v.Name)
		for _, tr := range v.Trials {
			mark := "✓"
			if !tr.Pass {
				mark = "✗ " + tr.Why
			}
			fmt.Fprintf(ew, "  %s %s", num(tr.Rate, 0), mark)
		}
		fmt.Fprintln(ew)
	}
	fmt.Fprintln(ew, "\n  One trial per rate: the maximum is a single measurement per variant, without an interval; rerun to see its spread.")
	return ew.err
}
