package faults

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestRunPipedIntoHead runs toll as `toll run FILE 2>&1 | head -2` does:
// its output goes to a pipe whose reader reads two lines and goes away.
// The run goes on to its end and writes its results; Go's default for a
// broken pipe on standard output or error (die of SIGPIPE, exit 141) left
// no report, and the run's cgroup and counts files behind.
func TestRunPipedIntoHead(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "piped", tolltest.HeavyVariants, `  rate: 20
  warmup: 200ms
  duration: 1s
rounds: 2`)
	out := filepath.Join(t.TempDir(), "out")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := tolltest.Command(t, "run", path, "--out", out)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := bufio.NewScanner(r)
	for range 2 {
		if !lines.Scan() {
			t.Fatalf("toll printed fewer than two lines: %v", lines.Err())
		}
	}
	r.Close() // head exits
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(2 * time.Minute):
		tolltest.Quit(cmd)
		t.Fatalf("toll still running 2m after its reader went: %v", <-done)
	}
	if code := tolltest.ExitCode(werr); code != 0 {
		t.Errorf("toll run: %v (exit %d), want exit 0: a reader that goes away ends the output, not the run", werr, code)
	}
	for _, name := range []string{"summary.json", "report.md", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("the run wrote no %s: %v", name, err)
		}
	}
	if trials := tolltest.ReadTrials(t, out); len(trials) != 4 {
		t.Errorf("%d trials written, want 4", len(trials))
	}
}
