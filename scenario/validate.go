package scenario

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Defaults applied when a field is left out.
const (
	DefaultBaseline     = "baseline"
	DefaultRounds       = 10
	DefaultWarmup       = 5 * time.Second
	DefaultTimeout      = 10 * time.Second
	DefaultReadyTimeout = 30 * time.Second
	DefaultSample       = time.Second
	DefaultMaxConns     = 500
	MinSample           = 100 * time.Millisecond
)

var (
	reName        = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	rePlaceholder = regexp.MustCompile(`\$\{([^}]*)\}`)
	reCPUSet      = regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`)
)

// validator fills in defaults and keeps the first problem found.
type validator struct {
	file string
	ix   *index
	err  error
}

func (v *validator) fail(field, format string, args ...any) {
	if v.err != nil {
		return
	}
	v.err = &Error{File: v.file, Line: v.ix.line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (v *validator) scenario(s *Scenario) {
	if s.Name == "" {
		base := filepath.Base(v.file)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if !reName.MatchString(s.Name) {
		v.fail("name", "%q may hold only letters, digits, '.', '_' and '-'", s.Name)
	}
	if s.Baseline == "" {
		s.Baseline = DefaultBaseline
	}
	if s.Rounds == 0 {
		s.Rounds = DefaultRounds
	}
	if s.Rounds < 1 {
		v.fail("rounds", "must be at least 1, not %d", s.Rounds)
	}
	switch s.Restart {
	case "":
		s.Restart = RestartOnce
	case RestartPerTrial, RestartPerRound, RestartOnce:
	default:
		v.fail("restart", "%q is not one of per-trial, per-round, once", s.Restart)
	}
	switch s.Mode {
	case "":
		s.Mode = ModeSequential
	case ModeSequential:
	case ModeDuet:
	default:
		v.fail("mode", "%q is not one of sequential, duet", s.Mode)
	}
	switch s.Pinning.Duet {
	case "":
		if s.Mode == ModeDuet {
			s.Pinning.Duet = DuetSplit
		}
	case DuetSplit, DuetShared:
		if s.Mode != ModeDuet {
			v.fail("pinning.duet", "places the two sides of mode: duet, and this scenario's mode is %s", s.Mode)
		}
	default:
		v.fail("pinning.duet", "%q is not one of split, shared", s.Pinning.Duet)
	}
	switch s.Network {
	case "":
		s.Network = NetworkHost
	case NetworkHost, NetworkIsolated:
	default:
		v.fail("network", "%q is not one of host, isolated", s.Network)
	}
	if s.Sample == 0 {
		s.Sample = Duration(DefaultSample)
	}
	if s.Sample.D() < MinSample {
		v.fail("sample", "%s is below the %s minimum", s.Sample, MinSample)
	}
	v.pinning(s.Pinning)
	v.services(s)
	v.variants(s)
	v.load(&s.Load)
	v.findMax(&s.FindMax, &s.Load)
	if t := s.Trim.Start.D() + s.Trim.End.D(); t >= s.Load.Duration.D() && s.Load.Duration > 0 {
		v.fail("trim", "trims %s of a %s window, leaving nothing to measure", t, s.Load.Duration)
	}
}

func (v *validator) pinning(p Pinning) {
	if p.Load != "" && !reCPUSet.MatchString(p.Load) {
		v.fail("pinning.load", "%q is not a CPU list such as 0 or 0-1,3", p.Load)
	}
	if p.Services != "" && !reCPUSet.MatchString(p.Services) {
		v.fail("pinning.services", "%q is not a CPU list such as 1 or 1-3", p.Services)
	}
}

func (v *validator) services(s *Scenario) {
	if len(s.Services) == 0 {
		v.fail("services", "at least one service is required")
		return
	}
	seen := map[string]bool{}
	measured := 0
	for i := range s.Services {
		svc := &s.Services[i]
		p := fmt.Sprintf("services[%d]", i)
		switch {
		case svc.Name == "":
			v.fail(p, "name is required")
		case !reName.MatchString(svc.Name):
			v.fail(p+".name", "%q may hold only letters, digits, '.', '_' and '-'", svc.Name)
		case seen[svc.Name]:
			v.fail(p+".name", "service %q is defined twice", svc.Name)
		}
		seen[svc.Name] = true
		if len(svc.Command) == 0 || svc.Command[0] == "" {
			v.fail(p, "command is required (service %q)", svc.Name)
		}
		for j, a := range svc.Command {
			v.placeholders(fmt.Sprintf("%s.command[%d]", p, j), a)
		}
		for k, val := range svc.Env {
			v.placeholders(p+".env."+k, val)
		}
		if svc.Dir == "" {
			svc.Dir = dirOf(v.file)
		} else if !filepath.IsAbs(svc.Dir) {
			svc.Dir = filepath.Join(dirOf(v.file), svc.Dir)
		}
		switch svc.Role {
		case "":
			svc.Role = RoleApp
		case RoleApp, RoleAgent:
		default:
			v.fail(p+".role", "%q is not app or agent", svc.Role)
		}
		if svc.Ready.HTTP != "" && svc.Ready.TCP != "" {
			v.fail(p+".ready", "set http or tcp, not both")
		}
		if svc.Ready.HTTP != "" {
			v.url(p+".ready.http", svc.Ready.HTTP)
		}
		if svc.Ready.TCP != "" {
			v.placeholders(p+".ready.tcp", svc.Ready.TCP)
			if _, _, err := net.SplitHostPort(expandForCheck(svc.Ready.TCP)); err != nil {
				v.fail(p+".ready.tcp", "%q is not host:port", svc.Ready.TCP)
			}
		}
		if svc.Ready.Timeout == 0 {
			svc.Ready.Timeout = Duration(DefaultReadyTimeout)
		}
		if svc.CPUs != "" && !reCPUSet.MatchString(svc.CPUs) {
			v.fail(p+".cpus", "%q is not a CPU list such as 1 or 1-3", svc.CPUs)
		}
		if svc.CPULimit < 0 {
			v.fail(p+".cpu_limit", "must not be negative")
		}
		if svc.Measure || svc.Role == RoleAgent {
			measured++
		}
	}
	if measured == 0 {
		if len(s.Services) == 1 {
			s.Services[0].Measure = true
		} else {
			v.fail("services", "no service has measure: true; mark the service whose cost toll reports")
		}
	}
}

func (v *validator) variants(s *Scenario) {
	if len(s.Variants) == 0 {
		s.Variants = []Variant{{Name: s.Baseline}}
	}
	seen := map[string]bool{}
	for i := range s.Variants {
		vr := &s.Variants[i]
		p := fmt.Sprintf("variants[%d]", i)
		switch {
		case vr.Name == "":
			v.fail(p, "name is required")
		case !reName.MatchString(vr.Name):
			v.fail(p+".name", "%q may hold only letters, digits, '.', '_' and '-'", vr.Name)
		case seen[vr.Name]:
			v.fail(p+".name", "variant %q is defined twice", vr.Name)
		}
		seen[vr.Name] = true
		for name, o := range vr.Services {
			op := p + ".services." + name
			if _, ok := s.Service(name); !ok {
				v.fail(op, "no service named %q", name)
			}
			for j, a := range append(append([]string{}, o.Command...), o.Args...) {
				v.placeholders(fmt.Sprintf("%s.args[%d]", op, j), a)
			}
			for k, val := range o.Env {
				v.placeholders(op+".env."+k, val)
			}
		}
		for j, name := range vr.Skip {
			if _, ok := s.Service(name); !ok {
				v.fail(fmt.Sprintf("%s.skip[%d]", p, j), "no service named %q", name)
			}
		}
	}
	if !seen[s.Baseline] {
		v.fail("variants", "no variant is named %q (the baseline)", s.Baseline)
	}
}

func (v *validator) load(l *Load) {
	if l.Target == "" {
		v.fail("load.target", "is required (the base URL requests go to)")
	} else {
		v.url("load.target", l.Target)
	}
	if len(l.Requests) == 0 {
		v.fail("load.requests", "at least one request is required")
	}
	names := map[string]bool{}
	for i := range l.Requests {
		r := &l.Requests[i]
		p := fmt.Sprintf("load.requests[%d]", i)
		if r.Path == "" {
			r.Path = "/"
		}
		if !strings.HasPrefix(r.Path, "/") {
			v.fail(p+".path", "%q must start with /", r.Path)
		}
		if r.Name == "" {
			r.Name = r.Path
		}
		if names[r.Name] {
			v.fail(p+".name", "request name %q is used twice", r.Name)
		}
		names[r.Name] = true
		if r.Method == "" {
			r.Method = http.MethodGet
		}
		r.Method = strings.ToUpper(r.Method)
		switch r.Method {
		case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
		default:
			v.fail(p+".method", "%q is not an HTTP method", r.Method)
		}
		if r.Weight == 0 {
			r.Weight = 1
		}
		if r.Weight < 0 {
			v.fail(p+".weight", "must be positive")
		}
		v.requestPlaceholders(p+".path", r.Path)
		v.requestPlaceholders(p+".body", r.Body)
		for k, h := range r.Headers {
			v.requestPlaceholders(p+".headers."+k, h)
		}
	}
	switch {
	case len(l.Users) > 0 && (l.Rate != 0 || len(l.Rates) > 0):
		v.fail("load.users", "set users (closed model) or rate/rates (open model), not both")
	case len(l.Users) > 0:
		for i, u := range l.Users {
			if u <= 0 {
				v.fail(fmt.Sprintf("load.users[%d]", i), "must be a positive number of users, not %d", u)
			}
		}
	case len(l.Rates) > 0 && l.Rate != 0:
		v.fail("load.rates", "set rate or rates, not both")
	case len(l.Rates) > 0:
		for i, r := range l.Rates {
			if r <= 0 {
				v.fail(fmt.Sprintf("load.rates[%d]", i), "must be positive, not %g", r)
			}
		}
	case l.Rate <= 0:
		v.fail("load.rate", "must be a positive number of requests per second (open model), or set users (closed model)")
	}
	if len(l.Users) == 0 {
		for _, f := range []struct {
			name string
			set  bool
		}{{"think", l.Think != 0}, {"think_distribution", l.ThinkDistribution != ""}, {"ramp", l.Ramp != 0}} {
			if f.set {
				v.fail("load."+f.name, "applies to the closed model only (set users)")
			}
		}
	} else if l.Quantum != nil {
		v.fail("load.quantum", "applies to the open model only (rate or rates)")
	}
	switch l.ThinkDistribution {
	case "", "constant", "exponential":
	default:
		v.fail("load.think_distribution", "%q is not one of constant, exponential", l.ThinkDistribution)
	}
	if l.Duration == 0 {
		v.fail("load.duration", "is required (the measured window of each trial, e.g. 30s)")
	}
	if l.Warmup == 0 {
		l.Warmup = Duration(DefaultWarmup)
	}
	if l.Timeout == 0 {
		l.Timeout = Duration(DefaultTimeout)
	}
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxConns < 0 {
		v.fail("load.max_conns", "must be positive")
	}

}

// findMax checks the find_max block and fills in its defaults.
func (v *validator) findMax(f *FindMax, l *Load) {
	if f.SLOP99 == 0 {
		f.SLOP99 = Duration(100 * time.Millisecond)
	}
	if f.Start == 0 {
		f.Start = 100
		if l.Rate > 0 {
			f.Start = l.Rate
		} else if len(l.Rates) > 0 {
			f.Start = l.Rates[0]
		}
	}
	if f.Start < 0 {
		v.fail("find_max.start", "must be a positive rate")
	}
	if f.Precision == 0 {
		f.Precision = 0.05
	}
	if f.Precision < 0.001 || f.Precision >= 1 {
		v.fail("find_max.precision", "must be between 0.001 and 1 (a share of the rate, e.g. 0.05)")
	}
	if f.MaxTrials == 0 {
		f.MaxTrials = 12
	}
	if f.MaxTrials < 2 || f.MaxTrials > 100 {
		v.fail("find_max.max_trials", "must be between 2 and 100")
	}
}

func (v *validator) url(field, raw string) {
	v.placeholders(field, raw)
	u, err := url.Parse(expandForCheck(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.fail(field, "%q is not an http:// or https:// URL", raw)
	}
}

// placeholders checks that every ${...} in s is one toll knows.
func (v *validator) placeholders(field, s string) {
	for _, m := range rePlaceholder.FindAllStringSubmatch(s, -1) {
		if err := checkPlaceholder(m[1]); err != nil {
			v.fail(field, "%s", err)
		}
	}
}

// requestPlaceholders checks the placeholders of a load request, which may
// also hold ${id}, the request's number.
func (v *validator) requestPlaceholders(field, s string) {
	for _, m := range rePlaceholder.FindAllStringSubmatch(s, -1) {
		if m[1] == "id" {
			continue
		}
		if err := checkPlaceholder(m[1]); err != nil {
			v.fail(field, "%s (and in requests ${id})", err)
		}
	}
}

func checkPlaceholder(p string) error {
	switch {
	case p == "sink", p == "toll", p == "variant":
		return nil
	case strings.HasPrefix(p, "port:") && reName.MatchString(strings.TrimPrefix(p, "port:")):
		return nil
	}
	return fmt.Errorf("unknown placeholder ${%s} (known: ${port:NAME}, ${sink}, ${toll}, ${variant})", p)
}

// expandForCheck fills placeholders with sample values so a URL or address
// can be checked before toll knows the real ones.
func expandForCheck(s string) string {
	return rePlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "${port:") {
			return "1"
		}
		if m == "${sink}" {
			return "http://127.0.0.1:1"
		}
		return "x"
	})
}

// Expand replaces the placeholders in s using lookup, which receives the text
// between ${ and } (such as "port:consumer") and returns its value.
func Expand(s string, lookup func(string) string) string {
	return rePlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		return lookup(m[2 : len(m)-1])
	})
}
