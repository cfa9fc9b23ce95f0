package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/record"
)

// TestClosedModelSteps runs a scenario with two closed-model steps and a
// mix of two requests: the report has a table per step, labelled by users,
// and each request of the mix has its own latency and error rows.
func TestClosedModelSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	path := tolltest.WriteScenario(t, "closed", tolltest.HeavyVariants, `    - {name: missing, method: GET, path: "/nothing/${id}", weight: 1}
  users: [2, 4]
  think: 20ms
  warmup: 300ms
  duration: 1s
rounds: 2`)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Every trial has the "missing" request's 404s: each is flagged, so
	// the run is invalid (exit 3), its reports written all the same.
	if err := cmd.Run(); tolltest.ExitCode(err) != ExitInvalid {
		t.Fatalf("toll run: %v, want exit %d\nstdout:\n%s\nstderr:\n%s", err, ExitInvalid, stdout.String(), stderr.String())
	}
	table := stdout.String()
	for _, want := range []string{"at 2 users", "at 4 users", "latency percentiles understate stalls", "2 users: heavy", "4 users: baseline", "latency p99 (consumer) (ms)", "latency p50 (missing) (ms)", "errors (missing) (%)"} {
		if !strings.Contains(table, want) {
			t.Errorf("report lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "target 0") {
		t.Errorf("a closed-model step shows a target rate:\n%s", table)
	}
	dir, err := record.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dir.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Load.Model != "closed" || len(m.Load.Users) != 2 {
		t.Errorf("manifest load: %+v", m.Load)
	}
	trials, _, err := dir.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if len(tr.Load.Requests) != 2 {
			t.Fatalf("trial %d: %d per-request totals, want 2", tr.Index, len(tr.Load.Requests))
		}
		// The mix alternates 1:1; every "missing" request is a 404.
		c, miss := tr.Load.Requests[0], tr.Load.Requests[1]
		if miss.Completed == 0 || miss.Errors.HTTP4xx != miss.Completed || c.OK != c.Completed {
			t.Errorf("trial %d: consumer %+v, missing %+v", tr.Index, c, miss)
		}
		if d := int64(c.Sent) - int64(miss.Sent); d < -int64(tr.TargetUsers) || d > int64(tr.TargetUsers) {
			t.Errorf("trial %d: %d and %d sent, want the 1:1 mix within one request per user", tr.Index, c.Sent, miss.Sent)
		}
	}
}

// TestFindMax searches the highest rate of a baseline and of a variant
// whose provider burns 1 ms more CPU per request, four times the
// baseline's: the variant's maximum must come out clearly lower.
func TestFindMax(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	path := filepath.Join(t.TempDir(), "fm.yaml")
	os.WriteFile(path, []byte(`name: fm
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --extra-cpu, 250us]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 10s}
    measure: true
variants:
  - name: baseline
  - name: heavy
    services:
      provider: {args: [--extra-cpu, 1ms]}
load:
  target: "http://127.0.0.1:${port:provider}"
  requests:
    - {name: p, path: /provider}
  rate: 100
  warmup: 300ms
  duration: 1s
find_max: {max_trials: 8, precision: 0.2}
`), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", "--find-max", "--slo-p99", "50ms", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("toll run --find-max: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "highest sustainable rate (p99 ≤ 50.0 ms") {
		t.Errorf("output:\n%s", stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, record.FindMaxFile))
	if err != nil {
		t.Fatal(err)
	}
	var fm record.FindMax
	if err := json.Unmarshal(b, &fm); err != nil {
		t.Fatal(err)
	}
	got := map[string]record.FindMaxVariant{}
	for _, v := range fm.Variants {
		got[v.Name] = v
		if len(v.Trials) == 0 || len(v.Trials) > 8 {
			t.Errorf("%s: %d trials, want 1..8", v.Name, len(v.Trials))
		}
	}
	base, heavy := got["baseline"], got["heavy"]
	if base.MaxRate <= 0 || heavy.MaxRate <= 0 {
		t.Fatalf("maxima: baseline %g, heavy %g; want both found\n%s", base.MaxRate, heavy.MaxRate, stdout.String())
	}
	if !(heavy.MaxRate < 0.8*base.MaxRate) {
		t.Errorf("heavy sustained %g req/s, baseline %g: 4× the CPU per request must lower the maximum clearly\n%s",
			heavy.MaxRate, base.MaxRate, stdout.String())
	}
	// toll report renders the search again.
	var rep bytes.Buffer
	rc := tolltest.Command(t, "report", out)
	rc.Stdout = &rep
	if err := rc.Run(); err != nil || !strings.Contains(rep.String(), "highest sustainable rate") {
		t.Errorf("toll report: %v\n%s", err, rep.String())
	}
}

// TestLoadCommand runs toll load against a local server in both models,
// with JSON output.
func TestLoadCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/x/${id}"
	for _, args := range [][]string{{"--rate", "200"}, {"--users", "3"}} {
		cmd := tolltest.Command(t, append([]string{"load", url, "-d", "1s", "--json"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("toll load %v: %v\n%s", args, err, stderr.String())
		}
		var s loadSummary
		if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
			t.Fatalf("%v: %s", err, stdout.String())
		}
		if s.Completed == 0 || s.OK != s.Completed || s.Errors != 0 || s.CPUSeconds <= 0 || s.LatencyMS["p50"] <= 0 {
			t.Errorf("toll load %v: %+v", args, s)
		}
		if args[0] == "--rate" && s.Scheduled != 200 {
			t.Errorf("open model scheduled %d, want 200", s.Scheduled)
		}
	}
	cmd := tolltest.Command(t, "load", url, "--rate", "10", "--users", "2")
	if err := cmd.Run(); tolltest.ExitCode(err) != ExitUsage {
		t.Errorf("--rate with --users: %v, want exit %d", err, ExitUsage)
	}

	// Failed requests say why, in JSON and in text: here a port that
	// refuses (one listened on, then closed).
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String() + "/"
	closed.Close()
	// Every request failed: the summary is still written, and the exit
	// status says the load test measured nothing.
	code, stdout, stderr := tolltest.Run(t, "load", refused, "--rate", "20", "-d", "500ms", "--warmup", "0", "--json")
	var s loadSummary
	if err := json.Unmarshal([]byte(stdout), &s); code != ExitFailure || err != nil {
		t.Fatalf("toll load of a refusing port: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	if s.Errors == 0 || s.ErrorExamples == nil || !strings.Contains(s.ErrorExamples.Connect, "connection refused") {
		t.Errorf("toll load of a refusing port: errors %d, examples %+v; want connect errors that say the connection was refused", s.Errors, s.ErrorExamples)
	}
	if _, text, _ := tolltest.Run(t, "load", refused, "--rate", "20", "-d", "500ms", "--warmup", "0"); !strings.Contains(text, "first connect: dial tcp") {
		t.Errorf("toll load's text does not say how the requests failed:\n%s", text)
	}
}
