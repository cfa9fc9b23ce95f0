package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestRunJSONStdout checks what toll run prints once a run is carried out
// (finishRun, on a results directory written by writeRun): with --json,
// stdout is the summary alone, one JSON document that summary.json holds
// too, and the table, the gates and the results line are on stderr;
// without it, the table is on stdout.
func TestRunJSONStdout(t *testing.T) {
	gates, err := parseGates([]string{"cpu_per_request > +5%"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		json bool
	}{
		{"json", true},
		{"text", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeRun(t, 1.2, 1)
			dir, err := record.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			f := runFlags{json: tt.json, gateList: gates, gates: []string{"cpu_per_request > +5%"}}
			t.Setenv("GITHUB_ACTIONS", "")
			t.Setenv("GITHUB_STEP_SUMMARY", "")
			err = finishRun(context.Background(), &stdout, &stderr, dir, "baseline", nil, f)
			if code := exitCodeOf(err); code != ExitGate {
				t.Fatalf("exit %d (%v), want %d: the +20%% agent fails the gate", code, err, ExitGate)
			}
			if !tt.json {
				if !strings.Contains(stdout.String(), "CPU") || json.Valid(stdout.Bytes()) {
					t.Errorf("without --json, stdout is not the table:\n%s", stdout.String())
				}
				return
			}
			var sum analyze.Summary
			dec := json.NewDecoder(&stdout)
			if err := dec.Decode(&sum); err != nil {
				t.Fatalf("stdout is not a JSON summary: %v\n%s", err, stdout.String())
			}
			if dec.More() {
				t.Errorf("stdout holds more than the summary")
			}
			if sum.Scenario != "gate" || len(sum.Steps) != 1 || len(sum.Steps[0].Variants) != 2 {
				t.Errorf("summary on stdout: scenario %q, %d steps", sum.Scenario, len(sum.Steps))
			}
			for _, want := range []string{"CPU", "results: " + path, "✗ agent"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}

// exitCodeOf is the exit code Main returns for a command's error.
func exitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	if ee, ok := err.(*exitError); ok {
		return ee.code
	}
	if c, ok := err.(exitCode); ok {
		return int(c)
	}
	return ExitUsage
}
