package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// outcome is the part of summary.json that says how a run went.
type outcome struct {
	Invalid []string
	Partial *struct {
		Planned, Complete int
		Error             string
		Text              string
	}
	Trials []struct {
		Index    int
		Variant  string
		Excluded bool
	}
}

func readOutcome(t *testing.T, dir string) outcome {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var o outcome
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestEveryRequestFailedIsInvalid runs a variant every request of which
// fails (its consumer calls a provider path that does not exist): toll did
// its job, but the measurement is not valid, and it exits 3 saying why.
func TestEveryRequestFailedIsInvalid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	path := tolltest.WriteScenario(t, "invalid", `  - name: baseline
  - name: broken
    services:
      consumer: {args: [--provider, "http://127.0.0.1:${port:provider}/nope"]}`, `  rate: 20
  warmup: 500ms
  duration: 2s
rounds: 1`)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out)
	if code != ExitInvalid {
		t.Fatalf("exit %d, want %d (invalid run)\nstdout:\n%s\nstderr:\n%s", code, ExitInvalid, stdout, stderr)
	}
	const why = "invalid run: broken at 20 req/s: its only trial failed or was flagged (no request succeeded in 1"
	if !strings.Contains(stdout, why) || !strings.Contains(stderr, why) {
		t.Errorf("the report and toll's error do not say %q:\nstdout:\n%s\nstderr:\n%s", why, stdout, stderr)
	}
	o := readOutcome(t, out)
	if len(o.Invalid) != 1 || !strings.HasPrefix(o.Invalid[0], "broken at 20 req/s") {
		t.Errorf("summary.json invalid: %q, want broken's only", o.Invalid)
	}
	if o.Partial != nil {
		t.Errorf("a run that carried out its plan is called partial: %+v", o.Partial)
	}
	if !strings.Contains(stderr, "results: "+out+" (summary.json, report.md, trials.csv, series.csv, metrics.txt, report.html)") {
		t.Errorf("results line:\n%s", stderr)
	}
	// toll report says the same, with the same exit code.
	if code, stdout, _ := tolltest.Run(t, "report", out); code != ExitInvalid || !strings.Contains(stdout, why) {
		t.Errorf("toll report: exit %d, want %d:\n%s", code, ExitInvalid, stdout)
	}
}

// TestServiceExitMidTrial runs a variant one of whose services exits in the
// middle of its trial: toll fails (exit 1) with the end of that service's
// log in its error and in the trial's record; the trial is left out of the
// comparison; the reports say the run is partial and what it is missing,
// and name only the files written.
func TestServiceExitMidTrial(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	s := `name: crash
services:
  - name: app
    command: [toll, app, provider, --addr, "127.0.0.1:${port:app}", --work, "2000"]
    ready: {http: "http://127.0.0.1:${port:app}/health", timeout: 10s}
    measure: true
  - name: side
    command: [sh, -c, 'echo starting; sleep $LIFE; echo "disk on fire: giving up" >&2; exit 7']
    env: {LIFE: "1000"}
variants:
  - name: baseline
  - name: crashy
    services:
      side: {env: {LIFE: "1.5"}}
load:
  target: "http://127.0.0.1:${port:app}"
  requests: [{path: /provider}]
  rate: 20
  warmup: 500ms
  duration: 3s
rounds: 2
restart: per-trial
`
	path := filepath.Join(t.TempDir(), "crash.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "--seed", "3")
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailure, stdout, stderr)
	}
	const last = "disk on fire: giving up"
	if !strings.Contains(stderr, "exit status 7") || !strings.Contains(stderr, last) {
		t.Errorf("toll's error lacks the exit status and the end of the log:\n%s", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "trials", "*-crashy.json"))
	if len(files) != 1 {
		t.Fatalf("crashy trial files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	var tr struct {
		Interrupted bool
		Error       string
	}
	json.Unmarshal(b, &tr)
	if !tr.Interrupted || !strings.Contains(tr.Error, last) {
		t.Errorf("the trial's record does not keep the log's end: interrupted %v, error %q", tr.Interrupted, tr.Error)
	}
	o := readOutcome(t, out)
	for _, tc := range o.Trials {
		if tc.Variant == "crashy" && !tc.Excluded {
			t.Errorf("the cut trial %d is in the comparison", tc.Index)
		}
	}
	if o.Partial == nil || o.Partial.Planned != 4 || o.Partial.Complete >= 4 || !strings.Contains(o.Partial.Error, last) {
		t.Fatalf("summary.json partial: %+v", o.Partial)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, doc := range []string{stdout, string(md)} {
		if !strings.Contains(doc, "partial run (stopped by an error: ") || !strings.Contains(doc, "of 4 trials complete; missing: ") {
			t.Errorf("the report does not say the run is partial:\n%s", doc)
		}
		if !strings.Contains(doc, last) {
			t.Errorf("the report's flag lacks the end of the log:\n%s", doc)
		}
	}
	// The manifest lists the whole plan, in order.
	var m struct {
		Planned []struct{ Index, Round int }
		Notes   []string
	}
	b, _ = os.ReadFile(filepath.Join(out, "manifest.json"))
	json.Unmarshal(b, &m)
	for _, n := range m.Notes {
		if strings.Contains(n, last) {
			t.Errorf("the exit the trial reported is noted again: %q", n)
		}
	}
	if len(m.Planned) != 4 {
		t.Fatalf("manifest plans %d trials, want 4", len(m.Planned))
	}
	for i, p := range m.Planned {
		if p.Index != i+1 || p.Round != 1+i/2 {
			t.Errorf("planned[%d] = %+v", i, p)
		}
	}
	// toll report on the partial run says so too, and keeps the cut trial
	// only when asked.
	code, stdout, _ = tolltest.Run(t, "report", out, "--include-interrupted")
	if code != 0 && code != ExitInvalid || !strings.Contains(stdout, "partial run (stopped by an error: ") {
		t.Errorf("toll report: exit %d:\n%s", code, stdout)
	}
	for _, tc := range readOutcome(t, out).Trials {
		if tc.Excluded {
			t.Errorf("--include-interrupted: trial %d left out", tc.Index)
		}
	}
}

// TestHelpListsExitCodes checks that the help of the commands whose exit
// code says how a run went lists every code.
func TestHelpListsExitCodes(t *testing.T) {
	for _, args := range [][]string{{"run", "--help"}, {"report", "--help"}} {
		root := newRootCmd(nil)
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		for _, code := range []int{ExitOK, ExitFailure, ExitUsage, ExitInvalid, 4, ExitInterrupted} {
			if !strings.Contains(out.String(), fmt.Sprintf("\n  %-4d ", code)) {
				t.Errorf("toll %s lacks exit code %d:\n%s", strings.Join(args, " "), code, out.String())
			}
		}
	}
}

// TestServiceExitAfterItsLastTrial runs a variant one of whose services
// exits after the variant's only trial, while the baseline's runs: no trial
// notices, so the run's notes must say so, with the end of its log.
func TestServiceExitAfterItsLastTrial(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	// Services start once; crashy's trial runs first (seed 2) and ends
	// about 3.7 s after its side service started, which exits at 5.5 s,
	// in the middle of the baseline's trial (3.8 s to 7.5 s).
	s := `name: idle-exit
services:
  - name: app
    command: [toll, app, provider, --addr, "127.0.0.1:${port:app}", --work, "2000"]
    ready: {http: "http://127.0.0.1:${port:app}/health", timeout: 10s}
    measure: true
  - name: side
    command: [sh, -c, 'echo starting; sleep $LIFE; echo "disk on fire: giving up" >&2; exit 7']
    env: {LIFE: "1000"}
variants:
  - name: baseline
  - name: crashy
    services:
      side: {env: {LIFE: "5.5"}}
load:
  target: "http://127.0.0.1:${port:app}"
  requests: [{path: /provider}]
  rate: 20
  warmup: 500ms
  duration: 3s
rounds: 1
`
	path := filepath.Join(t.TempDir(), "idle.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "--seed", "2")
	var m struct {
		Planned []struct{ Variant string }
		Notes   []string
	}
	b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	json.Unmarshal(b, &m)
	if len(m.Planned) != 2 || m.Planned[0].Variant != "crashy" {
		t.Fatalf("plan %+v: want crashy's trial first", m.Planned)
	}
	if code != 0 {
		t.Fatalf("exit %d, want 0: the trials stand\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	const want = "service crashy/side exited unexpectedly: exit status 7; last 2 log lines: ↵ starting ↵ disk on fire: giving up (while no trial of its variant ran, before toll stopped it)"
	found := false
	for _, n := range m.Notes {
		found = found || n == want
	}
	if !found || !strings.Contains(stdout, want) {
		t.Errorf("the manifest's notes %q and the report must say %q:\n%s", m.Notes, want, stdout)
	}
}

// TestNothingToAnalyseStillReports runs a variant whose service exits in
// the warm-up of the run's first trial: no trial can be analysed, and the
// reports are still written, saying so and what the run is missing.
func TestNothingToAnalyseStillReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	s := `name: early
services:
  - name: app
    command: [toll, app, provider, --addr, "127.0.0.1:${port:app}", --work, "2000"]
    ready: {http: "http://127.0.0.1:${port:app}/health", timeout: 10s}
    measure: true
  - name: side
    command: [sh, -c, 'sleep $LIFE; echo "disk on fire: giving up" >&2; exit 7']
    env: {LIFE: "1000"}
variants:
  - name: baseline
  - name: crashy
    services:
      side: {env: {LIFE: "0.3"}}
load:
  target: "http://127.0.0.1:${port:app}"
  requests: [{path: /provider}]
  rate: 20
  warmup: 2s
  duration: 2s
rounds: 1
restart: per-trial
`
	path := filepath.Join(t.TempDir(), "early.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "--seed", "3") // crashy first
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailure, stdout, stderr)
	}
	if !strings.Contains(stderr, "results: "+out+" (summary.json, report.md, trials.csv, series.csv, metrics.txt, report.html)") {
		t.Errorf("the reports were not written:\n%s", stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"trial 1 (crashy, round 1) was cut short with nothing to analyse: during the trial, service crashy/side exited unexpectedly: exit status 7",
		"partial run (stopped by an error: ", "0 of 2 trials complete; missing: round 1"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}
