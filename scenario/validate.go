package scenario

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollperf/toll/pin"
)

// Defaults applied when a field is left out.
const (
	DefaultBaseline     = "baseline"
	DefaultRounds       = 10
	DefaultWarmup       = 5 * time.Second
	DefaultTimeout      = 10 * time.Second
	DefaultReadyTimeout = 30 * time.Second
	// DefaultScrapeTimeout bounds one scrape of a service's metrics.
	DefaultScrapeTimeout = 2 * time.Second
	DefaultSample        = time.Second
	DefaultMaxConns      = 500
	MinSample            = 100 * time.Millisecond
	// MinSlice is the shortest turn of a sliced duet (load.slice): a few
	// requests at a rate of hundreds a second, and long beside the
	// milliseconds a request of one turn may run into the next.
	MinSlice = 10 * time.Millisecond
)

var (
	rePromName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	reName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// reImage is the characters of an image reference: [host[:port]/]path[:tag][@digest].
	// The engine checks the grammar itself; this keeps out what could be
	// read as one of its options or split into two words.
	reImage       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$`)
	rePlaceholder = regexp.MustCompile(`\$\{([^}]*)\}`)
	reCPUSet      = regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`)
	reNumber      = regexp.MustCompile(`\d+`)
)

// maxCPUNumber is the highest CPU number Linux supports (NR_CPUS 8192),
// the bound of a CPU list when the online CPUs are unknown.
const maxCPUNumber = 8191

// validator fills in defaults and keeps the first problem found.
type validator struct {
	file string
	ix   *index
	m    machine
	err  error
	// asStartup says a load test is being run as a start-up experiment
	// (toll run --startup): its load, rounds and restart are set aside.
	asStartup bool
	// modeOverridden says the mode is about to be replaced (toll run
	// --sequential), so it is not checked against the machine's CPUs.
	modeOverridden bool
}

// present reports whether the scenario sets field (a dotted path), as
// opposed to leaving it to its default.
func (v *validator) present(field string) bool {
	_, ok := v.ix.byPath[field]
	return ok
}

// name checks a name of the scenario, a service or a variant.
func (v *validator) name(field, name string) {
	switch {
	case !reName.MatchString(name):
		v.fail(field, "%q may hold only letters, digits, '.', '_' and '-'", name)
	case len(name) > MaxNameLen:
		v.fail(field, "%q is %d bytes long, above toll's limit of %d: names become parts of file and cgroup names", name, len(name), MaxNameLen)
	}
}

// duration checks a duration field against its bounds (durationLimit).
func (v *validator) duration(field string, d Duration) {
	if err := CheckDuration(field, d.D()); err != nil {
		v.fail(field, "%s", err)
	}
}

// count checks the length n of the list field against max.
func (v *validator) count(field string, n, max int, what, why string) {
	if n > max {
		v.fail(field, "%d %s is above toll's limit of %d: %s", n, what, max, why)
	}
}

// noNUL checks a string that becomes an argument, a directory or part of
// the environment of a process: none of them can hold a NUL byte.
func (v *validator) noNUL(field, s string) {
	if strings.IndexByte(s, 0) >= 0 {
		v.fail(field, "%q holds a NUL byte, which no argument, path or environment variable can carry", s)
	}
}

// env checks an environment to merge into a process's.
func (v *validator) env(field string, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		f := field + "." + k
		if k == "" || strings.ContainsAny(k, "=\x00") {
			v.fail(f, "%q is not an environment variable name (it must be non-empty, without '=' or NUL)", k)
		}
		v.noNUL(f, env[k])
		v.placeholders(f, env[k])
	}
}

// cpuList checks a CPU list against the CPUs toll may use.
func (v *validator) cpuList(field, list, example string) {
	if !reCPUSet.MatchString(list) {
		v.fail(field, "%q is not a CPU list such as %s", list, example)
		return
	}
	online := v.m.online
	// Bound every number before a range is expanded: "0-4000000000" is short.
	maxCPU := maxCPUNumber
	if len(online) > 0 {
		maxCPU = slices.Max(online)
	}
	for _, num := range reNumber.FindAllString(list, -1) {
		if n, err := strconv.Atoi(num); err != nil || n > maxCPU {
			v.fail(field, "CPU %s is not one toll may use: %s", num, v.onlineCPUs())
			return
		}
	}
	cpus, err := pin.Parse(list)
	if err != nil {
		v.fail(field, "%q: %s", list, err)
		return
	}
	if len(online) == 0 {
		return
	}
	for _, c := range cpus {
		if !slices.Contains(online, c) {
			v.fail(field, "CPU %d is not one toll may use: %s", c, v.onlineCPUs())
			return
		}
	}
}

// onlineCPUs describes the CPUs toll may use, for errors.
func (v *validator) onlineCPUs() string {
	if len(v.m.online) == 0 {
		return fmt.Sprintf("CPU numbers go up to %d", maxCPUNumber)
	}
	return fmt.Sprintf("this machine's online CPUs (toll's affinity) are %s", v.m.online)
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
	v.name("name", s.Name)
	if s.Baseline == "" {
		s.Baseline = DefaultBaseline
	}
	switch {
	case !v.present("rounds"):
		s.Rounds = DefaultRounds
	case s.Rounds < 1:
		v.fail("rounds", "must be at least 1, not %d (leave rounds out for the default of %d)", s.Rounds, DefaultRounds)
	case s.Rounds > MaxRounds:
		v.fail("rounds", "%d is above toll's limit of %d rounds: the plan holds every trial in memory", s.Rounds, MaxRounds)
	}
	switch s.Restart {
	case "":
		s.Restart = RestartOnce
	case RestartPerTrial, RestartPerRound, RestartOnce:
	default:
		v.fail("restart", "%q is not one of per-trial, per-round, once", s.Restart)
	}
	switch {
	case !v.present("starts"):
		s.Starts = 1
	case s.Starts < 1:
		v.fail("starts", "must be at least 1, not %d (leave starts out to start the services once)", s.Starts)
	case s.Restart != RestartOnce:
		v.fail("starts", "starts the services several times over a run that starts them once; restart: %s already starts them every %s", s.Restart, strings.TrimPrefix(s.Restart, "per-"))
	case s.Starts > s.Rounds:
		v.fail("starts", "%d starts need at least as many rounds, and rounds is %d", s.Starts, s.Rounds)
	}
	switch s.Mode {
	case "":
		s.Mode = ModeSequential
	case ModeSequential, ModeDuet, ModeTogether:
	default:
		v.fail("mode", "%q is not one of sequential, duet, together", s.Mode)
	}
	switch s.Pinning.Duet {
	case "":
		switch s.Mode {
		case ModeDuet:
			s.Pinning.Duet = DuetSplit
		case ModeTogether:
			s.Pinning.Duet = DuetShared
		}
	case DuetSplit, DuetShared:
		switch {
		case s.Mode == ModeTogether && s.Pinning.Duet == DuetSplit:
			v.fail("pinning.duet", "split gives the two sides of a duet halves of the services' CPUs; mode: together runs every variant on all of them (shared), so leave pinning.duet out")
		case !s.Concurrent():
			v.fail("pinning.duet", "places the two sides of mode: duet, and this scenario's mode is %s", s.Mode)
		}
	default:
		v.fail("pinning.duet", "%q is not one of split, shared", s.Pinning.Duet)
	}
	v.concurrentCPUs(s)
	switch s.Network {
	case "":
		s.Network = NetworkHost
	case NetworkHost, NetworkIsolated:
	default:
		v.fail("network", "%q is not one of host, isolated", s.Network)
	}
	v.kubernetes(s)
	if s.Report.Layout != "" && !slices.Contains(ReportLayouts(), s.Report.Layout) {
		v.fail("report.layout", "%q is not a layout%s", s.Report.Layout, DidYouMean(s.Report.Layout, ReportLayouts()))
	}
	if !v.present("sample") {
		s.Sample = Duration(DefaultSample)
	}
	v.duration("sample", s.Sample)
	v.pinning(s)
	if len(s.Services) > 0 || s.Job == nil { // a job may need no service
		v.services(s)
	}
	v.variants(s)
	v.publishedReach(s)
	if !v.workload(s) {
		return
	}
	v.schedule(s)
	v.load(&s.Load, s.Sides())
	v.precision(s)
	if v.present("load.slice") {
		v.slice(&s.Load, s.Mode, s.Mode == ModeDuet && s.Pinning.Duet == DuetShared)
	}
	v.matrix(&s.Matrix)
	v.findMax(&s.FindMax, &s.Load)
	v.duration("trim.start", s.Trim.Start)
	v.duration("trim.end", s.Trim.End)
	if t := s.Trim.Start.D() + s.Trim.End.D(); t >= s.Load.Duration.D() && s.Load.Duration > 0 {
		v.fail("trim", "trims %s of a %s window, leaving nothing to measure", t, s.Load.Duration)
	}
	if n := s.Rounds * len(s.Steps()) * len(s.Variants); n > MaxTrials {
		v.fail("rounds", "%d rounds × %d load steps × %d variants make %d trials, above toll's limit of %d: the plan holds every trial in memory", s.Rounds, len(s.Steps()), len(s.Variants), n, MaxTrials)
	}
}

// MinDuetCPUs is the fewest online CPUs a split duet runs on: one for toll
// (load generator, sinks, probes) and at least one each for the baseline's
// and the variant's services, with the services' CPUs split evenly.
const MinDuetCPUs = 4

// MinSharedDuetCPUs is the fewest online CPUs a shared duet, or every
// variant together, runs on: one for toll and at least one that the sides'
// services share.
const MinSharedDuetCPUs = 2

// concurrentCPUs refuses a duet, or variants together, that this machine
// has too few CPUs to place, or that pinning.off leaves unplaced: toll run
// would refuse it before starting anything, so toll check does too.
func (v *validator) concurrentCPUs(s *Scenario) {
	if !s.Concurrent() || v.modeOverridden || v.err != nil {
		return
	}
	if s.Pinning.Off {
		v.fail("pinning.off", "mode: %s needs CPU pinning, to place each side's services on CPUs toll chose; leave pinning.off out, or leave mode out to alternate the load between variants", s.Mode)
		return
	}
	online := len(v.m.online)
	if online == 0 {
		return // the machine's CPUs are unknown: toll run says so
	}
	switch {
	case s.Pinning.Duet == DuetShared && online < MinSharedDuetCPUs:
		what := "duet with pinning.duet: shared"
		if s.Mode == ModeTogether {
			what = "together"
		}
		v.fail("mode", "%s needs at least %d CPUs (1 for toll, the rest shared by every side); %s", what, MinSharedDuetCPUs, v.onlineCPUs())
	case s.Pinning.Duet == DuetSplit && online < MinDuetCPUs:
		v.fail("mode", "duet with pinning.duet: split (the default) runs the baseline and a variant at the same time on disjoint CPU sets and needs at least %d CPUs (1 for toll, the rest split evenly); %s. Set pinning: {duet: shared} to run both sides on the same CPUs, or leave mode out: toll then runs a shared duet in precision mode, and alternates the load between variants otherwise", MinDuetCPUs, v.onlineCPUs())
	}
}

// matrix checks a load test's matrix: each CPU limit a quota the machine
// can give, listed once.
func (v *validator) matrix(m *Matrix) {
	if v.present("matrix.cpus") && len(m.CPUs) == 0 {
		v.fail("matrix.cpus", "is empty; list CPU limits in cores (cpus: [1, 2]) or leave matrix out")
	}
	v.count("matrix.cpus", len(m.CPUs), MaxCPULimits, "CPU limits", "each repeats the whole experiment")
	seen := map[float64]bool{}
	for i, c := range m.CPUs {
		f := fmt.Sprintf("matrix.cpus[%d]", i)
		online := len(v.m.online)
		switch {
		case c < MinCPULimit:
			v.fail(f, "%s cores is below the least of %s: the kernel's smallest CPU quota is 1ms per toll's 100ms period", fmtFloat(c), fmtFloat(MinCPULimit))
		case online > 0 && c > float64(online):
			v.fail(f, "%s cores is more than the %d CPUs toll may use (%s)", fmtFloat(c), online, v.m.online)
		case seen[c]:
			v.fail(f, "%s cores is listed twice", fmtFloat(c))
		}
		seen[c] = true
	}
}

func (v *validator) pinning(s *Scenario) {
	p := s.Pinning
	if p.Load != "" || v.present("pinning.load") {
		v.cpuList("pinning.load", p.Load, "0 or 0-1,3")
	}
	if p.Services != "" || v.present("pinning.services") {
		v.cpuList("pinning.services", p.Services, "1 or 1-3")
	}
	if !v.present("pinning.warmup") {
		return
	}
	const f = "pinning.warmup"
	switch {
	case p.Warmup != WarmupAllCPUs:
		v.fail(f, "%q is not all (leave it out to keep services on their own CPUs during the warm-up)", p.Warmup)
	case p.Off:
		v.fail(f, "places services on CPUs, and pinning.off leaves them unpinned")
	case s.Load.VariantWarmup <= 0 && !v.warmupChosen(s):
		v.fail(f, "places services during load.variant_warmup, and there is none: set load.variant_warmup (e.g. 2m)")
	default:
		for i, svc := range s.Services {
			if svc.Image != "" {
				v.fail(f, "service %s runs in a container (services[%d].image), whose CPUs toll sets once at its start; leave pinning.warmup out", svc.Name, i)
				return
			}
		}
	}
}

// container checks the fields of a service that runs as a container.
func (v *validator) container(p string, svc *Service) {
	switch {
	case svc.Image == "":
		v.fail(p+".image", "is empty: name a local image, e.g. localhost/app:1, or leave image out to run command as a process")
	case len(svc.Image) > MaxImageLen:
		v.fail(p+".image", "%q is %d bytes long, above the %d that image references may have", svc.Image, len(svc.Image), MaxImageLen)
	case !reImage.MatchString(svc.Image):
		v.fail(p+".image", "%q is not an image reference (registry/name:tag or name@sha256:digest: letters, digits and . _ : / @ + -, not starting with '-')", svc.Image)
	}
	switch svc.Engine {
	case "":
		svc.Engine = EngineAuto
	case EngineAuto, EnginePodman, EngineDocker:
	default:
		v.fail(p+".engine", "%q is not auto, podman or docker", svc.Engine)
	}
	if len(svc.Command) > 0 && svc.Command[0] == "" {
		v.fail(p+".command", "the first word is empty: leave command out to run the image's own")
	}
	if svc.Dir != "" && !strings.HasPrefix(svc.Dir, "/") {
		v.fail(p+".dir", "%q: with image, dir is the working directory inside the container and must be absolute", svc.Dir)
	}
	for _, k := range slices.Sorted(maps.Keys(svc.Env)) {
		if strings.ContainsAny(svc.Env[k], "\n") {
			v.fail(p+".env."+k, "holds a line break, which a container engine's --env cannot pass")
		}
	}
	v.count(p+".ports", len(svc.Ports), MaxPorts, "ports", "each is a listener the engine holds on the host, for every variant")
	byPort := map[int]string{}
	for _, name := range slices.Sorted(maps.Keys(svc.Ports)) {
		port, f := svc.Ports[name], p+".ports."+name
		switch {
		case !reName.MatchString(name):
			v.fail(f, "%q is not a port name for ${port:NAME} (letters, digits, . _ -, starting with a letter or digit)", name)
		case port < 1 || port > 65535:
			v.fail(f, "%d is not a TCP port (1 to 65535): give the port the image listens on inside the container", port)
		case byPort[port] != "":
			v.fail(f, "container port %d is published as %s already: a port is published once", port, byPort[port])
		}
		byPort[port] = name
	}
}

// publishedReach checks that a container with ports, which runs on its
// engine's network, names no address on toll's loopback: there 127.0.0.1 is
// the container's own, and toll's sink and the other services, which listen
// on the host's loopback, cannot be reached.
func (v *validator) publishedReach(s *Scenario) {
	check := func(field, str string, svc *Service) {
		for _, m := range rePlaceholder.FindAllStringSubmatch(str, -1) {
			key := m[1]
			name, isPort := strings.CutPrefix(key, "port:")
			_, own := svc.Ports[name]
			if key == "sink" || key == "sink_addr" || isPort && !own {
				v.fail(field, "${%s} is an address on the host's loopback, which a container with ports cannot reach: it runs on its engine's network, where 127.0.0.1 is its own; leave ports out to run it on the host's network (its command then listens on ${port:NAME} itself)", key)
			}
		}
	}
	for i := range s.Services {
		svc := &s.Services[i]
		if len(svc.Ports) == 0 || svc.Image == "" {
			continue
		}
		p := fmt.Sprintf("services[%d]", i)
		for j, a := range svc.Command {
			check(fmt.Sprintf("%s.command[%d]", p, j), a, svc)
		}
		for _, k := range slices.Sorted(maps.Keys(svc.Env)) {
			check(p+".env."+k, svc.Env[k], svc)
		}
		for j, sv := range s.Variants {
			o, ok := sv.Services[svc.Name]
			if !ok {
				continue
			}
			q := fmt.Sprintf("variants[%d].services.%s", j, svc.Name)
			for k, a := range o.Command {
				check(fmt.Sprintf("%s.command[%d]", q, k), a, svc)
			}
			for k, a := range o.Args {
				check(fmt.Sprintf("%s.args[%d]", q, k), a, svc)
			}
			for _, k := range slices.Sorted(maps.Keys(o.Env)) {
				check(q+".env."+k, o.Env[k], svc)
			}
		}
	}
}

func (v *validator) services(s *Scenario) {
	if len(s.Services) == 0 {
		v.fail("services", "at least one service is required")
		return
	}
	v.count("services", len(s.Services), MaxServices, "services", "with restart: once every variant's services run side by side")
	seen := map[string]bool{}
	measured := 0
	for i := range s.Services {
		svc := &s.Services[i]
		p := fmt.Sprintf("services[%d]", i)
		switch {
		case svc.Name == "":
			v.fail(p, "name is required")
		case seen[svc.Name]:
			v.fail(p+".name", "service %q is defined twice", svc.Name)
		default:
			v.name(p+".name", svc.Name)
		}
		seen[svc.Name] = true
		if svc.Image != "" || v.present(p+".image") {
			v.container(p, svc)
		} else {
			if svc.Engine != "" {
				v.fail(p+".engine", "engine runs an image: set image, or leave engine out for a process")
			}
			if len(svc.Ports) > 0 {
				v.fail(p+".ports", "ports publishes a container's ports: set image, or leave ports out and let the process listen on ${port:NAME} itself")
			}
		}
		if svc.Image == "" && (len(svc.Command) == 0 || svc.Command[0] == "") {
			v.fail(p, "command is required (service %q)", svc.Name)
		}
		for j, a := range svc.Command {
			v.noNUL(fmt.Sprintf("%s.command[%d]", p, j), a)
			v.placeholders(fmt.Sprintf("%s.command[%d]", p, j), a)
		}
		v.env(p+".env", svc.Env)
		v.noNUL(p+".dir", svc.Dir)
		switch {
		case svc.Image != "":
			// A path inside the container; the image's own when empty.
		case svc.Dir == "":
			svc.Dir = dirOf(v.file)
		case !filepath.IsAbs(svc.Dir):
			svc.Dir = filepath.Join(dirOf(v.file), svc.Dir)
		}
		switch svc.Role {
		case "":
			svc.Role = RoleApp
		case RoleApp, RoleAgent:
		default:
			v.fail(p+".role", "%q is not app or agent", svc.Role)
		}
		if n := btoi(svc.Ready.HTTP != "") + btoi(svc.Ready.TCP != "") + btoi(svc.Ready.Log != "") + btoi(len(svc.Ready.Command) > 0); n > 1 {
			v.fail(p+".ready", "set one of http, tcp, log or command, not %d", n)
		}
		if v.present(p+".ready.command") && (len(svc.Ready.Command) == 0 || svc.Ready.Command[0] == "") {
			v.fail(p+".ready.command", "is empty; give a command, e.g. [curl, -sf, http://127.0.0.1:9090/ready]")
		}
		for j, a := range svc.Ready.Command {
			v.noNUL(fmt.Sprintf("%s.ready.command[%d]", p, j), a)
			v.placeholders(fmt.Sprintf("%s.ready.command[%d]", p, j), a)
		}
		if svc.Scrape != nil {
			v.scrape(p+".scrape", svc.Scrape)
		}
		if svc.NMT && svc.Image != "" {
			v.fail(p+".nmt", "reads a JVM's Native Memory Tracking with the host's jcmd, which cannot attach to a JVM in a container (its own /tmp); run the service as a process, or leave nmt out")
		}
		if svc.Ready.Log != "" {
			v.noNUL(p+".ready.log", svc.Ready.Log)
			if len(svc.Ready.Log) > MaxReadyLog {
				v.fail(p+".ready.log", "is %d bytes long; at most %d (it is matched against every line the service writes until it is ready)", len(svc.Ready.Log), MaxReadyLog)
			} else if _, err := regexp.Compile(svc.Ready.Log); err != nil {
				v.fail(p+".ready.log", "%q is not a regular expression: %v", svc.Ready.Log, err)
			}
		}
		if svc.Ready.HTTP != "" {
			v.url(p+".ready.http", svc.Ready.HTTP)
		}
		if svc.Ready.TCP != "" {
			v.placeholders(p+".ready.tcp", svc.Ready.TCP)
			if _, _, err := net.SplitHostPort(expandForCheck(svc.Ready.TCP)); err != nil || strings.ContainsFunc(svc.Ready.TCP, isSpaceOrControl) {
				v.fail(p+".ready.tcp", "%q is not host:port", svc.Ready.TCP)
			}
		}
		if !v.present(p + ".ready.timeout") {
			svc.Ready.Timeout = Duration(DefaultReadyTimeout)
		}
		v.duration(p+".ready.timeout", svc.Ready.Timeout)
		if svc.CPUs != "" || v.present(p+".cpus") {
			v.cpuList(p+".cpus", svc.CPUs, "1 or 1-3")
		}
		v.limits(p, svc)
		if sigs := stopSignals(); sigs[svc.StopSignal] == 0 && (svc.StopSignal != "" || v.present(p+".stop_signal")) {
			v.fail(p+".stop_signal", "%q is not one of %s", svc.StopSignal, strings.Join(slices.Sorted(maps.Keys(sigs)), ", "))
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

// scrape checks a service's scrape: a URL, and between one and MaxScrapeMetrics
// metric names of Prometheus's syntax.
func (v *validator) scrape(p string, sc *Scrape) {
	if sc.URL == "" {
		v.fail(p+".url", "is required, e.g. http://127.0.0.1:${port:agent}/metrics")
	} else {
		v.url(p+".url", sc.URL)
	}
	if len(sc.Metrics) == 0 {
		v.fail(p+".metrics", "name at least one metric to keep, e.g. [otelcol_receiver_accepted_spans]")
	}
	v.count(p+".metrics", len(sc.Metrics), MaxScrapeMetrics, "metrics", "each becomes a row of every report")
	seen := map[string]bool{}
	for j, m := range sc.Metrics {
		f := fmt.Sprintf("%s.metrics[%d]", p, j)
		switch {
		case !rePromName.MatchString(m):
			v.fail(f, "%q is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)", m)
		case seen[m]:
			v.fail(f, "%q is listed twice", m)
		}
		seen[m] = true
	}
	if !v.present(p + ".timeout") {
		sc.Timeout = Duration(DefaultScrapeTimeout)
	}
	v.duration(p+".timeout", sc.Timeout)
}

// limits checks a service's cpu_limit and memory_limit: when set, they
// must be positive and within the machine.
func (v *validator) limits(p string, svc *Service) {
	v.cpuLimit(p+".cpu_limit", svc.CPULimit)
	v.memoryLimit(p+".memory_limit", svc.MemoryLimit)
}

// cpuLimit checks a cpu_limit field, when set: a positive number of cores
// within the machine.
func (v *validator) cpuLimit(f string, c float64) {
	if !v.present(f) {
		return
	}
	online := len(v.m.online)
	switch {
	case c <= 0:
		v.fail(f, "%s is not a positive number of cores (leave cpu_limit out for no limit)", fmtFloat(c))
	case c < MinCPULimit:
		v.fail(f, "%s cores is below the least of %s: the kernel's smallest CPU quota is 1ms per toll's 100ms period", fmtFloat(c), fmtFloat(MinCPULimit))
	case online > 0 && c > float64(online):
		v.fail(f, "%s cores is more than the %d CPUs toll may use (%s)", fmtFloat(c), online, v.m.online)
	}
}

// memoryLimit checks a memory_limit field, when set: at least 1MiB and
// within the machine's memory.
func (v *validator) memoryLimit(f string, m ByteSize) {
	if !v.present(f) {
		return
	}
	switch {
	case m <= 0:
		v.fail(f, "%d bytes is not a limit (leave memory_limit out for no limit)", m)
	case m < MinMemoryLimit:
		v.fail(f, "%d bytes is below the least of 1MiB, which does not hold a process's own binary", m)
	case v.m.memTotal > 0 && int64(m) > v.m.memTotal:
		v.fail(f, "%d bytes is more than this machine's memory (%d MiB), so it would limit nothing", m, v.m.memTotal>>20)
	}
}

// btoi is 1 for true and 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// isSpaceOrControl reports whether r has no place in an address or a
// request line.
func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

func (v *validator) variants(s *Scenario) {
	if len(s.Variants) == 0 {
		s.Variants = []Variant{{Name: s.Baseline}}
	}
	v.count("variants", len(s.Variants), MaxVariants, "variants", "with restart: once they all run side by side, each with a telemetry sink of its own")
	seen := map[string]bool{}
	for i := range s.Variants {
		vr := &s.Variants[i]
		p := fmt.Sprintf("variants[%d]", i)
		switch {
		case vr.Name == "":
			v.fail(p, "name is required")
		case seen[vr.Name]:
			v.fail(p+".name", "variant %q is defined twice", vr.Name)
		default:
			v.name(p+".name", vr.Name)
		}
		seen[vr.Name] = true
		for _, name := range slices.Sorted(maps.Keys(vr.Services)) {
			o := vr.Services[name]
			op := p + ".services." + name
			if _, ok := s.Service(name); !ok {
				v.fail(op, "no service named %q%s", name, DidYouMean(name, serviceNames(s)))
			}
			for j, a := range o.Command {
				v.noNUL(fmt.Sprintf("%s.command[%d]", op, j), a)
				v.placeholders(fmt.Sprintf("%s.command[%d]", op, j), a)
			}
			for j, a := range o.Args {
				v.noNUL(fmt.Sprintf("%s.args[%d]", op, j), a)
				v.placeholders(fmt.Sprintf("%s.args[%d]", op, j), a)
			}
			v.env(op+".env", o.Env)
			v.cpuLimit(op+".cpu_limit", o.CPULimit)
			v.memoryLimit(op+".memory_limit", o.MemoryLimit)
		}
		v.cpuLimit(p+".cpu_limit", vr.CPULimit)
		v.memoryLimit(p+".memory_limit", vr.MemoryLimit)
		if vr.Load.Target != "" {
			v.url(p+".load.target", vr.Load.Target)
			if u, err := url.Parse(expandForCheck(vr.Load.Target)); err == nil && (u.RawQuery != "" || u.Fragment != "") {
				v.fail(p+".load.target", "%q has a query or fragment; requests' paths are appended to it, so put queries in the paths", vr.Load.Target)
			}
		} else if v.present(p + ".load.target") {
			v.fail(p+".load.target", "is empty; leave it out to use load.target")
		}
		for j, name := range vr.Skip {
			if _, ok := s.Service(name); !ok {
				v.fail(fmt.Sprintf("%s.skip[%d]", p, j), "no service named %q%s", name, DidYouMean(name, serviceNames(s)))
			}
		}
	}
	v.variantServiceNames(s)
	if !seen[s.Baseline] {
		v.fail("variants", "no variant is named %q (the baseline)%s", s.Baseline, DidYouMean(s.Baseline, variantNames(s)))
	}
	if s.Control {
		if seen[ControlVariant] {
			v.fail("control", "adds a variant named %q, and one is defined already; rename it", ControlVariant)
		}
		v.count("variants", len(s.Variants)+1, MaxVariants, "variants with the control", "with restart: once they all run side by side, each with a telemetry sink of its own")
	}
}

// variantServiceNames refuses two variants whose services would share a
// name "variant.service" (variant baseline with service y.z, variant
// baseline.y with service z): each running service's cgroup and log file
// are named so, and the second would fail to start, or write into the
// first's log.
func (v *validator) variantServiceNames(s *Scenario) {
	type owner struct {
		i                int
		variant, service string
	}
	seen := map[string]owner{}
	for i, vr := range s.Variants {
		for _, svc := range s.Services {
			full := vr.Name + "." + svc.Name
			o, ok := seen[full]
			if !ok {
				seen[full] = owner{i, vr.Name, svc.Name}
				continue
			}
			if o.variant == vr.Name {
				continue // a service defined twice is refused as such
			}
			v.fail(fmt.Sprintf("variants[%d].name", i), "variant %q with service %q and variant %q with service %q (variants[%d]) both make %q, the name of a service's cgroup and log file; rename one of the variants", vr.Name, svc.Name, o.variant, o.service, o.i, full)
			return
		}
	}
}

// ControlVariant names the A/A control variant that control: true adds.
const ControlVariant = "control"

// load checks the load block and fills in its defaults. generators is how
// many load generators run at once (one per side of a concurrent mode).
func (v *validator) load(l *Load, generators int) {
	// A run whose every step is idle (rate: 0) sends no request, and
	// needs neither a target nor requests.
	idleOnly := (v.present("load.rate") || len(l.Rates) > 0) && len(l.Users) == 0 && l.AllIdle()
	switch {
	case l.Target == "" && idleOnly:
	case l.Target == "":
		v.fail("load.target", "is required (the base URL requests go to)")
	default:
		v.url("load.target", l.Target)
		if u, err := url.Parse(expandForCheck(l.Target)); err == nil && (u.RawQuery != "" || u.Fragment != "") {
			v.fail("load.target", "%q has a query or fragment; requests' paths are appended to it, so put queries in the paths", l.Target)
		}
	}
	if len(l.Requests) == 0 && !idleOnly {
		v.fail("load.requests", "at least one request is required")
	}
	v.requests(l.Requests)
	v.loadModel(l, generators)
	if err := CheckArrival(l.Arrival); v.present("load.arrival") && err != nil {
		v.fail("load.arrival", "%s", err)
	}
	switch l.ThinkDistribution {
	case "", "constant", "exponential":
	default:
		v.fail("load.think_distribution", "%q is not one of constant, exponential", l.ThinkDistribution)
	}
	if l.Duration == 0 {
		v.fail("load.duration", "is required (the measured window of each trial, e.g. 30s)")
	}
	if !v.present("load.warmup") && l.Warmup == 0 { // unless toll chose one (schedule)
		l.Warmup = Duration(DefaultWarmup)
	}
	if !v.present("load.timeout") {
		l.Timeout = Duration(DefaultTimeout)
	}
	for _, d := range []struct {
		field string
		d     Duration
	}{{"load.duration", l.Duration}, {"load.warmup", l.Warmup}, {"load.variant_warmup", l.VariantWarmup}, {"load.timeout", l.Timeout}, {"load.think", l.Think}, {"load.ramp", l.Ramp}} {
		v.duration(d.field, d.d)
	}
	if l.Quantum != nil {
		v.duration("load.quantum", *l.Quantum)
	}
	if u := l.VariantWarmupUntil; u != nil {
		v.warmupUntil(l, u)
	}
	if v.present("load.variant_warmup_rate") || v.present("load.variant_warmup_users") {
		v.warmupLoad(l, generators)
	}
	if idleOnly && l.VariantWarmup > 0 {
		v.fail("load.variant_warmup", "warms each variant's services with load before its first loaded trial, and every step of this scenario is idle (rate 0); leave it out, or add a rate")
	}
	switch {
	case !v.present("load.max_conns"):
		l.MaxConns = DefaultMaxConns
	case l.MaxConns < 1:
		v.fail("load.max_conns", "must be at least 1, not %d (leave max_conns out for the default of %d)", l.MaxConns, DefaultMaxConns)
	default:
		if err := checkConns(v.m, l.MaxConns, generators, 1, "connections"); err != nil {
			v.fail("load.max_conns", "%s", err)
		}
	}
}

// requests checks the load's requests and fills in their defaults: path,
// name, method and weight.
func (v *validator) requests(reqs []Request) {
	v.count("load.requests", len(reqs), MaxRequests, "requests", "each gets latency and error rows of its own in every report")
	names := map[string]bool{}
	weights := 0
	for i := range reqs {
		r := &reqs[i]
		p := fmt.Sprintf("load.requests[%d]", i)
		if r.Path == "" {
			r.Path = "/"
		}
		if err := checkPath(r.Path); err != nil {
			v.fail(p+".path", "%s", err)
		}
		if r.Name == "" {
			r.Name = r.Path
		} else if err := checkText(r.Name, MaxRequestNameLen); err != nil {
			v.fail(p+".name", "%s", err)
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
		switch {
		case !v.present(p + ".weight"):
			r.Weight = 1
		case r.Weight < 1:
			v.fail(p+".weight", "must be at least 1, not %d (leave the request out instead)", r.Weight)
		case r.Weight > MaxWeights:
			v.fail(p+".weight", "%d is above toll's limit of %d: the load generator keeps one period of the mix (the sum of the weights) in memory; use smaller weights in the same ratio", r.Weight, MaxWeights)
		}
		weights += max(r.Weight, 0)
		if err := CheckBody(len(r.Body)); err != nil {
			v.fail(p+".body", "%s", err)
		}
		v.requestPlaceholders(p+".path", r.Path)
		v.requestPlaceholders(p+".body", r.Body)
		canonical := map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
			hp := p + ".headers." + k
			if err := CheckHeader(k, r.Headers[k]); err != nil {
				v.fail(hp, "%s", err)
			}
			if other, ok := canonical[http.CanonicalHeaderKey(k)]; ok {
				v.fail(hp, "is the same header as %s (names ignore case)", other)
			}
			canonical[http.CanonicalHeaderKey(k)] = k
			v.requestPlaceholders(hp, r.Headers[k])
		}
	}
	if weights > MaxWeights {
		v.fail("load.requests", "the weights add up to %d, above toll's limit of %d: the load generator keeps one period of the mix in memory; use smaller weights in the same ratio", weights, MaxWeights)
	}
}

// loadModel checks the load's model: users (closed) or rate/rates (open),
// and that the fields of the other model are not set.
func (v *validator) loadModel(l *Load, generators int) {
	switch {
	case len(l.Users) > 0 && (v.present("load.rate") || len(l.Rates) > 0):
		v.fail("load.users", "set users (closed model) or rate/rates (open model), not both")
	case len(l.Users) > 0:
		v.count("load.users", len(l.Users), MaxSteps, "load steps", "each is a trial of every variant in every round")
		for i, u := range l.Users {
			f := "load.users"
			if v.present("load.users[0]") {
				f = fmt.Sprintf("load.users[%d]", i)
			}
			v.users(f, u, generators)
		}
	case len(l.Rates) > 0 && v.present("load.rate"):
		v.fail("load.rates", "set rate or rates, not both")
	case len(l.Rates) > 0:
		v.count("load.rates", len(l.Rates), MaxSteps, "load steps", "each is a trial of every variant in every round")
		for i, r := range l.Rates {
			v.rate(fmt.Sprintf("load.rates[%d]", i), r, l.Duration)
		}
	case l.Rate == 0 && !v.present("load.rate"):
		v.fail("load.rate", "is required: a number of requests per second (open model; 0 measures the services idle), or set users (closed model)")
	default:
		v.rate("load.rate", l.Rate, l.Duration)
	}
	if len(l.Users) == 0 {
		for _, f := range []struct {
			name string
			set  bool
		}{{"think", v.present("load.think")}, {"think_distribution", v.present("load.think_distribution")}, {"ramp", v.present("load.ramp")}} {
			if f.set {
				v.fail("load."+f.name, "applies to the closed model only (set users)")
			}
		}
	} else {
		for _, f := range []string{"quantum", "max_conns", "arrival"} {
			if v.present("load." + f) {
				v.fail("load."+f, "applies to the open model only (rate or rates)")
			}
		}
	}
}

// slice checks a sliced duet's turn (load.slice): a duration that both
// sides' turns fit a whole number of times into a second, so that every
// second of a window holds the same share of each side's load, in a shared
// duet of open-model steps; mode is the scenario's.
func (v *validator) slice(l *Load, mode string, sharedDuet bool) {
	const f = "load.slice"
	d := l.Slice.D()
	switch {
	case CheckDuration(f, d) != nil:
		v.duration(f, l.Slice)
	case time.Second%(2*d) != 0:
		v.fail(f, "%s does not divide a second into whole turns of both sides (each side's turn and the other's make %s); use 250ms, 100ms, 50ms or another divisor of 500ms", d, 2*d)
	case mode == ModeTogether:
		v.fail(f, "makes the two sides of a shared duet take turns; mode: together loads every variant at once, each side a fraction of an interval behind the one before, with no turns: set mode: duet, or leave slice out")
	case !sharedDuet:
		v.fail(f, "makes the two sides of a shared duet take turns; set mode: duet and pinning: {duet: shared}, or leave slice out")
	case len(l.Users) > 0:
		v.fail(f, "applies to the open model only (rate or rates): closed-model users send as fast as they are answered, with no schedule to slice")
	}
}

// warmupUntil checks the end condition of a variant warm-up: both figures
// set and bounded, and a maximum (load.variant_warmup) longer than the
// window, or the warm-up could never end before it.
func (v *validator) warmupUntil(l *Load, u *WarmupUntil) {
	const f = "load.variant_warmup_until"
	switch {
	case !v.present(f + ".jit_below"):
		v.fail(f, "needs jit_below, the JIT compile time per second below which a JVM has settled (e.g. {jit_below: 5ms, over: 10s})")
	default:
		v.duration(f+".jit_below", u.JITBelow)
	}
	switch {
	case !v.present(f + ".over"):
		v.fail(f, "needs over, the trailing window the JIT rate is taken over (e.g. {jit_below: 5ms, over: 10s})")
	default:
		v.duration(f+".over", u.Over)
	}
	switch {
	case l.VariantWarmup <= 0:
		v.fail(f, "ends load.variant_warmup early, and there is none: set load.variant_warmup to the most the warm-up may last (e.g. 5m)")
	case u.Over >= l.VariantWarmup:
		v.fail(f+".over", "%s is not shorter than load.variant_warmup (%s), so the warm-up could never settle before its maximum", u.Over, l.VariantWarmup)
	}
}

// warmupLoad checks the load of a variant warm-up, a rate or users, that
// toll can send (users from each of generators load generators at once),
// for a warm-up there is; a rate under an open model. Both are one warm-up
// in phases, the users, the rate and then each trial's own load, each until
// the JIT settles: only with load.variant_warmup_until.
func (v *validator) warmupLoad(l *Load, generators int) {
	rate, users := v.present("load.variant_warmup_rate"), v.present("load.variant_warmup_users")
	f := "load.variant_warmup_rate"
	if !rate {
		f = "load.variant_warmup_users"
	}
	switch {
	case rate && users && l.VariantWarmupUntil == nil:
		v.fail("load.variant_warmup_users", "with load.variant_warmup_rate warms by the users, then at the rate, then at each trial's load, each until the JIT settles, and there is no load.variant_warmup_until to say when; add it (e.g. {jit_below: 5ms, over: 10s}), or keep one of the two")
	case l.VariantWarmup <= 0:
		v.fail(f, "is the load of load.variant_warmup, and there is none: set load.variant_warmup to how long the warm-up lasts (e.g. 1m)")
	}
	if users {
		v.users("load.variant_warmup_users", l.VariantWarmupUsers, generators)
	}
	if !rate {
		return
	}
	if len(l.Users) > 0 {
		v.fail("load.variant_warmup_rate", "is an open-model rate, and this load is closed-model users (load.users); use load.variant_warmup_users, or leave it out")
	} else if err := CheckRate(l.VariantWarmupRate); err != nil {
		v.fail("load.variant_warmup_rate", "%s", err)
	}
}

// users checks a number of closed-model users at field: positive, and each
// with a connection and a timer from each of generators load generators.
func (v *validator) users(field string, n, generators int) {
	if n <= 0 {
		v.fail(field, "must be a positive number of users, not %d", n)
	} else if err := checkConns(v.m, n, generators, 2, "users"); err != nil {
		v.fail(field, "%s", err)
	}
}

// rate checks the rate of one open-model load step, which must also send
// at least one request in a window of length window.
func (v *validator) rate(field string, rate float64, window Duration) {
	if rate == 0 {
		return // an idle step: the services' static cost, with no load
	}
	if err := CheckRate(rate); err != nil {
		v.fail(field, "%s", err)
		return
	}
	if window > 0 && rate*window.D().Seconds() < 1 {
		v.fail(field, "%s req/s sends no request in a %s window", fmtFloat(rate), window)
	}
}

// findMax checks the find_max block and fills in its defaults.
func (v *validator) findMax(f *FindMax, l *Load) {
	if !v.present("find_max.slo_p99") {
		f.SLOP99 = Duration(100 * time.Millisecond)
	}
	v.duration("find_max.slo_p99", f.SLOP99)
	if !v.present("find_max.start") {
		f.Start = 100
		if l.Rate > 0 {
			f.Start = l.Rate
		} else if i := slices.IndexFunc(l.Rates, func(r float64) bool { return r > 0 }); i >= 0 {
			f.Start = l.Rates[i] // an idle step has no rate to start from
		}
	}
	if err := CheckRate(f.Start); err != nil {
		v.fail("find_max.start", "%s", err)
	}
	if !v.present("find_max.precision") {
		f.Precision = 0.05
	}
	if !(f.Precision >= 0.001 && f.Precision < 1) {
		v.fail("find_max.precision", "must be between 0.001 and 1 (a share of the rate, e.g. 0.05)")
	}
	if !v.present("find_max.max_trials") {
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

// placeholders checks that every ${...} in s is one toll knows, and that
// every ${ is closed.
func (v *validator) placeholders(field, s string) {
	if err := unterminated(s); err != nil {
		v.fail(field, "%s", err)
		return
	}
	for _, m := range rePlaceholder.FindAllStringSubmatch(s, -1) {
		if err := checkPlaceholder(m[1]); err != nil {
			v.fail(field, "%s", err)
		}
	}
}

// requestPlaceholders checks the placeholders of a load request, which may
// also hold ${id}, the request's number.
func (v *validator) requestPlaceholders(field, s string) {
	if err := unterminated(s); err != nil {
		v.fail(field, "%s", err)
		return
	}
	for _, m := range rePlaceholder.FindAllStringSubmatch(s, -1) {
		if m[1] == "id" {
			continue
		}
		if err := checkPlaceholder(m[1]); err != nil {
			v.fail(field, "%s (and in requests ${id})", err)
		}
	}
}

// unterminated reports a ${ in s that no } closes, such as
// "${port:provider": left as it is, it would reach the service literally.
func unterminated(s string) error {
	rest := rePlaceholder.ReplaceAllString(s, "")
	i := strings.Index(rest, "${")
	if i < 0 {
		return nil
	}
	open := rest[i:]
	if len(open) > 40 {
		open = open[:40] + "…"
	}
	return fmt.Errorf("unterminated placeholder %q: a placeholder ends with } (known: ${port:NAME}, ${listen}, ${sink}, ${sink_addr}, ${toll}, ${variant})", open)
}

func checkPlaceholder(p string) error {
	switch {
	case p == "sink", p == "sink_addr", p == "toll", p == "variant", p == "listen":
		return nil
	case strings.HasPrefix(p, "port:") && reName.MatchString(strings.TrimPrefix(p, "port:")):
		return nil
	}
	own := ""
	if reVarName.MatchString(p) {
		own = fmt.Sprintf("; a value of your own: toll run --set %s=VALUE", p)
	}
	return fmt.Errorf("unknown placeholder ${%s} (known: ${port:NAME}, ${listen}, ${sink}, ${sink_addr}, ${toll}, ${variant}%s)", p, own)
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
		if m == "${sink_addr}" {
			return "127.0.0.1:1"
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

// serviceNames returns the names of s's services, in order.
func serviceNames(s *Scenario) []string {
	var names []string
	for _, sv := range s.Services {
		names = append(names, sv.Name)
	}
	return names
}

// variantNames returns the names of s's variants, in order.
func variantNames(s *Scenario) []string {
	var names []string
	for _, vr := range s.Variants {
		names = append(names, vr.Name)
	}
	return names
}
