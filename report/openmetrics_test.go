package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tollperf/toll/analyze"
)

// parseOpenMetrics reads OpenMetrics text with the Prometheus OpenMetrics
// parser, failing the test on anything it rejects.
func parseOpenMetrics(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(strings.NewReader(text), expfmt.NewFormat(expfmt.TypeOpenMetrics))
	fams := map[string]*dto.MetricFamily{}
	for {
		var f dto.MetricFamily
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return fams
		}
		if err != nil {
			t.Fatalf("OpenMetrics parser: %v\n%s", err, text)
		}
		fams[f.GetName()] = &f
	}
}

// sample returns the value of the series of family f whose labels include
// want, and whether there is one.
func sample(f *dto.MetricFamily, want map[string]string) (float64, bool) {
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range want {
			ok = ok && labels[k] == v
		}
		if ok {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// costOf returns a variant's cost from the summary's first step.
func costOf(t *testing.T, s *analyze.Summary, variant string, c analyze.Cost) analyze.CostResult {
	t.Helper()
	for _, v := range s.Steps[0].Variants {
		if v.Name != variant {
			continue
		}
		for _, cr := range v.Costs {
			if cr.Cost == c {
				return cr
			}
		}
	}
	t.Fatalf("no %s for %s", c, variant)
	return analyze.CostResult{}
}

// TestOpenMetricsBaseUnits checks metrics.txt with the Prometheus
// OpenMetrics parser and the text parser: one family per cost in base
// units with # UNIT (a name ends in its unit), the overhead as a ratio
// with its interval, toll_run_info, and no series twice.
func TestOpenMetricsBaseUnits(t *testing.T) {
	s := summary(t)
	var b bytes.Buffer
	if err := OpenMetrics(&b, s); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	fams := parseOpenMetrics(t, text)
	tp := expfmt.NewTextParser(model.LegacyValidation)
	if _, err := tp.TextToMetricFamilies(strings.NewReader(strings.TrimSuffix(text, "# EOF\n"))); err != nil {
		t.Errorf("text parser: %v", err)
	}
	known := FamilyNames()
	for name, f := range fams {
		if !slices.Contains(known, name) {
			t.Errorf("family %s is not in FamilyNames", name)
		}
		if u := f.GetUnit(); u != "" && !strings.HasSuffix(name, "_"+u) {
			t.Errorf("family %s has unit %q but does not end in it", name, u)
		}
		seen := map[string]bool{}
		for _, m := range f.GetMetric() {
			key := fmt.Sprint(m.GetLabel())
			if seen[key] {
				t.Errorf("%s: series %s twice", name, key)
			}
			seen[key] = true
		}
	}
	for name, unit := range map[string]string{"toll_cpu_per_request_seconds": "seconds", "toll_rss_bytes": "bytes", "toll_overhead_ratio": "ratio"} {
		if fams[name] == nil || fams[name].GetUnit() != unit {
			t.Errorf("%s: want a family with # UNIT %s", name, unit)
		}
	}
	if !strings.Contains(text, "# UNIT toll_cpu_per_request_seconds seconds\n") {
		t.Errorf("no # UNIT line for toll_cpu_per_request_seconds:\n%s", text)
	}
	otel := map[string]string{"variant": "otel", "scenario": "s<x>", "run": "19700101T000000Z", "target_rate": "10"}
	cpu := costOf(t, s, "otel", analyze.CPUPerRequest)
	if v, ok := sample(fams["toll_cpu_per_request_seconds"], otel); !ok || math.Abs(v-cpu.Value/1000) > 1e-12 {
		t.Errorf("toll_cpu_per_request_seconds = %g, want %g (ms / 1000)", v, cpu.Value/1000)
	}
	rss := costOf(t, s, "otel", analyze.RSS)
	if v, ok := sample(fams["toll_rss_bytes"], otel); !ok || math.Abs(v-rss.Value*(1<<20)) > 1e-3 {
		t.Errorf("toll_rss_bytes = %g, want %g (MiB × 2^20)", v, rss.Value*(1<<20))
	}
	ratio := map[string]string{"variant": "otel", "cost": string(analyze.CPUPerRequest)}
	r, ok1 := sample(fams["toll_overhead_ratio"], ratio)
	lo, ok2 := sample(fams["toll_overhead_low_ratio"], ratio)
	hi, ok3 := sample(fams["toll_overhead_high_ratio"], ratio)
	if !ok1 || !ok2 || !ok3 || math.Abs(r-1.10) > 1e-4 || lo >= r || hi <= r {
		t.Errorf("toll_overhead_ratio %g [%g, %g], want 1.10 inside its interval", r, lo, hi)
	}
	if _, ok := sample(fams["toll_overhead_ratio"], map[string]string{"variant": "baseline"}); ok {
		t.Error("the baseline has an overhead against itself")
	}
	if _, ok := sample(fams["toll_run_info"], map[string]string{"scenario": "s<x>", "run": "19700101T000000Z", "version": "", "seed": "0"}); !ok {
		t.Errorf("no toll_run_info{scenario, run, version, seed}:\n%s", text)
	}
	if fams["toll_cost"] != nil {
		t.Error("toll_cost, the family of mixed units, is still written")
	}
}

// TestMetricNames checks how each cost is named for Prometheus: base
// units, and labels for what one family holds several of.
func TestMetricNames(t *testing.T) {
	for _, tt := range []struct {
		cost   analyze.Cost
		name   string
		scale  float64
		labels []string
	}{
		{analyze.CPUPerRequest, "toll_cpu_per_request_seconds", 1e-3, nil},
		{analyze.RSS, "toll_rss_bytes", 1 << 20, nil},
		{analyze.ErrorRate, "toll_error_ratio", 1e-2, nil},
		{analyze.LatencyMax, "toll_latency_percentile_seconds", 1e-3, []string{"percentile", "100"}},
		{analyze.CPUBusy(3), "toll_machine_cpu_ratio", 1e-2, []string{"cpu", "3"}},
		{analyze.MachineCPU, "toll_machine_cpu_ratio", 1e-2, []string{"cpu", "all"}},
		{analyze.RequestCost("a:b", analyze.LatencyP99), "toll_latency_percentile_seconds", 1e-3, []string{"request", "a:b", "percentile", "99"}},
		{analyze.RequestCost("checkout", analyze.ErrorRate), "toll_error_ratio", 1e-2, []string{"request", "checkout"}},
		{analyze.ScrapeCost("otelcol_receiver_accepted_spans", true), "toll_scraped_per_second", 1, []string{"metric", "otelcol_receiver_accepted_spans"}},
		{analyze.ScrapeCost("otelcol_exporter_queue_size", false), "toll_scraped", 1, []string{"metric", "otelcol_exporter_queue_size"}},
		{analyze.JVMOffHeap, "toll_jvm_offheap_committed_bytes", 1 << 20, nil},
		{analyze.GCCount, "toll_jvm_gcs_per_second", 1.0 / 60, nil},
		{"node_heap_used_mib", "toll_node_heap_used_bytes", 1 << 20, nil},
		{"node_event_loop_busy_ms_per_s", "toll_node_event_loop_busy_ratio", 1e-3, nil},
	} {
		m := metricOf(tt.cost)
		if m.name != tt.name || m.scale != tt.scale || !slices.Equal(m.labels, tt.labels) {
			t.Errorf("%s: %s ×%g %v, want %s ×%g %v", tt.cost, m.name, m.scale, m.labels, tt.name, tt.scale, tt.labels)
		}
	}
	for _, ci := range analyze.Costs() {
		if m := metricOf(ci.Cost); !model.LegacyValidation.IsValidMetricName(m.name) || m.help == "" && m.labels == nil {
			t.Errorf("%s: metric %q (help %q)", ci.Cost, m.name, m.help)
		}
	}
}

// startDaemon starts a Prometheus daemon on a free loopback port with
// args (ADDR in them is replaced by the address) and waits until its
// /-/ready answers 200. It skips the test when the binary is missing.
func startDaemon(t *testing.T, bin, pkg string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		t.Skipf("%s is not installed (scripts/install-test-deps.sh installs Debian's %s): %v", bin, pkg, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "ADDR", addr)
	}
	cmd := exec.Command(path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + addr
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if r, err := http.Get(base + "/-/ready"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(end) {
			t.Fatalf("%s did not get ready in 30 s:\n%s", bin, out.String())
		}
	}
}

// TestPushToPushgateway pushes two runs of one scenario to a real
// Prometheus Pushgateway on loopback (Debian's prometheus-pushgateway) and
// reads both back from its /metrics page: runs are grouped apart, so the
// second push does not replace the first.
func TestPushToPushgateway(t *testing.T) {
	base := startDaemon(t, "prometheus-pushgateway", "prometheus-pushgateway", "--web.listen-address=ADDR")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, second := summary(t), summary(t)
	second.Manifest.Started = time.Unix(3600, 0)
	for _, s := range []*analyze.Summary{first, second} {
		if err := Push(ctx, base, s); err != nil {
			t.Fatal(err)
		}
	}
	r, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	for _, run := range []string{"19700101T000000Z", "19700101T010000Z"} {
		want := `toll_overhead_ratio{cost="cpu_per_request_ms",instance="",job="toll",run="` + run + `",scenario="s<x>",target_rate="10",target_users="0",variant="otel"}`
		if !strings.Contains(string(body), want) {
			t.Errorf("pushgateway does not show %s:\n%.3000s", want, body)
		}
	}
}

// TestPrometheusScrapes has Debian's real Prometheus scrape metrics.txt,
// served on loopback as OpenMetrics, and asks its HTTP API for the series
// and their units: what Prometheus stores is what toll wrote.
func TestPrometheusScrapes(t *testing.T) {
	s := summary(t)
	var b bytes.Buffer
	if err := OpenMetrics(&b, s); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeOpenMetrics)))
		w.Write(b.Bytes())
	}))
	defer srv.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	target := strings.TrimPrefix(srv.URL, "http://")
	if err := os.WriteFile(config, []byte(`global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: toll
    honor_labels: true
    static_configs: [{targets: ["`+target+`"]}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startDaemon(t, "prometheus", "prometheus", "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=ADDR")

	query := func(path string, params url.Values, into any) error {
		r, err := http.Get(base + path + "?" + params.Encode())
		if err != nil {
			return err
		}
		defer r.Body.Close()
		return json.NewDecoder(r.Body).Decode(into)
	}
	var res struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	q := url.Values{"query": {`toll_cpu_per_request_seconds{variant="otel",run="19700101T000000Z"}`}}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if err := query("/api/v1/query", q, &res); err == nil && len(res.Data.Result) > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("Prometheus has no toll_cpu_per_request_seconds after 30 s: %+v", res)
		}
	}
	want := costOf(t, s, "otel", analyze.CPUPerRequest).Value / 1000
	if got, _ := res.Data.Result[0].Value[1].(string); got == "" || math.Abs(parseFloat(t, got)-want) > 1e-9 {
		t.Errorf("Prometheus stored %v, want %g", res.Data.Result[0].Value[1], want)
	}
	// Every family toll wrote is a series Prometheus has.
	var names struct{ Data []string }
	if err := query("/api/v1/label/__name__/values", url.Values{}, &names); err != nil {
		t.Fatal(err)
	}
	for _, f := range parseOpenMetrics(t, b.String()) {
		if !slices.Contains(names.Data, f.GetName()) {
			t.Errorf("Prometheus has no series %s (it has %v)", f.GetName(), names.Data)
		}
	}
	// Every query of the Grafana dashboard is one Prometheus runs, and
	// those on families this summary has find series.
	for _, q := range dashboardQueries(t, s.Scenario, string(analyze.CPUPerRequest)) {
		if m := labelValuesQuery.FindStringSubmatch(q); m != nil {
			q = fmt.Sprintf("group by (%s) (%s)", m[2], m[1])
		}
		var res struct {
			Status, Error string
			Data          struct{ Result []any }
		}
		if err := query("/api/v1/query", url.Values{"query": {q}}, &res); err != nil || res.Status != "success" {
			t.Errorf("dashboard query %q: %v %s", q, err, res.Error)
			continue
		}
		missing := false
		for _, n := range FamilyNames() {
			missing = missing || strings.Contains(q, n+"{") && !slices.Contains(names.Data, n)
		}
		if len(res.Data.Result) == 0 && !missing {
			t.Errorf("dashboard query %q finds no series", q)
		}
	}
	// And it read the # UNIT lines.
	var meta struct {
		Data map[string][]struct{ Type, Unit string }
	}
	if err := query("/api/v1/metadata", url.Values{"metric": {"toll_rss_bytes"}}, &meta); err != nil {
		t.Fatal(err)
	}
	if m := meta.Data["toll_rss_bytes"]; len(m) == 0 || m[0].Type != "gauge" || m[0].Unit != "bytes" {
		t.Errorf("Prometheus's metadata for toll_rss_bytes: %+v", meta.Data)
	}
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	var x float64
	if _, err := fmt.Sscan(s, &x); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return x
}
