package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestArrivalsNote checks that the terminal, Markdown and HTML reports say
// how an open-model run's requests arrived, and that latency was measured
// with a release grid when the run had one, from the summary alone.
func TestArrivalsNote(t *testing.T) {
	for _, grid := range []float64{0, 0.002} {
		s2 := summaryWithLoad(t, record.LoadSettings{Model: "open", Arrival: "poisson", QuantumS: grid})
		var text, md, html bytes.Buffer
		if err := Text(&text, s2); err != nil {
			t.Fatal(err)
		}
		if err := Markdown(&md, s2); err != nil {
			t.Fatal(err)
		}
		if err := HTML(&html, s2); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
			if !strings.Contains(out, "Arrivals: poisson") {
				t.Errorf("grid %g: %s report does not say how requests arrived:\n%s", grid, name, out)
			}
			if says := strings.Contains(out, "measured with a release grid of 2ms"); says != (grid > 0) {
				t.Errorf("grid %g: %s report says grid: %v", grid, name, says)
			}
		}
	}
}

// TestLateFlagsGrouped checks that a run with many late-arrivals flags lists
// them in one line, which points at the Arrivals note, and a run with few
// lists each; other flags are listed one by one either way, in every
// report, and the HTML report still counts every flag.
func TestLateFlagsGrouped(t *testing.T) {
	for _, tt := range []struct {
		name      string
		late      int
		wantLines int // flag lines in the terminal report
		grouped   bool
	}{
		{"few", listedLate, listedLate + 1, false},
		{"many", 12, 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := summaryWithLoad(t, record.LoadSettings{Model: "open", Arrival: "uniform"})
			s.Flags = nil
			for i := 1; i <= tt.late; i++ {
				s.Flags = append(s.Flags, analyze.Flag{Trial: i, Variant: "otel", Round: i, Code: analyze.FlagLateArrival, Message: "the load generator sent requests late: p99 900 µs"})
			}
			s.Flags = append(s.Flags, analyze.Flag{Trial: 99, Variant: "otel", Round: 3, Code: analyze.FlagErrors, Message: "2.00% of requests failed"})
			var text, md, html bytes.Buffer
			for _, err := range []error{Text(&text, s), Markdown(&md, s), HTML(&html, s)} {
				if err != nil {
					t.Fatal(err)
				}
			}
			if got := strings.Count(text.String(), "✗ "); got != tt.wantLines {
				t.Errorf("terminal report has %d flag lines, want %d:\n%s", got, tt.wantLines, text.String())
			}
			groupLine := fmt.Sprintf("late-arrivals in %d trials (1, 2, 3", tt.late)
			for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
				if got := strings.Contains(out, groupLine); got != tt.grouped || !strings.Contains(out, "2.00% of requests failed") {
					t.Errorf("%s report: grouped %v (want %v), or the errors flag missing:\n%s", name, got, tt.grouped, out)
				}
			}
			if want := fmt.Sprintf("⚠ %d flag(s) raised", tt.late+1); !strings.Contains(html.String(), want) {
				t.Errorf("HTML report does not say %q", want)
			}
		})
	}
}
