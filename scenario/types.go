package scenario

import (
	"fmt"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Scenario is one parsed and validated scenario file.
type Scenario struct {
	// Name names the run; results go to results/<Name>-<UTC time>/.
	Name string `yaml:"name"`
	// Description is free text shown in reports.
	Description string `yaml:"description"`
	// Services are started in order and stopped in reverse order.
	Services []Service `yaml:"services"`
	// Variants are the ways to run the services; the first one named
	// Baseline (default "baseline") is the reference.
	Variants []Variant `yaml:"variants"`
	// Baseline names the reference variant (default "baseline").
	Baseline string `yaml:"baseline"`
	// Load is the traffic sent to each variant.
	Load Load `yaml:"load"`
	// Rounds is how many times every variant runs every load step: a
	// fixed design. A load test that leaves it out runs in precision mode
	// (Precision) instead; DefaultRounds for any other experiment.
	Rounds int `yaml:"rounds"`
	// Precision asks for intervals of a given width within a time budget
	// instead of a fixed number of rounds (docs/precision.md).
	Precision Precision `yaml:"precision"`
	// Seed fixes the random order of variants within rounds, and Poisson
	// arrivals (load.arrival); 0 picks one
	// (recorded in the manifest so a run can be repeated).
	Seed int64 `yaml:"seed"`
	// Restart says when services are started afresh: "once" (default: every
	// variant runs side by side for the whole run and the load alternates
	// between them, trial by trial), "per-round" or "per-trial". Short
	// alternating trials pair best against a machine whose speed drifts;
	// see docs/method.md.
	Restart string `yaml:"restart"`
	// Starts is how many times a load test that starts its services once
	// (restart: once) starts them over the run (default 1): its rounds are
	// split into Starts spans of consecutive rounds, each under a fresh
	// start of every variant, with its own variant warm-up. What differs
	// between two starts of one program (a JVM's compiled code) then
	// varies within the run, and the intervals carry it divided among the
	// starts (docs/method.md, "Two starts of one JVM"), as a JMH fork does.
	Starts int `yaml:"starts"`
	// Mode is "sequential" (default: one variant under load at a time),
	// "duet": the baseline and each variant under identical load at the same
	// time, on disjoint CPU sets (needs at least 4 CPUs) or, with
	// pinning.duet: shared, on the same ones, or "together": the baseline
	// and every variant under identical load at the same time, all on the
	// services' CPUs (a shared duet of every variant at once).
	Mode string `yaml:"mode"`
	// Schedule records what toll chose of the mode and restart policy
	// where the scenario names neither, in precision mode (set by
	// validation).
	Schedule Schedule `yaml:"-"`
	// Trim drops the start and end of every measured window from the analysis.
	Trim Trim `yaml:"trim"`
	// Sample is the probe interval (default 1s, at least 100ms).
	Sample Duration `yaml:"sample"`
	// Pinning places services and toll's own load generator on CPUs.
	Pinning Pinning `yaml:"pinning"`
	// FindMax sets the search of `toll run --find-max` for each variant's
	// maximum sustainable rate.
	FindMax FindMax `yaml:"find_max"`
	// Network is "host" (default: services share the machine's network) or
	// "isolated": the whole run (services, load generator, telemetry sinks)
	// happens in a network namespace of its own that holds only loopback,
	// so nothing a service sends can leave the machine. Needs root.
	Network string `yaml:"network"`
	// Startup makes the run a start-up experiment instead of a load test:
	// each variant's services are started from cold Startup.Repetitions
	// times, interleaved across variants, and every start is measured.
	Startup *Startup `yaml:"startup"`
	// Job makes the run a fixed-work experiment: Job.Command is run
	// Job.Repetitions times per variant, interleaved, each in a cgroup of
	// its own, while the services (a broker, a database) run throughout.
	Job *Job `yaml:"job"`
	// Control adds an A/A control to the run: a variant named
	// ControlVariant, a copy of the baseline, measured beside the others.
	// Whatever the method does to any variant that is not the baseline
	// (its place in a duet or a round, a baseline that runs twice per
	// round) it does to the control too, so each variant's interval is
	// taken against the baseline corrected by the control's, and a bias
	// the method has in this run cannot pass for a cost.
	Control bool `yaml:"control"`
	// Kubernetes sets how the scenario runs in a cluster (toll run
	// --kubernetes, toll k8s render); a local run ignores it.
	Kubernetes *Kubernetes `yaml:"kubernetes"`
	// Matrix repeats a load test under each of a list of settings (CPU
	// limits), reported side by side as load steps are.
	Matrix Matrix `yaml:"matrix"`
	// Report sets how the run's reports are rendered.
	Report Report `yaml:"report"`

	// Path is the file the scenario was read from.
	Path string `yaml:"-"`
	// Source is the file's content, kept for the results directory.
	Source []byte `yaml:"-"`
}

// Workloads: what a trial does to a variant.
const (
	// WorkloadLoad drives steady HTTP load at the started services.
	WorkloadLoad = "load"
	// WorkloadStartup starts the services from cold and measures the start.
	WorkloadStartup = "startup"
	// WorkloadJob runs a command that does a fixed amount of work and exits.
	WorkloadJob = "job"
)

// Workload names what the scenario's trials do: WorkloadLoad,
// WorkloadStartup or WorkloadJob.
func (s *Scenario) Workload() string {
	switch {
	case s.Startup != nil:
		return WorkloadStartup
	case s.Job != nil:
		return WorkloadJob
	}
	return WorkloadLoad
}

// Repetitions is the number of trials per variant and step: the rounds of
// a load test, or the repetitions of a start-up or job experiment.
func (s *Scenario) Repetitions() int {
	switch {
	case s.Startup != nil:
		return s.Startup.Repetitions
	case s.Job != nil:
		return s.Job.Repetitions
	}
	return s.Rounds
}

// Launch returns which of the run's starts of its services (Starts) round
// falls in, from 0: the rounds are split into Starts spans as even as
// they can be, in order.
func (s *Scenario) Launch(round int) int {
	if s.Starts < 2 || s.Rounds < 1 {
		return 0
	}
	return (round - 1) * s.Starts / s.Rounds
}

// Steps returns the steps of the experiment: the load steps of a load
// test, one per CPU limit of a start-up experiment, or the single step of
// a job.
func (s *Scenario) Steps() []Step {
	switch {
	case s.Startup != nil && len(s.Startup.CPULimits) > 0:
		var steps []Step
		for _, c := range s.Startup.CPULimits {
			steps = append(steps, Step{CPULimit: c})
		}
		return steps
	case s.Startup != nil, s.Job != nil:
		return []Step{{}}
	}
	steps := s.Load.Steps()
	if len(s.Matrix.CPUs) == 0 {
		return steps
	}
	// The matrix is the outer loop: every load step under each CPU limit,
	// so that the services are started afresh once per limit.
	var out []Step
	for _, c := range s.Matrix.CPUs {
		for _, st := range steps {
			st.CPULimit = c
			out = append(out, st)
		}
	}
	return out
}

// Matrix repeats a load test's steps under each of its settings: Sermant's
// tables of 1, 2 and 4 vCPUs × variant.
type Matrix struct {
	// CPUs runs every load step under each cgroup CPU quota, in cores
	// ("cpus: [1, 2]"): every service of every variant is limited to it,
	// in place of its own cpu_limit and its variant's. The services are
	// started afresh under each limit (a JVM sizes its thread pools and
	// picks its collector from the CPUs it sees at start).
	CPUs []float64 `yaml:"cpus"`
}

// Startup sets a start-up experiment (hyperfine's vocabulary: repetitions,
// prepare per variant, before_each per start).
type Startup struct {
	// Repetitions is how many cold starts each variant gets per CPU limit
	// (default 10).
	Repetitions int `yaml:"repetitions"`
	// CPULimits repeats the whole experiment under each cgroup CPU quota,
	// in cores ("cpu_limits: [1, 2]"); each is a step of the run, and
	// replaces the services' own cpu_limit.
	CPULimits []float64 `yaml:"cpu_limits"`
	// LogMetrics are figures read from the measured services' logs once
	// they are ready (Spring Boot's "Started … in 3.2 seconds").
	LogMetrics []LogMetric `yaml:"log_metrics"`
}

// Job sets a fixed-work experiment: a command that does a fixed amount of
// work and exits, timed Repetitions times per variant.
type Job struct {
	// Command is the job's argv; a first word "toll" runs the toll binary.
	// Placeholders (${port:NAME}, ${sink}, ${variant}) are those of the
	// variant's services.
	Command []string `yaml:"command"`
	// Env is added to toll's own environment.
	Env map[string]string `yaml:"env"`
	// Dir is the working directory (default: the scenario file's directory).
	Dir string `yaml:"dir"`
	// Repetitions is how many times each variant runs the job (default 10).
	Repetitions int `yaml:"repetitions"`
	// Timeout bounds one run of the job (default 10m); a run past it is
	// killed and flagged as failed.
	Timeout Duration `yaml:"timeout"`
	// Work is the amount of work one run does (messages, records, files);
	// with it, wall time is also reported per Per units of work
	// ("time per million messages").
	Work float64 `yaml:"work"`
	// Per is the amount of work wall time is scaled to (default 1,000,000).
	Per float64 `yaml:"per"`
	// Unit names the work ("messages").
	Unit string `yaml:"unit"`
	// LogMetrics are figures read from the job's output.
	LogMetrics []LogMetric `yaml:"log_metrics"`
}

// LogMetric is a figure an application prints: the first capture group of
// Regex on the first line it matches is the value.
type LogMetric struct {
	// Name names the cost (letters, digits, '_'), e.g. app_start_s.
	Name string `yaml:"name"`
	// Regex is a Go regular expression with one capture group holding a
	// number.
	Regex string `yaml:"regex"`
	// Unit is shown beside the value ("s"); by default the suffix of Name
	// after its last '_'.
	Unit string `yaml:"unit"`
}

// Modes of a run.
const (
	ModeSequential = "sequential"
	ModeDuet       = "duet"
	ModeTogether   = "together"
)

// Placements of a duet's two sides (pinning.duet).
const (
	DuetSplit  = "split"
	DuetShared = "shared"
)

// Placements of services during a variant warm-up (pinning.warmup).
const (
	WarmupOwnCPUs = ""
	WarmupAllCPUs = "all"
)

// Restart policies.
const (
	RestartPerTrial = "per-trial"
	RestartPerRound = "per-round"
	RestartOnce     = "once"
)

// Report sets how a run's reports are rendered.
type Report struct {
	// Layout names a published benchmark's table shape (one of
	// ReportLayouts) that report.md adds after toll's own tables, and that
	// `toll report --layout` prints; empty for none.
	Layout string `yaml:"layout"`
}

// The report layouts: each renders a run as one published benchmark laid
// out its tables (docs/reproductions.md).
const (
	LayoutSermant      = "sermant"       // load steps as rows, "baseline / variant / Δ" cells
	LayoutKindling     = "kindling"      // costs as rows, load steps side by side
	LayoutJetty        = "jetty"         // latency and memory changes, CPU every 5 s
	LayoutSkyWalkingGo = "skywalking-go" // the paragraph of CPU, memory and mean latency
	LayoutEaseAgent    = "easeagent"     // k6's summary of latency, and each request of the mix
)

// ReportLayouts returns the names a scenario's report.layout (and `toll
// report --layout`) may take.
func ReportLayouts() []string {
	return []string{LayoutSermant, LayoutKindling, LayoutJetty, LayoutSkyWalkingGo, LayoutEaseAgent}
}

// Networks a run may use.
const (
	NetworkHost     = "host"
	NetworkIsolated = "isolated"
)

// Service is one process that a scenario starts.
type Service struct {
	// Name identifies the service in variants, reports and log file names.
	Name string `yaml:"name"`
	// Command is the argv; a first word "toll" runs the toll binary itself.
	// With Image, it is the container's command (the image's own when
	// empty), run as it is.
	Command []string `yaml:"command"`
	// Env is added to toll's own environment; with Image it is the
	// container's whole environment (besides the image's own and TOLL_RUN).
	Env map[string]string `yaml:"env"`
	// Dir is the working directory (default: the scenario file's
	// directory); with Image, the working directory inside the container
	// (default: the image's).
	Dir string `yaml:"dir"`
	// Image runs the service as a container of this local image, through
	// Engine, in the service's cgroup, on the host's network unless it has
	// Ports.
	Image string `yaml:"image"`
	// Engine is the container engine for Image: "podman", "docker", or
	// "auto" (the default: the first of podman and docker that answers).
	Engine string `yaml:"engine"`
	// Ports publishes the container's ports, by name: each NAME: PORT
	// entry publishes container port PORT on 127.0.0.1 at the host port
	// that ${port:NAME} is everywhere else (the load's target, readiness,
	// other services), and ${port:NAME} in the service's own command and
	// environment is PORT. A container with ports runs on its engine's
	// network (as docker-compose's services do); one without shares the
	// host's.
	Ports map[string]int `yaml:"ports"`
	// Ready says how to tell that the service is ready to serve.
	Ready Ready `yaml:"ready"`
	// Measure marks a service whose cost is reported.
	Measure bool `yaml:"measure"`
	// Role is "app" (default) or "agent" (a daemon, collector or sidecar whose
	// cost is reported on its own and added to the variant's total).
	Role string `yaml:"role"`
	// CPUs is a cpuset such as "1" or "1-3"; empty means toll's default layout.
	CPUs string `yaml:"cpus"`
	// CPULimit caps the service at this many cores (cgroup CPU quota).
	CPULimit float64 `yaml:"cpu_limit"`
	// MemoryLimit caps the service's memory (cgroup), e.g. "512MiB".
	MemoryLimit ByteSize `yaml:"memory_limit"`
	// NMT makes toll read the service's JVM's Native Memory Tracking
	// summary (jcmd PID VM.native_memory summary) at the end of each
	// trial, when the JVM was started with -XX:NativeMemoryTracking=summary
	// or detail: its total committed memory and off-heap. jcmd attaches to
	// the JVM (a thread of the JVM answers it), so this is opt-in.
	NMT bool `yaml:"nmt"`
	// Profile samples the service's on-CPU stacks during every measured
	// window (Linux perf, on its cgroup or its processes), so that the
	// analysis says which functions a variant's added CPU per request
	// goes to. toll run --profile sets it on every measured service.
	Profile bool `yaml:"profile"`
	// Scrape pulls the service's own metrics (Prometheus text format) at
	// the start and the end of each trial's window into the trial, as costs
	// of this service.
	Scrape *Scrape `yaml:"scrape"`
	// StopSignal is the signal that asks the service to stop, by name
	// (one of stopSignals'): SIGTERM when empty. A program that exits on
	// it without running its exit hooks (Python's default on SIGTERM)
	// loses what an agent holds until then, a last batch of spans; SIGINT
	// lets Python unwind and flush.
	StopSignal string `yaml:"stop_signal"`
}

// stopSignals returns the signals a service's stop_signal may name, by
// name: those toll's supervisor passes on to the service
// (supervise.PassedOn, which TestStopSignalsPassedOn holds this to; the
// supervisor's package reads cgroups, which a scenario must not depend
// on), and not its own parent-death signal, SIGHUP.
func stopSignals() map[string]syscall.Signal {
	return map[string]syscall.Signal{
		"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT,
		"SIGUSR1": syscall.SIGUSR1, "SIGUSR2": syscall.SIGUSR2,
	}
}

// Signal returns the signal that asks the service to stop: its
// StopSignal's, SIGTERM when it names none.
func (s *Service) Signal() syscall.Signal {
	if sig, ok := stopSignals()[s.StopSignal]; ok {
		return sig
	}
	return syscall.SIGTERM
}

// Scrape says where a service exposes its own metrics and which of them to
// keep: counters become rates over the window, gauges the mean of the
// readings at its start and end.
type Scrape struct {
	// URL is the metrics endpoint, e.g. http://127.0.0.1:${port:agent}/metrics.
	URL string `yaml:"url"`
	// Metrics names the metric families to keep (every series of a family
	// is summed).
	Metrics []string `yaml:"metrics"`
	// Timeout bounds one scrape (default 2s).
	Timeout Duration `yaml:"timeout"`
}

// Container engines a service with an image may name.
const (
	EngineAuto   = "auto"
	EnginePodman = "podman"
	EngineDocker = "docker"
)

// Roles a service may take.
const (
	RoleApp   = "app"
	RoleAgent = "agent"
)

// Ready describes a readiness check: an HTTP URL that must answer 2xx/3xx,
// a TCP address that must accept connections, a line of the service's
// log that must match a regular expression (for a daemon with no port, such
// as an eBPF agent that says when its probes are attached), or a command
// that must exit 0.
type Ready struct {
	HTTP string `yaml:"http"`
	TCP  string `yaml:"tcp"`
	// Log is a regular expression (Go's RE2 syntax) that a line of the
	// service's output must match.
	Log string `yaml:"log"`
	// Command is an argv run again and again (in the service's directory,
	// or the scenario file's for an image; toll's environment) until it
	// exits 0; each run is bounded by a second.
	Command []string `yaml:"command"`
	Timeout Duration `yaml:"timeout"`
}

// Variant is a named way to run the services.
type Variant struct {
	// Name identifies the variant in reports.
	Name string `yaml:"name"`
	// Description is free text shown in reports.
	Description string `yaml:"description"`
	// Services changes services for this variant, by service name.
	Services map[string]Override `yaml:"services"`
	// Exports says the variant's services export telemetry to toll's sink:
	// a trial that received none is flagged.
	Exports bool `yaml:"exports"`
	// Skip leaves services out of this variant, by name.
	Skip []string `yaml:"skip"`
	// Load changes the load for this variant.
	Load VariantLoad `yaml:"load"`
	// Job changes the job's command for this variant (job experiments).
	Job Override `yaml:"job"`
	// Prepare is a command run once before the variant's first start or
	// job (hyperfine's --prepare: generating a pre-filter list, warming a
	// cache). A failure stops the run.
	Prepare []string `yaml:"prepare"`
	// BeforeEach is a command run before each start or job of the variant
	// (dropping caches, removing a file); it is not timed.
	BeforeEach []string `yaml:"before_each"`
	// CPULimit caps each of the variant's services at this many cores
	// (cgroup CPU quota), in place of the service's own cpu_limit.
	CPULimit float64 `yaml:"cpu_limit"`
	// MemoryLimit caps each of the variant's services' memory (cgroup), in
	// place of the service's own memory_limit.
	MemoryLimit ByteSize `yaml:"memory_limit"`
}

// VariantLoad changes the scenario's load for one variant.
type VariantLoad struct {
	// Target replaces load.target: the base URL this variant's requests go
	// to, e.g. a sidecar proxy in front of the service.
	Target string `yaml:"target"`
}

// Override changes one service within a variant.
type Override struct {
	// Command replaces the service's command.
	Command []string `yaml:"command"`
	// Args are appended to the command.
	Args []string `yaml:"args"`
	// Env is merged over the service's environment.
	Env map[string]string `yaml:"env"`
	// CPULimit and MemoryLimit replace the service's own cpu_limit and
	// memory_limit (and the variant's) for this variant.
	CPULimit    float64  `yaml:"cpu_limit"`
	MemoryLimit ByteSize `yaml:"memory_limit"`
}

// Load is the traffic sent to each variant: an open model at a constant rate
// (rate or rates), or a closed model of users (users).
type Load struct {
	// Target is the base URL requests are sent to, e.g. http://127.0.0.1:${port:consumer}.
	Target string `yaml:"target"`
	// Requests is the request mix.
	Requests []Request `yaml:"requests"`
	// Rate is the arrival rate in requests per second; 0 measures the
	// services idle (their static cost: memory, threads, classes).
	Rate float64 `yaml:"rate"`
	// Rates runs several load steps, one per rate; it replaces Rate.
	Rates []float64 `yaml:"rates"`
	// Users makes the load a closed model: this many users, each with a
	// connection of its own, send a request, wait for the response, think,
	// and repeat. A list runs one load step per entry ("users: [50, 100]").
	// It excludes Rate and Rates.
	Users IntList `yaml:"users"`
	// Think is a closed-model user's pause between a response and its next
	// request (default 0).
	Think Duration `yaml:"think"`
	// ThinkDistribution is "constant" (default) or "exponential" (random
	// think times with mean Think).
	ThinkDistribution string `yaml:"think_distribution"`
	// Ramp starts closed-model users evenly over this long at the start of
	// each trial's warm-up (default 0: all at once).
	Ramp Duration `yaml:"ramp"`
	// Arrival is the open model's arrival process: "uniform" (default),
	// requests exactly 1/rate apart, or "poisson", independent exponential
	// gaps of mean 1/rate drawn from the run's seed.
	Arrival string `yaml:"arrival"`
	// Quantum, when set, releases open-model requests on a grid of this
	// step, one wake-up of the load generator per step: cheaper, but the
	// requests due in a step leave together, and the service's queueing of
	// each burst is in the latency, which counts from the grid time. By
	// default (unset or 0) each request leaves at its own time.
	Quantum *Duration `yaml:"quantum"`
	// Slice, in a shared duet (mode: duet, pinning.duet: shared), makes
	// the two sides' loads take turns: each side's requests leave at the
	// step's rate for one slice, then the other side's for the next, so
	// that each side is loaded alone (its latency is its own) while both
	// meet the machine at moments a slice apart (their CPU costs pair as
	// in any shared duet). Every warm-up and window lasts twice as long,
	// so that each side gets load.warmup and load.duration of load; a
	// side's costs per second are per second of its own load. Unset (0),
	// both sides are loaded at once.
	Slice Duration `yaml:"slice"`
	// Warmup is load sent before each measured window and not recorded.
	Warmup Duration `yaml:"warmup"`
	// VariantWarmup is load sent to a variant's freshly started services
	// before their first loaded trial, and not recorded, on top of that
	// trial's Warmup (JIT compilation, caches, an agent's instrumentation
	// of classes as they load): once per start, so after every restart
	// with restart: per-round or per-trial, and once per matrix setting.
	VariantWarmup Duration `yaml:"variant_warmup"`
	// VariantWarmupUntil, when set, ends a variant warm-up as soon as the
	// variant's measured JVMs have settled: VariantWarmup is then the most
	// it may last.
	VariantWarmupUntil *WarmupUntil `yaml:"variant_warmup_until"`
	// VariantWarmupAuto is set by validation when toll chose the variant
	// warm-up: a run in precision mode that names neither variant_warmup
	// nor variant_warmup_until. A JVM is then warmed until it settles, and
	// services with no JVM for DefaultNoJVMWarmup.
	VariantWarmupAuto bool `yaml:"-"`
	// VariantWarmupRate, when set, is the open-model rate of the variant
	// warm-up in requests per second, in place of the trial's: a JVM
	// compiles a method once it has run some thousands of times, so a
	// warm-up at a few times the measured rate reaches its steady state
	// in a fraction of the time. 0 (unset) warms at each trial's rate.
	VariantWarmupRate float64 `yaml:"variant_warmup_rate"`
	// VariantWarmupUsers, when set, sends the variant warm-up as a closed
	// model of this many users (with load.think, 0 unless set): as fast
	// as the services answer, so a warm-up takes what CPU there is without
	// leaving a queue behind it for the first trial. It excludes
	// VariantWarmupRate.
	VariantWarmupUsers int `yaml:"variant_warmup_users"`
	// Duration is the measured window of each trial.
	Duration Duration `yaml:"duration"`
	// Timeout bounds each request (default 10s).
	Timeout Duration `yaml:"timeout"`
	// MaxConns bounds concurrent requests, and so connections (default 500).
	// More would only open connections to a stalled service, beyond its
	// listen backlog: their SYNs are dropped and retried a second later, a
	// TCP artefact in the latencies. Requests beyond it wait, their latency
	// counted from their intended time.
	MaxConns int `yaml:"max_conns"`
}

// WarmupUntil is when a variant warm-up may end before its maximum: once
// every measured JVM of the variant compiled less than JITBelow of JIT time
// per second of wall time over the trailing Over (read from its hsperfdata:
// java.ci.totalTime). A JVM whose hot code is compiled compiles next to
// nothing under steady load; one still compiling measures a moving target.
type WarmupUntil struct {
	// JITBelow is the JIT compile time per second of wall time below which
	// a JVM counts as settled (e.g. 5ms: 0.5% of a core).
	JITBelow Duration `yaml:"jit_below"`
	// Over is the trailing window the rate is taken over (e.g. 10s).
	Over Duration `yaml:"over"`
}

// Request is one entry of the request mix.
type Request struct {
	Name    string            `yaml:"name"`
	Method  string            `yaml:"method"`
	Path    string            `yaml:"path"`
	Headers map[string]string `yaml:"headers"`
	Body    string            `yaml:"body"`
	Weight  int               `yaml:"weight"`
}

// FindMax sets the search for the highest open-model rate each variant
// sustains: p99 latency within SLOP99, no errors, no missed requests and
// at least 99% of the rate achieved. The rate doubles from Start until a
// trial fails, then is bisected until the bracket is within Precision.
type FindMax struct {
	// SLOP99 is the p99 latency a sustainable rate must keep (default 100ms).
	SLOP99 Duration `yaml:"slo_p99"`
	// Start is the first rate tried (default: load.rate, or 100).
	Start float64 `yaml:"start"`
	// Precision is the bracket's relative width at which the search stops
	// (default 0.05).
	Precision float64 `yaml:"precision"`
	// MaxTrials bounds the trials per variant (default 12).
	MaxTrials int `yaml:"max_trials"`
}

// Trim drops the first Start and last End of each measured window.
type Trim struct {
	Start Duration `yaml:"start"`
	End   Duration `yaml:"end"`
}

// Pinning places processes on CPUs. Empty fields take toll's default: on a
// machine with n CPUs, the load generator and sink on CPU 0 and the services
// on CPUs 1..n-1.
type Pinning struct {
	// Load is the cpuset of toll itself (load generator, sink, probes).
	Load string `yaml:"load"`
	// Services is the default cpuset of services that set no cpus of their own.
	Services string `yaml:"services"`
	// Off disables pinning.
	Off bool `yaml:"off"`
	// Duet places the two sides of a duet: "split" (default) gives the
	// baseline's services and the variant's disjoint halves of Services;
	// "shared" runs both on all of Services, so that both see the same
	// moments of every CPU (on 2 CPUs too).
	Duet string `yaml:"duet"`
	// Warmup places services during their variant warm-up
	// (load.variant_warmup): "" (default) on their own CPUs, or "all" on
	// every CPU toll may use, the load generator's too, at idle priority
	// (so the generator still sends on time), back on their own at their
	// own priority before their first trial. A JVM's JIT compilers then
	// run beside the application instead of taking turns with it, and
	// settle in about half the time; code that sizes itself from the CPU
	// count during the warm-up (a JVM's Runtime.availableProcessors())
	// sees them all.
	Warmup string `yaml:"warmup"`
	// WarmupAuto is set by validation when toll chose Warmup "all" with
	// the variant warm-up it chose (the scenario named neither): nothing
	// is measured during a variant warm-up, so its JVMs compile on every
	// CPU.
	WarmupAuto bool `yaml:"-"`
}

// Step is one load step: an open-model Rate or a closed-model number of
// Users (the other is zero), or Idle (rate: 0: no load at all). CPULimit
// is the CPU quota every service runs under in a start-up experiment's
// step or a load test's matrix.
type Step struct {
	Rate  float64
	Users int
	// Idle is a load test's step of rate 0: the services are measured
	// with no load.
	Idle bool
	// CPULimit is the step's CPU quota in cores (0: none).
	CPULimit float64
}

// String describes the step: "300 req/s", "50 users", "idle", "1 CPU" (a
// start-up step) or, in a load test's matrix, "1 CPU, 300 req/s".
func (s Step) String() string {
	var load string
	switch {
	case s.Users > 0:
		load = fmt.Sprintf("%d users", s.Users)
	case s.Idle:
		load = "idle"
	case s.Rate > 0 || s.CPULimit == 0:
		load = strconv.FormatFloat(s.Rate, 'f', -1, 64) + " req/s"
	}
	if s.CPULimit == 0 {
		return load
	}
	cpu := strconv.FormatFloat(s.CPULimit, 'f', -1, 64) + " CPU"
	if load == "" {
		return cpu
	}
	return cpu + ", " + load
}

// Steps returns the load steps: one per entry of Users, or of Rates, or
// Rate alone.
func (l Load) Steps() []Step {
	var steps []Step
	switch {
	case len(l.Users) > 0:
		for _, u := range l.Users {
			steps = append(steps, Step{Users: u})
		}
	case len(l.Rates) > 0:
		for _, r := range l.Rates {
			steps = append(steps, Step{Rate: r, Idle: r == 0})
		}
	default:
		steps = append(steps, Step{Rate: l.Rate, Idle: l.Rate == 0})
	}
	return steps
}

// Closed reports whether the load is a closed model (users).
func (l Load) Closed() bool { return len(l.Users) > 0 }

// JVMWarmupRateTimes returns how many times each trial's rate the variant
// warm-up toll chose sends a JVM between its users and the trials' own
// load (DefaultJVMWarmupRateTimes), or 0: toll did not choose the warm-up,
// or the load is closed-model users, which have no rate to multiply.
func (l Load) JVMWarmupRateTimes() float64 {
	if !l.VariantWarmupAuto || l.Closed() {
		return 0
	}
	return DefaultJVMWarmupRateTimes
}

// AllIdle reports whether every load step is idle (rate: 0), so that no
// request is ever sent.
func (l Load) AllIdle() bool {
	for _, st := range l.Steps() {
		if !st.Idle {
			return false
		}
	}
	return true
}

// The open model's arrival processes (Load.Arrival).
const (
	ArrivalUniform = "uniform"
	ArrivalPoisson = "poisson"
)

// ArrivalOrDefault returns Arrival, or ArrivalUniform if it is not set.
func (l Load) ArrivalOrDefault() string {
	if l.Arrival == "" {
		return ArrivalUniform
	}
	return l.Arrival
}

// QuantumOrDefault returns Quantum's release grid, or 0 (each request at
// its own time) if it is not set.
func (l Load) QuantumOrDefault() time.Duration {
	if l.Quantum == nil {
		return 0
	}
	return l.Quantum.D()
}

// Concurrent says whether variants run their trials at the same time:
// mode duet (two at a time) or together (all at once).
func (s *Scenario) Concurrent() bool {
	return s.Mode == ModeDuet || s.Mode == ModeTogether
}

// StepsShareStarts reports whether each round of s runs every load step
// under the same start of the services, rather than each step's rounds
// after the last step's: a load test in precision mode whose services
// start once (restart: once, as many starts as its targets need), with
// more than one loaded step under one CPU limit. A start of a JVM costs
// minutes of warm-up, and what differs between two starts narrows only
// with more of them (Kalibera and Jones: repeat at the level where the
// variance arises); steps that share their rounds share every start, and
// so each step's intervals average more of them within the same budget.
// precision.steps: in-turn, or an idle step, keeps the steps in turn.
func (s *Scenario) StepsShareStarts() bool {
	if !s.Precision.On || s.Precision.Steps == StepsInTurn || s.Restart != RestartOnce || s.Workload() != WorkloadLoad {
		return false
	}
	steps := s.Steps()
	if len(steps) < 2 {
		return false
	}
	for _, st := range steps {
		if st.Idle || st.CPULimit != steps[0].CPULimit {
			return false
		}
	}
	return true
}

// Sides is how many variants' trials run at the same time: 2 in a duet,
// every variant together, else 1.
func (s *Scenario) Sides() int {
	switch s.Mode {
	case ModeDuet:
		return 2
	case ModeTogether:
		return len(s.Variants)
	}
	return 1
}

// CommandDir is where toll runs a variant's prepare and before_each, and
// its job: the job's directory, or else the first service's.
func (s *Scenario) CommandDir() string {
	switch {
	case s.Job != nil:
		return s.Job.Dir
	case len(s.Services) > 0:
		return s.Services[0].Dir
	}
	return ""
}

// ReadyDir is where svc's ready.command runs: the service's directory for
// a process, the scenario file's for an image (whose own directory is
// inside the container).
func (s *Scenario) ReadyDir(svc Service) string {
	if svc.Image != "" {
		return filepath.Dir(s.Path)
	}
	return svc.Dir
}

// Service returns the service with the given name.
func (s *Scenario) Service(name string) (Service, bool) {
	for _, svc := range s.Services {
		if svc.Name == name {
			return svc, true
		}
	}
	return Service{}, false
}

// Variant returns the variant with the given name.
func (s *Scenario) Variant(name string) (Variant, bool) {
	for _, v := range s.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}
