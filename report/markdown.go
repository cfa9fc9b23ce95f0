package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// Markdown writes report.md: the same content as Text, as Markdown tables.
func Markdown(w io.Writer, s *analyze.Summary) error {
	ew := &errWriter{w: w}
	m := s.Manifest
	fmt.Fprintf(ew, "# %s: %s vs %s\n\n", escape(s.Scenario), escape(strings.Join(nonBaseline(s), ", ")), escape(s.Baseline))
	fmt.Fprintf(ew, "%d round(s), %s, restart %s, seed %d, started %s.\n", m.Rounds, modeOf(m.Mode), escape(m.Restart), m.Seed, m.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	for _, t := range Tables(s) {
		fmt.Fprintf(ew, "\n## %s\n\n", t.Title)
		fmt.Fprintf(ew, "| %s |\n", strings.Join(escapeAll(t.Header), " | "))
		align := []string{"---"}
		for range t.Header[1:] {
			align = append(align, "---:")
		}
		fmt.Fprintf(ew, "| %s |\n", strings.Join(align, " | "))
		for _, r := range t.Rows {
			fmt.Fprintf(ew, "| %s |\n", strings.Join(escapeAll(r), " | "))
		}
	}
	fmt.Fprintf(ew, "\nΔ%% is the change against %s: the geometric mean of the per-round ratios ± the half-width of its 95%% confidence interval; ~ means the interval contains 0 (no difference this run can resolve).\n", s.Baseline)
	var b strings.Builder
	writeNotes(&b, s, "")
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if strings.HasPrefix(line, "  ✗") {
			line = "- " + strings.TrimSpace(line)
		}
		fmt.Fprintln(ew, escape(line))
	}
	return ew.err
}

func escapeAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = escape(x)
	}
	return out
}

func escape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}
