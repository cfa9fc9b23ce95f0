package measure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestControl runs a scenario with --control: the run gains a copy of the
// baseline named control, the manifest names it, every other variant's
// change is corrected by it, the 4× variant is still detected, and the
// report says how its changes were taken.
func TestControl(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "control", tolltest.HeavyVariants, `  rate: 25
  warmup: 1s
  duration: 2s
rounds: 3`)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out, "--control")
	if code == 3 {
		t.Skipf("the machine was too busy for a valid run (exit 3):\n%s", stdout)
	}
	if code != 0 {
		t.Fatalf("toll run --control: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var m struct {
		Control  string   `json:"control"`
		Variants []string `json:"variants"`
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Control != "control" || strings.Join(m.Variants, ",") != "baseline,heavy,control" {
		t.Errorf("manifest: control %q, variants %v; want control, [baseline heavy control]", m.Control, m.Variants)
	}
	tolltest.SkipIfRequestsFailed(t, out, stdout)
	sum := tolltest.ReadSummary(t, out)
	// At least half of what the heavy provider's extra work costs here,
	// against the baseline's CPU per request.
	extra := float64(tolltest.WorkCPU(t, tolltest.HeavyExtraWork)) / float64(time.Millisecond)
	want := 50 * extra / sum.Value(t, "baseline", "cpu_per_request_ms")
	if d := sum.Delta(t, "heavy", "cpu_per_request_ms"); !d.Controlled || d.Pct == nil || *d.Pct < want {
		t.Errorf("heavy: %+v, want a controlled change above %+.0f%% (half of its extra work's %.3f ms)\n%s", d, want, extra, stdout)
	}
	if d := sum.Delta(t, "control", "cpu_per_request_ms"); d.Controlled {
		t.Errorf("the control's own change is against the baseline alone: %+v", d)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "corrected by the A/A control") {
		t.Errorf("report.md does not say its changes are corrected by the control:\n%s", md)
	}
}
