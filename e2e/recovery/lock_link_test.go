package recovery

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestResumeRefusesALinkedLock resumes an unfinished run whose lock file has
// been replaced by a symbolic link to another file: toll refuses (exit 2),
// naming the link, and the file the link names is left as it was, where
// toll used to truncate it and write its own name into it.
func TestResumeRefusesALinkedLock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "locklink", tolltest.HeavyVariants, `  rate: 20
  warmup: 200ms
  duration: 1s
rounds: 1`)
	out := filepath.Join(t.TempDir(), "out")
	if code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "-q"); code != 0 {
		t.Fatalf("toll run: exit %d\n%s%s", code, stdout, stderr)
	}
	// One trial gone, as if the run had been killed before it: the
	// directory is resumable.
	trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
	if len(trials) == 0 {
		t.Fatal("the run wrote no trial")
	}
	if err := os.Remove(trials[len(trials)-1]); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(out, ".lock")
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, lock); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := tolltest.Run(t, "run", "--resume", out, "-q")
	if code != cli.ExitUsage {
		t.Errorf("toll run --resume with a linked lock: exit %d, want %d\n%s%s", code, cli.ExitUsage, stdout, stderr)
	}
	if !strings.Contains(stderr, "symbolic link") {
		t.Errorf("the refusal does not say the lock is a link:\n%s", stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}
