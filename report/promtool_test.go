package report

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// fullSummary returns a summary that holds every cost toll knows, per
// CPU, per request of a mix and scraped, for a baseline and a variant
// at two load steps, each variant's costs compared with the baseline:
// every family and label metrics.txt can hold.
func fullSummary() *analyze.Summary {
	var costs []analyze.Cost
	for _, ci := range analyze.Costs() {
		costs = append(costs, ci.Cost)
	}
	costs = append(costs, analyze.CPUBusy(0), analyze.CPUBusy(1),
		analyze.RequestCost("GET /a", analyze.LatencyP99), analyze.RequestCost("GET /a", analyze.ErrorRate),
		analyze.ScrapeCost("otelcol_receiver_accepted_spans", true), analyze.ScrapeCost("otelcol_exporter_queue_size", false))
	pct := func(x float64) *float64 { return &x }
	s := &analyze.Summary{Scenario: "quickstart", Baseline: "baseline", Variants: []string{"baseline", "otel"},
		Manifest: &record.Manifest{Scenario: "quickstart", TollVersion: "0.1.0-dev", Seed: 7, Started: time.Unix(1700000000, 0)}}
	for i, rate := range []float64{300, 600} {
		st := analyze.Step{Index: i, Rate: rate}
		for j, v := range []string{"baseline", "otel"} {
			vr := analyze.VariantResult{Name: v, Rounds: 5}
			for k, c := range costs {
				cr := analyze.CostResult{Cost: c, Label: analyze.Info(c).Label, Unit: analyze.Info(c).Unit, Value: float64(k + 1)}
				if j == 1 {
					cr.Delta = &analyze.Delta{N: 5, Pct: pct(10), CILow: pct(5), CIHigh: pct(15), CIUnit: "%", Significant: k%2 == 0}
				}
				vr.Costs = append(vr.Costs, cr)
			}
			st.Variants = append(st.Variants, vr)
		}
		s.Steps = append(s.Steps, st)
	}
	return s
}

// TestMetricsConventions checks metrics.txt of a summary with every cost
// against what Prometheus's own tools accept: the classic text parser
// (node_exporter's textfile collector, promtool) reads it, no gauge
// carries a label that Prometheus reserves for summaries and histograms
// (quantile, le), and, where promtool is installed, `promtool check
// metrics` exits 0 with no lint warning.
func TestMetricsConventions(t *testing.T) {
	var b bytes.Buffer
	if err := OpenMetrics(&b, fullSummary()); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	parseOpenMetrics(t, text)
	tp := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := tp.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("classic text parser: %v\n%s", err, text)
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "quantile" || l.GetName() == "le" {
					t.Errorf("%s (%s) has a %s label, which Prometheus reserves for summaries and histograms", name, f.GetType(), l.GetName())
				}
			}
		}
	}
	if fams["toll_latency_percentile_seconds"] == nil {
		t.Error("no toll_latency_percentile_seconds family")
	}
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skipf("promtool is not installed (scripts/install-test-deps.sh installs Debian's prometheus): %v", err)
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
