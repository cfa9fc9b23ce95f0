package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
)

// TestMultiplicityNotes checks that the terminal report, report.md,
// report.html and toll compare's text and Markdown say how many costs were
// tested at once, how many changes chance alone gives, and which changes
// do not survive the correction for their number.
func TestMultiplicityNotes(t *testing.T) {
	pct := func(x float64) *float64 { return &x }
	mult := &analyze.Multiplicity{Tested: 17, Significant: 1, ExpectedByChance: 0.85, Primary: analyze.CPUPerRequest}
	chance := &analyze.Delta{N: 5, Pct: pct(20), CILow: pct(1), CIHigh: pct(40), CIUnit: "%", PValue: pct(0.03), Significant: true, Verdict: "+20.0% ± 19.5%"}
	s := summary(t)
	for i := range s.Steps[0].Variants {
		v := &s.Steps[0].Variants[i]
		if v.Name == s.Baseline {
			continue
		}
		v.Multiplicity = mult
		v.Costs = append(v.Costs, analyze.CostResult{Cost: analyze.LatencyP999, Label: "latency p99.9", Unit: "ms", Value: 3, Delta: chance})
	}
	rc := &analyze.RunComparison{Baseline: "baseline", Steps: []analyze.StepChange{{Rate: 300, Variants: []analyze.VariantChange{{
		Name: "otel", Multiplicity: mult,
		Costs: []analyze.CostChange{{Cost: analyze.LatencyP999, Label: "latency p99.9", A: chance, B: chance, Pct: 20, CILow: pct(1), CIHigh: pct(40), PValue: pct(0.03), Significant: true, Verdict: "+20.0% ± 19.5%"}},
	}}}}}
	for _, tt := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"text", func(b *bytes.Buffer) error { return Text(b, s) }},
		{"markdown", func(b *bytes.Buffer) error { return Markdown(b, s) }},
		{"compare text", func(b *bytes.Buffer) error { return CompareText(b, rc, "a", "b") }},
		{"compare markdown", func(b *bytes.Buffer) error { return CompareMarkdown(b, rc, "a", "b", nil) }},
		{"html", func(b *bytes.Buffer) error { return HTML(b, s) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"17 costs tested at 95% each, about 0.8 would read a change by chance; 1 read one, 0 once corrected", "by chance, likely: latency p99.9"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("no %q in:\n%s", want, b.String())
				}
			}
		})
	}
}
