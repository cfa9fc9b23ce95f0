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

// TestResolveVariantListen checks that ${listen} is loopback on this
// machine unless the placeholders say otherwise (every interface, in a pod).
func TestResolveVariantListen(t *testing.T) {
	s, err := scenario.Read("../examples/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	port := func(string) (int, error) { return 9000, nil }
	for _, tt := range []struct{ listen, want string }{{"", "127.0.0.1:9000"}, {"0.0.0.0", "0.0.0.0:9000"}} {
		v, err := ResolveVariant(s, "baseline", Placeholders{Port: port, Sink: "http://sink", Toll: "/bin/toll", Listen: tt.listen})
		if err != nil {
			t.Fatal(err)
		}
		consumer := v.Services[1]
		if consumer.Name != "consumer" || consumer.Argv[4] != tt.want {
			t.Errorf("Listen %q: consumer argv %v, want --addr %s", tt.listen, consumer.Argv, tt.want)
		}
	}
}
