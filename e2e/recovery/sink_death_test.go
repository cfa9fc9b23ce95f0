package recovery

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestSinkDeathStopsTheRun kills a variant's telemetry sink (toll _sink)
// after the first trial, in each way trials run (one variant at a time, a
// duet, every variant together): the run stops with an error that names
// the sink, keeps the trials it finished, and leaves no process behind,
// instead of measuring on while the variant's exports go nowhere.
func TestSinkDeathStopsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	for _, tt := range []struct{ name, mode string }{
		{"sequential", ""},
		{"duet", "mode: duet\npinning: {duet: shared}"},
		{"together", "mode: together\npinning: {duet: shared}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := tolltest.WriteScenario(t, "sinkdeath", `  - name: baseline
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel]}`, `  rate: 20
  warmup: 500ms
  duration: 2s
rounds: 8
`+tt.mode)
			sinkDeath(t, path)
		})
	}
}

// sinkDeath runs the scenario at path, kills a sink once the first trial
// is written, and checks that the run stopped as it should.
func sinkDeath(t *testing.T, path string) {
	out := filepath.Join(t.TempDir(), "out")
	run := tolltest.Start(t, "run", path, "--out", out)
	var all []int
	killed, before := false, 0
	for deadline := time.Now().Add(tolltest.Patience(t, 30*time.Second)); !killed && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		all = append(all, run.Children(t)...)
		trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
		if len(trials) == 0 {
			continue
		}
		for _, p := range run.Children(t) {
			if tolltest.IsSink(p) {
				syscall.Kill(p, syscall.SIGKILL)
				killed, before = true, len(trials)
				break
			}
		}
	}
	if !killed {
		t.Fatalf("no sink to kill after the first trial\n%s", run.Output())
	}
	if tolltest.ExitCode(run.Wait(t, tolltest.Patience(t, 60*time.Second))) == 0 {
		t.Errorf("toll run exited 0 after its sink died (killed with %d of 16 trials written)\n%s", before, run.Output())
	}
	for line := range strings.SplitSeq(run.Output(), "\n") {
		if strings.Contains(line, "telemetry sink") {
			t.Log(line)
		}
	}
	if !strings.Contains(run.Output(), "telemetry sink") {
		t.Errorf("the output does not name the sink that died:\n%s", run.Output())
	}
	if trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json")); len(trials) == 0 {
		t.Errorf("no finished trial kept")
	}
	if left := tolltest.Outlived(all, 500*time.Millisecond); len(left) > 0 {
		t.Errorf("processes %v still running after toll exited", left)
	}
}
