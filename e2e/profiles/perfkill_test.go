package profiles

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/probe/profile"
)

// TestPerfKilledMidTrial kills perf during a profiled run's second trial:
// the trial's profile fails, and the terminal, report.md and report.html
// say so, with the trial and the services (the profile covered fewer
// rounds with the error only in the trial's JSON).
func TestPerfKilledMidTrial(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	if err := (profile.Perf{}).Available(context.Background()); err != nil {
		t.Skip(err)
	}
	path := tolltest.WriteScenario(t, "perfkill", tolltest.HeavyVariants, `  rate: 20
  warmup: 1s
  duration: 3s
rounds: 2`)
	out := filepath.Join(t.TempDir(), "out")
	run := tolltest.Start(t, "run", path, "--profile", "--out", out)
	killed := 0
	for deadline := time.Now().Add(tolltest.Patience(t, 60*time.Second)); killed == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json")); len(trials) == 0 {
			continue
		}
		for _, p := range run.Children(t) {
			if comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "comm")); strings.TrimSpace(string(comm)) == "perf" {
				// Into the window: the trial's warm-up is 1 s.
				time.Sleep(1500 * time.Millisecond)
				if syscall.Kill(p, syscall.SIGKILL) == nil {
					killed = p
				}
				break
			}
		}
	}
	if killed == 0 {
		t.Fatalf("no perf to kill after the first trial\n%s", run.Output())
	}
	if code := tolltest.ExitCode(run.Wait(t, tolltest.Patience(t, 90*time.Second))); code != 0 && code != cli.ExitInvalid {
		t.Fatalf("toll run: exit %d\n%s", code, run.Output())
	}
	const want = "profile in 1 of 4 trials"
	for name, text := range map[string]string{
		"the terminal": run.Output(),
		"report.md":    read(t, filepath.Join(out, "report.md")),
		"report.html":  read(t, filepath.Join(out, "report.html")),
	} {
		i := strings.LastIndex(text, want)
		if i < 0 {
			t.Errorf("%s does not say %q:\n%s", name, want, text)
			continue
		}
		line, _, _ := strings.Cut(text[i:], "\n")
		if !strings.Contains(line, "provider") {
			t.Errorf("%s does not name the services profiled: %s", name, line)
		}
		t.Logf("%s: %s", name, line)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
