package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestPythonFlaskOTel runs a short version of examples/python/flask.yaml: a
// Flask service under waitress, without and with opentelemetry-instrument
// and SkyWalking's Python agent, in a loopback-only network namespace. The instrumented variant must export
// 4 spans per request (the Flask server span and 3 requests client spans) and
// its CPU per request must be compared with the baseline's.
func TestPythonFlaskOTel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	example, err := filepath.Abs("../../examples/python")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(example, ".venv/bin/opentelemetry-instrument")); err != nil {
		t.Skip("no Python venv: run examples/python/setup.sh (.ci/run does)")
	}
	if os.Geteuid() != 0 {
		t.Skip("network: isolated needs root")
	}
	src, err := os.ReadFile(filepath.Join(example, "flask.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for old, new := range map[string]string{
		"rounds: 10":                   "rounds: 3",
		"  warmup: 2s\n  duration: 3s": "  warmup: 1s\n  duration: 2s",
		"  - name: consumer\n":         "  - name: consumer\n    dir: " + example + "\n",
	} {
		if !strings.Contains(s, old) {
			t.Fatalf("flask.yaml no longer has %q", old)
		}
		s = strings.Replace(s, old, new, 1)
	}
	path := filepath.Join(t.TempDir(), "flask.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("toll run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "network isolated") {
		t.Errorf("the report does not say the run was isolated:\n%s", stdout.String())
	}
	sum := tolltest.ReadSummary(t, out)
	if spr := sum.Value(t, "otel", "spans_per_request"); spr < 3.5 || spr > 4.5 {
		t.Errorf("otel exported %.2f spans per request, want 4 (server + 3 clients)\n%s", spr, stdout.String())
	}
	// SkyWalking's agent reports a segment per request over HTTP from a
	// bounded queue; on a loaded machine it may drop some or send them
	// after the cycle, so only that its segments arrive and are counted.
	if spr := sum.Value(t, "skywalking", "spans_per_request"); spr < 1 || spr > 4.5 {
		t.Errorf("skywalking exported %.2f spans per request, want up to 4 (server + 3 clients)\n%s", spr, stdout.String())
	}
	if spr := sum.Value(t, "baseline", "spans_per_request"); spr != 0 {
		t.Errorf("baseline exported %.2f spans per request", spr)
	}
	if base, otel := sum.Value(t, "baseline", "cpu_per_request_ms"), sum.Value(t, "otel", "cpu_per_request_ms"); base <= 0 || otel <= 0 {
		t.Errorf("CPU per request: baseline %.3f, otel %.3f ms", base, otel)
	}
}
