package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// refusedScenario is a scenario of two services run by sleep; %s is where
// a test changes it.
const refusedScenario = `name: refused
services:
  - name: z
    command: [sleep, "100"]
    measure: true
  - name: y.z
    command: [sleep, "100"]
variants:
  - name: baseline
  - name: %s
load:
  target: "http://127.0.0.1:1"
  requests:
    - {path: /}
  rate: 10
  duration: 1s
rounds: 1
%s`

// TestRefusedScenarioFiles gives toll check and toll run, as a user runs
// them, scenario files that toll run cannot carry out: each is refused at
// once, as bad input (exit 2), naming the file (and the line and field
// where there is one), by check as by run. A FIFO blocked both, deaf to
// SIGINT and SIGTERM; a document after "..." was ignored; colliding
// variant and service names passed check and failed run on "cgroup
// already exists".
func TestRefusedScenarioFiles(t *testing.T) {
	tests := []struct {
		name string
		// write writes the scenario at path.
		write func(t *testing.T, path string)
		want  string // in stderr, after the path
	}{
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ": a FIFO (named pipe), not a regular file"},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, ": a directory, not a regular file"},
		{"second document after ...", func(t *testing.T, path string) {
			write(t, path, fmt.Sprintf(refusedScenario, "otel", "...\nrounds: 30\n"))
		}, ":19: a second YAML document"},
		{"variant and service names collide", func(t *testing.T, path string) {
			write(t, path, fmt.Sprintf(refusedScenario, "baseline.y", ""))
		}, `:10: variants[1].name: variant "baseline.y" with service "z" and variant "baseline" with service "y.z" (variants[0]) both make "baseline.y.z"`},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"check", "run"} {
			t.Run(tt.name+"/"+cmd, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "s.yaml")
				tt.write(t, path)
				args := []string{cmd, path}
				if cmd == "run" {
					args = append(args, "--out", filepath.Join(dir, "out"))
				}
				c := tolltest.Command(t, args...)
				var out strings.Builder
				c.Stdout, c.Stderr = &out, &out
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				// A toll blocked on the file is killed, not waited for.
				stop := time.AfterFunc(10*time.Second, func() { c.Process.Kill() })
				defer stop.Stop()
				code := tolltest.ExitCode(c.Wait())
				if code != cli.ExitUsage {
					t.Errorf("toll %s: exit %d, want %d (killed after 10s: -1)\n%s", cmd, code, cli.ExitUsage, out.String())
				}
				if !strings.Contains(out.String(), path+tt.want) {
					t.Errorf("toll %s: output lacks %q:\n%s", cmd, path+tt.want, out.String())
				}
				if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
					t.Errorf("toll %s created a results directory", cmd)
				}
			})
		}
	}
}

// write writes text into the file at path.
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
