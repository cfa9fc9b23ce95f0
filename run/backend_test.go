package run

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// startupCluster is the Kubernetes backend as it would be once it ran
// start-up experiments: the refusal follows what a backend implements.
type startupCluster struct{ *kube.Runner }

func (startupCluster) StartupTrial(context.Context, *plan.Trial) (*record.Trial, error) {
	return nil, errors.New("not run in this test")
}

// TestCheckRemoteWorkloads checks that a remote backend is refused a
// start-up or job experiment unless it implements that workload's
// interface (backend.Startups, backend.Jobs), that a load test is never
// refused for its workload, and that every backend is refused a duet.
func TestCheckRemoteWorkloads(t *testing.T) {
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
	cluster := &kube.Runner{}
	tests := []struct {
		name, src string
		remote    Options
		refused   string // in the error; "" for none
	}{
		{"load on a cluster", load, Options{Remote: cluster}, ""},
		{"startup on a cluster", startup, Options{Remote: cluster}, "a startup experiment runs on this machine only"},
		{"job on a cluster", job, Options{Remote: cluster}, "a job experiment runs on this machine only"},
		{"startup on a backend that runs it", startup, Options{Remote: startupCluster{cluster}}, ""},
		{"job on a backend that runs start-ups only", job, Options{Remote: startupCluster{cluster}}, "a job experiment runs on this machine only"},
		{"duet on a backend that runs start-ups", strings.Replace(load, "rounds:", "mode: duet\nvariants:\n  - name: baseline\n  - name: b\nrounds:", 1), Options{Remote: startupCluster{cluster}}, "mode: duet runs on this machine only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse(tt.name+".yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			err = checkRemote(s, tt.remote)
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("got %v, want a refusal saying %q", err, tt.refused)
			}
		})
	}
}
