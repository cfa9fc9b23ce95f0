package recovery

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
