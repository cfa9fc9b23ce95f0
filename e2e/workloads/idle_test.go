package workloads

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// stepsOf reads the steps of a run's summary.json with what these tests
// look at: each step's identity and each variant's costs by name.
func stepsOf(t *testing.T, dir string) []stepCosts {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Steps []struct {
			TargetRate  float64 `json:"target_rate"`
			TargetUsers int     `json:"target_users"`
			Idle        bool    `json:"idle"`
			CPULimit    float64 `json:"cpu_limit"`
			Variants    []struct {
				Name  string `json:"name"`
				Costs []struct {
					Cost  string  `json:"cost"`
					Value float64 `json:"value"`
					Delta *struct {
						Pct         *float64 `json:"pct"`
						Significant bool     `json:"significant"`
						NoVerdict   string   `json:"no_verdict"`
					} `json:"delta"`
				} `json:"costs"`
			} `json:"variants"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var out []stepCosts
	for _, st := range s.Steps {
		sc := stepCosts{rate: st.TargetRate, users: st.TargetUsers, idle: st.Idle, cpuLimit: st.CPULimit, costs: map[string]map[string]costOf{}}
		for _, v := range st.Variants {
			sc.costs[v.Name] = map[string]costOf{}
			for _, c := range v.Costs {
				co := costOf{value: c.Value}
				if c.Delta != nil {
					co.significant, co.compared, co.noVerdict = c.Delta.Significant, true, c.Delta.NoVerdict
					if c.Delta.Pct != nil {
						co.pct = *c.Delta.Pct
					}
				}
				sc.costs[v.Name][c.Cost] = co
			}
		}
		out = append(out, sc)
	}
	return out
}

// stepCosts is one step of a summary: its identity, and by variant and
// cost name the cost's value and change against the baseline.
type stepCosts struct {
	rate     float64
	users    int
	idle     bool
	cpuLimit float64
	costs    map[string]map[string]costOf
}

type costOf struct {
	value                 float64
	pct                   float64
	compared, significant bool
	noVerdict             string // why the change has no interval, if it has none
}

// trialFiles reads every trial file of a run as generic JSON.
func trialFiles(t *testing.T, dir string) []map[string]any {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "trials", "*.json"))
	var out []map[string]any
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestIdleStepMeasuresStaticCost runs rate: 0 beside a loaded step, end to
// end, with toll's reference services: a variant that adds an agent daemon
// (toll app collector, a real OTLP receiver in its own process) reads a
// higher RSS and more threads at rest (an estimate without a verdict, from
// one start of each variant); the idle step has
// no per-request cost (absent, not 0), is valid, and reads "idle" in the
// report; and load.variant_warmup goes, once per variant, to its first
// loaded trial, not to an idle one.
func TestIdleStepMeasuresStaticCost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	s := `name: idle
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "20000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 10s}
    measure: true
  - name: collector
    role: agent
    command: [toll, app, collector, --addr, "127.0.0.1:${port:collector}"]
    ready: {tcp: "127.0.0.1:${port:collector}", timeout: 10s}
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider", --work, "2000"]
    env: {OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:${port:collector}"}
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 10s}
    measure: true
variants:
  - name: baseline
    skip: [collector]
  - name: agent
    services:
      consumer: {args: [--trace, otel]}
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {name: consumer, path: /consumer}
  rates: [0, 100]
  warmup: 200ms
  variant_warmup: 1s
  duration: 2s
rounds: 3
`
	path := filepath.Join(t.TempDir(), "idle.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "--seed", "5")
	if code != 0 {
		t.Fatalf("toll run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	steps := stepsOf(t, out)
	if len(steps) != 2 || !steps[0].idle || steps[1].idle {
		t.Fatalf("steps %+v, want idle then 100 req/s", steps)
	}
	idle := steps[0].costs
	for _, v := range []string{"baseline", "agent"} {
		for _, c := range []string{"throughput_rps", "cpu_per_request_ms", "latency_p50_ms", "latency_p99_ms", "errors_pct", "spans_per_request"} {
			if got, ok := idle[v][c]; ok {
				t.Errorf("idle %s has %s = %+v; an idle step has no per-request cost", v, c, got)
			}
		}
		for _, c := range []string{"cpu_cores", "rss_mib", "threads"} {
			if _, ok := idle[v][c]; !ok {
				t.Errorf("idle %s lacks %s", v, c)
			}
		}
		if _, ok := steps[1].costs[v]["cpu_per_request_ms"]; !ok {
			t.Errorf("loaded %s lacks CPU per request", v)
		}
	}
	// The agent daemon is a process of its own: its memory and threads at
	// rest are the variant's static cost. Started once, each variant's
	// services are one draw of what differs between two starts, so the
	// change is an estimate with no verdict, which the report explains.
	for _, c := range []string{"rss_mib", "threads"} {
		if got := idle["agent"][c]; got.significant || got.noVerdict != "few-starts" || got.pct <= 10 {
			t.Errorf("idle agent %s: %+v, want an increase (an extra process) with no verdict from one start", c, got)
		}
	}
	if !strings.Contains(stdout, "1 start per variant") {
		t.Errorf("the report does not say why memory has no verdict:\n%s", stdout)
	}
	for _, want := range []string{"at idle", "agent at idle:", "at 100 req/s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if regexp.MustCompile(`(^|[^0-9.])0 req/s`).MatchString(stdout) {
		t.Errorf("report names the idle step by its rate:\n%s", stdout)
	}
	// The variant warm-up: once per variant, on its first loaded trial.
	first := map[string]float64{} // variant → index of its first loaded trial
	warmed := map[string][]float64{}
	for _, tr := range trialFiles(t, out) {
		v, idx := tr["variant"].(string), tr["index"].(float64)
		isIdle, _ := tr["idle"].(bool)
		if isIdle != (tr["step"].(float64) == 0) {
			t.Errorf("trial %v: idle=%v at step %v", idx, isIdle, tr["step"])
		}
		if !isIdle && (first[v] == 0 || idx < first[v]) {
			first[v] = idx
		}
		if w, _ := tr["variant_warmup_s"].(float64); w > 0 {
			if w != 1 {
				t.Errorf("trial %v: variant_warmup_s %v, want 1", idx, w)
			}
			warmed[v] = append(warmed[v], idx)
		}
	}
	for _, v := range []string{"baseline", "agent"} {
		if len(warmed[v]) != 1 || warmed[v][0] != first[v] {
			t.Errorf("%s: variant warm-up on trials %v, want only its first loaded trial %v", v, warmed[v], first[v])
		}
	}
}
