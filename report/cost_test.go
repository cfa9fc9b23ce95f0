package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestCostCurveReported checks that a run over several rates reports each
// variant's cost curve: the text report's lines under the tables, and a
// chart of the added CPU against load in report.html; and that a run of
// one rate has neither.
func TestCostCurveReported(t *testing.T) {
	summary := func(rates []float64) *analyze.Summary {
		m := &record.Manifest{Scenario: "curve", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 3,
			Load: record.LoadSettings{Model: "open", Rates: rates, DurationS: 6}}
		var trials []*record.Trial
		idx := 0
		for si, rate := range rates {
			for r := 1; r <= 3; r++ {
				for _, v := range []struct {
					name string
					cpu  float64
				}{{"baseline", 0.001}, {"otel", 0.0013}} {
					idx++
					tr := htmlTrial(t, idx, r, v.name, 6, rate, v.cpu*(1+0.01*float64(r)), 1000, false)
					tr.Step = si
					trials = append(trials, tr)
				}
			}
		}
		s, err := analyze.Summarize(m, trials, analyze.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := summary([]float64{50, 100, 150})
	if len(s.CostCurves) == 0 {
		t.Fatal("no cost curve from three rates")
	}
	var text, page bytes.Buffer
	if err := Text(&text, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "what each variant adds across load") || !strings.Contains(text.String(), "otel, CPU:") {
		t.Errorf("text report lacks the curves:\n%s", text.String())
	}
	if err := HTML(&page, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "added CPU against load") {
		t.Error("report.html lacks the added CPU against load")
	}
	one := summary([]float64{100})
	text.Reset()
	if err := Text(&text, one); err != nil {
		t.Fatal(err)
	}
	if len(one.CostCurves) > 0 || strings.Contains(text.String(), "across load") {
		t.Errorf("a run of one rate has curves: %+v", one.CostCurves)
	}
}
