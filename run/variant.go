package run

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tollperf/toll/scenario"
)

// service is one service of one variant, with the variant's changes applied
// and every placeholder filled in.
type service struct {
	scenario.Service
	Argv []string
	Env  []string // complete environment of a process on the host
	// Own is the scenario's environment for the service alone (KEY=value):
	// a container's, which does not inherit toll's.
	Own []string
}

// variant is a variant ready to start.
type variant struct {
	Name     string
	Exports  bool
	Services []service
	Target   string
	Requests []request
	Ports    map[string]int
	// Job is the variant's job (a job experiment); Prepare and BeforeEach
	// its hooks, each nil when not set.
	Job                 *command
	Prepare, BeforeEach *command
}

// command is a command toll runs itself (a job, a hook), resolved.
type command struct {
	Argv []string
	Env  []string // complete environment
	Dir  string
}

// request is one entry of the request mix with its URL resolved.
type request struct {
	Name, Method, URL string
	Header            http.Header
	Body              []byte
	Weight            int
}

// resolveVariant applies variant name's changes to the scenario's services
// and fills in placeholders: ports come from pool, once per variant and name.
func resolveVariant(s *scenario.Scenario, name string, pool *portPool, sinkURL, self string) (*variant, error) {
	sv, ok := s.Variant(name)
	if !ok {
		return nil, fmt.Errorf("no variant %q", name)
	}
	v := &variant{Name: name, Exports: sv.Exports, Ports: map[string]int{}}
	var expandErr error
	expand := func(str string) string {
		return scenario.Expand(str, func(key string) string {
			switch {
			case key == "sink":
				return sinkURL
			case key == "sink_addr":
				return strings.TrimPrefix(sinkURL, "http://")
			case key == "toll":
				return self
			case key == "variant":
				return name
			case strings.HasPrefix(key, "port:"):
				pn := strings.TrimPrefix(key, "port:")
				if p, ok := v.Ports[pn]; ok {
					return strconv.Itoa(p)
				}
				p, err := pool.take()
				if err != nil && expandErr == nil {
					expandErr = err
				}
				v.Ports[pn] = p
				return strconv.Itoa(p)
			}
			return "${" + key + "}"
		})
	}
	skip := map[string]bool{}
	for _, n := range sv.Skip {
		skip[n] = true
	}
	for _, base := range s.Services {
		if skip[base.Name] {
			continue
		}
		svc := service{Service: base}
		o := sv.Services[base.Name]
		// Limits: the variant's replace the service's own, and the
		// variant's change to the service replaces both.
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
			svc.Argv = append(svc.Argv, expand(a))
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
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			svc.Own = append(svc.Own, k+"="+expand(env[k]))
		}
		svc.Env = append(svc.Env, svc.Own...)
		svc.Ready.HTTP = expand(base.Ready.HTTP)
		svc.Ready.TCP = expand(base.Ready.TCP)
		v.Services = append(v.Services, svc)
	}
	argv := func(words []string) []string {
		var out []string
		for _, w := range words {
			out = append(out, expand(w))
		}
		if len(out) > 0 && out[0] == "toll" {
			out[0] = self
		}
		return out
	}
	dir := ""
	if len(s.Services) > 0 {
		dir = s.Services[0].Dir
	}
	if s.Job != nil {
		dir = s.Job.Dir
		cmd := s.Job.Command
		if len(sv.Job.Command) > 0 {
			cmd = sv.Job.Command
		}
		cmd = append(append([]string(nil), cmd...), sv.Job.Args...)
		env := os.Environ()
		for _, m := range []map[string]string{s.Job.Env, sv.Job.Env} {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				env = append(env, k+"="+expand(m[k]))
			}
		}
		v.Job = &command{Argv: argv(cmd), Env: env, Dir: dir}
	}
	if len(sv.Prepare) > 0 {
		v.Prepare = &command{Argv: argv(sv.Prepare), Env: os.Environ(), Dir: dir}
	}
	if len(sv.BeforeEach) > 0 {
		v.BeforeEach = &command{Argv: argv(sv.BeforeEach), Env: os.Environ(), Dir: dir}
	}
	target := s.Load.Target
	if sv.Load.Target != "" {
		target = sv.Load.Target
	}
	v.Target = strings.TrimRight(expand(target), "/")
	for _, r := range s.Load.Requests {
		h := http.Header{}
		for k, val := range r.Headers {
			h.Set(k, expand(val))
		}
		v.Requests = append(v.Requests, request{Name: r.Name, Method: r.Method, URL: v.Target + expand(r.Path),
			Header: h, Body: []byte(expand(r.Body)), Weight: r.Weight})
	}
	return v, expandErr
}
