package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// checkScenarioText is a scenario of one service run by sleep, with
// placeholders for its command, its rate and its design (rounds: 3 unless
// a test names another).
const checkScenarioText = `name: check
services:
  - name: app
    command: [%COMMAND%, "100"]
    ready: {tcp: "127.0.0.1:${port:app}", timeout: 1s}
    measure: true
variants:
  - name: baseline
  - name: agent
    services:
      app: {env: {AGENT: "1"}}
load:
  target: "http://127.0.0.1:${port:app}"
  requests:
    - {name: root, method: GET, path: /}
  rate: %RATE%
  warmup: 1s
  duration: 4s
%DESIGN%
restart: once
`

// TestCheck runs toll check on a valid scenario, one with a field out of
// bounds and one whose program does not exist: the first prints the plan
// (variants, step, rounds, trials, the first actions, the expected time)
// and exits 0; the others exit 2 naming file, line and field, or the
// program, before anything starts.
func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name    string
		command string
		rate    string
		design  string
		code    int
		want    []string
	}{
		{"valid", "sleep", "50", "", ExitOK, []string{": valid", "baseline, agent", "50 req/s", "rounds     3, restart once",
			"6 trials", "2 starts, 2 stops", "start baseline", "at least 30s of load"}},
		{"precision mode: what ends the run, not the plan's ceiling", "sleep", "50", "precision: {target: 4%, budget: 7m}", ExitOK, []string{": valid",
			"rounds     until ±4% on cpu_per_request_ms within 7m0s (at least 5), restart once", "up to ", "a variant warm-up chosen by toll",
			"at most 7m0s (the budget)"}},
		{"bad rate", "sleep", "-5", "", ExitUsage, []string{"check.yaml:", "load.rate"}},
		{"missing program", "no-such-program-toll", "50", "", ExitUsage, []string{"no-such-program-toll"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			design := tt.design
			if design == "" {
				design = "rounds: 3"
			}
			text := strings.NewReplacer("%COMMAND%", tt.command, "%RATE%", tt.rate, "%DESIGN%", design).Replace(checkScenarioText)
			path := filepath.Join(t.TempDir(), "check.yaml")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			root := newRootCmd(nil)
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs([]string{"check", path})
			err := root.Execute()
			if code := exitCodeOf(err); code != tt.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tt.code, out.String())
			}
			got := out.String()
			if err != nil {
				got = err.Error()
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			if tt.code != ExitOK && !regexp.MustCompile(`check\.yaml:\d+: `).MatchString(got) && tt.name == "bad rate" {
				t.Errorf("error names no file:line: %s", got)
			}
		})
	}
}
