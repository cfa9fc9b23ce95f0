package run

import (
	"strings"
	"testing"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/scenario"
)

// loadOnly is a backend that runs load tests only and refuses nothing
// else: the refusal of a workload follows what a backend implements. Its
// other methods are never called.
type loadOnly struct{ backend.Backend }

func (loadOnly) Check(*scenario.Scenario, backend.Request) error { return nil }

// TestCheckBackendWorkloads checks that a backend is refused a start-up or
// job experiment, or trials at once, unless it implements that workload's
// interface (backend.Startups, backend.Jobs, backend.AtOnce), and that a
// load test is never refused for its workload.
func TestCheckBackendWorkloads(t *testing.T) {
	const (
		load = `name: l
services:
  - {name: a, command: [a], ready: {http: "http://127.0.0.1:${port:a}/"}}
rounds: 2
load: {target: "http://127.0.0.1:${port:a}", requests: [{path: /}], rate: 5, duration: 5s}
`
		startup = `name: s
startup:
  cpu_limits: [1]
services:
  - {name: a, command: [a], ready: {http: "http://127.0.0.1:${port:a}/"}}
`
		job = `name: j
job:
  command: [sh, -c, "true"]
  repetitions: 2
variants:
  - name: baseline
`
	)
	tests := []struct {
		name, src string
		refused   string // in the error; "" for none
	}{
		{"load", load, ""},
		{"startup", startup, "does not run startup experiments"},
		{"job", job, "does not run job experiments"},
		{"duet", strings.Replace(load, "rounds:", "mode: duet\npinning: {duet: shared}\nvariants:\n  - name: baseline\n  - name: b\nrounds:", 1), "does not run trials at once (mode: duet)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse(tt.name+".yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			err = checkBackend(s, Options{Backend: loadOnly{}})
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("got %v, want a refusal saying %q", err, tt.refused)
			}
		})
	}
}

// TestChosenDuetUndone checks that a duet toll chose runs one variant at
// a time where the run cannot hold it (a --find-max search, a lone
// variant), with the reason, and is kept elsewhere. A backend that cannot
// hold one undoes it itself (its Adapt).
func TestChosenDuetUndone(t *testing.T) {
	const src = `name: d
services:
  - name: app
    command: [toll, app, provider, --addr, "127.0.0.1:${port:app}"]
    ready: {tcp: "127.0.0.1:${port:app}"}
    measure: true
variants: [{name: baseline}, {name: other}]
load: {rate: 10, duration: 2s, target: "http://127.0.0.1:${port:app}", requests: [{path: /}]}
`
	s, err := scenario.Parse("d.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != scenario.ModeDuet || !s.Schedule.ModeAuto {
		t.Fatalf("mode %q (chosen %v), want a duet toll chose", s.Mode, s.Schedule.ModeAuto)
	}
	lone := *s
	lone.Variants = lone.Variants[:1]
	for _, tt := range []struct {
		name string
		got  *scenario.Scenario
		mode string
		why  string
	}{
		{"on this machine", holdable(s, Options{}), scenario.ModeDuet, scenario.ScheduleDuet},
		{"a --find-max search", holdable(s, Options{FindMax: true}), scenario.ModeSequential, scenario.ScheduleFindMax},
		{"one variant", holdable(&lone, Options{}), scenario.ModeSequential, scenario.ScheduleOneVariant},
	} {
		if tt.got.Mode != tt.mode || tt.got.Schedule.ModeWhy != tt.why {
			t.Errorf("%s: mode %q (%q), want %q (%q)", tt.name, tt.got.Mode, tt.got.Schedule.ModeWhy, tt.mode, tt.why)
		}
	}
	if s.Mode != scenario.ModeDuet {
		t.Errorf("the scenario itself changed: mode %q", s.Mode)
	}
}
