package report

import (
	"bytes"
	"strings"
	"testing"

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
