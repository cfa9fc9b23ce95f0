package recovery

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestWhatAComparisonHolds runs a short run once (three rounds of a
// baseline and a variant that exports spans) and, in each subtest, edits
// a copy of its results as a run gone wrong, or another machine, would
// leave them: what a report or a comparison holds must be what was
// planned, on the machine and services it names.
func TestWhatAComparisonHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "holds", `  - name: baseline
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel]}`, `  rate: 20
  warmup: 500ms
  duration: 2s
rounds: 3`)
	whole := filepath.Join(t.TempDir(), "out")
	if code, stdout, stderr := tolltest.Run(t, "run", path, "--out", whole, "-q"); code != 0 {
		t.Fatalf("toll run: exit %d\n%s%s", code, stdout, stderr)
	}
	copyRun := func(t *testing.T) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "run")
		if out, err := exec.Command("cp", "-r", whole, dst).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v %s", whole, err, out)
		}
		return dst
	}
	t.Run("no telemetry left out", func(t *testing.T) { noTelemetryLeftOut(t, whole, copyRun(t)) })
	t.Run("another machine", func(t *testing.T) {
		dir := copyRun(t)
		editJSON(t, filepath.Join(dir, "manifest.json"), func(m map[string]any) {
			m["host"].(map[string]any)["cpu_model"] = "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
		})
		notAlike(t, whole, dir, "--allow-different-machines", "CPU model", "NOT THE SAME MACHINE")
	})
	t.Run("another service", func(t *testing.T) {
		dir := copyRun(t)
		file := filepath.Join(dir, "scenario.yaml")
		b := must(os.ReadFile(file))
		edited := strings.Replace(string(b), `--work, "40000"`, `--work, "80000"`, 1)
		if edited == string(b) {
			t.Fatalf("no provider work to edit in %s:\n%s", file, b)
		}
		if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		notAlike(t, whole, dir, "--allow-different-services", `service "provider"`, "NOT THE SAME SERVICES")
	})
}

// editJSON rewrites a JSON object's file with edit.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	editTrial(t, path, edit)
}

// notAlike compares run a with b, a copy edited to have run elsewhere or
// otherwise: toll compare refuses, exits cli.ExitNotAlike and names what
// differs (it compared them with exit 0 and no word); with allow it
// compares them, and says so first (banner) in the table and the JSON
// document alike.
func notAlike(t *testing.T, a, b, allow, names, banner string) {
	t.Helper()
	code, stdout, stderr := tolltest.Run(t, "compare", a, b)
	out := stdout + stderr
	if code != cli.ExitNotAlike {
		t.Errorf("toll compare: exit %d, want %d\n%s", code, cli.ExitNotAlike, out)
	}
	if !strings.Contains(out, names) || !strings.Contains(out, allow) {
		t.Errorf("toll compare does not name %s and %s:\n%s", names, allow, out)
	}
	code, stdout, stderr = tolltest.Run(t, "compare", a, b, allow)
	out = stdout + stderr
	if code != 0 {
		t.Errorf("toll compare %s: exit %d, want 0\n%s", allow, code, out)
	}
	if i := strings.Index(out, banner); i < 0 || i > strings.Index(out, "vs baseline") {
		t.Errorf("toll compare %s does not say %q before its tables:\n%s", allow, banner, out)
	}
	code, stdout, _ = tolltest.Run(t, "compare", a, b, allow, "--json")
	if code != 0 || !strings.Contains(stdout, `"differences"`) {
		t.Errorf("toll compare %s --json: exit %d, no differences in the document:\n%s", allow, code, stdout)
	}
}

// noTelemetryLeftOut freezes the sink's counts over one of the exporting
// variant's trials, as a sink that died leaves them: toll report lists the
// trial, flagged no-telemetry and left out of the comparison, and the
// variant's spans per request are those of the trials that measured them
// (the trial was averaged in as 0: 2.00 spans per request read where 4.00
// were sent).
func noTelemetryLeftOut(t *testing.T, whole, dir string) {
	want := tolltest.ReadSummary(t, whole).Value(t, "otel", "spans_per_request")
	if want <= 0 {
		t.Fatalf("the whole run's otel sent %.2f spans per request", want)
	}
	var frozen string
	for _, f := range trialFiles(t, dir) {
		if frozen != "" {
			break
		}
		editTrial(t, f, func(m map[string]any) {
			if m["variant"] != "otel" {
				return
			}
			tel := m["telemetry"].([]any)
			first := tel[0]
			for i := range tel {
				tel[i] = first
			}
			m["telemetry_end"] = first
			frozen = filepath.Base(f)
		})
	}
	if frozen == "" {
		t.Fatal("no trial of otel")
	}
	code, stdout, stderr := tolltest.Run(t, "report", dir)
	out := stdout + stderr
	if code != 0 {
		t.Errorf("toll report: exit %d, want 0 (two sound trials of otel remain)\n%s", code, out)
	}
	if !strings.Contains(out, "no-telemetry in 1 of 6 trials") || !strings.Contains(out, "left out of the comparison") {
		t.Errorf("the report does not list the no-telemetry trial as left out:\n%s", out)
	}
	got := tolltest.ReadSummary(t, dir).Value(t, "otel", "spans_per_request")
	t.Logf("%s frozen: otel %.2f spans per request, %.2f in the whole run", frozen, got, want)
	if got < 0.9*want {
		t.Errorf("otel reads %.2f spans per request with the trial without telemetry, %.2f without it: the trial was averaged in", got, want)
	}
}
