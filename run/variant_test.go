package run

import (
	"strconv"
	"testing"

	"github.com/tollperf/toll/scenario"
)

// TestResolveVariantLoadTarget checks that a variant's own load.target
// replaces the scenario's for that variant only, with its placeholders
// filled in from the variant's own ports, and that the requests follow it.
func TestResolveVariantLoadTarget(t *testing.T) {
	const src = `name: sidecar
services:
  - name: proxy
    role: agent
    command: [haproxy, -f, haproxy.cfg]
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}"]
    measure: true
variants:
  - name: baseline
    skip: [proxy]
  - name: inbound
    load: {target: "http://127.0.0.1:${port:proxy}/"}
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {name: c, path: /consumer}
  rate: 10
  duration: 1s
`
	s, err := scenario.Parse("sidecar.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		variant, port string
	}{
		{"baseline", "consumer"},
		{"inbound", "proxy"},
	}
	for _, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			var pool portPool
			defer pool.release()
			v, err := resolveVariant(s, tt.variant, &pool, "http://127.0.0.1:1", "/bin/toll")
			if err != nil {
				t.Fatal(err)
			}
			p, ok := v.Ports[tt.port]
			if !ok {
				t.Fatalf("no port for %s: %v", tt.port, v.Ports)
			}
			want := "http://127.0.0.1:" + strconv.Itoa(p)
			if v.Target != want {
				t.Errorf("target %q, want %q", v.Target, want)
			}
			if got := v.Requests[0].URL; got != want+"/consumer" {
				t.Errorf("request URL %q, want %q", got, want+"/consumer")
			}
		})
	}
}

// TestResolveVariantLimits checks the precedence of limits: a variant's
// cpu_limit and memory_limit replace each service's own, and the
// variant's change to one service replaces both, for that service only.
func TestResolveVariantLimits(t *testing.T) {
	const src = `name: limits
services:
  - name: provider
    command: [toll, app, provider]
    cpu_limit: 1
    memory_limit: 1GiB
  - name: consumer
    command: [toll, app, consumer]
    measure: true
variants:
  - name: baseline
  - name: small
    cpu_limit: 0.5
    memory_limit: 256MiB
    services:
      consumer: {cpu_limit: 0.25}
load:
  target: "http://127.0.0.1:1"
  requests: [{path: /}]
  rate: 10
  duration: 1s
`
	s, err := scenario.Parse("limits.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string][2]float64{
		"baseline": {"provider": {1, 1 << 30}, "consumer": {0, 0}},
		"small":    {"provider": {0.5, 256 << 20}, "consumer": {0.25, 256 << 20}},
	}
	for name, services := range want {
		var pool portPool
		v, err := resolveVariant(s, name, &pool, "http://127.0.0.1:1", "/bin/toll")
		pool.release()
		if err != nil {
			t.Fatal(err)
		}
		for _, svc := range v.Services {
			if got := [2]float64{svc.CPULimit, float64(svc.MemoryLimit)}; got != services[svc.Name] {
				t.Errorf("%s/%s: limits %v, want %v", name, svc.Name, got, services[svc.Name])
			}
		}
	}
}
