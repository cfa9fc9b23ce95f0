package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// matrixSummary is a run of a baseline and otel under each of cpus × rates
// (a load test's matrix), the CPU limit the outer loop.
func matrixSummary(t *testing.T, cpus, rates []float64) *analyze.Summary {
	t.Helper()
	m := &record.Manifest{Scenario: "matrix", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 3,
		Load: record.LoadSettings{Model: "open", Rates: rates, DurationS: 6}, Matrix: &record.Matrix{CPUs: cpus}}
	var trials []*record.Trial
	idx := 0
	for ci, c := range cpus {
		for ri, rate := range rates {
			for r := 1; r <= 3; r++ {
				for _, v := range []struct {
					name string
					cpu  float64
				}{{"baseline", 0.001}, {"otel", 0.0012}} {
					idx++
					tr := htmlTrial(t, idx, r, v.name, 6, rate, v.cpu*(1+0.01*float64(r)), 1000, false)
					tr.Step, tr.CPULimit = ci*len(rates)+ri, c
					trials = append(trials, tr)
				}
			}
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMatrixReport checks that a matrix's steps are told apart in every
// report: tables and headlines name the CPU limit beside the load, the
// OpenMetrics series carry it as a label, and report.html plots the
// changes against the CPU limit (one load step) or against load at each
// limit (several).
func TestMatrixReport(t *testing.T) {
	s := matrixSummary(t, []float64{1, 2}, []float64{50, 100})
	s.Manifest.Load.VariantWarmupS = 60
	var text bytes.Buffer
	if err := Text(&text, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"at 1 CPU, 50 req/s", "at 2 CPU, 100 req/s", "otel at 2 CPU, 50 req/s:", "restart , variant warm-up 1m0s, seed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var om bytes.Buffer
	if err := OpenMetrics(&om, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(om.String(), `cpu_limit="2"`) {
		t.Errorf("OpenMetrics series lack the cpu_limit label")
	}
	for _, tt := range []struct {
		s    *analyze.Summary
		want []string
	}{
		{s, []string{"Δ% CPU per request against load at 1 CPU", "Δ% CPU per request against load at 2 CPU"}},
		{matrixSummary(t, []float64{0.5, 1, 2}, []float64{100}), []string{"Δ% CPU per request against CPU limit"}},
	} {
		var page bytes.Buffer
		if err := HTML(&page, tt.s); err != nil {
			t.Fatal(err)
		}
		labels := checkSVGs(t, page.Bytes())
		for _, want := range tt.want {
			found := false
			for _, l := range labels {
				found = found || strings.HasPrefix(l, want)
			}
			if !found {
				t.Errorf("no chart %q among %q", want, labels)
			}
		}
	}
}
