package recovery

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestResultsDirSwappedForALink moves a live run's results directory away
// once its first trial is written and puts a symbolic link to another
// directory in its place: the run goes on writing its trials, manifest and
// reports into the directory it created, now under its new name, and
// nothing into the link's target, where they all used to go. The services
// start afresh every round, so that the logs of the starts after the swap,
// which were opened by path into the link's target, are written too.
func TestResultsDirSwappedForALink(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "swapped", tolltest.HeavyVariants, `  rate: 20
  warmup: 200ms
  duration: 1s
restart: per-round
rounds: 3`)
	tmp := t.TempDir()
	out, moved, decoy := filepath.Join(tmp, "out"), filepath.Join(tmp, "moved"), filepath.Join(tmp, "decoy")
	if err := os.Mkdir(decoy, 0o755); err != nil {
		t.Fatal(err)
	}
	run := tolltest.Start(t, "run", path, "--out", out, "-q")
	if !tolltest.Eventually(60*time.Second, func() bool {
		trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
		return len(trials) > 0
	}) {
		t.Fatalf("no trial written\n%s", run.Output())
	}
	if err := os.Rename(out, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(decoy, out); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(t, 2*time.Minute); err != nil {
		t.Errorf("toll run: %v\n%s", err, run.Output())
	}
	var leaked []string
	filepath.Walk(decoy, func(p string, _ os.FileInfo, err error) error {
		if err == nil && p != decoy {
			leaked = append(leaked, p)
		}
		return nil
	})
	if len(leaked) > 0 {
		t.Errorf("written into the link's target: %v", leaked)
	}
	if trials := tolltest.ReadTrials(t, moved); len(trials) != 6 {
		t.Errorf("%d trials in the run's own directory, want 6", len(trials))
	}
	for _, v := range []string{"baseline", "heavy"} {
		if logs, _ := filepath.Glob(filepath.Join(moved, "logs", v+".provider.*.log")); len(logs) != 3 {
			t.Errorf("%d logs of %s's provider in the run's own directory, want one a start, 3: %v", len(logs), v, logs)
		}
	}
	for _, name := range []string{"manifest.json", "summary.json", "report.md"} {
		if _, err := os.Stat(filepath.Join(moved, name)); err != nil {
			t.Errorf("the run's own directory lacks %s: %v", name, err)
		}
	}
}
