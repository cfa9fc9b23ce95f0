package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/runid"
)

// writeStubbornScenario writes a one-service scenario whose service starts
// two children that ignore SIGTERM before it execs the reference provider:
// one in the service's process group, one in a session of its own (setsid),
// which only the cgroup, the supervisor or the run's label can find.
func writeStubbornScenario(t *testing.T, name string) string {
	t.Helper()
	s := fmt.Sprintf(`name: %s
services:
  - name: provider
    command: [sh, -c, "sh -c 'trap \"\" TERM; while :; do sleep 1; done' & setsid sh -c 'trap \"\" TERM; while :; do sleep 1; done' & exec \"$0\" app provider --addr 127.0.0.1:${port:provider}", "${toll}"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 10s}
    measure: true
variants:
  - name: baseline
load:
  target: "http://127.0.0.1:${port:provider}"
  requests:
    - {name: provider, method: GET, path: /provider}
  rate: 20
  warmup: 1s
  duration: 30s
rounds: 2
`, name)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// killLabelled kills what is left of run id, and nothing else.
func killLabelled(t *testing.T, id runid.ID) {
	for pid := range tolltest.Labelled(t, id) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// startStubbornRun starts toll run on the stubborn scenario and waits until
// both SIGTERM-ignoring children run and the first trial is in its measured
// window. It returns toll and its run ID.
func startStubbornRun(t *testing.T, name, out string, extra ...string) (*tolltest.Background, runid.ID) {
	t.Helper()
	path := writeStubbornScenario(t, name)
	run := tolltest.Start(t, append([]string{"run", path, "--out", out}, extra...)...)
	id, err := runid.Of(run.Pid())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killLabelled(t, id) })
	// The service's shell loops ("sh") and the provider (the test binary,
	// run as toll) under their supervisor.
	if !tolltest.Eventually(20*time.Second, func() bool {
		shells := 0
		for _, comm := range tolltest.Labelled(t, id) {
			if comm == "sh" {
				shells++
			}
		}
		return shells >= 2
	}) {
		t.Fatalf("the service's children did not start: %v\n%s", tolltest.Labelled(t, id), run.Output())
	}
	time.Sleep(2 * time.Second) // into the measured window
	return run, id
}

// waitNoneLabelled waits up to 10 s for no process of run id to be left,
// and fails the test naming those that are.
func waitNoneLabelled(t *testing.T, id runid.ID, what string) {
	t.Helper()
	var left map[int]string
	if tolltest.Eventually(10*time.Second, func() bool {
		left = tolltest.Labelled(t, id)
		return len(left) == 0
	}) {
		return
	}
	t.Errorf("10 s after %s, processes of run %v are left: %v", what, id, left)
}

// cgroupsOf returns the cgroup directories of run id's tree, in every
// hierarchy.
func cgroupsOf(id runid.ID) []string {
	var out []string
	for _, pattern := range []string{"/sys/fs/cgroup/*/toll/*-" + id.String(), "/sys/fs/cgroup/toll/*-" + id.String()} {
		m, _ := filepath.Glob(pattern)
		out = append(out, m...)
	}
	return out
}

// cleanupLeavesNoCgroup runs toll cleanup and checks that no cgroup of run
// id is left.
func cleanupLeavesNoCgroup(t *testing.T, id runid.ID) {
	t.Helper()
	out, err := tolltest.Command(t, "cleanup").CombinedOutput()
	if err != nil {
		t.Errorf("toll cleanup: %v\n%s", err, out)
	}
	if left := cgroupsOf(id); len(left) > 0 {
		t.Errorf("after toll cleanup, cgroups of run %v are left: %v\n%s", id, left, out)
	}
}

// cgroupModes are the ways to run the tests: with cgroups where the
// machine has them, and without.
func cgroupModes(t *testing.T) []string {
	modes := []string{"--no-cgroup"}
	if _, err := cgroup.Detect(); err == nil {
		modes = append([]string{"cgroup"}, modes...)
	} else {
		t.Logf("cgroups unusable (%v): only --no-cgroup is tested", err)
	}
	return modes
}

// TestSecondSignalKillsAndReports sends SIGINT then SIGTERM 50 ms apart
// (what timeout, CI cancellation and docker stop do) to a run whose service
// has children that ignore SIGTERM: toll must kill them at once rather than
// wait out the grace period, still write its report, exit 130, and leave no
// process of the run and, after toll cleanup, no cgroup.
func TestSecondSignalKillsAndReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	for _, mode := range cgroupModes(t) {
		t.Run(mode, func(t *testing.T) {
			var extra []string
			if mode != "cgroup" {
				extra = []string{mode}
			}
			out := filepath.Join(t.TempDir(), "out")
			// A grace period far longer than the wait below: the children
			// end within it only if the second signal cut it short.
			run, id := startStubbornRun(t, "second-signal", out, append(extra, "--stop-grace", "2m")...)
			run.Signal(syscall.SIGINT)
			time.Sleep(50 * time.Millisecond)
			run.Signal(syscall.SIGTERM)
			sent := time.Now()
			// The children ignore SIGTERM: without the second signal toll
			// would wait out the 2-minute grace period before SIGKILL.
			// Their end is awaited, not toll's exit, which a busy machine
			// delays by the time the report takes to write.
			shellsGone := tolltest.Eventually(30*time.Second, func() bool {
				for _, comm := range tolltest.Labelled(t, id) {
					if comm == "sh" {
						return false
					}
				}
				return true
			})
			took := time.Since(sent)
			if err := run.Wait(t, 60*time.Second); tolltest.ExitCode(err) != cli.ExitInterrupted {
				t.Errorf("exit %v, want %d\n%s", err, cli.ExitInterrupted, run.Output())
			}
			if !shellsGone {
				t.Errorf("the service's children still ran %v after the second signal: toll waited out the grace period", took)
			}
			if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
				t.Errorf("no report after SIGINT and SIGTERM: %v\n%s", err, run.Output())
			}
			if trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json")); len(trials) == 0 {
				t.Error("no trial file written")
			}
			if !strings.Contains(run.Output(), "killing the services now") {
				t.Errorf("toll did not say the second signal kills the services:\n%s", run.Output())
			}
			waitNoneLabelled(t, id, "toll exited")
			cleanupLeavesNoCgroup(t, id)
		})
	}
}

// TestKilledTollLeavesNothing SIGKILLs toll while its service has children
// that ignore SIGTERM, one of them in a session of its own: the supervisor
// must kill them all, and toll cleanup must remove the run's cgroups.
func TestKilledTollLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	for _, mode := range cgroupModes(t) {
		t.Run(mode, func(t *testing.T) {
			var extra []string
			if mode != "cgroup" {
				extra = []string{mode}
			}
			out := filepath.Join(t.TempDir(), "out")
			run, id := startStubbornRun(t, "killed", out, extra...)
			before := tolltest.Labelled(t, id)
			run.Signal(os.Kill)
			run.Wait(t, 30*time.Second)
			waitNoneLabelled(t, id, "toll was killed")
			if t.Failed() {
				logs, _ := filepath.Glob(filepath.Join(out, "logs", "*"))
				for _, l := range logs {
					b, _ := os.ReadFile(l)
					t.Logf("%s:\n%s", l, b)
				}
				t.Logf("before: %v\n%s", before, run.Output())
			}
			if mode == "cgroup" && len(cgroupsOf(id)) == 0 {
				t.Log("the run's cgroups were removed before toll cleanup ran (by another run's cleanup)")
			}
			cleanupLeavesNoCgroup(t, id)
		})
	}
}

// TestInterruptWhileStarting interrupts a run while it is still getting
// ready (a service whose readiness check never passes; a start-up
// experiment's prepare command): the run ends as interrupted (exit 130),
// not as failed, says so, and leaves no process.
func TestInterruptWhileStarting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	for _, tt := range []struct {
		name, scenario string
		args           []string
	}{
		{"readiness", `name: starting
services:
  - name: provider
    command: [sh, -c, "touch MARK; exec sleep 300"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 5m}
    measure: true
variants:
  - name: baseline
load:
  target: "http://127.0.0.1:${port:provider}"
  requests: [{path: /}]
  rate: 20
  duration: 2s
rounds: 1
`, nil},
		{"prepare", `name: preparing
startup: {repetitions: 1}
services:
  - name: provider
    command: [sleep, "300"]
    ready: {tcp: "127.0.0.1:${port:provider}"}
    measure: true
variants:
  - name: baseline
    prepare: [sh, -c, "touch MARK; exec sleep 300"]
`, []string{"--startup"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mark := filepath.Join(dir, "started")
			path := filepath.Join(dir, tt.name+".yaml")
			if err := os.WriteFile(path, []byte(strings.ReplaceAll(tt.scenario, "MARK", mark)), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			run := tolltest.Start(t, append([]string{"run", path, "--out", out}, tt.args...)...)
			id, err := runid.Of(run.Pid())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killLabelled(t, id) })
			started := func() bool { _, err := os.Stat(mark); return err == nil }
			tolltest.Eventually(tolltest.Patience(t, 20*time.Second), func() bool {
				return started() || syscall.Kill(run.Pid(), 0) != nil
			})
			if !started() {
				t.Fatalf("nothing started\n%s", run.Output())
			}
			run.Signal(syscall.SIGINT)
			if code := tolltest.ExitCode(run.Wait(t, tolltest.Patience(t, 30*time.Second))); code != cli.ExitInterrupted {
				t.Errorf("exit %d after an interrupt while the run got ready, want %d\n%s", code, cli.ExitInterrupted, run.Output())
			}
			if !strings.Contains(run.Output(), "interrupted") {
				t.Errorf("toll does not say the run was interrupted:\n%s", run.Output())
			}
			waitNoneLabelled(t, id, "toll exited")
		})
	}
}
