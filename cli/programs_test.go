package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestMisspeltProgramStopsFirst runs a scenario whose second service's
// program does not exist: toll must say so, with file, line and field,
// and exit 2 before it starts the first service or writes any result
// (until it checked programs, the run started the provider, failed on the
// consumer and left a results directory).
func TestMisspeltProgramStopsFirst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "typo.yaml")
	err := os.WriteFile(path, []byte(`name: typo
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}"]
    ready: {http: "http://127.0.0.1:${port:provider}/health"}
  - name: consumer
    command: [tol, app, consumer, --addr, "127.0.0.1:${port:consumer}"]
    measure: true
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {path: /consumer}
  rate: 5
  duration: 1s
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	began := time.Now()
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out)
	want := path + ":7: services[1].command[0]: tol: no such program in PATH"
	if code != ExitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, ExitUsage, want, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a run stopped by a misspelt program left %s (%v)", out, err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("toll took %s to refuse the scenario: it started something", took)
	}
}
