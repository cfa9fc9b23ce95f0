package measure

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/record"
)

// TestTogetherTooBusyLoadsFewer runs a baseline and two variants four
// times as heavy in precision mode with no mode, at a rate that every
// variant at once cannot hold on the services' CPU (about 1.3 cores of
// work on one): toll first loads them all at once, as it chooses to, sees
// the first round keep that CPU saturated, sets the round's trials aside
// and goes on loading fewer sides at once (a shared duet, or one variant
// at a time). The run is valid, the report says what toll did, and the
// heavy variant's extra work reads as it does alone.
func TestTogetherTooBusyLoadsFewer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("variants at once need 2 CPUs")
	}
	path := tolltest.WriteScenario(t, "toobusy", tolltest.HeavyVariants+`
  - name: heavy2
    services:
      provider: {args: [--work, "160000"]}`, `  rate: 160
  warmup: 500ms
  duration: 2s
precision: {target: 50%, min_rounds: 2, budget: 2m}`)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	tolltest.SkipIfInvalid(t, cmd.Run(), so.String(), se.String())
	stdout := so.String() + se.String()
	dir, err := record.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dir.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Chosen; c == nil || !slices.Contains([]string{"together-busy", "busy"}, c.ModeWhy) || c.BusyPct <= 90 ||
		!slices.Contains([]string{"duet", "sequential"}, m.Mode) {
		t.Fatalf("mode %q, chosen %+v: want fewer sides at once, chosen because the first round kept the CPU over 90%% busy\n%s", m.Mode, c, stdout)
	}
	// Every variant at once, and on a busy machine a duet after it too.
	aside, err := filepath.Glob(filepath.Join(out, record.AsideDir, "together", "*.json"))
	if err != nil || len(aside) != 3 {
		t.Errorf("trials set aside from every variant at once %v (%v), want the first round's 3", aside, err)
	}
	duets, _ := filepath.Glob(filepath.Join(out, record.AsideDir, "duet", "*.json"))
	aside = append(aside, duets...)
	for _, f := range aside {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(b, []byte(`"round": 1`)) {
			t.Errorf("%s: %v, want a trial of round 1", f, err)
		}
	}
	for _, tr := range tolltest.ReadTrials(t, out) {
		if tr.Load.Scheduled > 0 && tr.Load.Completed*100 < tr.Load.Scheduled*95 {
			t.Errorf("trial %d (%s, round %d): %d of %d requests completed: the sides still queue", tr.Index, tr.Variant, tr.Round, tr.Load.Completed, tr.Load.Scheduled)
		}
	}
	if !strings.Contains(stdout, "set aside") {
		t.Errorf("neither the progress nor the report says the round was set aside:\n%s", stdout)
	}
	s := tolltest.ReadSummary(t, out)
	checkExtraWork(t, s.Value(t, "baseline", "cpu_per_request_ms"), s.Value(t, "heavy", "cpu_per_request_ms"), stdout)
}
