package measure

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestPrecisionBudget checks what a precision run's budget promises: a
// budget too short to hold the two rounds an interval needs is refused
// before anything starts, naming the field (toll check) or the flag
// (toll run), and a run whose budget ends it before its primary cost has
// an interval is not valid (exit 3, saying why) where it exited 0 with
// "no interval yet".
func TestPrecisionBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	load := `  rate: 20
  warmup: 500ms
  duration: 1s
  variant_warmup: 1s`
	variants := `  - name: baseline
  - name: heavy
    services:
      provider: {args: [--work, "160000"]}`
	short := tolltest.WriteScenario(t, "shortbudget", variants, load+"\nprecision: {budget: 1s}")
	for _, tt := range []struct {
		args  []string
		names string
	}{
		{[]string{"check", short}, "precision.budget"},
		{[]string{"run", tolltest.WriteScenario(t, "budgetflag", variants, load), "--budget", "1s", "--out", filepath.Join(t.TempDir(), "out")}, "--budget"},
	} {
		code, stdout, stderr := tolltest.Run(t, tt.args...)
		out := stdout + stderr
		if code != cli.ExitUsage || !strings.Contains(out, tt.names) || !strings.Contains(out, "cannot hold the least run that gives an interval") {
			t.Errorf("toll %s: exit %d, want %d naming %s and the least run:\n%s", tt.args[0], code, cli.ExitUsage, tt.names, out)
		}
	}

	// 7 s holds the least run by the estimate (the variants' warm-up of
	// 1 s, at once, then two rounds of two 1.5 s trials), but not the
	// services' starts beside it: the budget ends the run after one round,
	// one variant at a time (a duet toll would choose holds three).
	path := tolltest.WriteScenario(t, "nointerval", variants, load+"\nmode: sequential\nrestart: once")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--budget", "7s", "--out", out)
	text := stdout + stderr
	if code != cli.ExitInvalid {
		t.Errorf("toll run --budget 7s: exit %d, want %d (no interval)\n%s", code, cli.ExitInvalid, text)
	}
	if !strings.Contains(text, "heavy at 20 req/s: no interval for CPU per request") {
		t.Errorf("toll run does not say which cost has no interval:\n%s", text)
	}
}
