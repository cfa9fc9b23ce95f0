// Package tolltest runs toll end to end from a test: it makes the test
// binary act as the toll binary, so that `toll run` and toll's own
// re-executions (`toll app …`, the `_exec` shim) run the code under test,
// and it reads what a run leaves behind (summary.json, exit codes, the
// processes of a run).
//
// Each package under e2e/ holds one group of end-to-end tests in a test
// binary of its own, so that every group stays well inside go test's
// per-package time limit. A group's TestMain calls Main.
package tolltest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
)

// BeMainEnv, set to 1 in its environment, makes the test binary act as the
// toll binary (Command sets it; a test that runs toll through a script sets
// it itself).
const BeMainEnv = "TOLL_TEST_BE_MAIN"

// JobWorkEnv makes the test binary a job of fixed work: it hashes a 64 KiB
// block this many times and exits (the job of the job-mode tests).
const JobWorkEnv = "TOLL_TEST_JOB_WORK"

// Main is a test package's TestMain: it runs the test binary as toll's
// main (tollMain, which is cli.Main) when Command started it as toll, as a
// job of fixed work when JobWorkEnv is set, and the tests otherwise.
func Main(m *testing.M, tollMain func() int) {
	if n := os.Getenv(JobWorkEnv); n != "" && !(len(os.Args) > 1 && os.Args[1] == "_exec") { // the job, not toll's shim around it
		os.Exit(fixedWork(n))
	}
	if os.Getenv(BeMainEnv) == "1" {
		os.Exit(tollMain())
	}
	os.Exit(m.Run())
}

// fixedWork does n blocks of work and returns the exit status.
func fixedWork(n string) int {
	blocks, err := strconv.Atoi(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	buf := make([]byte, 64<<10)
	for i := 0; i < blocks; i++ {
		sum := sha256.Sum256(buf)
		buf[i%len(buf)] ^= sum[0]
	}
	fmt.Printf("done %d blocks\n", blocks)
	return 0
}

// Command returns a command that runs the test binary as toll with args.
//
// A toll that hangs must fail its test with an explanation, not run into
// go test's timeout, whose dump shows only the test waiting. So the
// command is bounded by the test's deadline less DeadlineMargin: then toll
// gets SIGQUIT, on which the Go runtime prints every goroutine to its
// stderr (the test's output then says where toll hung) and exits. Wait
// returns at most WaitDelay after toll has exited even if a process it
// left holds its stdout or stderr open; a test that stops toll itself
// should send SIGQUIT too (Quit).
func Command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-DeadlineMargin))
		t.Cleanup(cancel)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Cancel = func() error { return Quit(cmd) }
	cmd.WaitDelay = WaitDelay
	cmd.Env = append(os.Environ(), BeMainEnv+"=1")
	return cmd
}

// DeadlineMargin is how long before the test binary's deadline Command
// stops a toll still running, leaving the test time to report it.
const DeadlineMargin = 30 * time.Second

// WaitDelay bounds how long Wait waits, once toll has exited or been sent
// SIGQUIT, for toll to exit and for its output pipes to close.
const WaitDelay = 10 * time.Second

// Quit asks a toll started by Command to print its goroutines and exit
// (SIGQUIT), for a test that gives up waiting for it; Wait then returns
// within WaitDelay, toll's stderr holding the dump.
func Quit(cmd *exec.Cmd) error {
	return cmd.Process.Signal(syscall.SIGQUIT)
}

// Run runs toll with args and returns its exit code, stdout and stderr.
func Run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return RunCommand(t, Command(t, args...))
}

// RunCommand runs cmd, one of Command's (its Process then says which pid
// toll had), and returns its exit code, stdout and stderr.
func RunCommand(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// ExitCode returns the exit code of a finished command's error (0 for nil,
// -1 for an error that is not an exit).
func ExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// WriteScenario writes a two-service reference-app scenario with the given
// variants and load section, and returns its path. Its services may take a
// minute to be ready: beside the rest of the suite on two CPUs, one took
// more than 10 s to write its first line.
func WriteScenario(t *testing.T, name, variants, load string) string {
	t.Helper()
	s := fmt.Sprintf(`name: %s
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "40000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 60s}
    measure: true
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider", --work, "2000"]
    env: {OTEL_EXPORTER_OTLP_ENDPOINT: "${sink}"}
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 60s}
    measure: true
variants:
%s
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {name: consumer, method: GET, path: /consumer}
%s
`, name, variants, load)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// HeavyVariants is a baseline and a variant whose provider does four times
// the work: an overhead no noise can hide.
const HeavyVariants = `  - name: baseline
  - name: heavy
    services:
      provider: {args: [--work, "160000"]}`

// Summary is the part of summary.json the tests read.
type Summary struct {
	Steps []struct {
		Variants []Variant
	}
}

// Variant is one variant's result at a step.
type Variant struct {
	Name   string
	Rounds int
	Costs  []struct {
		Cost  string
		Value float64
		Delta *Delta
	}
}

// Value returns the variant's value of cost, and whether it has one.
func (v Variant) Value(cost string) (float64, bool) {
	for _, c := range v.Costs {
		if c.Cost == cost {
			return c.Value, true
		}
	}
	return 0, false
}

// Delta is a variant's comparison with the baseline for one cost.
type Delta struct {
	Pct     *float64
	Verdict string
	// CILow and CIHigh bound the 95% interval, in percent for ratio
	// costs.
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
	// Controlled is set when the change is corrected by the run's A/A
	// control.
	Controlled bool
	// SignificantCorrected is set when the change still reads one once
	// corrected for the number of costs tested.
	SignificantCorrected bool `json:"significant_corrected"`
}

// String writes d as "+12.0% [+3.1%, +20.9%] (verdict)" for a test's
// failure message; "none" when d is nil.
func (d *Delta) String() string {
	if d == nil {
		return "none"
	}
	f := func(p *float64) string {
		if p == nil {
			return "?"
		}
		return fmt.Sprintf("%+.1f%%", *p)
	}
	return fmt.Sprintf("%s [%s, %s] (%s)", f(d.Pct), f(d.CILow), f(d.CIHigh), d.Verdict)
}

// ReadTrials reads the trial records of the results directory dir.
func ReadTrials(t *testing.T, dir string) []*record.Trial {
	t.Helper()
	d, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	trials, bad, err := d.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Fatalf("unreadable trial files: %+v", bad)
	}
	return trials
}

// ReadSummary reads the summary.json of the results directory dir.
func ReadSummary(t *testing.T, dir string) Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Delta returns the comparison of cost for variant with the baseline, at
// the first load step.
func (s Summary) Delta(t *testing.T, variant, cost string) Delta {
	t.Helper()
	for _, v := range s.Steps[0].Variants {
		for _, c := range v.Costs {
			if v.Name == variant && c.Cost == cost && c.Delta != nil {
				return *c.Delta
			}
		}
	}
	t.Fatalf("no comparison of %s for %s in summary", cost, variant)
	return Delta{}
}

// Value returns variant's value of cost at the first load step.
func (s Summary) Value(t *testing.T, variant, cost string) float64 {
	t.Helper()
	return s.ValueAt(t, 0, variant, cost)
}

// ValueAt returns variant's value of cost at load step step (0 the first).
func (s Summary) ValueAt(t *testing.T, step int, variant, cost string) float64 {
	t.Helper()
	if step >= len(s.Steps) {
		t.Fatalf("no load step %d in summary (%d steps)", step, len(s.Steps))
	}
	for _, v := range s.Steps[step].Variants {
		if v.Name != variant {
			continue
		}
		for _, c := range v.Costs {
			if c.Cost == cost {
				return c.Value
			}
		}
	}
	t.Fatalf("no %s for %s at load step %d in summary", cost, variant, step)
	return 0
}

// Descendants returns the pids of every process below pid.
func Descendants(t *testing.T, pid int) []int {
	t.Helper()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	procs, err := fs.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil {
			parent[p.PID] = st.PPID
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Alive returns the pids in ps that still exist and are not zombies.
func Alive(ps []int) []int {
	var out []int
	for _, p := range ps {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Labelled returns the live processes labelled with run id, by pid, with
// their command names.
func Labelled(t *testing.T, id runid.ID) map[int]string {
	t.Helper()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	procs, err := fs.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, p := range procs {
		l, ok, err := runid.FromEnviron(p.PID)
		if err != nil || !ok || l != id {
			continue
		}
		if st, err := p.Stat(); err == nil && st.State != "Z" {
			out[p.PID] = st.Comm
		}
	}
	return out
}

// exitInvalid is cli.ExitInvalid: toll did its job, but no trial of some
// variant was sound (tolltest cannot import cli, whose tests use it).
const exitInvalid = 3

// SkipIfInvalid skips the test when err says toll's run was invalid (exit
// 3): on a machine too busy to hold the planned rate every trial is flagged,
// and no property of the costs can be checked. Any other error fails the
// test. out is what toll printed, shown with the skip or the failure.
func SkipIfInvalid(t *testing.T, err error, out ...string) {
	t.Helper()
	if err == nil {
		return
	}
	if ExitCode(err) == exitInvalid {
		t.Skipf("the machine was too busy for a valid run (exit 3): %s", strings.Join(out, "\n"))
	}
	t.Fatalf("toll run: %v\n%s", err, strings.Join(out, "\n"))
}

// SkipIfRequestsFailed skips the test when requests failed in a trial of
// the run in out: a machine so busy that the services, starved of CPU,
// time out their requests measures what it left them, not what they cost,
// so no comparison of their costs can be checked. On a machine that is not
// that busy no request fails, and the test goes on.
func SkipIfRequestsFailed(t *testing.T, out string, shown ...string) {
	t.Helper()
	for _, tr := range ReadTrials(t, out) {
		if n := tr.Load.Errors.Total(); n > 0 {
			t.Skipf("the machine was too busy for the services to answer: %d of %d requests failed in trial %d (%s)\n%s",
				n, tr.Load.Completed, tr.Index, tr.Variant, strings.Join(shown, "\n"))
		}
	}
}

// IsSink reports whether process pid is toll's telemetry sink (toll
// _sink), which runs beside the services, one per variant.
func IsSink(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && slices.Contains(strings.Split(string(b), "\x00"), "_sink")
}

// RunForTrials runs the scenario at path (skipping the test where toll
// cannot run it here), checks that it wrote want trial files and returns
// its results directory, its standard output and each trial file's
// contents by name.
func RunForTrials(t *testing.T, path string, want int) (out, stdout string, trials map[string][]byte) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "out")
	cmd := Command(t, "run", path, "--out", out)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	SkipIfInvalid(t, cmd.Run(), so.String(), se.String())
	files, err := filepath.Glob(filepath.Join(out, "trials", "*.json"))
	if err != nil || len(files) != want {
		t.Fatalf("trial files %v (%v), want %d", files, err, want)
	}
	trials = make(map[string][]byte, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		trials[filepath.Base(f)] = b
	}
	return out, so.String(), trials
}

// ReportAndCompare checks that a results directory reads as any run's:
// `toll report` on it exits 0 and prints every one of reportWants, and
// `toll compare` of it against a copy of itself exits 0 and prints
// compareWant.
func ReportAndCompare(t *testing.T, out string, reportWants []string, compareWant string) {
	t.Helper()
	code, report, stderr := Run(t, "report", out)
	ok := code == 0
	for _, w := range reportWants {
		ok = ok && strings.Contains(report, w)
	}
	if !ok {
		t.Errorf("toll report: exit %d, want %q\n%s\n%s", code, reportWants, report, stderr)
	}
	again := filepath.Join(t.TempDir(), "again")
	if b, err := exec.Command("cp", "-r", out, again).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, b)
	}
	code, cmp, stderr := Run(t, "compare", out, again)
	if code != 0 || !strings.Contains(cmp, compareWant) {
		t.Errorf("toll compare: exit %d\n%s\n%s", code, cmp, stderr)
	}
}
