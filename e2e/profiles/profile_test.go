package profiles

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/probe/profile"
)

// TestProfileFindsInjectedCost runs the reference services profiled, a
// variant's provider burning 2 ms of extra CPU per request in app.spinCPU:
// the profiled change must agree with the CPU per request the cgroups
// measured, spinCPU must explain most of it, and both sides' profiles per
// request must be written.
func TestProfileFindsInjectedCost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	if err := (profile.Perf{}).Available(context.Background()); err != nil {
		t.Skip(err)
	}
	path := tolltest.WriteScenario(t, "profiled", `  - name: baseline
  - name: burn
    services:
      provider: {args: [--extra-cpu, 2ms]}`, `  rate: 40
  warmup: 1s
  duration: 3s
rounds: 2`)
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--profile", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	tolltest.SkipIfInvalid(t, cmd.Run(), stdout.String(), stderr.String())
	for _, f := range []string{"profiles/baseline.pb.gz", "profiles/burn.pb.gz"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Profiles []analyze.ProfileDiff }
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Profiles) != 1 {
		t.Fatalf("%d profile differences in summary.json, want 1", len(s.Profiles))
	}
	// The 2 ms asked for cost more on a busy VM (reading the process's CPU
	// clock is a system call that sums its threads): the reference is
	// the change the cgroups measured, which the samples must agree with,
	// and spinCPU must explain most of.
	measured := tolltest.ReadSummary(t, out).Value(t, "burn", "cpu_per_request_ms") - tolltest.ReadSummary(t, out).Value(t, "baseline", "cpu_per_request_ms")
	d := s.Profiles[0]
	if measured <= 0 || d.Total.Delta < 0.75*measured || d.Total.Delta > 1.25*measured {
		t.Errorf("profiled change %+.3f ms per request, measured %+.3f: want within 25%%\n%s", d.Total.Delta, measured, stdout.String())
	}
	const spin = "github.com/tollperf/toll/app.spinCPU"
	for _, r := range d.Inclusive {
		if r.Name == spin {
			// The rest of the profile changes by noise alone, either
			// way: on a busy machine the baseline's other functions
			// read up to a quarter of the change more than burn's.
			if r.Delta < 0.75*d.Total.Delta || r.Delta > 1.3*d.Total.Delta {
				t.Errorf("%s: %+.3f ms per request of a profiled change of %+.3f: want most of it\n%s", spin, r.Delta, d.Total.Delta, stdout.String())
			}
			return
		}
	}
	t.Errorf("no row for %s among %+v", spin, d.Inclusive)
}
