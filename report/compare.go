package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// CompareTables builds one table per load step of a run comparison: per
// variant, its overhead against the baseline in run A and in run B, and
// the change of B's overhead against A's.
func CompareTables(rc *analyze.RunComparison) []Table {
	var ts []Table
	for _, st := range rc.Steps {
		for _, v := range st.Variants {
			t := Table{Title: fmt.Sprintf("%s vs %s at %s", v.Name, rc.Baseline, st.Label()),
				Header: []string{"cost", "A: Δ% vs " + rc.Baseline, "B: Δ% vs " + rc.Baseline, "B vs A"}}
			for _, c := range v.Costs {
				info := analyze.Info(c.Cost)
				label := info.Label
				if info.Unit != "" {
					label += " (" + info.Unit + ")"
				}
				t.Rows = append(t.Rows, []Cell{TextCell(label), ChangeCell(info, c.A), ChangeCell(info, c.B), TextCell(c.Verdict)})
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// CompareText writes the comparison of runs a and b for a terminal.
func CompareText(w io.Writer, rc *analyze.RunComparison, a, b string) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "\nA: %s\nB: %s\n", a, b)
	for _, t := range CompareTables(rc) {
		fmt.Fprintf(ew, "\n  %s\n", t.Title)
		writeAligned(ew, t)
	}
	fmt.Fprintf(ew, "\n  %s\n", compareNote)
	return ew.err
}

// CompareMarkdown writes the comparison as Markdown (for $GITHUB_STEP_SUMMARY).
func CompareMarkdown(w io.Writer, rc *analyze.RunComparison, a, b string, failures []string) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "## toll compare\n\nA: %s  \nB: %s\n", codeSpan(a), codeSpan(b))
	for _, t := range CompareTables(rc) {
		fmt.Fprintf(ew, "\n### %s\n\n| %s |\n|%s\n", escape(t.Title), strings.Join(escapeAll(t.Header), " | "), strings.Repeat(" ---: |", len(t.Header)))
		for _, r := range t.Rows {
			fmt.Fprintf(ew, "| %s |\n", strings.Join(escapeAll(Texts(r)), " | "))
		}
	}
	fmt.Fprintf(ew, "\n%s\n", compareNote)
	if len(failures) > 0 {
		fmt.Fprintf(ew, "\n**Failed gates:**\n\n")
		for _, f := range failures {
			fmt.Fprintf(ew, "- ✗ %s\n", escape(f))
		}
	}
	return ew.err
}

const compareNote = "Each run's Δ% is that run's own paired overhead against its baseline. B vs A is the change of B's overhead against A's (Welch 95% interval over the two runs' rounds); ~ means the interval contains 0. Overheads, not raw values, are compared, because the machine's speed drifts between runs."
