package measure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/record"
)

// TestRunDetectsFourTimesTheWork runs a small scenario end to end: a variant
// whose provider does 4× the work must show clearly more CPU per request,
// and the table must have one row per cost with baseline / variant / Δ / Δ%.
// It is the end-to-end run that go test -short keeps (about 30 s).
func TestRunDetectsFourTimesTheWork(t *testing.T) {
	path := tolltest.WriteScenario(t, "e2e", tolltest.HeavyVariants, `  rate: 50
  warmup: 1s
  duration: 3s
rounds: 2`)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	tolltest.SkipIfInvalid(t, cmd.Run(), stdout.String(), stderr.String())
	table := stdout.String()
	for _, want := range []string{"baseline (n=2)", "heavy (n=2)", "Δ%", "CPU per request (ms)", "CPU (cores)", "RSS (MiB)",
		"threads", "latency p50 (ms)", "latency p90 (ms)", "latency p99 (ms)", "latency max (ms)", "throughput (req/s, target 50)", "errors (%)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, f := range []string{"manifest.json", "summary.json", "report.md", "report.html", "trials.csv", "series.csv", "metrics.txt", "scenario.yaml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if hl, _ := filepath.Glob(filepath.Join(out, "trials", "*.hlog")); len(hl) != 4 {
		t.Errorf("%d histogram logs, want 4", len(hl))
	}
	trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
	if len(trials) != 4 {
		t.Errorf("%d trial files, want 4", len(trials))
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "| cost | baseline (n=2) | heavy (n=2) | Δ | Δ% |") {
		t.Errorf("report.md lacks the table header:\n%s", md)
	}
	tolltest.SkipIfRequestsFailed(t, out, table)
	s := tolltest.ReadSummary(t, out)
	base, heavy := s.Value(t, "baseline", "cpu_per_request_ms"), s.Value(t, "heavy", "cpu_per_request_ms")
	// The heavy provider's extra work costs what it costs this machine's
	// CPU; the difference must show most of it.
	checkExtraWork(t, base, heavy, table)
}

// checkExtraWork checks that the heavy variant's CPU per request exceeds
// the baseline's by at least half of what its extra work costs on this
// machine (tolltest.WorkCPU): a difference, which holds on a busy machine,
// where a ratio does not (a starved service's overhead per request grows
// on both sides alike and dilutes it).
func checkExtraWork(t *testing.T, base, heavy float64, shown string) {
	t.Helper()
	extra := float64(tolltest.WorkCPU(t, tolltest.HeavyExtraWork)) / float64(time.Millisecond)
	if d := heavy - base; !(d > extra/2) || base <= 0 {
		t.Errorf("CPU per request: baseline %.3f ms, heavy %.3f ms (+%.3f ms); want at least half the %.3f ms its extra work costs here\n%s",
			base, heavy, d, extra, shown)
	}
}

// TestBadScenarioOneLine checks that a malformed scenario gets a one-line
// error naming file:line and the field, with exit code 2.
func TestBadScenarioOneLine(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"typo", "services:\n  - name: a\n    comand: [x]\n", ":3"},
		{"rate", "services:\n  - name: a\n    command: [x]\nvariants: [{name: baseline}]\nload:\n  target: http://127.0.0.1:1\n  requests: [{path: /}]\n  rate: fast\n", ":8"},
		{"no command", "services:\n  - name: a\nvariants: [{name: baseline}]\n", ":2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yaml")
			os.WriteFile(path, []byte(tt.yaml), 0o644)
			cmd := tolltest.Command(t, "run", path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitUsage {
				t.Fatalf("exit %v, want %d; stderr %s", err, cli.ExitUsage, stderr.String())
			}
			msg := strings.TrimSpace(stderr.String())
			if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, path+tt.want) {
				t.Errorf("want one line with %s%s, got:\n%s", path, tt.want, msg)
			}
		})
	}
}

// TestInterruptLeavesNoProcess stops toll mid-trial, gracefully (SIGINT) and
// brutally (SIGKILL), and checks by pid that no service is left running.
func TestInterruptLeavesNoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			path := tolltest.WriteScenario(t, "interrupt", `  - name: baseline
  - name: otel
    services:
      consumer: {args: [--trace, otel]}`, `  rate: 50
  warmup: 1s
  duration: 30s
rounds: 2`)
			out := filepath.Join(t.TempDir(), "out")
			run := tolltest.Start(t, "run", path, "--out", out)

			// Wait until both services run and load is flowing.
			var pids []int
			started := tolltest.Eventually(20*time.Second, func() bool {
				pids = run.Children(t)
				return len(slices.DeleteFunc(slices.Clone(pids), tolltest.IsSink)) >= 2 // not counting the telemetry sinks
			})
			if !started {
				t.Fatalf("services did not start: pids %v\n%s", pids, run.Output())
			}
			// Into the measured window: the services must become ready
			// and the trial's 1 s warm-up pass, which a busy machine can
			// take seconds over; the window lasts 30 s.
			time.Sleep(5 * time.Second)

			run.Signal(sig)
			err := run.Wait(t, 20*time.Second)
			if code := tolltest.ExitCode(err); sig == syscall.SIGINT && code != cli.ExitInterrupted {
				t.Errorf("exit %v, want %d\n%s", err, cli.ExitInterrupted, run.Output())
			}
			if left := tolltest.Outlived(pids, 5*time.Second); len(left) > 0 {
				t.Errorf("after %v, service processes %v are still running", sig, left)
			}
			if sig == syscall.SIGINT {
				// The interrupted trial is kept, marked as such, and a report is written.
				trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
				if len(trials) == 0 {
					t.Errorf("no trial file kept after SIGINT")
				}
				if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
					t.Errorf("no report after SIGINT: %v\n%s", err, run.Output())
				}
			}
		})
	}
}

// TestDuet runs a duet where the machine has the CPUs for it, and checks
// that toll run and toll check refuse one, clearly and as bad input (exit
// 2), where it has not.
func TestDuet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "duet", tolltest.HeavyVariants, `  rate: 50
  warmup: 1s
  duration: 2s
rounds: 2
mode: duet`)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if runtime.NumCPU() < 4 {
		// Bad input, refused by toll check as by toll run (it passed
		// check, and run refused it with exit 1).
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitUsage || !strings.Contains(stderr.String(), "needs at least 4 CPUs") {
			t.Errorf("toll run: want a refusal (exit %d) on %d CPUs, got %v:\n%s", cli.ExitUsage, runtime.NumCPU(), err, stderr.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a refused run created %s", out)
		}
		if code, stdout, stderr := tolltest.Run(t, "check", path); code != cli.ExitUsage || !strings.Contains(stderr, "duet.yaml:") || !strings.Contains(stderr, "mode: duet with pinning.duet: split") {
			t.Errorf("toll check: exit %d, want %d naming file, line and field\n%s%s", code, cli.ExitUsage, stdout, stderr)
		}
		return
	}
	if err != nil {
		t.Fatalf("toll run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "duet:") {
		t.Errorf("the report does not show the duet layout:\n%s", stdout.String())
	}
	tolltest.SkipIfRequestsFailed(t, out, stdout.String())
	s := tolltest.ReadSummary(t, out)
	checkExtraWork(t, s.Value(t, "baseline", "cpu_per_request_ms"), s.Value(t, "heavy", "cpu_per_request_ms"), stdout.String())
}

// TestSharedDuet runs real duets whose two sides share the services' CPU,
// restarted every round, on any machine with 2 CPUs: loaded at once and
// in turns of 100 ms (load.slice). In both the heavy side's CPU per request
// shows, the manifest records one CPU set for both sides, and the report
// says how the CPUs were shared. Loaded at once, it says their latencies
// do not compare; in turns they are compared, each side's throughput is
// the rate it was sent at while its turn lasted, and each trial's window is
// twice its duration, half of it its own load.
func TestSharedDuet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("a shared duet needs 2 CPUs")
	}
	for _, tt := range []struct {
		name, load string
		report     []string // what the report must say
		check      func(t *testing.T, s tolltest.Summary, trials map[string][]byte)
	}{
		{"at once", "  rate: 25\n  warmup: 1s\n  duration: 2s\n",
			[]string{"each variant sharing CPU", "their latencies do not"}, nil},
		{"in turns", "  rate: 100\n  warmup: 500ms\n  duration: 2s\n  slice: 100ms\n",
			[]string{"each variant sharing CPU", "shared duet in turns of 100ms", "latencies compare too"}, checkTurns},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := tolltest.WriteScenario(t, "shared", tolltest.HeavyVariants, tt.load+`rounds: 2
mode: duet
restart: per-round
pinning: {duet: shared}`)
			out, stdout, trials := tolltest.RunForTrials(t, path, 4)
			for _, want := range tt.report {
				if !strings.Contains(stdout, want) {
					t.Errorf("the report lacks %q:\n%s", want, stdout)
				}
			}
			tolltest.SkipIfRequestsFailed(t, out, stdout)
			s := tolltest.ReadSummary(t, out)
			checkExtraWork(t, s.Value(t, "baseline", "cpu_per_request_ms"), s.Value(t, "heavy", "cpu_per_request_ms"), stdout)
			var m struct {
				Layout struct {
					DuetCPUs []string `json:"duet_cpus"`
				} `json:"layout"`
			}
			b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if d := m.Layout.DuetCPUs; len(d) != 2 || d[0] != d[1] {
				t.Errorf("duet CPUs %v, want one set for both sides", d)
			}
			if tt.check != nil {
				tt.check(t, s, trials)
			}
		})
	}
}

// TestTogether runs the baseline, a copy of it and a variant four times as
// heavy all at once on the services' shared CPU (mode: together), restarted
// every round: the heavy variant's CPU per request shows and the copy's
// does not differ beyond the noise, the report says how the CPUs were
// shared and that latencies do not compare, and in every round the three
// windows overlap, each side's load a third of an interval behind the one
// before it (plan.Trial.Order), every side taking every place over the
// three rounds.
func TestTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("variants together need 2 CPUs")
	}
	path := tolltest.WriteScenario(t, "together", tolltest.HeavyVariants+`
  - name: copy`, `  rate: 25
  warmup: 1s
  duration: 2s
rounds: 3
mode: together
restart: per-round`)
	out, stdout, _ := tolltest.RunForTrials(t, path, 9)
	for _, want := range []string{"every variant at once sharing CPU", "their latencies do not", "together"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, stdout)
		}
	}
	tolltest.SkipIfRequestsFailed(t, out, stdout)
	s := tolltest.ReadSummary(t, out)
	checkExtraWork(t, s.Value(t, "baseline", "cpu_per_request_ms"), s.Value(t, "heavy", "cpu_per_request_ms"), stdout)
	if d := s.Delta(t, "copy", "cpu_per_request_ms"); d.Pct == nil || *d.Pct < -25 || *d.Pct > 25 {
		t.Errorf("a copy of the baseline read %+v in CPU per request", d)
	}
	if d := s.Delta(t, "heavy", "latency_p50_ms"); !strings.HasPrefix(d.Verdict, "n/a") {
		t.Errorf("latency compared between variants loaded at once on one CPU: %+v", d)
	}
	byRound := map[int][]*record.Trial{}
	places := map[string]map[int]bool{}
	for _, tr := range tolltest.ReadTrials(t, out) {
		byRound[tr.Round] = append(byRound[tr.Round], tr)
		if places[tr.Variant] == nil {
			places[tr.Variant] = map[int]bool{}
		}
		places[tr.Variant][tr.Order] = true
	}
	const lag = time.Second / 75 // a third of 1/25 s
	for r, trs := range byRound {
		if len(trs) != 3 {
			t.Errorf("round %d: %d trials, want 3", r, len(trs))
			continue
		}
		var first time.Time
		for _, tr := range trs {
			if tr.Order == 0 {
				first = tr.MeasureStart
			}
		}
		for _, tr := range trs {
			want := first.Add(time.Duration(tr.Order) * lag)
			if d := tr.MeasureStart.Sub(want); d < -2*time.Millisecond || d > 2*time.Millisecond {
				t.Errorf("round %d: %s (place %d) measured from %s, want %s (%v off)", r, tr.Variant, tr.Order, tr.MeasureStart.Format(time.StampMicro), want.Format(time.StampMicro), d)
			}
		}
	}
	for v, p := range places {
		if len(p) != 3 {
			t.Errorf("%s took places %v over 3 rounds, want each of 0, 1, 2", v, p)
		}
	}
}

// checkTurns checks a shared duet in turns of 100 ms at 100 req/s, 2 s a
// side: latency compared, throughput per second of a side's own load, and
// trial windows of 4 s holding 2 s of it.
func checkTurns(t *testing.T, s tolltest.Summary, trials map[string][]byte) {
	t.Helper()
	if d := s.Delta(t, "heavy", "latency_p50_ms"); d.Pct == nil || strings.HasPrefix(d.Verdict, "n/a") {
		t.Errorf("latency p50 not compared in turns: %+v", d)
	}
	for _, v := range []string{"baseline", "heavy"} {
		if tp := s.Value(t, v, "throughput_rps"); tp < 95 || tp > 105 {
			t.Errorf("%s: throughput %.1f req/s, want the 100 sent while its turns lasted", v, tp)
		}
	}
	for f, b := range trials {
		var tr record.Trial
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		if w := tr.Window().Seconds(); tr.LoadShare != 0.5 || w < 3.9 || w > 4.1 || tr.Load.Completed < 190 || tr.Load.Completed > 210 {
			t.Errorf("%s: load share %g, window %.2f s, %d requests: want 0.5, 4 s, and 2 s of 100 req/s", f, tr.LoadShare, w, tr.Load.Completed)
		}
	}
}

// TestAgentRoleRows checks that a role: agent service's cost shows in rows
// of its own and is added into its variant's total.
func TestAgentRoleRows(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	b, err := os.ReadFile("testdata/agent-daemon-toy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "rounds: 8", "rounds: 2", 1)
	s = strings.Replace(s, "duration: 4s", "duration: 2s", 1)
	path := filepath.Join(t.TempDir(), "agent.yaml")
	os.WriteFile(path, []byte(s), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	tolltest.SkipIfInvalid(t, cmd.Run(), stdout.String(), stderr.String())
	table := stdout.String()
	for _, want := range []string{"collector (agent): CPU (cores)", "collector (agent): RSS (MiB)", "consumer (app): CPU (cores)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	var sum struct {
		Steps []struct {
			Variants []struct {
				Name  string
				Costs []struct {
					Cost  string
					Value float64
				}
				Services []struct {
					Name, Role string
					Costs      []struct {
						Cost  string
						Value float64
					}
				}
			}
		}
	}
	js, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(js, &sum); err != nil {
		t.Fatal(err)
	}
	for _, v := range sum.Steps[0].Variants {
		if v.Name != "otel-daemon" {
			continue
		}
		var total, parts float64
		for _, c := range v.Costs {
			if c.Cost == "cpu_cores" {
				total = c.Value
			}
		}
		var agent float64
		for _, sv := range v.Services {
			for _, c := range sv.Costs {
				if c.Cost == "cpu_cores" {
					parts += c.Value
					if sv.Role == "agent" {
						agent = c.Value
					}
				}
			}
		}
		if agent <= 0 || total <= 0 || math.Abs(total-parts) > 1e-6*total {
			t.Errorf("otel-daemon: total %.4f cores, services sum %.4f, agent %.4f: the agent must be counted, and in the total", total, parts, agent)
		}
		return
	}
	t.Errorf("no otel-daemon variant in summary.json")
}

// TestJVMCounters runs a real JVM behind a shell wrapper and checks that its
// heap, metaspace, classes, GC and init time reach the report.
func TestJVMCounters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a JVM")
	}
	classes := tolltest.HelloClasses(t)
	s := fmt.Sprintf(`name: jvm
services:
  - name: hello
    # java is a child of the shell, not exec'd: toll must follow the tree.
    command: [sh, -c, "java -Xmx64m $JOPTS -cp %s Hello ${port:hello}; true"]
    ready: {http: "http://127.0.0.1:${port:hello}/", timeout: 20s}
    measure: true
variants:
  - name: baseline
  - name: serial
    services:
      hello: {env: {JOPTS: "-XX:+UseSerialGC"}}
load:
  target: "http://127.0.0.1:${port:hello}"
  requests: [{path: /}]
  rate: 100
  warmup: 1s
  duration: 3s
rounds: 1
`, classes)
	path := filepath.Join(t.TempDir(), "jvm.yaml")
	os.WriteFile(path, []byte(s), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	tolltest.SkipIfInvalid(t, cmd.Run(), stdout.String(), stderr.String())
	sum := tolltest.ReadSummary(t, out)
	for _, v := range []string{"baseline", "serial"} {
		if c := sum.Value(t, v, "jvm_classes_loaded"); c < 500 {
			t.Errorf("%s: %g classes loaded", v, c)
		}
		if h := sum.Value(t, v, "jvm_heap_committed_mib"); h <= 0 || h > 64 {
			t.Errorf("%s: heap committed %g MiB with -Xmx64m", v, h)
		}
		if i := sum.Value(t, v, "jvm_init_ms"); i <= 0 {
			t.Errorf("%s: JVM init %g ms", v, i)
		}
		if th := sum.Value(t, v, "jvm_threads"); th < 5 {
			t.Errorf("%s: %g JVM threads", v, th)
		}
		// Seconds after its start, under load, a JVM is still compiling.
		if c, ms := sum.Value(t, v, "jvm_jit_compiles_per_min"), sum.Value(t, v, "jvm_jit_ms_per_s"); c <= 0 || ms <= 0 {
			t.Errorf("%s: JIT %g compiles/min, %g ms/s, want both above zero", v, c, ms)
		}
		// The compiler threads' CPU, read from the JVM's threads, and
		// the CPU per request without it: less than all of it, not
		// nothing (the application ran).
		jit, all, without := sum.Value(t, v, "jvm_jit_cpu_ms_per_s"), sum.Value(t, v, "cpu_per_request_ms"), sum.Value(t, v, "cpu_per_request_nojit_ms")
		if jit <= 0 || without <= 0 || without >= all {
			t.Errorf("%s: compilers %g ms/s of CPU; CPU per request %g ms, %g ms without the compilers", v, jit, all, without)
		}
	}
	for _, want := range []string{"JVM heap used (MiB)", "JVM metaspace used (MiB)", "JVM GC time (ms/s)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestResumeAfterKill SIGKILLs a run after its first trials and checks that
// toll run --resume finishes it: every planned trial is there once, the
// finished ones untouched, and the report covers them all.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "resume", tolltest.HeavyVariants, `  rate: 50
  warmup: 200ms
  duration: 1s
rounds: 3
restart: per-round`)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var first []string
	for end := time.Now().Add(60 * time.Second); len(first) < 2 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		first, _ = filepath.Glob(filepath.Join(out, "trials", "*.json"))
	}
	if len(first) < 2 {
		t.Fatalf("no two trials within 60 s:\n%s", stderr.String())
	}
	cmd.Process.Kill()
	cmd.Wait()
	kept := map[string][]byte{}
	for _, f := range first {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		kept[f] = b
	}

	// A stray FILE beside --resume is a usage error.
	if err := tolltest.Command(t, "run", "--resume", out, path).Run(); tolltest.ExitCode(err) != cli.ExitUsage {
		t.Errorf("--resume with FILE: exit %v, want %d", err, cli.ExitUsage)
	}
	res := tolltest.Command(t, "run", "--resume", out, "-q")
	b, err := res.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	dir, err := record.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	trials, _, err := dir.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 6 {
		t.Fatalf("%d trials after resuming, want 6\n%s", len(trials), b)
	}
	for i, tr := range trials {
		if tr.Index != i+1 || tr.Interrupted {
			t.Errorf("trial %d: index %d, interrupted %v", i+1, tr.Index, tr.Interrupted)
		}
	}
	for f, before := range kept {
		after, _ := os.ReadFile(f)
		if !bytes.Equal(before, after) && !strings.Contains(string(before), `"interrupted": true`) {
			t.Errorf("finished trial %s was rewritten by the resumed run", filepath.Base(f))
		}
	}
	m, err := dir.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Resumes) != 1 || m.Resumes[0].Kept < 2 || m.Resumes[0].Kept+m.Resumes[0].Rerun != 6 || m.Finished.IsZero() || m.Interrupted {
		t.Errorf("manifest after resuming: resumes %+v, finished %v, interrupted %v", m.Resumes, m.Finished, m.Interrupted)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Errorf("no report after resuming: %v", err)
	}
	s := tolltest.ReadSummary(t, out)
	for _, v := range s.Steps[0].Variants {
		if v.Rounds != 3 {
			t.Errorf("%s: %d rounds in the summary, want 3", v.Name, v.Rounds)
		}
	}
	// A finished run has nothing to resume.
	again := tolltest.Command(t, "run", "--resume", out)
	if b, err := again.CombinedOutput(); tolltest.ExitCode(err) != cli.ExitUsage || !strings.Contains(string(b), "nothing to resume") {
		t.Errorf("resuming a finished run: exit %v\n%s", err, b)
	}
}

// TestResumedPrecisionKeepsItsBudget interrupts a run in precision mode
// whose target it cannot reach, resumes it, and checks that the budget is
// the run's, not each sitting's: the manifest keeps what the first sitting
// spent, and the resumed one stops within what was left of the budget.
func TestResumedPrecisionKeepsItsBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	const budget = 40 * time.Second
	path := tolltest.WriteScenario(t, "resumebudget", tolltest.HeavyVariants, fmt.Sprintf(`  rate: 50
  warmup: 200ms
  duration: 1s
restart: per-round
mode: sequential
precision: {target: 0.1%%, budget: %s}`, budget))
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out, "-q")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	time.Sleep(25 * time.Second)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	first := time.Since(began)

	resumed := time.Now()
	res := tolltest.Command(t, "run", "--resume", out, "-q")
	b, err := res.CombinedOutput()
	took := time.Since(resumed)
	if code := tolltest.ExitCode(err); code != 0 && code != cli.ExitInvalid {
		t.Fatalf("resume: exit %d\n%s", code, b)
	}
	dir, err := record.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dir.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Precision == nil || m.Precision.SpentS < 20 || m.Precision.SpentS > first.Seconds()+1 {
		t.Fatalf("the first sitting took %v; the manifest says %+v spent", first, m.Precision)
	}
	// What was left, with room for a round and the services' starts.
	if left := budget - time.Duration(m.Precision.SpentS*float64(time.Second)); took > left+8*time.Second {
		t.Errorf("the resumed sitting took %v, where %v of the %v budget was left", took, left, budget)
	}
}
