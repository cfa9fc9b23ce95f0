package report

import (
	"bytes"
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

// TestFlagsByCause checks that every report lists the flags a line per
// cause, with its trial count and worst figure in its own words; that only
// a cause that invalidates trials carries the failure mark, so a run whose
// flags are conditions of costs that stand does not read as failed; and
// that the HTML report names the causes, not a count of flags.
func TestFlagsByCause(t *testing.T) {
	s := summaryWithLoad(t, record.LoadSettings{Model: "open", Arrival: "uniform"})
	worst, steal, errs := 964.0, 3.1, 2.0
	s.Flags = nil
	var late []int
	for i := 1; i <= 17; i++ {
		late = append(late, i)
		s.Flags = append(s.Flags, analyze.Flag{Trial: i, Variant: "otel", Round: i, Code: analyze.FlagLateArrival, Value: 500, Message: "the load generator sent requests late: p99 500 µs"})
	}
	s.FlagGroups = []analyze.FlagGroup{
		{Code: analyze.FlagLateArrival, Trials: late, Of: 20, Worst: &worst},
		{Code: analyze.FlagSteal, Trials: []int{2, 5, 7, 9, 11, 13}, Of: 20, Worst: &steal},
	}
	cond := s.FlagGroups
	if got := causeText(analyze.FlagGroup{Code: analyze.FlagLateArrival, Worst: f(3463167)}); !strings.Contains(got, "up to 3.5 s late") {
		t.Errorf("a lateness of seconds reads %q, want it in seconds", got)
	}
	for _, tt := range []struct {
		name    string
		groups  []analyze.FlagGroup
		invalid bool
	}{
		{"conditions", cond, false},
		{"an invalidating cause", append([]analyze.FlagGroup{{Code: analyze.FlagErrors, Trials: []int{3}, Of: 20, Worst: &errs, Invalidates: true}}, cond...), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s.FlagGroups = tt.groups
			var text, md, html bytes.Buffer
			for _, err := range []error{Text(&text, s), Markdown(&md, s), HTML(&html, s)} {
				if err != nil {
					t.Fatal(err)
				}
			}
			wants := []string{
				"late-arrivals in 17 of 20 trials: the load generator sent requests up to 964 µs late at p99",
				"steal in 6 of 20 trials: the hypervisor took up to 3.1% of the CPUs&#39; time",
			}
			if tt.invalid {
				wants = append(wants, "errors in 1 of 20 trials (3): up to 2.00% of requests failed")
			}
			for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
				for _, want := range wants {
					if name != "html" {
						want = strings.ReplaceAll(want, "&#39;", "'")
					}
					if strings.Count(out, want) != 1 {
						t.Errorf("%s report does not say once %q:\n%s", name, want, out)
					}
				}
				if got := strings.Count(out, "✗"); (got > 0) != tt.invalid {
					t.Errorf("%s report has %d failure marks, want them only for an invalidating cause:\n%s", name, got, out)
				}
			}
			var lines int
			for _, l := range strings.Split(text.String(), "\n") {
				if strings.Contains(l, " in 17 of 20 trials") || strings.Contains(l, " in 6 of 20 trials") || strings.Contains(l, " in 1 of 20 trials") {
					lines++
				}
			}
			if want := len(tt.groups); lines != want {
				t.Errorf("terminal report has %d flag lines, want one per cause (%d):\n%s", lines, want, text.String())
			}
			h := html.String()
			if strings.Contains(h, "flag(s) raised") || !strings.Contains(h, "late-arrivals in 17 of 20 trials, steal in 6 of 20 trials") {
				t.Errorf("HTML report's note does not name the causes:\n%s", h)
			}
		})
	}
}
