package measure

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/record"
)

// TestTogetherTooBusyLoadsFewer runs a baseline and two variants four
// times as heavy in precision mode with no mode, at a rate that every
// variant at once cannot hold on the services' CPU (about 1.3 cores of
// work on one): toll first loads them all at once, as it chooses to, sees
// the rate's first rounds keep that CPU saturated, sets the trials so far
// aside and goes on loading fewer sides at once (a shared duet, or one
// variant at a time). The run is valid, the report says what toll did, and
// the heavy variant's extra work reads as it does alone. With that rate as
// a later load step, after one the CPU holds, every step runs again in the
// lighter mode.
func TestTogetherTooBusyLoadsFewer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("variants at once need 2 CPUs")
	}
	tests := []struct {
		name string
		load string
		busy int // the load step that saturates
	}{
		{"first step", "  rate: 160", 0},
		{"later step", "  rates: [16, 160]", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tolltest.WriteScenario(t, "toobusy", tolltest.HeavyVariants+`
  - name: heavy2
    services:
      provider: {args: [--work, "160000"]}`, tt.load+`
  warmup: 500ms
  duration: 2s
precision: {target: 50%, min_rounds: 2, budget: 2m}`)
			out := filepath.Join(t.TempDir(), "out")
			cmd := tolltest.Command(t, "run", path, "--out", out)
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			tolltest.SkipIfInvalid(t, cmd.Run(), so.String(), se.String())
			checkLighter(t, out, tt.busy, so.String()+se.String())
		})
	}
}

// checkLighter checks the run in out, whose load step busy saturates the
// services' CPU with every variant at once: it went on with fewer sides
// at once, set aside what it had measured until that step's first rounds,
// and measured every step again, each side at its rate.
func checkLighter(t *testing.T, out string, busy int, stdout string) {
	t.Helper()
	dir, err := record.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dir.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Mode == "together" {
		// Kept: toll judged the step's first rounds' CPU busy with other
		// work, as a machine running the rest of the suite can keep it.
		var first []*record.Trial
		for _, tr := range tolltest.ReadTrials(t, out) {
			if tr.Step == busy && tr.Round <= 3 {
				first = append(first, tr)
			}
		}
		if l, ok := analyze.RoundLoad(m, first); ok && l.Lighter(m.Mode, m.Baseline) == "" && l.Busiest() > analyze.SaturatedBusy {
			t.Skipf("the services' CPU was %.0f%% busy, more than half of it with other work than the sides': a busy machine, where fewer sides would not free it", l.Busiest())
		}
	}
	if c := m.Chosen; c == nil || !slices.Contains([]string{"together-busy", "busy"}, c.ModeWhy) || c.BusyPct <= 90 ||
		!slices.Contains([]string{"duet", "sequential"}, m.Mode) {
		t.Fatalf("mode %q, chosen %+v: want fewer sides at once, chosen because a first round kept the CPU over 90%% busy\n%s", m.Mode, c, stdout)
	}
	// Every variant at once, and on a busy machine a duet after it too.
	aside, err := filepath.Glob(filepath.Join(out, record.AsideDir, "together", "*.json"))
	if err != nil || len(aside) == 0 || len(aside)%3 != 0 {
		t.Errorf("trials set aside from every variant at once %v (%v), want the first rounds' 3 a round", aside, err)
	}
	duets, _ := filepath.Glob(filepath.Join(out, record.AsideDir, "duet", "*.json"))
	aside = append(aside, duets...)
	for _, f := range aside {
		b, err := os.ReadFile(f)
		var tr record.Trial
		if err == nil {
			err = json.Unmarshal(b, &tr)
		}
		if err != nil || tr.Step > busy || tr.Step == busy && (tr.Round < 1 || tr.Round > 3) {
			t.Errorf("%s: step %d, round %d, %v: want a trial of step %d's first 3 rounds, or of a step before it", f, tr.Step, tr.Round, err, busy)
		}
	}
	steps := map[int]bool{}
	for _, tr := range tolltest.ReadTrials(t, out) {
		steps[tr.Step] = true
		if tr.Load.Scheduled > 0 && tr.Load.Completed*100 < tr.Load.Scheduled*95 {
			t.Errorf("trial %d (%s, step %d, round %d): %d of %d requests completed: the sides still queue", tr.Index, tr.Variant, tr.Step, tr.Round, tr.Load.Completed, tr.Load.Scheduled)
		}
	}
	for step := range busy + 1 {
		if !steps[step] {
			t.Errorf("no trial of load step %d kept: every step runs again in the lighter mode", step)
		}
	}
	if !strings.Contains(stdout, "set aside") {
		t.Errorf("neither the progress nor the report says the round was set aside:\n%s", stdout)
	}
	s := tolltest.ReadSummary(t, out)
	checkExtraWork(t, s.ValueAt(t, busy, "baseline", "cpu_per_request_ms"), s.ValueAt(t, busy, "heavy", "cpu_per_request_ms"), stdout)
}
