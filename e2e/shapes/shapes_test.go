package shapes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// shapeSummary is the part of summary.json the agent-shape tests read.
type shapeSummary struct {
	Steps []struct {
		Variants []shapeVariant
	}
}

type shapeVariant struct {
	Name     string
	Costs    []shapeCost
	Services []struct {
		Name, Role string
		Costs      []shapeCost
	}
}

type shapeCost struct {
	Cost  string
	Value float64
	Delta *struct {
		Abs       float64
		Pct       *float64
		AbsCILow  *float64 `json:"abs_ci_low"`
		AbsCIHigh *float64 `json:"abs_ci_high"`
		CILow     *float64 `json:"ci_low"`
		CIHigh    *float64 `json:"ci_high"`
	}
}

// variant returns the variant named name, failing the test without it.
func (s shapeSummary) variant(t *testing.T, name string) shapeVariant {
	t.Helper()
	for _, v := range s.Steps[0].Variants {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no variant %s in summary.json", name)
	return shapeVariant{}
}

// cost returns the variant's total cost c, or that of its service svc.
func (v shapeVariant) cost(t *testing.T, svc, c string) shapeCost {
	t.Helper()
	costs := v.Costs
	if svc != "" {
		costs = nil
		for _, s := range v.Services {
			if s.Name == svc {
				costs = s.Costs
			}
		}
	}
	for _, x := range costs {
		if x.Cost == c {
			return x
		}
	}
	t.Fatalf("%s: no %s for %q", v.Name, c, svc)
	return shapeCost{}
}

// runExample runs examples/NAME shortened (2 rounds, windows of 1 s) from a
// directory that links the example's own directories (its scripts and
// configurations), and returns toll's table and the summary. A run that is
// invalid (exit 3: every trial flagged, as on a saturated machine) still
// tells whether each shape works; any other failure fails the test. The
// last result is the results directory.
func runExample(t *testing.T, name string, links ...string) (string, shapeSummary, string) {
	return runExampleWith(t, nil, name, links...)
}

// runExampleWith is runExample with toll run by bin (nil: this test binary).
func runExampleWith(t *testing.T, bin []string, name string, links ...string) (string, shapeSummary, string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("../../examples", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for _, r := range [][2]string{{"\nrounds: 8\n", "\nrounds: 2\n"}, {"  duration: 3s\n", "  duration: 1s\n"}, {"  duration: 4s\n", "  duration: 1s\n"}} {
		s = strings.Replace(s, r[0], r[1], 1)
	}
	dir := t.TempDir()
	for _, l := range links {
		abs, err := filepath.Abs(filepath.Join("../../examples", l))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	if len(bin) > 0 {
		cmd = exec.Command(bin[0], "run", path, "--out", out)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("toll run %s: %v\n%s\n%s", name, err, stdout.String(), stderr.String())
		}
		t.Logf("toll run %s: invalid run (all trials of a variant flagged), properties checked anyway:\n%s", name, stderr.String())
	}
	var sum shapeSummary
	js, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &sum); err != nil {
		t.Fatal(err)
	}
	return stdout.String(), sum, out
}

// checkAgentInTotal checks that variant v has rows for agent service svc
// that cost something, and that its total CPU is the sum of its services'.
func checkAgentInTotal(t *testing.T, v shapeVariant, svc string) {
	t.Helper()
	if c := v.cost(t, svc, "cpu_cores"); c.Value <= 0 {
		t.Errorf("%s: %s used %.4f cores: it did no work", v.Name, svc, c.Value)
	}
	if c := v.cost(t, svc, "rss_mib"); c.Value <= 0 {
		t.Errorf("%s: %s RSS %.1f MiB", v.Name, svc, c.Value)
	}
	var parts float64
	for _, s := range v.Services {
		for _, c := range s.Costs {
			if c.Cost == "cpu_cores" {
				parts += c.Value
			}
		}
	}
	if total := v.cost(t, "", "cpu_cores").Value; math.Abs(total-parts) > 1e-6*total {
		t.Errorf("%s: total %.4f cores, services sum %.4f", v.Name, total, parts)
	}
}

// TestSidecarProxy runs examples/sidecar.yaml: direct, in-process agent,
// HAProxy and nginx sidecars on the consumer's calls, and HAProxy in front
// of the consumer (the variant's own load.target). Each proxy must carry
// the traffic (its own CPU, no errors) and be in its variant's total, and
// the latency change must come in ms with an interval.
func TestSidecarProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real proxies")
	}
	for _, p := range []string{"haproxy", "nginx"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s (scripts/install-test-deps.sh installs it): %v", p, err)
		}
	}
	table, sum, _ := runExample(t, "sidecar.yaml", "sidecar")
	for _, want := range []string{"haproxy (agent): CPU (cores)", "nginx (agent): RSS (MiB)", "haproxy-in (agent): CPU (cores)", "consumer (app): CPU (cores)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	for _, c := range []struct{ variant, proxy string }{{"haproxy", "haproxy"}, {"nginx", "nginx"}, {"haproxy-inbound", "haproxy-in"}} {
		v := sum.variant(t, c.variant)
		checkAgentInTotal(t, v, c.proxy)
		if e := v.cost(t, "", "errors_pct").Value; e > 0 {
			t.Errorf("%s: %.2f%% errors through the proxy", c.variant, e)
		}
		p50 := v.cost(t, "", "latency_p50_ms")
		if p50.Delta == nil || p50.Delta.AbsCILow == nil || p50.Delta.AbsCIHigh == nil || !(*p50.Delta.AbsCILow <= p50.Delta.Abs && p50.Delta.Abs <= *p50.Delta.AbsCIHigh) {
			t.Errorf("%s: latency p50 change has no interval in ms around it: %+v", c.variant, p50.Delta)
		}
	}
	if s := sum.variant(t, "otel").cost(t, "", "spans_per_request").Value; s < 3 {
		t.Errorf("otel: %.2f spans per request, want 4", s)
	}
}

// TestCollectorDaemon runs examples/agent-daemon.yaml with the real
// OpenTelemetry Collector (built by examples/collector/build.sh): its own
// rows, counted in the total, and the consumer's spans reaching toll
// through it.
func TestCollectorDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real Collector")
	}
	if _, err := os.Stat("../../examples/collector/bin/otelcol-toll"); err != nil {
		t.Skipf("the Collector is not built (bash examples/collector/build.sh; .ci/run does): %v", err)
	}
	table, sum, _ := runExample(t, "agent-daemon.yaml", "collector")
	if !strings.Contains(table, "collector (agent): CPU (cores)") {
		t.Errorf("table lacks the Collector's rows:\n%s", table)
	}
	v := sum.variant(t, "otel-collector")
	checkAgentInTotal(t, v, "collector")
	if s := v.cost(t, "", "spans_per_request").Value; s < 3 {
		t.Errorf("otel-collector: %.2f spans per request reached toll through the Collector, want about 4", s)
	}
	// The Collector's own count of spans accepted, scraped from its
	// Prometheus endpoint at the windows' edges, in rows of its own (the
	// SDK exports in batches of 512 spans, so over 1 s windows the rate
	// is coarse; over the run it is what reached toll).
	if accepted := v.cost(t, "", "scrape_otelcol_receiver_accepted_spans_per_s").Value; accepted <= 0 {
		t.Errorf("otel-collector: the Collector says it accepted %.1f spans/s", accepted)
	}
	if !strings.Contains(table, "collector (agent): scraped: otelcol_receiver_accepted_spans (/s)") {
		t.Errorf("table lacks the Collector's scraped rows:\n%s", table)
	}
}

// bpftraceAttaches skips the test unless bpftrace can attach a syscall
// tracepoint here (root, bpftrace installed, tracefs mounted or mountable).
func bpftraceAttaches(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bpftrace needs root")
	}
	bt, err := exec.LookPath("bpftrace")
	if err != nil {
		t.Skipf("no bpftrace (scripts/install-test-deps.sh installs it): %v", err)
	}
	if _, err := os.Stat("/sys/kernel/tracing/events"); err != nil {
		exec.Command("mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing").Run()
	}
	out, err := exec.Command(bt, "-e", `tracepoint:raw_syscalls:sys_enter /pid == 0/ {} BEGIN { printf("attached\n"); exit(); }`).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "attached") {
		t.Skipf("bpftrace cannot attach a tracepoint on this machine: %v\n%s", err, out)
	}
}

// sumLogCounts adds up the values bpftrace printed for map name (name: N)
// in a log: every interval's and the last one at exit.
func sumLogCounts(t *testing.T, path, name string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(string(b), "\n") {
		i := strings.Index(line, name+": ")
		if i < 0 {
			continue
		}
		var n int
		if _, err := fmt.Sscan(line[i+len(name)+2:], &n); err == nil {
			total += n
		}
	}
	return total
}

// TestEBPFAgent runs examples/ebpf.yaml: bpftrace attached to the consumer
// through syscall tracepoints and through uprobes on its Go HTTP functions.
// The agent's own rows are reported and counted in the total, the
// consumer's CPU per request gets a paired interval in each mode, and the
// agent's log shows its probes fired for the consumer's requests.
func TestEBPFAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bpftrace")
	}
	bpftraceAttaches(t)
	// The uprobes are placed by function name: toll must have its symbol
	// table, which go test (like go run) strips from the binary it runs.
	bin := filepath.Join(t.TempDir(), "toll")
	if b, err := exec.Command("go", "build", "-o", bin, "github.com/tollperf/toll/cmd/toll").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	table, sum, out := runExampleWith(t, []string{bin}, "ebpf.yaml", "ebpf")
	if !strings.Contains(table, "bpftrace (agent): RSS (MiB)") || !strings.Contains(table, "consumer (app): CPU per request (ms)") {
		t.Errorf("table lacks the agent's or the consumer's rows:\n%s", table)
	}
	for _, mode := range []string{"ebpf-syscalls", "ebpf-uprobes"} {
		v := sum.variant(t, mode)
		checkAgentInTotal(t, v, "bpftrace")
		c := v.cost(t, "consumer", "cpu_per_request_ms")
		if c.Delta == nil || c.Delta.CILow == nil || c.Delta.AbsCILow == nil {
			t.Errorf("%s: the consumer's CPU per request has no interval: %+v", mode, c.Delta)
		}
	}
	// The uprobes trap into the kernel a few hundred times per request (the
	// allocator's, most of them), which the consumer pays: its CPU per
	// request must rise clearly, well beyond what two short rounds on a
	// busy machine move it by (about +50% alone, more on a busy machine).
	if c := sum.variant(t, "ebpf-uprobes").cost(t, "consumer", "cpu_per_request_ms"); c.Delta == nil || c.Delta.Pct == nil {
		t.Errorf("ebpf-uprobes: the consumer's CPU per request has no change in percent: %+v", c.Delta)
	} else if *c.Delta.Pct < 10 {
		t.Errorf("ebpf-uprobes: the consumer's CPU per request changed %+.1f%% (%+.3f ms, to %.3f ms); want the uprobes' cost to show, at least +10%%",
			*c.Delta.Pct, c.Delta.Abs, c.Value)
	}
	for _, c := range []struct{ log, count string }{
		{"ebpf-uprobes.bpftrace.1.log", "@handler"},      // the consumer's handler
		{"ebpf-syscalls.bpftrace.1.log", "@syscalls[1]"}, // write(2)
	} {
		path := filepath.Join(out, "logs", c.log)
		if n := sumLogCounts(t, path, c.count); n == 0 {
			b, _ := os.ReadFile(path)
			t.Errorf("%s: %s never counted the consumer's work:\n%s", c.log, c.count, b)
		}
	}
}

// TestEBPFAgentThatCannotAttach checks that a bpftrace agent whose probes
// cannot attach (uprobes on a binary without the functions) stops the run
// with bpftrace's own error, instead of being measured as an agent that
// costs nothing.
func TestEBPFAgentThatCannotAttach(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bpftrace")
	}
	bpftraceAttaches(t)
	abs, err := filepath.Abs("../../examples/ebpf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	os.WriteFile(path, []byte(`name: ebpf-bad
services:
  - name: consumer
    command: [toll, app, provider, --addr, "127.0.0.1:${port:consumer}"]
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 10s}
    measure: true
  - name: bpftrace
    role: agent
    command: [bash, `+abs+`/agent.sh, uprobes, "${port:consumer}", /bin/true]
    ready: {log: "^toll-ebpf-agent: attached", timeout: 60s}
variants:
  - name: baseline
    skip: [bpftrace]
  - name: ebpf
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests: [{path: /provider}]
  rate: 20
  warmup: 500ms
  duration: 1s
rounds: 1
`), 0o644)
	cmd := tolltest.Command(t, "run", path, "--out", filepath.Join(dir, "out"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || ee.ExitCode() == 3 {
		t.Fatalf("toll run with an agent that cannot attach: %v, want it to stop with an error\n%s\n%s", err, stdout.String(), stderr.String())
	}
	// The message names the agent, its exit, and ends with its log's
	// last lines: the agent's own reason it could not attach.
	if all := stdout.String() + stderr.String(); !strings.Contains(all, "start ebpf/bpftrace: exited before ready") ||
		!strings.Contains(all, "log lines:") || !strings.Contains(all, "toll-ebpf-agent: ERROR: /bin/true has no function") {
		t.Errorf("the error lacks the agent's exit or the tail of its log:\n%s", all)
	}
}
