package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
	"go.yaml.in/yaml/v3"
)

// action is the part of action.yml the test reads.
type action struct {
	Inputs map[string]struct {
		Required bool
		Default  string
	}
	Runs struct {
		Using string
		Steps []struct {
			ID    string
			Name  string
			Shell string
			Run   string
			Env   map[string]string
		}
	}
}

// TestActionRunsScenario reads the composite action at the repository's
// root and runs its `toll run` step's script as GitHub's runner would
// (bash -eo pipefail, the inputs in the step's environment), with the
// toll under test: two gates on separate lines, a benchmark file, and
// extra arguments reach toll run; the step sets the results and
// exit-code outputs and exits with toll's code: 4 for the +100% variant.
func TestActionRunsScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	b, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" || !a.Inputs["scenario"].Required {
		t.Fatalf("action.yml: using %q, inputs %v", a.Runs.Using, a.Inputs)
	}
	var script string
	for _, st := range a.Runs.Steps {
		if st.Run != "" {
			if out, err := exec.Command("bash", "-n", "-c", st.Run).CombinedOutput(); err != nil {
				t.Errorf("step %q: bash -n: %v\n%s", st.Name, err, out)
			}
		}
		if st.ID == "run" {
			script = st.Run
			for _, in := range []string{"scenario", "fail-on", "out", "args", "benchmark-json", "sudo"} {
				if !strings.Contains(strings.Join(mapValues(st.Env), " "), "inputs."+in) {
					t.Errorf("step run does not pass input %s in its environment", in)
				}
			}
		}
	}
	if script == "" {
		t.Fatal("action.yml has no step with id run")
	}

	// The runner's temp directory holds toll, as the build step leaves it.
	tmp := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(tmp, "toll")); err != nil {
		t.Fatal(err)
	}
	path := tolltest.WriteScenario(t, "action", gateVariants, `  rate: 20
  warmup: 500ms
  duration: 2s
rounds: 4`)
	outputs, bench, results := filepath.Join(tmp, "outputs"), filepath.Join(tmp, "bench.json"), filepath.Join(tmp, "results")
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), tolltest.BeMainEnv+"=1", "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+outputs,
		"TOLL_SCENARIO="+path, "TOLL_FAIL_ON=cpu_per_request > +10%\n\n  p99 > +1000%\n", "TOLL_OUT="+results,
		"TOLL_ARGS=-q --seed 7", "TOLL_BENCHMARK_JSON="+bench, "TOLL_SUDO=false")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	code := tolltest.ExitCode(cmd.Run())
	if code == ExitInvalid {
		t.Skipf("the machine was too busy for a valid run (exit 3):\n%s", stdout.String())
	}
	if code == ExitOK {
		if lo, hi := cpuInterval(t, results, "heavy"); lo <= 10 && hi-lo > 100 {
			t.Skipf("the machine was too noisy to resolve the overhead: CPU per request [%+.1f%%, %+.1f%%]\n%s", lo, hi, stdout.String())
		}
	}
	if code != ExitGate {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitGate, stdout.String())
	}
	got, _ := os.ReadFile(outputs)
	if want := "results=" + results + "\nexit-code=4\n"; string(got) != want {
		t.Errorf("outputs %q, want %q", got, want)
	}
	for _, want := range []string{"✗ heavy at 20 req/s", "✓ p99 > +1000%"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q in toll's output:\n%s", want, stdout.String())
		}
	}
	var entries []map[string]any
	if b, err := os.ReadFile(bench); err != nil || json.Unmarshal(b, &entries) != nil || len(entries) == 0 {
		t.Errorf("benchmark JSON %s: %v %s", bench, err, b)
	}
	if m := readManifestSeed(t, results); m != 7 {
		t.Errorf("seed %d, want 7 from the args input", m)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// readManifestSeed reads the seed of the run in dir.
func readManifestSeed(t *testing.T, dir string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Seed int64 }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Seed
}
