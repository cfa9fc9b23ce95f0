package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestStartupDetectsSlowerStart runs a start-up experiment end to end with
// toll's reference service: a variant that waits 1 s before it starts the
// same service reads a later readiness, with an interval that excludes 0,
// at each of two CPU limits, and every start is measured. The wait is long
// beside the service's own start even at half a CPU on a machine whose
// cores are busy, where a start takes from a tenth of a second to about
// one, so that four starts a side tell it.
func TestStartupDetectsSlowerStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	s := `name: st
startup:
  repetitions: 4
  cpu_limits: [0.5, 1]
  log_metrics:
    - {name: listening_port_n, regex: 'listening on 127.0.0.1:([0-9]+)'}
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "0"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 20s}
    measure: true
variants:
  - name: baseline
  - name: slow
    services:
      provider:
        command: [sh, -c, 'sleep 1; exec "$0" app provider --addr "$1" --work 0', "${toll}", "127.0.0.1:${port:provider}"]
`
	path := filepath.Join(t.TempDir(), "st.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "--seed", "11")
	if code != 0 {
		t.Fatalf("toll run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	sum := tolltest.ReadSummary(t, out)
	if len(sum.Steps) != 2 {
		t.Fatalf("%d steps, want one per CPU limit", len(sum.Steps))
	}
	for i, st := range sum.Steps {
		for _, v := range st.Variants {
			if v.Rounds != 4 {
				t.Errorf("step %d: %s has %d starts, want 4", i, v.Name, v.Rounds)
			}
			if v.Name != "slow" {
				continue
			}
			for _, c := range v.Costs {
				if c.Cost != "startup_ready_s" {
					continue
				}
				if c.Delta == nil || c.Delta.Verdict == "~" {
					t.Errorf("step %d: a start 1 s later reads %s; baseline %s, slow %s", i, c.Delta, readyOf(st.Variants, "baseline"), readyOf(st.Variants, "slow"))
				}
			}
		}
	}
	for _, want := range []string{"at 0.5 CPU", "at 1 CPU", "start-up: launch → ready (s)", "start-up: launch → port open (s)",
		"start-up: CPU until ready (s)", "start-up: RSS at ready (MiB)", "× baseline time to ready", "slow at 1 CPU:", "log: listening_port_n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
	if len(trials) != 16 {
		t.Errorf("%d trial files, want 16 (2 variants × 4 starts × 2 CPU limits)", len(trials))
	}
}

// TestRunStartupFlag runs a load test's scenario with --startup: its
// services are started from cold 10 times per variant (the default), its
// load set aside, and each start is a trial.
func TestRunStartupFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	path := tolltest.WriteScenario(t, "flag", tolltest.HeavyVariants, `  rate: 50
  duration: 3s
rounds: 2`)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", "--startup", path, "--out", out)
	if code != 0 {
		t.Fatalf("toll run --startup exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "20 cold starts (2 variants × 10 repetitions × 1 steps)") {
		t.Errorf("progress does not announce 20 cold starts:\n%s", stderr)
	}
	s := tolltest.ReadSummary(t, out)
	for _, v := range s.Steps[0].Variants {
		if v.Rounds != 10 {
			t.Errorf("%s: %d starts, want 10", v.Name, v.Rounds)
		}
	}
	if x := s.Value(t, "heavy", "startup_ready_s"); !(x > 0) {
		t.Errorf("startup_ready_s = %v", x)
	}
}

// readyOf writes the mean time to ready of the variant named name, for a
// failure message.
func readyOf(vs []tolltest.Variant, name string) string {
	for _, v := range vs {
		if ready, ok := v.Value("startup_ready_s"); ok && v.Name == name {
			return fmt.Sprintf("%.2f s", ready)
		}
	}
	return "?"
}
