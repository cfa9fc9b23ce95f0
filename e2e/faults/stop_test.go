package faults

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/runid"
)

// TestStopOnTermThenKill stops a run of six variants whose services
// ignore SIGTERM as docker stop does: SIGTERM, then SIGKILL 10 s later.
// Stopped one variant after another, the services' grace periods added up
// past the SIGKILL and toll died before writing any report; now the report
// of the trials that finished is written before the services are stopped,
// and the variants, stopped at once, are down in about one grace period.
// The grace period is 15 s, so that six of them (90 s) stand apart from
// one and the reports, however slow a busy machine makes those.
func TestStopOnTermThenKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := writeStubbornScenario(t, "termkill")
	s, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	six := strings.Replace(string(s), "  - name: baseline\n", `  - name: baseline
  - name: b
    services: {provider: {env: {V: b}}}
  - name: c
    services: {provider: {env: {V: c}}}
  - name: d
    services: {provider: {env: {V: d}}}
  - name: e
    services: {provider: {env: {V: e}}}
  - name: f
    services: {provider: {env: {V: f}}}
`, 1)
	six = strings.Replace(six, "duration: 30s", "duration: 2s", 1) + "restart: once\nrounds: 3\n"
	six = strings.Replace(six, "rounds: 2\n", "", 1)
	if err := os.WriteFile(path, []byte(six), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	const grace = 15 * time.Second
	run := tolltest.Start(t, "run", path, "--out", out, "-q", "--stop-grace", grace.String())
	id, err := runid.Of(run.Pid())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killLabelled(t, id) })
	if !tolltest.Eventually(90*time.Second, func() bool {
		trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
		return len(trials) >= 2
	}) {
		t.Fatalf("no two trials written\n%s", run.Output())
	}
	run.Signal(syscall.SIGTERM)
	start := time.Now()
	gone := func() bool { return syscall.Kill(run.Pid(), 0) != nil }
	// What docker stop leaves: 10 s after SIGTERM (on a quiet machine),
	// the summary is there whether or not toll has exited.
	if !tolltest.Eventually(tolltest.Patience(t, 10*time.Second), func() bool {
		_, err := os.Stat(filepath.Join(out, "summary.json"))
		return err == nil
	}) {
		t.Errorf("no summary %.0f s after SIGTERM\n%s", time.Since(start).Seconds(), run.Output())
	}
	// Stopped one after another, six variants take at least six grace
	// periods; stopped at once, one and the reports, which a busy machine
	// slows (Patience), though never to five more.
	wait := grace + min(tolltest.Patience(t, 30*time.Second), 4*grace+10*time.Second)
	exited := tolltest.Eventually(wait-time.Since(start), gone)
	if !exited {
		run.Signal(syscall.SIGKILL)
	}
	run.Wait(t, 30*time.Second)
	t.Logf("toll exited %.1fs after SIGTERM (killed: %v)\n%s", time.Since(start).Seconds(), !exited, run.Output())
	if !exited {
		t.Errorf("toll, stopping 6 variants that ignore SIGTERM with a grace period of %v, had not exited %.0f s after SIGTERM: it stops them one after another", grace, wait.Seconds())
	}
}
