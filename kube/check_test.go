package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/scenario"
)

// TestCheck checks what a cluster refuses before anything is created: a
// resumed run, a duet (it pins its sides to one machine's CPUs), the
// settings that read this machine, and a stop signal other than the
// kubelet's. Start-up and job experiments it runs
// (Runner is a backend.Startups and a backend.Jobs).
func TestCheck(t *testing.T) {
	const load = `name: l
services:
  - {name: a, command: [a], ready: {tcp: "127.0.0.1:${port:a}"}}
rounds: 2
load: {target: "http://127.0.0.1:${port:a}", requests: [{path: /}], rate: 5, duration: 5s}
`
	tests := []struct {
		name, src string
		req       backend.Request
		refused   string // in the error; "" for none
	}{
		{"load", load, backend.Request{}, ""},
		{"resumed", load, backend.Request{Resume: true}, "--resume runs on this machine only"},
		{"duet", strings.Replace(load, "rounds:", "mode: duet\npinning: {duet: shared}\nvariants:\n  - name: baseline\n  - name: b\nrounds:", 1), backend.Request{}, "mode: duet runs on this machine only"},
		{"poisson", strings.Replace(load, "duration: 5s", "duration: 5s, arrival: poisson", 1), backend.Request{}, "load.arrival: poisson runs on this machine only"},
		{"matrix", load + "matrix: {cpus: [1, 2]}\n", backend.Request{}, "matrix runs on this machine only"},
		{"stop signal", strings.Replace(load, "command: [a],", "command: [a], stop_signal: SIGINT,", 1), backend.Request{}, "services[0].stop_signal: in a cluster the kubelet stops a container with its image's stop signal"},
		{"stop signal SIGTERM", strings.Replace(load, "command: [a],", "command: [a], stop_signal: SIGTERM,", 1), backend.Request{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse(tt.name+".yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			err = (&Runner{}).Check(s, tt.req)
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("got %v, want a refusal saying %q", err, tt.refused)
			}
		})
	}
}

// TestAdaptWarmup checks that a scenario that sets no warm-up, for
// which toll chooses one until the JVMs' JIT settles (read from their
// hsperfdata on this machine), is not refused by a cluster: it gets a
// fixed warm-up there, with a note for the manifest. A warm-up the
// scenario sets is left as it is: until the JIT settles is refused.
func TestAdaptWarmup(t *testing.T) {
	const chosen = `name: p
services:
  - {name: a, command: [a], ready: {http: "http://127.0.0.1:${port:a}/"}}
restart: once
load: {target: "http://127.0.0.1:${port:a}", requests: [{path: /}], rate: 5, duration: 5s}
`
	cluster := &Runner{}
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
			if tt.note && cluster.Check(s, backend.Request{}) == nil {
				t.Fatalf("Check accepts the chosen warm-up as it is (%+v): the test shows nothing", s.Load.VariantWarmupUntil)
			}
			rs, note := cluster.Adapt(s)
			err = cluster.Check(rs, backend.Request{})
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
				t.Errorf("Adapt changed the scenario it was given: %+v", s.Load)
			}
		})
	}
}

// TestAdaptChosenDuet checks that a duet toll chose runs one variant at a
// time in a cluster, with the reason, and that the cluster then accepts
// it; the scenario given is left as it was.
func TestAdaptChosenDuet(t *testing.T) {
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
	cluster := &Runner{}
	got, _ := cluster.Adapt(s)
	if got.Mode != scenario.ModeSequential || got.Schedule.ModeWhy != scenario.ScheduleCluster {
		t.Errorf("mode %q (%q), want %q (%q)", got.Mode, got.Schedule.ModeWhy, scenario.ModeSequential, scenario.ScheduleCluster)
	}
	if s.Mode != scenario.ModeDuet {
		t.Errorf("the scenario itself changed: mode %q", s.Mode)
	}
	if err := cluster.Check(got, backend.Request{}); err != nil {
		t.Errorf("a cluster refuses the duet toll chose: %v", err)
	}
}
