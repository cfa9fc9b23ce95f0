package sampling

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// schedIdle is Linux's SCHED_IDLE policy, as /proc/PID/stat reports it.
const schedIdle = 5

// TestSinkRunsApartAtIdlePriority runs a variant that exports spans and
// checks that each variant's telemetry sink is a process of its own under
// SCHED_IDLE (so that decoding agents' batches never delays the load
// generator's next request), that the spans it received are in the
// summary, and that no sink is left once toll has exited.
func TestSinkRunsApartAtIdlePriority(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "sinkapart", `  - name: baseline
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel]}`, `  rate: 50
  warmup: 500ms
  duration: 2s
rounds: 2`)
	out := filepath.Join(t.TempDir(), "out")
	run := tolltest.Start(t, "run", path, "--out", out, "-q")

	// The sinks are read once the first trial is written: toll starts
	// its trials only when every sink listens, and a sink sets its own
	// policy before it listens (a sink just started still runs under its
	// parent's).
	policies := map[int]string{}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json")); len(trials) == 0 {
			continue
		}
		for _, p := range run.Children(t) {
			if tolltest.IsSink(p) {
				policies[p] = policy(p)
			}
		}
		break
	}
	if len(policies) != 2 {
		t.Fatalf("found %d sink processes, want one per variant (2)\n%s", len(policies), run.Output())
	}
	for p, pol := range policies {
		if pol != strconv.Itoa(schedIdle) {
			t.Errorf("sink %d runs under policy %q, want SCHED_IDLE (%d)", p, pol, schedIdle)
		}
	}
	if err := run.Wait(t, 60*time.Second); err != nil {
		t.Fatalf("toll run: %v\n%s", err, run.Output())
	}
	for p := range policies {
		if len(tolltest.Alive([]int{p})) > 0 {
			t.Errorf("sink %d is still running after toll exited", p)
		}
	}
	if got := tolltest.ReadSummary(t, out).Value(t, "otel", "spans_per_s"); got <= 0 {
		t.Errorf("otel's spans received read %v per second, want more than 0\n%s", got, run.Output())
	}
}

// policy returns the scheduling policy of process pid, field 41 of its
// /proc stat, or "" when it cannot be read.
func policy(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	// After the command, fields start at 3 (state): policy, field 41, is
	// the 39th.
	if len(f) < 39 {
		return ""
	}
	return f[38]
}
