package recovery

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/probe/profile"
)

// TestResultsDirSwappedForALink moves a live run's results directory away
// once its first trial is written and puts a symbolic link to another
// directory in its place: the run goes on writing its trials, manifest and
// reports into the directory it created, now under its new name, and
// nothing into the link's target, where they all used to go. The services
// start afresh every round, so that the logs of the starts after the swap,
// which were opened by path into the link's target, are written too. Where
// perf can sample, the run profiles: perf's data, which it writes by path,
// goes to the run's scratch directory in TMPDIR, removed at its end.
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
	before, err := os.Stat(decoy)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", path, "--out", out, "-q"}
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)
	perfErr := (profile.Perf{}).Available(context.Background())
	if perfErr == nil {
		args = append(args, "--profile")
	} else {
		t.Logf("not profiled: %v", perfErr)
	}
	run := tolltest.Start(t, args...)
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
	// A file created and removed there again leaves no name, but changes
	// the directory's modification time.
	if after, err := os.Stat(decoy); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the link's target was written into (its modification time %v, before the run %v): %v", after.ModTime(), before.ModTime(), err)
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
	if perfErr == nil {
		if profiles, _ := filepath.Glob(filepath.Join(moved, "profiles", "trials", "*.pb.gz")); len(profiles) != 6 {
			t.Errorf("%d trial profiles in the run's own directory, want 6: %v", len(profiles), profiles)
		}
		if left, _ := filepath.Glob(filepath.Join(scratch, "toll-scratch-*")); len(left) > 0 {
			t.Errorf("the run's scratch directory is left: %v", left)
		}
	}
	for _, name := range []string{"manifest.json", "summary.json", "report.md"} {
		if _, err := os.Stat(filepath.Join(moved, name)); err != nil {
			t.Errorf("the run's own directory lacks %s: %v", name, err)
		}
	}
}
