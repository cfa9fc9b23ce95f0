package faults

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestResumeOfALiveRunIsRefused resumes a results directory whose run is
// still going: the second toll refuses at once, naming the live run's pid,
// and writes no trial, instead of running the same trials into the same
// files as the first.
func TestResumeOfALiveRunIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "resumelive", tolltest.HeavyVariants, `  rate: 20
  warmup: 500ms
  duration: 2s
rounds: 4`)
	out := filepath.Join(t.TempDir(), "out")
	run := tolltest.Start(t, "run", path, "--out", out, "-q")
	if !tolltest.Eventually(60*time.Second, func() bool {
		trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
		return len(trials) > 0
	}) {
		t.Fatalf("no trial written\n%s", run.Output())
	}
	before, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
	code, stdout, stderr := tolltest.Run(t, "run", "--resume", out, "-q")
	if code != cli.ExitUsage {
		t.Errorf("toll run --resume of a live run: exit %d, want %d\n%s%s", code, cli.ExitUsage, stdout, stderr)
	}
	if !strings.Contains(stderr, "pid "+strconv.Itoa(run.Pid())) {
		t.Errorf("the refusal does not name the live run (pid %d):\n%s", run.Pid(), stderr)
	}
	run.Signal(syscall.SIGINT)
	run.Wait(t, 60*time.Second)

	after, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
	if len(after) < len(before) {
		t.Errorf("trials went from %d to %d", len(before), len(after))
	}
}
