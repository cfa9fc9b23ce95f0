// Package history tests an agent's overhead over time as a user follows
// it: runs recorded in a history with labels, trended, checked in CI, and
// a bisect over versions that finds the one that made the agent dearer.
package history

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// versioned is a scenario whose variant's provider does ${version} units
// of work a request (the baseline's does 40000): each version of the
// "agent" costs what its number says.
const versioned = `  - name: baseline
  - name: agent
    services:
      provider: {args: [--work, "${version}"]}`

// load is a short precision run's load.
const load = `  rate: 20
  warmup: 500ms
  duration: 1s`

// historySeries is what the tests read of a series in toll history --json.
type historySeries struct {
	Cost    string
	Points  []struct{ Labels map[string]string }
	Changes []struct {
		Index  int
		Labels map[string][2]string
	}
}

// TestBisectFindsTheVersion bisects five versions, the fourth of which
// does four times the work: toll names it, after the third, confirmed,
// each run recorded in the history with its version. The history's trend
// of those runs is logged, not judged: a bisect runs the versions out of
// order (40000, 160001, 40002, 160000, ...), so its runs in time order
// alternate between the levels rather than step from one to the other.
func TestBisectFindsTheVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "versions", versioned, load+"\nmode: sequential\nrestart: once")
	db := filepath.Join(t.TempDir(), "history.db")
	out := filepath.Join(t.TempDir(), "bisect")
	code, stdout, stderr := tolltest.Run(t, "bisect", path, "--versions", "40000,40001,40002,160000,160001",
		"--size", "20%", "--rounds", "3", "--out", out, "--history", db, "--label", "branch=main")
	if code != cli.ExitOK {
		t.Fatalf("toll bisect: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "culprit: 160000 (after 40002)") || !strings.Contains(stdout, "confirmed by fresh runs of both") {
		t.Errorf("toll bisect does not name 160000 after 40002, confirmed:\n%s", stdout)
	}
	// The history holds every run of the bisect, and reads the change at
	// the culprit's version.
	code, stdout, stderr = tolltest.Run(t, "history", "--db", db, "--variant", "agent", "--json")
	if code != cli.ExitOK {
		t.Fatalf("toll history: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var doc struct{ Series []historySeries }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("toll history --json: %v\n%s", err, stdout)
	}
	// CPU per request, and any other cost with a change of level (the
	// machine's CPU may show the fourfold work too).
	i := slices.IndexFunc(doc.Series, func(s historySeries) bool { return s.Cost == "cpu_per_request_ms" })
	if i < 0 {
		t.Fatalf("no CPU per request series in %+v", doc.Series)
	}
	s := doc.Series[i]
	for _, p := range s.Points {
		if p.Labels["version"] == "" || p.Labels["branch"] != "main" {
			t.Errorf("a run recorded with labels %v", p.Labels)
		}
	}
	entries, _ := os.ReadDir(out)
	if len(s.Points) != len(entries) {
		t.Errorf("%d runs in the history, %d results directories", len(s.Points), len(entries))
	}
	t.Logf("%d runs recorded; changes %+v", len(s.Points), s.Changes)
}

// TestRunHistoryAndCheck records runs with toll run --history and checks
// the newest in CI: three runs of a variant alike the baseline, then one
// whose provider does four times the work, which toll history check fails
// (exit 4) at +25% and passes at +1000%. Five rounds a run keep the
// newest run's interval narrow enough on a loaded machine: with three, a
// +180% change once read [+30%, +504%].
func TestRunHistoryAndCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "checked", versioned, load+"\nmode: sequential\nrestart: once\nrounds: 5")
	db := filepath.Join(t.TempDir(), "history.db")
	for i, work := range []string{"40000", "40000", "40000", "160000"} {
		code, stdout, stderr := tolltest.Run(t, "run", path, "--set", "version="+work, "--history", db, "--label", "n="+work,
			"--out", filepath.Join(t.TempDir(), "run"))
		if code != cli.ExitOK {
			t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, stdout, stderr)
		}
		if !strings.Contains(stderr, "history: recorded as run") {
			t.Errorf("run %d does not say it was recorded:\n%s", i+1, stderr)
		}
	}
	code, stdout, _ := tolltest.Run(t, "history", "check", "--db", db, "--fail-on", "cpu_per_request > +25%")
	if code != cli.ExitGate || !strings.Contains(stdout, "FAILS") {
		t.Errorf("toll history check at +25%%: exit %d, want %d\n%s", code, cli.ExitGate, stdout)
	}
	t.Logf("toll history check at +25%%:\n%s", stdout)
	code, stdout, _ = tolltest.Run(t, "history", "check", "--db", db, "--fail-on", "cpu_per_request > +1000%")
	if code != cli.ExitOK {
		t.Errorf("toll history check at +1000%%: exit %d, want 0\n%s", code, stdout)
	}
	// Bad input is refused before anything runs.
	for _, args := range [][]string{
		{"run", path, "--set", "version=1 2"},
		{"run", path, "--set", "version=40000", "--label", "x=1"},
		{"bisect", path, "--versions", "1"},
		{"history", "--db", db, "--cost", "cpu_per_requets"},
	} {
		if code, stdout, stderr := tolltest.Run(t, args...); code != cli.ExitUsage {
			t.Errorf("toll %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, cli.ExitUsage, stdout, stderr)
		}
	}
}
