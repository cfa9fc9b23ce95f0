// Package variant resolves a scenario's variant where it runs: the
// scenario's services with the variant's changes applied and every
// placeholder (${port:NAME}, ${sink}, ${toll}, ${listen}, ...) filled in,
// its load target and request mix, its job and hooks. The local backend
// and the Kubernetes one (package kube) resolve variants the same way;
// only the placeholders' values differ.
package variant

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tollperf/toll/container"
	"github.com/tollperf/toll/scenario"
)

// Service is one service of one variant, with the variant's changes applied
// and every placeholder filled in.
type Service struct {
	scenario.Service
	Argv []string
	Env  []string // complete environment of a process on the host
	// Own is the scenario's environment for the service alone (KEY=value):
	// a container's, which does not inherit toll's.
	Own []string
	// Publish are a container's ports (scenario.Service.Ports) with the
	// host ports their names resolve to, by container port.
	Publish []container.Port
	// ReadyDir is where ready.command runs: the service's directory for a
	// process, the scenario file's for a container (whose own directory
	// is inside it).
	ReadyDir string
}

// Variant is a variant ready to start: the scenario's services with the
// variant's changes applied and every placeholder filled in, its target
// and its request mix.
type Variant struct {
	Name     string
	Exports  bool
	Services []Service
	Target   string
	Requests []Request
	Ports    map[string]int
	// Job is the variant's job (a job experiment); Prepare and BeforeEach
	// its hooks, each nil when not set.
	Job                 *Command
	Prepare, BeforeEach *Command
}

// Command is a command toll runs itself (a job, a hook), resolved.
type Command struct {
	Argv []string
	Env  []string // complete environment
	// Own is the scenario's part of Env alone (KEY=value), for a pod.
	Own []string
	Dir string
}

// Request is one entry of the request mix with its URL resolved.
type Request struct {
	Name, Method, URL string
	Header            http.Header
	Body              []byte
	Weight            int
}

// Placeholders are the values of a variant's placeholders where it runs.
type Placeholders struct {
	// Port returns the port of ${port:NAME}, called once per variant and
	// name.
	Port func(name string) (int, error)
	// Sink is the URL of the variant's telemetry sink (${sink}).
	Sink string
	// Toll is the toll binary (${toll}, and a command's first word
	// "toll").
	Toll string
	// Listen is the address a service listens on so that the load
	// generator reaches it (${listen}): loopback on this machine, every
	// interface in a pod; default 127.0.0.1.
	Listen string
}

// Resolve applies variant name's changes to the scenario's services
// and fills in placeholders from ph. A service's Env is toll's own
// environment with the scenario's over it (for a process of this machine),
// Own the scenario's alone (for a container or a pod).
func Resolve(s *scenario.Scenario, name string, ph Placeholders) (*Variant, error) {
	sv, ok := s.Variant(name)
	if !ok {
		return nil, fmt.Errorf("no variant %q", name)
	}
	r := &resolver{ph: ph, name: name, v: &Variant{Name: name, Exports: sv.Exports, Ports: map[string]int{}}}
	v := r.v
	skip := map[string]bool{}
	for _, n := range sv.Skip {
		skip[n] = true
	}
	for _, base := range s.Services {
		if !skip[base.Name] {
			v.Services = append(v.Services, r.service(s, base, sv))
		}
	}
	argv := func(words []string) []string { return argvOf(words, r.expand, ph.Toll) }
	dir := s.CommandDir()
	if s.Job != nil {
		cmd := s.Job.Command
		if len(sv.Job.Command) > 0 {
			cmd = sv.Job.Command
		}
		cmd = append(append([]string(nil), cmd...), sv.Job.Args...)
		var own []string
		for _, m := range []map[string]string{s.Job.Env, sv.Job.Env} {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				own = append(own, k+"="+r.expand(m[k]))
			}
		}
		v.Job = &Command{Argv: argv(cmd), Env: append(os.Environ(), own...), Own: own, Dir: dir}
	}
	if len(sv.Prepare) > 0 {
		v.Prepare = &Command{Argv: argv(sv.Prepare), Env: os.Environ(), Dir: dir}
	}
	if len(sv.BeforeEach) > 0 {
		v.BeforeEach = &Command{Argv: argv(sv.BeforeEach), Env: os.Environ(), Dir: dir}
	}
	target := s.Load.Target
	if sv.Load.Target != "" {
		target = sv.Load.Target
	}
	v.Target = strings.TrimRight(r.expand(target), "/")
	for _, req := range s.Load.Requests {
		h := http.Header{}
		for k, val := range req.Headers {
			h.Set(k, r.expand(val))
		}
		v.Requests = append(v.Requests, Request{Name: req.Name, Method: req.Method, URL: v.Target + r.expand(req.Path),
			Header: h, Body: []byte(r.expand(req.Body)), Weight: req.Weight})
	}
	return v, r.err
}

// resolver fills in one variant's placeholders, choosing each named port
// once.
type resolver struct {
	ph   Placeholders
	name string
	v    *Variant
	err  error // the first port that could not be chosen
}

// port is the host port named pn, chosen on first use.
func (r *resolver) port(pn string) int {
	if p, ok := r.v.Ports[pn]; ok {
		return p
	}
	p, err := r.ph.Port(pn)
	if err != nil && r.err == nil {
		r.err = err
	}
	r.v.Ports[pn] = p
	return p
}

// expandIn fills in the placeholders of str as the service with published
// ports own sees them (nil: everywhere else): inside its container
// ${port:NAME} of its own ports is the container's port.
func (r *resolver) expandIn(own map[string]int, str string) string {
	return scenario.Expand(str, func(key string) string {
		switch {
		case key == "sink":
			return r.ph.Sink
		case key == "sink_addr":
			return strings.TrimPrefix(r.ph.Sink, "http://")
		case key == "toll":
			return r.ph.Toll
		case key == "variant":
			return r.name
		case key == "listen":
			return cmp.Or(r.ph.Listen, "127.0.0.1")
		case strings.HasPrefix(key, "port:"):
			pn := strings.TrimPrefix(key, "port:")
			if p, ok := own[pn]; ok {
				return strconv.Itoa(p)
			}
			return strconv.Itoa(r.port(pn))
		}
		return "${" + key + "}"
	})
}

// expand fills in the placeholders of str as seen outside any container.
func (r *resolver) expand(str string) string { return r.expandIn(nil, str) }

// service is the scenario's service base with variant sv's changes to it.
func (r *resolver) service(s *scenario.Scenario, base scenario.Service, sv scenario.Variant) Service {
	self := r.ph.Toll
	svc := Service{Service: base}
	var own map[string]int
	if base.Image != "" {
		own = base.Ports
		for _, pn := range slices.Sorted(maps.Keys(own)) {
			svc.Publish = append(svc.Publish, container.Port{Host: r.port(pn), Container: own[pn]})
		}
	}
	o := sv.Services[base.Name]
	// Limits: the variant's replace the service's own, and the variant's
	// change to the service replaces both.
	for _, l := range []struct {
		cpu float64
		mem scenario.ByteSize
	}{{sv.CPULimit, sv.MemoryLimit}, {o.CPULimit, o.MemoryLimit}} {
		if l.cpu > 0 {
			svc.CPULimit = l.cpu
		}
		if l.mem > 0 {
			svc.MemoryLimit = l.mem
		}
	}
	cmd := base.Command
	if len(o.Command) > 0 {
		cmd = o.Command
	}
	cmd = append(append([]string(nil), cmd...), o.Args...)
	for _, a := range cmd {
		svc.Argv = append(svc.Argv, r.expandIn(own, a))
	}
	if len(svc.Argv) > 0 && svc.Argv[0] == "toll" && base.Image == "" {
		svc.Argv[0] = self // a container's toll is the image's
	}
	env := map[string]string{}
	for k, val := range base.Env {
		env[k] = val
	}
	for k, val := range o.Env {
		env[k] = val
	}
	svc.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(env)) {
		svc.Own = append(svc.Own, k+"="+r.expandIn(own, env[k]))
	}
	svc.Env = append(svc.Env, svc.Own...)
	svc.Ready.HTTP = r.expand(base.Ready.HTTP)
	svc.Ready.TCP = r.expand(base.Ready.TCP)
	if len(base.Ready.Command) > 0 {
		svc.Ready.Command = argvOf(base.Ready.Command, r.expand, self)
	}
	svc.ReadyDir = s.ReadyDir(base)
	if base.Scrape != nil {
		sc := *base.Scrape
		sc.URL = r.expand(sc.URL)
		svc.Scrape = &sc
	}
	return svc
}

// argvOf expands the placeholders of words, and a first word "toll" to self.
func argvOf(words []string, expand func(string) string, self string) []string {
	var out []string
	for _, w := range words {
		out = append(out, expand(w))
	}
	if len(out) > 0 && out[0] == "toll" {
		out[0] = self
	}
	return out
}
