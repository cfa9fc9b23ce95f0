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
		if tt.s == s && !strings.Contains(page.String(), "variant warm-up 1m0s, seed") {
			t.Error("report.html does not name the variant warm-up")
		}
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

// TestIdleReport checks how every report shows an idle step (rate: 0)
// beside a loaded one: named "idle", with its costs at rest and none of
// the per-request rows, every chart drawing something, and the exports
// holding no NaN.
func TestIdleReport(t *testing.T) {
	m := &record.Manifest{Scenario: "idle", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 3,
		Load: record.LoadSettings{Model: "open", Rates: []float64{0, 100}, DurationS: 6}}
	var trials []*record.Trial
	idx := 0
	for step, rate := range []float64{0, 100} {
		for r := 1; r <= 3; r++ {
			for _, v := range []string{"baseline", "otel"} {
				idx++
				tr := htmlTrial(t, idx, r, v, 6, 100, 0.001, 1000, true)
				tr.Step = step
				if rate == 0 {
					tr.Idle, tr.TargetRate, tr.Intervals = true, 0, nil
				}
				trials = append(trials, tr)
			}
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := Text(&text, s); err != nil {
		t.Fatal(err)
	}
	idle, loaded, ok := strings.Cut(text.String(), "\n  at 100 req/s\n")
	if !ok || !strings.Contains(idle, "\n  at idle\n") {
		t.Fatalf("no idle step before the loaded one:\n%s", text.String())
	}
	_, idle, _ = strings.Cut(idle, "\n  at idle\n")
	for _, row := range []string{"CPU per request", "throughput", "latency p99", "errors (%)"} {
		if strings.Contains(idle, "  "+row) {
			t.Errorf("the idle step has a %q row:\n%s", row, idle)
		}
		if !strings.Contains(loaded, "  "+row) {
			t.Errorf("the loaded step lacks its %q row", row)
		}
	}
	for _, row := range []string{"CPU (cores)", "RSS (MiB)", "JVM heap used (MiB)"} {
		if !strings.Contains(idle, "  "+row) {
			t.Errorf("the idle step lacks its %q row:\n%s", row, idle)
		}
	}
	var page, om, csv bytes.Buffer
	if err := HTML(&page, s); err != nil {
		t.Fatal(err)
	}
	checkSVGs(t, page.Bytes())
	if err := OpenMetrics(&om, s); err != nil {
		t.Fatal(err)
	}
	if err := CSV(&csv, s); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"metrics.txt": om.String(), "trials.csv": csv.String(), "report.html": page.String()} {
		if strings.Contains(out, "NaN") {
			t.Errorf("%s holds NaN", name)
		}
	}
}
