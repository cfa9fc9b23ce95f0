package workloads

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// limitsScenario is toll's reference services under four closed-model
// users, which keep them as busy as their CPU allows, so that a CPU limit
// shows in throughput; extra is appended to the scenario. A service held
// to 0.05 CPU beside a busy machine's other work takes seconds to start:
// readiness waits up to a minute.
func limitsScenario(t *testing.T, name, variants, extra string) string {
	t.Helper()
	s := `name: ` + name + `
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "40000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 60s}
    measure: true
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider", --work, "2000"]
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 60s}
    measure: true
variants:
` + variants + `
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {name: consumer, path: /consumer}
  users: 4
  warmup: 300ms
  duration: 2s
` + extra
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// needCgroups skips the test when the run in out read its costs without
// cgroups, where no limit can be applied.
func needCgroups(t *testing.T, out string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Layout struct {
			Cgroup     string `json:"cgroup"`
			CgroupNote string `json:"cgroup_note"`
		} `json:"layout"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Layout.Cgroup == "none" {
		t.Skipf("no cgroups, so no limits: %s", m.Layout.CgroupNote)
	}
}

// serviceLimits returns, by variant and service, the CPU and memory limits
// the trial files say each service ran under (the last trial's).
func serviceLimits(t *testing.T, out string) map[string]map[string][2]float64 {
	t.Helper()
	got := map[string]map[string][2]float64{}
	for _, tr := range trialFiles(t, out) {
		v := tr["variant"].(string)
		if got[v] == nil {
			got[v] = map[string][2]float64{}
		}
		for _, s := range tr["services"].([]any) {
			sm := s.(map[string]any)
			cpu, _ := sm["cpu_limit"].(float64)
			mem, _ := sm["memory_limit_bytes"].(float64)
			got[v][sm["name"].(string)] = [2]float64{cpu, mem}
		}
	}
	return got
}

// TestVariantLimits runs a variant whose services are limited to 0.05 CPU
// and 256 MiB each (variants[].cpu_limit, memory_limit) beside a baseline
// without limits: it must read a resolved fall in throughput, its services
// must use no more CPU than their quota, and every trial file must say
// which limits each service ran under.
func TestVariantLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	path := limitsScenario(t, "limits", `  - name: baseline
  - name: limited
    cpu_limit: 0.05
    memory_limit: 256MiB`, "rounds: 4\n")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "--seed", "5")
	if code != 0 {
		t.Fatalf("toll run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	needCgroups(t, out)
	limits := serviceLimits(t, out)
	for _, svc := range []string{"provider", "consumer"} {
		if got := limits["limited"][svc]; got != [2]float64{0.05, 256 << 20} {
			t.Errorf("limited %s ran under %v, want 0.05 CPU and 256 MiB", svc, got)
		}
		if got := limits["baseline"][svc]; got != [2]float64{} {
			t.Errorf("baseline %s ran under %v, want no limit", svc, got)
		}
	}
	costs := stepsOf(t, out)[0].costs
	if tp := costs["limited"]["throughput_rps"]; !tp.significant || tp.pct > -30 {
		t.Errorf("throughput under 0.05 CPU per service: %+v, want a resolved fall", tp)
	}
	// The kernel's quota: 0.05 cores per service, two services.
	if cores := costs["limited"]["cpu_cores"].value; cores > 2*0.05*1.15 {
		t.Errorf("limited services used %.3f cores, above their quota of 2 × 0.05", cores)
	}
}

// TestMatrixCPUs runs a load test's matrix (matrix: {cpus: [0.05, 1]}):
// every load step under each limit, reported as steps of their own, with
// the services started afresh under each limit (a second start of each),
// and the lower limit's throughput resolved below the higher's.
func TestMatrixCPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	path := limitsScenario(t, "matrix", "  - name: baseline", "rounds: 2\nmatrix: {cpus: [0.05, 1]}\n")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "--seed", "5")
	if code != 0 {
		t.Fatalf("toll run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	needCgroups(t, out)
	steps := stepsOf(t, out)
	if len(steps) != 2 || steps[0].cpuLimit != 0.05 || steps[1].cpuLimit != 1 || steps[0].users != 4 || steps[1].users != 4 {
		t.Fatalf("steps %+v, want 4 users under 0.05 CPU and under 1 CPU", steps)
	}
	low, high := steps[0].costs["baseline"]["throughput_rps"].value, steps[1].costs["baseline"]["throughput_rps"].value
	if !(low < 0.8*high) {
		t.Errorf("throughput %.1f req/s under 0.05 CPU and %.1f under 1 CPU: the limit did not bind", low, high)
	}
	for _, tr := range trialFiles(t, out) {
		want := []float64{0.05, 1}[int(tr["step"].(float64))]
		if got, _ := tr["cpu_limit"].(float64); got != want {
			t.Errorf("trial %v at step %v: cpu_limit %v, want %v", tr["index"], tr["step"], got, want)
		}
		for _, s := range tr["services"].([]any) {
			if got, _ := s.(map[string]any)["cpu_limit"].(float64); got != want {
				t.Errorf("trial %v: %v ran under %v CPU, want %v", tr["index"], s.(map[string]any)["name"], got, want)
			}
		}
	}
	for _, log := range []string{"baseline.provider.1.log", "baseline.provider.2.log"} {
		if _, err := os.Stat(filepath.Join(out, "logs", log)); err != nil {
			t.Errorf("services not started afresh under each limit: %v", err)
		}
	}
	for _, want := range []string{"at 0.05 CPU, 4 users", "at 1 CPU, 4 users"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}
