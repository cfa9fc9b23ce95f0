package run

import (
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/scenario"
)

// loadOnly is a remote backend that runs load tests only: the refusal
// follows what a backend implements.
type loadOnly struct{ backend.Remote }

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
		{"startup on a cluster", startup, Options{Remote: cluster}, ""},
		{"job on a cluster", job, Options{Remote: cluster}, ""},
		{"startup on a backend that runs load only", startup, Options{Remote: loadOnly{cluster}}, "a startup experiment runs on this machine only"},
		{"job on a backend that runs load only", job, Options{Remote: loadOnly{cluster}}, "a job experiment runs on this machine only"},
		{"duet on a cluster", strings.Replace(load, "rounds:", "mode: duet\npinning: {duet: shared}\nvariants:\n  - name: baseline\n  - name: b\nrounds:", 1), Options{Remote: cluster}, "mode: duet runs on this machine only"},
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

// TestForRemoteWarmup checks that a scenario that sets no warm-up, for
// which toll chooses one until the JVMs' JIT settles (read from their
// hsperfdata on this machine), is not refused by a cluster: it gets a
// fixed warm-up there, with a note for the manifest. A warm-up the
// scenario sets is left as it is: until the JIT settles is refused.
func TestForRemoteWarmup(t *testing.T) {
	const chosen = `name: p
services:
  - {name: a, command: [a], ready: {http: "http://127.0.0.1:${port:a}/"}}
restart: once
load: {target: "http://127.0.0.1:${port:a}", requests: [{path: /}], rate: 5, duration: 5s}
`
	cluster := Options{Remote: &kube.Runner{}}
	for _, tt := range []struct {
		name, src string
		note      bool
		warmup    time.Duration
		refused   string
	}{
		{"toll chooses the warm-up", chosen, true, remoteWarmup, ""},
		{"the scenario sets one", chosen + "rounds: 2\n", false, 0, ""},
		{"the scenario sets a fixed one", strings.Replace(chosen, "duration: 5s", "duration: 5s, variant_warmup: 7s", 1) + "rounds: 2\n", false, 7 * time.Second, ""},
		{"the scenario warms until the JIT settles", strings.Replace(chosen, "duration: 5s", "duration: 5s, variant_warmup: 30s, variant_warmup_until: {jit_below: 5ms, over: 10s}", 1) + "rounds: 2\n", false, 0,
			"load.variant_warmup_until runs on this machine only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse(tt.name+".yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if tt.note && checkRemote(s, cluster) == nil {
				t.Fatalf("checkRemote accepts the chosen warm-up as it is (%+v): the test shows nothing", s.Load.VariantWarmupUntil)
			}
			rs, note := forRemote(s)
			err = checkRemote(rs, cluster)
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("got %v, want a refusal saying %q", err, tt.refused)
			}
			if tt.refused != "" {
				return
			}
			if (note != "") != tt.note || (tt.note && !strings.Contains(note, "fixed warm-up")) {
				t.Errorf("note %q, want one: %v", note, tt.note)
			}
			if got := rs.Load.VariantWarmup.D(); got != tt.warmup || rs.Load.VariantWarmupUntil != nil {
				t.Errorf("variant warm-up %s until %+v, want %s and no until", got, rs.Load.VariantWarmupUntil, tt.warmup)
			}
			if rs.Pinning.Warmup != scenario.WarmupOwnCPUs || rs.Pinning.WarmupAuto {
				t.Errorf("pinning.warmup %q (chosen by toll %v) on a cluster, which places no warm-up on CPUs", rs.Pinning.Warmup, rs.Pinning.WarmupAuto)
			}
			if tt.note && (s.Load.VariantWarmupUntil == nil || !s.Load.VariantWarmupAuto) {
				t.Errorf("forRemote changed the scenario it was given: %+v", s.Load)
			}
		})
	}
}

// TestChosenDuetUndone checks that a duet toll chose runs one variant at
// a time where the run cannot hold it (a cluster, a --find-max search, a
// lone variant), with the reason, and is kept elsewhere.
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
	remote, _ := forRemote(s)
	for _, tt := range []struct {
		name string
		got  *scenario.Scenario
		mode string
		why  string
	}{
		{"on this machine", holdable(s, Options{}), scenario.ModeDuet, scenario.ScheduleDuet},
		{"a --find-max search", holdable(s, Options{FindMax: true}), scenario.ModeSequential, scenario.ScheduleFindMax},
		{"one variant", holdable(&lone, Options{}), scenario.ModeSequential, scenario.ScheduleOneVariant},
		{"a cluster", remote, scenario.ModeSequential, scenario.ScheduleCluster},
	} {
		if tt.got.Mode != tt.mode || tt.got.Schedule.ModeWhy != tt.why {
			t.Errorf("%s: mode %q (%q), want %q (%q)", tt.name, tt.got.Mode, tt.got.Schedule.ModeWhy, tt.mode, tt.why)
		}
	}
	if s.Mode != scenario.ModeDuet {
		t.Errorf("the scenario itself changed: mode %q", s.Mode)
	}
	if err := checkRemote(remote, Options{}); err != nil {
		t.Errorf("a cluster refuses the duet toll chose: %v", err)
	}
}
