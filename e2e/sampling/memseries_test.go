package sampling

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestScrapeSeriesAndReadyCommand runs an agent daemon (toll app collector)
// that exposes its own metrics with the Prometheus client library and is
// ready when a command succeeds: toll scrapes its count of accepted spans
// into the trials (a rate only the variant that exports to it has), its
// goroutines as a gauge, writes series.csv with a line per second of every
// trial, and renders the every-N-seconds table when asked.
func TestScrapeSeriesAndReadyCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the readiness command uses bash's /dev/tcp")
	}
	s := `name: scrape
services:
  - name: collector
    role: agent
    command: [toll, app, collector, --addr, "127.0.0.1:${port:collector}", --metrics-addr, "127.0.0.1:${port:metrics}"]
    # No readiness port of its own: a command that succeeds once the
    # metrics port accepts a connection.
    ready: {command: [bash, -c, "exec 3<>/dev/tcp/127.0.0.1/${port:metrics}"], timeout: 10s}
    scrape:
      url: "http://127.0.0.1:${port:metrics}/metrics"
      metrics: [toll_collector_accepted_spans_total, go_goroutines, not_exposed_anywhere]
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "5000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 10s}
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider", --work, "5000"]
    env: {OTEL_SERVICE_NAME: consumer, OTEL_BSP_SCHEDULE_DELAY: "200"}
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 10s}
    measure: true
variants:
  - name: baseline
    services:
      consumer: {args: [--trace, none]}
  - name: otel-daemon
    services:
      consumer:
        args: [--trace, otel]
        env: {OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:${port:collector}"}
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests: [{path: /consumer}]
  rate: 100
  warmup: 1s
  duration: 2s
rounds: 3
`
	dir := t.TempDir()
	path := filepath.Join(dir, "scrape.yaml")
	os.WriteFile(path, []byte(s), 0o644)
	out := filepath.Join(dir, "out")
	cmd := tolltest.Command(t, "run", path, "--out", out, "--series-every", "1s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("toll run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	sum := tolltest.ReadSummary(t, out)
	// About 4 spans per request at 100 req/s reach the collector; none
	// in the baseline, whose consumer does not trace.
	if r := sum.Value(t, "otel-daemon", "scrape_toll_collector_accepted_spans_total_per_s"); r < 100 || r > 1000 {
		t.Errorf("otel-daemon: the collector accepted %.1f spans/s by its own count, want about 400", r)
	}
	if r := sum.Value(t, "baseline", "scrape_toll_collector_accepted_spans_total_per_s"); r != 0 {
		t.Errorf("baseline: the collector accepted %.1f spans/s, want 0", r)
	}
	if d := sum.Delta(t, "otel-daemon", "scrape_toll_collector_accepted_spans_total_per_s"); d.Verdict == "" {
		t.Errorf("no verdict for the scraped rate: %+v", d)
	}
	if g := sum.Value(t, "baseline", "scrape_go_goroutines"); g < 1 {
		t.Errorf("baseline: go_goroutines %.1f", g)
	}
	if strings.Contains(stdout.String(), "not_exposed_anywhere") {
		t.Errorf("a metric the endpoint lacks has a row:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "scraped: toll_collector_accepted_spans_total (/s)") {
		t.Errorf("the table lacks the scraped rate's row:\n%s", stdout.String())
	}

	// series.csv: a line per second of each trial's 2 s window, with the
	// measured services' columns.
	f, err := os.Open(filepath.Join(out, "series.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+3*2*2 {
		t.Errorf("series.csv has %d lines, want a header and 2 seconds of 6 trials", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, c := range []string{"t_s", "throughput_rps", "consumer_cpu_cores", "collector_cpu_cores", "collector_rss_mib"} {
		if _, ok := col[c]; !ok {
			t.Fatalf("series.csv lacks column %s: %v", c, rows[0])
		}
	}
	for _, r := range rows[1:] {
		if r[col["throughput_rps"]] == "0" || r[col["consumer_cpu_cores"]] == "" || r[col["consumer_cpu_cores"]] == "0" {
			t.Errorf("series.csv line %v: want throughput and the consumer's CPU", r)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "every 1 s (median over trials)") || !strings.Contains(string(md), "| 1–2 |") {
		t.Errorf("report.md lacks the every-1-s table:\n%s", md)
	}
}

// TestNMTCommittedAndOffHeap runs a JVM with Native Memory Tracking and
// nmt: true, and a variant that commits 64 MiB of code cache at start: its
// off-heap (NMT's total committed less the heap's) is larger. A variant
// whose JVM runs without NMT is flagged, not attached to.
func TestNMTCommittedAndOffHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a JVM")
	}
	if _, err := exec.LookPath("jcmd"); err != nil {
		t.Skip("no jcmd: ", err)
	}
	classes := tolltest.HelloClasses(t)
	s := fmt.Sprintf(`name: nmt
services:
  - name: hello
    command: [sh, -c, "exec java -Xmx64m -XX:NativeMemoryTracking=summary $JOPTS -cp %s Hello ${port:hello}"]
    ready: {http: "http://127.0.0.1:${port:hello}/", timeout: 20s}
    measure: true
    nmt: true
variants:
  - name: baseline
  - name: codecache
    services:
      hello: {env: {JOPTS: "-XX:InitialCodeCacheSize=64m -XX:ReservedCodeCacheSize=128m"}}
  - name: nonmt
    services:
      hello: {command: [sh, -c, "exec java -Xmx64m -cp %s Hello ${port:hello}"]}
load:
  target: "http://127.0.0.1:${port:hello}"
  requests: [{path: /}]
  rate: 50
  warmup: 1s
  duration: 2s
rounds: 2
`, classes, classes)
	path := filepath.Join(t.TempDir(), "nmt.yaml")
	os.WriteFile(path, []byte(s), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("toll run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	sum := tolltest.ReadSummary(t, out)
	heap := sum.Value(t, "baseline", "jvm_heap_committed_mib")
	total := sum.Value(t, "baseline", "jvm_committed_mib")
	off := sum.Value(t, "baseline", "jvm_offheap_mib")
	if total <= heap || off < 10 || total-off > 1.5*heap+1 {
		t.Errorf("baseline: NMT committed %.1f MiB, off-heap %.1f, heap committed %.1f (hsperfdata)", total, off, heap)
	}
	if cc := sum.Value(t, "codecache", "jvm_offheap_mib"); cc < off+40 {
		t.Errorf("codecache: off-heap %.1f MiB, baseline %.1f: 64 MiB of code cache committed at start is not in it", cc, off)
	}
	var flags struct {
		Flags []struct{ Variant, Code, Message string }
	}
	js, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	json.Unmarshal(js, &flags)
	nmtFlags := 0
	for _, f := range flags.Flags {
		if f.Code == "nmt" {
			nmtFlags++
			if f.Variant != "nonmt" || !strings.Contains(f.Message, "not enabled") {
				t.Errorf("flag %+v: want only nonmt's, saying NMT is not enabled", f)
			}
		}
	}
	if nmtFlags != 2 {
		t.Errorf("%d nmt flags, want one per trial of nonmt: %+v", nmtFlags, flags.Flags)
	}
	if !strings.Contains(stdout.String(), "JVM off-heap committed (NMT) (MiB)") {
		t.Errorf("the table lacks the off-heap row:\n%s", stdout.String())
	}
}
