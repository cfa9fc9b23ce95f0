package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestPrecisionFlagsRefused checks that --precision, --budget and
// --stop-grace are read and checked before anything starts.
func TestPrecisionFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	err := os.WriteFile(path, []byte(`name: p
services:
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}"]
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
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--precision", "lots"}, `--precision: "lots" is not a percentage`},
		{[]string{"--precision", "90%"}, "--precision 90%: 90% is not between 0.1% and 50%"},
		{[]string{"--budget", "48h"}, "--budget 48h0m0s"},
		{[]string{"--rounds", "2", "--budget", "1m"}, "give one or the other"},
		{[]string{"--stop-grace", "0s"}, "--stop-grace 0s: want a positive duration"},
	} {
		args := append([]string{"run", path, "--out", filepath.Join(dir, "out")}, tt.args...)
		code, _, stderr := tolltest.Run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("toll %s: exit %d, stderr %q, want %d and %q", strings.Join(tt.args, " "), code, stderr, ExitUsage, tt.want)
		}
	}
}
