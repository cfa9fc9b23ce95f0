package scenario

import (
	"errors"
	"strings"
	"testing"
)

const jobScenario = `name: j
job:
  command: [sh, -c, "true"]
  repetitions: 5
variants:
  - name: baseline
  - name: otel
    job: {env: {A: b}}
`

const startupScenario = `name: s
startup:
  cpu_limits: [1, 2]
services:
  - name: app
    command: [app]
    ready: {http: "http://127.0.0.1:${port:app}/"}
`

// TestWorkloadRefusesBadValues checks that start-up and job experiments
// refuse what they cannot run, naming file, line and field.
func TestWorkloadRefusesBadValues(t *testing.T) {
	tests := []struct {
		name, base, old, new string
		line                 int
		field, reason        string
	}{
		{"job without command", jobScenario, "  command: [sh, -c, \"true\"]\n", "  unit: x\n", 2, "job.command", "is required"},
		{"job repetitions 0", jobScenario, "repetitions: 5", "repetitions: 0", 4, "job.repetitions", "must be at least 1"},
		{"job repetitions huge", jobScenario, "repetitions: 5", "repetitions: 20000", 4, "job.repetitions", "above toll's limit of 10000"},
		{"job with load", jobScenario, "variants:", "load: {rate: 5}\nvariants:", 5, "load", "sends no load"},
		{"job with rounds", jobScenario, "variants:", "rounds: 3\nvariants:", 5, "rounds", "counts its repetitions (job.repetitions)"},
		{"job per without work", jobScenario, "repetitions: 5", "repetitions: 5\n  per: 1000", 5, "job.per", "job.work"},
		{"job negative work", jobScenario, "repetitions: 5", "repetitions: 5\n  work: -3", 5, "job.work", "not an amount of work"},
		{"job timeout too long", jobScenario, "repetitions: 5", "repetitions: 5\n  timeout: 48h", 5, "job.timeout", "longer than a day"},
		{"job and startup", jobScenario, "variants:", "startup: {}\nvariants:", 2, "job", "not both"},
		{"log metric no group", jobScenario, "repetitions: 5", "repetitions: 5\n  log_metrics: [{name: a_s, regex: 'x'}]", 5, "job.log_metrics[0].regex", "no capture group"},
		{"log metric bad regex", jobScenario, "repetitions: 5", "repetitions: 5\n  log_metrics: [{name: a_s, regex: '(x'}]", 5, "job.log_metrics[0].regex", "not a Go regular expression"},
		{"log metric bad name", jobScenario, "repetitions: 5", "repetitions: 5\n  log_metrics: [{name: A-s, regex: '(x)'}]", 5, "job.log_metrics[0].name", "lower-case letters"},
		{"startup limit above the machine", startupScenario, "[1, 2]", "[1, 4]", 3, "startup.cpu_limits[1]", "more than the 2 CPUs"},
		{"startup limit below quota", startupScenario, "[1, 2]", "[0.001]", 3, "startup.cpu_limits[0]", "below the least of 0.01"},
		{"startup limit twice", startupScenario, "[1, 2]", "[1, 1]", 3, "startup.cpu_limits[1]", "listed twice"},
		{"startup without readiness", startupScenario, "    ready: {http: \"http://127.0.0.1:${port:app}/\"}\n", "", 5, "services[0].ready", "needs ready.http or ready.tcp"},
		{"startup with a matrix", startupScenario, "services:", "matrix: {cpus: [1]}\nservices:", 4, "matrix", "has its own (startup.cpu_limits)"},
		{"job with a matrix", jobScenario, "variants:", "matrix: {cpus: [1]}\nvariants:", 5, "matrix", "a job experiment has its own"},
		{"startup with starts", startupScenario, "services:", "starts: 2\nservices:", 4, "starts", "starts the services afresh for every repetition"},
		{"job with starts", jobScenario, "variants:", "starts: 2\nvariants:", 5, "starts", "run for the whole experiment"},
		{"startup restart once", startupScenario, "services:", "restart: once\nservices:", 4, "restart", "starts the services afresh"},
		{"prepare in a load test", "name: l\nservices:\n  - {name: a, command: [a]}\nvariants:\n  - {name: baseline, prepare: [x]}\nload: {target: \"http://127.0.0.1:1\", requests: [{path: /}], rate: 5, duration: 5s}\n", "", "", 5, "variants[0].prepare", "this scenario is a load test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.base
			if tt.old != "" || tt.new != "" {
				if !strings.Contains(src, tt.old) {
					t.Fatalf("base lacks %q", tt.old)
				}
				src = strings.Replace(src, tt.old, tt.new, 1)
			}
			_, err := parse("w.yaml", []byte(src), testMachine)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a scenario error", err)
			}
			if e.Field != tt.field || !strings.Contains(e.Msg, tt.reason) || (tt.line > 0 && e.Line != tt.line) {
				t.Errorf("got %s (line %d, field %s), want line %d, field %s, reason %q", err, e.Line, e.Field, tt.line, tt.field, tt.reason)
			}
		})
	}
}

// TestWorkloadDefaults checks the defaults of start-up and job experiments
// and the steps they run.
func TestWorkloadDefaults(t *testing.T) {
	s, err := parse("j.yaml", []byte(jobScenario), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if s.Workload() != WorkloadJob || s.Restart != RestartOnce || s.Job.Timeout.D() != DefaultJobTimeout || len(s.Steps()) != 1 || s.Repetitions() != 5 {
		t.Errorf("job: workload %s, restart %s, timeout %s, %d steps, %d repetitions", s.Workload(), s.Restart, s.Job.Timeout, len(s.Steps()), s.Repetitions())
	}
	s, err = parse("s.yaml", []byte(startupScenario), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if s.Workload() != WorkloadStartup || s.Restart != RestartPerTrial || s.Repetitions() != DefaultRepetitions || len(s.Steps()) != 2 || s.Steps()[1].String() != "2 CPU" {
		t.Errorf("startup: workload %s, restart %s, %d repetitions, steps %v", s.Workload(), s.Restart, s.Repetitions(), s.Steps())
	}
}

// TestLoadTestAsStartup checks that a load test's file read as a start-up
// experiment (toll run --startup) drops what only a load test does: its
// load, its mode and its starts, which would otherwise label the
// repetitions as starts of a load test's rounds.
func TestLoadTestAsStartup(t *testing.T) {
	src := `name: l
services:
  - name: app
    command: [app]
    ready: {http: "http://127.0.0.1:${port:app}/"}
variants:
  - name: baseline
  - name: otel
load:
  target: "http://127.0.0.1:${port:app}"
  requests: [{name: root, method: GET, path: /}]
  rate: 10
  duration: 2s
mode: together
rounds: 4
starts: 2
`
	if _, err := parse("l.yaml", []byte(src), testMachine); err != nil {
		t.Fatalf("as a load test: %v", err)
	}
	s, err := parseWith("l.yaml", []byte(src), testMachine, parseOptions{startup: true})
	if err != nil {
		t.Fatalf("as a start-up experiment: %v", err)
	}
	if s.Workload() != WorkloadStartup || s.Starts != 1 || s.Launch(3) != 0 || s.Concurrent() {
		t.Errorf("as a start-up experiment: workload %s, starts %d, launch of repetition 3 %d, concurrent %v", s.Workload(), s.Starts, s.Launch(3), s.Concurrent())
	}
}
