package variant

import (
	"slices"
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
			v, err := resolve(s, tt.variant)
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

// TestResolveVariantPublishedPorts checks that a container's published
// port name is the container's port inside it (its command and
// environment) and a host port everywhere else (the load, its readiness,
// other services), and that the host port is the one published.
func TestResolveVariantPublishedPorts(t *testing.T) {
	const src = `name: ports
services:
  - name: provider
    image: localhost/app:1
    ports: {provider: 8080}
    command: [app, provider, --addr, "0.0.0.0:${port:provider}"]
    env: {PORT: "${port:provider}"}
    ready: {http: "http://127.0.0.1:${port:provider}/health"}
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}", --provider, "http://127.0.0.1:${port:provider}/provider"]
    measure: true
variants:
  - name: baseline
load:
  target: "http://127.0.0.1:${port:provider}"
  requests:
    - {path: /provider}
  rate: 10
  duration: 1s
`
	s, err := scenario.Parse("ports.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	v, err := resolve(s, "baseline")
	if err != nil {
		t.Fatal(err)
	}
	host := strconv.Itoa(v.Ports["provider"])
	if host == "0" || host == "8080" {
		t.Fatalf("provider's host port is %s", host)
	}
	p, c := v.Services[0], v.Services[1]
	if len(p.Publish) != 1 || strconv.Itoa(p.Publish[0].Host) != host || p.Publish[0].Container != 8080 {
		t.Errorf("published %+v, want 127.0.0.1:%s → 8080", p.Publish, host)
	}
	if got := p.Argv[3]; got != "0.0.0.0:8080" {
		t.Errorf("inside the container the command listens on %q, want 0.0.0.0:8080", got)
	}
	if !slices.Contains(p.Own, "PORT=8080") {
		t.Errorf("container environment %q lacks PORT=8080", p.Own)
	}
	if want := "http://127.0.0.1:" + host + "/health"; p.Ready.HTTP != want {
		t.Errorf("readiness %q, want %q (the host's port)", p.Ready.HTTP, want)
	}
	if want := "http://127.0.0.1:" + host + "/provider"; c.Argv[len(c.Argv)-1] != want {
		t.Errorf("the consumer calls %q, want %q", c.Argv[len(c.Argv)-1], want)
	}
	if want := "http://127.0.0.1:" + host; v.Target != want {
		t.Errorf("load target %q, want %q", v.Target, want)
	}
}

// TestResolveReadyCommandAndScrape checks that a service's ready.command and
// scrape.url get the variant's own ports, the same as its command's, and a
// first word "toll" the toll binary; and that the scenario's own value is
// left as written for the next variant.
func TestResolveReadyCommandAndScrape(t *testing.T) {
	const src = `name: agentd
services:
  - name: agent
    role: agent
    command: [agentd, --listen, "127.0.0.1:${port:agent}"]
    ready: {command: [toll, probe, "127.0.0.1:${port:agent}"]}
    scrape: {url: "http://127.0.0.1:${port:agent}/metrics", metrics: [spans_total]}
variants:
  - name: baseline
  - name: other
load:
  target: "http://127.0.0.1:${port:agent}"
  requests: [{path: /}]
  rate: 10
  duration: 1s
`
	s, err := scenario.Parse("agentd.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"baseline", "other"} {
		v, err := resolve(s, name)
		if err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(v.Ports["agent"])
		svc := v.Services[0]
		if got := svc.Ready.Command; len(got) != 3 || got[0] != "/bin/toll" || got[2] != addr {
			t.Errorf("%s: ready.command %q, want [/bin/toll probe %s]", name, got, addr)
		}
		if svc.Scrape == nil || svc.Scrape.URL != "http://"+addr+"/metrics" || svc.Scrape.Timeout.D() <= 0 {
			t.Errorf("%s: scrape %+v, want the variant's port and the default timeout", name, svc.Scrape)
		}
		if svc.ReadyDir == "" {
			t.Errorf("%s: ready.command has no directory", name)
		}
	}
	if s.Services[0].Scrape.URL != "http://127.0.0.1:${port:agent}/metrics" || s.Services[0].Ready.Command[0] != "toll" {
		t.Errorf("the scenario's service was changed: %+v", s.Services[0])
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
		v, err := Resolve(s, "baseline", Placeholders{Port: port, Sink: "http://sink", Toll: "/bin/toll", Listen: tt.listen})
		if err != nil {
			t.Fatal(err)
		}
		consumer := v.Services[1]
		if consumer.Name != "consumer" || consumer.Argv[4] != tt.want {
			t.Errorf("Listen %q: consumer argv %v, want --addr %s", tt.listen, consumer.Argv, tt.want)
		}
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
		v, err := resolve(s, name)
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

// resolve resolves variant name of s with distinct ports, as a run's pool
// hands them out, the sink at http://127.0.0.1:1 and toll at /bin/toll.
func resolve(s *scenario.Scenario, name string) (*Variant, error) {
	next := 20000
	port := func(string) (int, error) {
		next++
		return next, nil
	}
	return Resolve(s, name, Placeholders{Port: port, Sink: "http://127.0.0.1:1", Toll: "/bin/toll"})
}
