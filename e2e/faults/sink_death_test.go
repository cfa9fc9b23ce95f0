package faults

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestSinkDeathStopsTheRun kills a variant's telemetry sink (toll _sink)
// after the first trial: the run stops with an error that names the sink,
// keeps the trials it finished, and leaves no process behind, instead of
// measuring on while the variant's exports go nowhere.
func TestSinkDeathStopsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "sinkdeath", `  - name: baseline
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel]}`, `  rate: 20
  warmup: 500ms
  duration: 2s
rounds: 4`)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })

	var all []int
	killed := false
	for deadline := time.Now().Add(30 * time.Second); !killed && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		all = append(all, tolltest.Descendants(t, cmd.Process.Pid)...)
		if trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json")); len(trials) == 0 {
			continue
		}
		for _, p := range tolltest.Descendants(t, cmd.Process.Pid) {
			if tolltest.IsSink(p) {
				syscall.Kill(p, syscall.SIGKILL)
				killed = true
				break
			}
		}
	}
	if !killed {
		t.Fatalf("no sink to kill after the first trial\n%s", output.String())
	}
	select {
	case err := <-done:
		if tolltest.ExitCode(err) == 0 {
			t.Errorf("toll run exited 0 after its sink died\n%s", output.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("toll run did not end after its sink died\n%s", output.String())
	}
	for line := range strings.SplitSeq(output.String(), "\n") {
		if strings.Contains(line, "telemetry sink") {
			t.Log(line)
		}
	}
	if !strings.Contains(output.String(), "telemetry sink") {
		t.Errorf("the output does not name the sink that died:\n%s", output.String())
	}
	if trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json")); len(trials) == 0 {
		t.Errorf("no finished trial kept")
	}
	time.Sleep(500 * time.Millisecond)
	if left := tolltest.Alive(all); len(left) > 0 {
		t.Errorf("processes %v still running after toll exited", left)
		for _, p := range left {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}
