package record

import "time"

// Trial is one variant at one load step for one measured window: everything
// measured, as raw series, so analysis can be redone from it alone.
type Trial struct {
	SchemaVersion int `json:"schema_version"`
	// Index numbers the trials of a run from 1 in the order they ran.
	Index int `json:"index"`
	// Round numbers the rounds from 1; Order is the variant's position in it.
	Round int `json:"round"`
	Order int `json:"order"`
	// Launch numbers, from 0, the start of the services the trial ran
	// under in a run that started them once but several times over
	// (Manifest.Starts): the rounds of one start share it.
	Launch int `json:"launch,omitempty"`
	// Step indexes the load steps from 0.
	Step    int    `json:"step"`
	Variant string `json:"variant"`
	// Pair names the variant a baseline trial ran beside (mode: duet).
	Pair string `json:"pair,omitempty"`
	// TargetRate is the step's arrival rate in requests per second (open
	// model; 0 in the closed model).
	TargetRate float64 `json:"target_rate"`
	// TargetUsers is the step's number of users (closed model).
	TargetUsers int `json:"target_users,omitempty"`
	// Idle is set for a step of rate 0: no load was sent, and the window
	// measured the services idle.
	Idle bool `json:"idle,omitempty"`
	// CPULimit is the CPU quota in cores every service ran under at this
	// step of a load test's matrix (matrix.cpus); 0 outside a matrix.
	CPULimit float64 `json:"cpu_limit,omitempty"`
	// VariantWarmupS is how long, in seconds, the variant warm-up that
	// this trial began with lasted (load.variant_warmup, or less once the
	// JVMs settled, with load.variant_warmup_until): the first loaded trial
	// of freshly started services. It lies between Start and MeasureStart,
	// and is not measured.
	VariantWarmupS float64 `json:"variant_warmup_s,omitempty"`
	// VariantWarmup says how that warm-up ended, when it could end early
	// (load.variant_warmup_until); nil otherwise.
	VariantWarmup *VariantWarmup `json:"variant_warmup,omitempty"`
	// BesideWarmupStart is set, one variant at a time, on every trial of
	// the round with which the load of a warm-up of starts ahead of their
	// turn began (beside the rounds, at idle priority): its first seconds
	// (a JVM's first requests, its compilers' first bursts) fall on the
	// round's first trial more than on the others, so the round's trials
	// do not compare.
	BesideWarmupStart bool `json:"beside_warmup_start,omitempty"`
	// PlannedS is the measured window asked for, in seconds.
	PlannedS float64 `json:"planned_s"`
	// LoadShare is the share of the window in which the trial's load ran,
	// when it ran in turns with another trial's (a sliced duet,
	// load.slice: 0.5); absent, it ran throughout. Rates per second are
	// per second of the trial's own load: divided by the window's length
	// times this share.
	LoadShare float64 `json:"load_share,omitempty"`
	// Start is the load timeline's origin (warm-up begins); MeasureStart and
	// MeasureEnd bound the measured window. Every series' T is in seconds
	// relative to MeasureStart.
	Start        time.Time `json:"start"`
	MeasureStart time.Time `json:"measure_start"`
	MeasureEnd   time.Time `json:"measure_end"`
	// LoadCPUs is the CPU list toll itself (load generator, sinks) ran on.
	LoadCPUs string `json:"load_cpus,omitempty"`
	// Node is the Kubernetes node the variant's services ran on during
	// the trial (a run in a cluster; "" on one machine).
	Node string `json:"node,omitempty"`
	// Target is the load's target as the variant's load was sent to it,
	// with the scenario's placeholders (${port:NAME}) expanded.
	Target string `json:"target,omitempty"`
	// Profile is where the stacks sampled in the window are, when the
	// trial's services were profiled (profile: true, toll run --profile).
	Profile *TrialProfile `json:"profile,omitempty"`
	// Exports says the variant's services are meant to export telemetry.
	Exports  bool         `json:"exports,omitempty"`
	Services []ServiceRun `json:"services"`
	// Load totals over the measured window, and per second.
	Load      LoadTotals `json:"load"`
	Intervals []Interval `json:"intervals"`
	// Samples holds each service's cost readings.
	Samples []ServiceSeries `json:"samples"`
	// Machine holds the machine's cumulative CPU times, per sample.
	Machine []MachineSample `json:"machine,omitempty"`
	// Telemetry holds the sink's cumulative counts.
	Telemetry []Telemetry `json:"telemetry,omitempty"`
	// Neighbours is the CPU that the other variants' services, running
	// but not under load (restart: once), used while this trial's load ran
	// (its warm-up and measured window): their background work (timers,
	// exporters, garbage collection, JIT) beside the measured services.
	// Absent when no other variant's services ran.
	Neighbours []NeighbourCPU `json:"neighbours,omitempty"`
	// TelemetryEnd is the sink's count when the variant's services were
	// stopped after this trial (what they flushed as they stopped is in
	// it, what they sent at their next start is not), with T in seconds
	// from MeasureStart. It is absent when the services ran on into the
	// variant's next trial, whose first sample ends this trial's cycle.
	TelemetryEnd *Telemetry `json:"telemetry_end,omitempty"`
	// Job is a job experiment's run; Startup a start-up experiment's cold
	// start. A load test's trial has neither.
	Job     *JobRun     `json:"job,omitempty"`
	Startup *StartupRun `json:"startup,omitempty"`
	// Interrupted is set when the trial was cut short; Error says why.
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
}

// NeighbourCPU is the CPU a variant's idle services used during another
// variant's measured window.
type NeighbourCPU struct {
	Variant string `json:"variant"`
	// CPUS is their CPU time, in seconds (all their services, measured or
	// not), over S seconds: from the start of the trial's load to its end.
	CPUS float64 `json:"cpu_s"`
	S    float64 `json:"s"`
	// IdleCPUs is set for a start warmed ahead of its turn at idle
	// priority (SCHED_IDLE) on these CPUs: it ran only where the trial's
	// services and load generator left a CPU idle, so the CPUs' busy
	// share counts it without its having held either back.
	IdleCPUs string `json:"idle_cpus,omitempty"`
}

// Window is the length of the measured window.
func (t *Trial) Window() time.Duration { return t.MeasureEnd.Sub(t.MeasureStart) }

// Achieved returns the requests the trial completed per second of its own
// load over the whole load intervals (a second each) that lie within from
// to to seconds of its window, and where the last of them ends (to when
// none lies there, and the rate 0). A window cut short ends inside an
// interval, which is left out of the count and so of the span too.
// analyze reads a trial's throughput over this span and toll run's
// progress line prints this rate, so the two say the same.
func (t *Trial) Achieved(from, to float64) (rate, end float64) {
	var completed uint64
	end = from
	for _, iv := range t.Intervals {
		if iv.T >= from-1e-9 && iv.T+1 <= to+1e-9 {
			completed += iv.Completed
			end = max(end, iv.T+1)
		}
	}
	if end <= from {
		return 0, to
	}
	return float64(completed) / ((end - from) * t.Share()), end
}

// Share is the share of the window in which the trial's load ran:
// LoadShare, or 1 when it ran throughout.
func (t *Trial) Share() float64 {
	if t.LoadShare > 0 && t.LoadShare < 1 {
		return t.LoadShare
	}
	return 1
}

// ServiceRun describes one service as it ran during a trial.
type ServiceRun struct {
	Name string `json:"name"`
	// Role is "app" or "agent".
	Role string `json:"role,omitempty"`
	// Measured services' costs are reported and summed into the variant's.
	Measured bool     `json:"measured"`
	Argv     []string `json:"argv"`
	// Pid is the pid of the service's supervisor (toll _exec), which
	// leads its process group; the service is its child.
	Pid int `json:"pid"`
	// Log is the service's log file, relative to the results directory.
	Log    string `json:"log"`
	Cgroup string `json:"cgroup,omitempty"`
	CPUs   string `json:"cpus,omitempty"`
	// CPULimit and MemoryLimitBytes are the cgroup limits the service ran
	// under (its own, its variant's, or the matrix step's); 0 for none.
	CPULimit         float64 `json:"cpu_limit,omitempty"`
	MemoryLimitBytes int64   `json:"memory_limit_bytes,omitempty"`
	// Image is the image of a service run as a container, and Container
	// its engine and name (e.g. "podman toll-12-34-baseline.provider-1").
	Image     string `json:"image,omitempty"`
	Container string `json:"container,omitempty"`
	// Ports are a container's published ports (scenario ports:), each
	// container port on 127.0.0.1 at a host port: the container then ran
	// on its engine's network, with the engine's forwarding in the load's
	// path. Absent for a container on the host's network and a process.
	Ports []PublishedPort `json:"ports,omitempty"`
	// StartupS is the time from start to ready, in seconds.
	StartupS float64 `json:"startup_s"`
	// Started is set when the service was started for this trial (so its
	// startup time belongs to it).
	Started bool `json:"started"`
}

// PublishedPort is a container port published on the host's loopback.
type PublishedPort struct {
	Host      int `json:"host"`
	Container int `json:"container"`
}

// LoadTotals are the load generator's counts over the measured window.
type LoadTotals struct {
	Scheduled uint64 `json:"scheduled"`
	Sent      uint64 `json:"sent"`
	Completed uint64 `json:"completed"`
	OK        uint64 `json:"ok"`
	// Missed requests were scheduled but never sent.
	Missed uint64      `json:"missed"`
	Errors ErrorCounts `json:"errors"`
	// ErrorExamples says how the first failed request of each cause in
	// Errors failed; absent when none failed.
	ErrorExamples *ErrorExamples `json:"error_examples,omitempty"`
	// Histogram is the latency HdrHistogram (µs), V2 compressed, base64.
	Histogram string `json:"histogram,omitempty"`
	// WarmupCompleted counts the requests completed in the warm-up.
	WarmupCompleted uint64 `json:"warmup_completed,omitempty"`
	// WarmupAtOtherLoad is set when the trial's telemetry cycle began with
	// a variant warm-up some of whose requests were sent at a load other
	// than the trial's (load.variant_warmup_users or _rate, or the users
	// of a warm-up toll chose): what its sink received per request is not
	// the trial's load's.
	WarmupAtOtherLoad bool `json:"warmup_at_other_load,omitempty"`
	// Connections counts the connections the load generator opened in the
	// trial, its warm-up included (a variant warm-up's not): one per worker
	// it started for want of an idle one, and again after a server closed
	// one.
	Connections uint64 `json:"connections,omitempty"`
	// LatenessP99US and LatenessMaxUS are the p99 and the maximum of how
	// late the window's requests were sent after their due time (on the
	// release grid, if the load has one), in µs: the load generator's own
	// error, which is in every latency (open model; 0 in the closed model).
	LatenessP99US int64 `json:"lateness_p99_us,omitempty"`
	LatenessMaxUS int64 `json:"lateness_max_us,omitempty"`
	// CPUWaitMS is how long toll's threads, the load generator's among
	// them, waited in all to run while runnable during the load (its
	// warm-up included; /proc/PID/task/*/schedstat): time that other tasks
	// held the load CPUs, kernel threads included, or toll's threads one
	// another's. It tells a generator held up by its machine from one that
	// was not.
	CPUWaitMS float64 `json:"cpu_wait_ms,omitempty"`
	// LoadCPUsHeldBy names the other processes and kernel threads that ran
	// on the load CPUs during the load (its warm-up included), most CPU
	// first, each with at least a millisecond: who held the generator up
	// when CPUWaitMS is high. toll's own process and the services are not
	// among them; its telemetry sinks can be. A thread that moved between
	// CPUs counts whole where it last ran. Trials run at once (a duet's
	// sides, together's) share the load CPUs and hold one reading, from
	// before the first side's load to after the last side's.
	LoadCPUsHeldBy []CPUHolder `json:"load_cpus_held_by,omitempty"`
	// LoadCPUsUnread says that the load CPUs' other tasks were not read
	// for this trial: a reading of the machine's tasks, before or after
	// the load, took longer than toll allows it (a busy machine), so
	// LoadCPUsHeldBy names nothing rather than nobody.
	LoadCPUsUnread bool `json:"load_cpus_unread,omitempty"`
	// ArrivalSeed is the seed of the trial's Poisson arrivals (load.arrival:
	// poisson), drawn from the run's seed, its round and its load step.
	ArrivalSeed uint64 `json:"arrival_seed,omitempty"`
	// Requests holds the same figures for each entry of the request mix,
	// over the whole measured window (untrimmed).
	Requests []RequestTotals `json:"requests,omitempty"`
}

// CPUHolder is a process, or a kernel thread, that ran on the load CPUs
// during a trial's load.
type CPUHolder struct {
	Name   string  `json:"name"`
	PID    int     `json:"pid"`
	Kernel bool    `json:"kernel,omitempty"`
	MS     float64 `json:"ms"` // its CPU time meanwhile
}

// RequestTotals are one entry of the request mix's counts over the
// measured window.
type RequestTotals struct {
	Name      string      `json:"name"`
	Sent      uint64      `json:"sent"`
	Completed uint64      `json:"completed"`
	OK        uint64      `json:"ok"`
	Errors    ErrorCounts `json:"errors"`
	// Histogram is the latency HdrHistogram (µs), V2 compressed, base64.
	Histogram string `json:"histogram,omitempty"`
}

// Interval is one second of the measured window, by intended send time.
type Interval struct {
	// T is the interval's start in seconds from MeasureStart.
	T         float64     `json:"t"`
	Scheduled uint64      `json:"scheduled"`
	Sent      uint64      `json:"sent"`
	Completed uint64      `json:"completed"`
	OK        uint64      `json:"ok"`
	Errors    ErrorCounts `json:"errors"`
	// Histogram is the latency HdrHistogram (µs), V2 compressed, base64.
	Histogram string `json:"histogram,omitempty"`
}

// ErrorCounts counts failed requests by class.
type ErrorCounts struct {
	Connect uint64 `json:"connect"`
	Timeout uint64 `json:"timeout"`
	HTTP4xx uint64 `json:"http_4xx"`
	HTTP5xx uint64 `json:"http_5xx"`
	Other   uint64 `json:"other"`
}

// ErrorExamples holds, for each class of ErrorCounts, how one failed
// request of that class failed: its error as the load generator read it
// ("dial tcp 127.0.0.1:1: connect: connection refused"), or its status
// ("HTTP 503 Service Unavailable"). A class with no failure is empty.
type ErrorExamples struct {
	Connect string `json:"connect,omitempty"`
	Timeout string `json:"timeout,omitempty"`
	HTTP4xx string `json:"http_4xx,omitempty"`
	HTTP5xx string `json:"http_5xx,omitempty"`
	Other   string `json:"other,omitempty"`
}

// First returns the example of the first class, in ErrorCounts' order,
// that has one, or "" (also for a nil x).
func (x *ErrorExamples) First() string {
	if x == nil {
		return ""
	}
	for _, s := range []string{x.Connect, x.Timeout, x.HTTP4xx, x.HTTP5xx, x.Other} {
		if s != "" {
			return s
		}
	}
	return ""
}

// Add returns the sum of e and o.
func (e ErrorCounts) Add(o ErrorCounts) ErrorCounts {
	return ErrorCounts{e.Connect + o.Connect, e.Timeout + o.Timeout, e.HTTP4xx + o.HTTP4xx, e.HTTP5xx + o.HTTP5xx, e.Other + o.Other}
}

// Total is the number of failed requests.
func (e ErrorCounts) Total() uint64 { return e.Connect + e.Timeout + e.HTTP4xx + e.HTTP5xx + e.Other }

// ServiceSeries is one service's readings during a trial.
type ServiceSeries struct {
	Service string `json:"service"`
	// Source is "cgroup" (CPU and memory from the service's cgroup) or
	// "proc" (from its process tree in /proc).
	Source string   `json:"source"`
	Points []Sample `json:"points"`
	// Scrapes are the service's own metrics (scrape:), read at the start
	// and the end of the measured window.
	Scrapes []Scrape `json:"scrapes,omitempty"`
	// ScrapeError says why a scrape failed, when one did.
	ScrapeError string `json:"scrape_error,omitempty"`
	// NMT is the JVM's Native Memory Tracking summary at the trial's end
	// (nmt: true), and NMTError why it could not be read.
	NMT      *NMT   `json:"nmt,omitempty"`
	NMTError string `json:"nmt_error,omitempty"`
}

// Scrape is one reading of a service's own metrics.
type Scrape struct {
	// T is seconds from MeasureStart.
	T float64 `json:"t"`
	// Metrics are the metric families asked for that the endpoint had.
	Metrics []ScrapedMetric `json:"metrics"`
}

// ScrapedMetric is one metric family's value: the sum over its series.
type ScrapedMetric struct {
	Name string `json:"name"`
	// Type is "counter" or "gauge" (an untyped metric is read as a gauge;
	// a histogram's or summary's is its count of observations, a counter).
	Type  string  `json:"type"`
	Value float64 `json:"value"`
}

// NMT is a reading of a JVM's Native Memory Tracking summary, in bytes.
type NMT struct {
	// T is seconds from MeasureStart.
	T float64 `json:"t"`
	// Committed is the JVM's total committed memory ("Total: committed");
	// HeapCommitted is the Java heap's ("Java Heap ... committed").
	Committed     uint64 `json:"committed"`
	HeapCommitted uint64 `json:"heap_committed"`
}

// Sample is one reading of a service. CPU figures are cumulative; the cost
// over a window is a difference.
type Sample struct {
	// T is seconds from the trial's MeasureStart (negative in warm-up).
	T float64 `json:"t"`
	// CPU, User and System are cumulative CPU-seconds.
	CPU    float64 `json:"cpu"`
	User   float64 `json:"user"`
	System float64 `json:"system"`
	// RSS is the resident set of the process tree, in bytes.
	RSS     uint64 `json:"rss"`
	Threads int    `json:"threads"`
	FDs     int    `json:"fds"`
	Procs   int    `json:"procs"`
	// Memory and MemoryPeak are the cgroup's memory use, in bytes.
	Memory     uint64 `json:"memory,omitempty"`
	MemoryPeak uint64 `json:"memory_peak,omitempty"`
	// NrThrottled and Throttled (seconds) are the cgroup's cumulative CPU
	// throttling.
	NrThrottled uint64  `json:"nr_throttled,omitempty"`
	Throttled   float64 `json:"throttled,omitempty"`
	// Instructions and Cycles are the cgroup's cumulative hardware counts,
	// where the kernel allows counting them.
	Instructions uint64 `json:"instructions,omitempty"`
	Cycles       uint64 `json:"cycles,omitempty"`
	// Runtimes holds the readings of the language runtimes the service's
	// processes run (a JVM, Node.js: package probe/runtime), one per
	// runtime found.
	Runtimes []RuntimeSample `json:"runtimes,omitempty"`
	// JVM holds a JVM's counters as toll wrote them before it kept
	// runtimes' readings by name: read back from older trial files, and
	// read through Runtime("jvm").
	JVM *JVMSample `json:"jvm,omitempty"`
}

// RuntimeSample is one reading of a language runtime in a service's
// processes: its figures by metric name, each in its metric's unit
// (bytes, seconds, or a count; counters cumulative since the process
// started).
type RuntimeSample struct {
	// Runtime is the runtime's name ("jvm", "node").
	Runtime string `json:"runtime"`
	// Pid is the process read.
	Pid    int                `json:"pid"`
	Values map[string]float64 `json:"values"`
	// Setup is what the process chose for itself as it began
	// (runtime.Process.Setup: a JVM's "gc"); absent when the runtime
	// publishes nothing of the kind, and in trial files written before
	// toll kept it.
	Setup map[string]string `json:"setup,omitempty"`
}

// Runtime returns p's reading of the runtime named name, or nil. A JVM
// reading of an older trial file (p.JVM) is returned by name as well.
func (p *Sample) Runtime(name string) *RuntimeSample {
	for i := range p.Runtimes {
		if p.Runtimes[i].Runtime == name {
			return &p.Runtimes[i]
		}
	}
	if name == "jvm" && p.JVM != nil {
		return &RuntimeSample{Runtime: "jvm", Pid: p.JVM.Pid, Values: p.JVM.Values()}
	}
	return nil
}

// Values returns j by the names of the JVM's metrics (probe/jvm's
// Runtime), which are its fields' JSON names.
func (j *JVMSample) Values() map[string]float64 {
	v := map[string]float64{
		"heap_used": float64(j.HeapUsed), "heap_committed": float64(j.HeapCommitted),
		"metaspace_used": float64(j.MetaspaceUsed), "metaspace_committed": float64(j.MetaspaceCommitted),
		"class_space_used": float64(j.ClassSpaceUsed),
		"classes_loaded":   float64(j.ClassesLoaded), "classes_unloaded": float64(j.ClassesUnloaded),
		"gc_count": float64(j.GCCount), "gc_time": j.GCTime,
		"threads": float64(j.Threads), "peak_threads": float64(j.PeakThreads),
		"jit_compiles": float64(j.JITCompiles), "jit_time": j.JITTime,
	}
	if j.JITCPU > 0 {
		v["jit_cpu"] = j.JITCPU
	}
	if j.InitS > 0 {
		v["init_s"] = j.InitS
	}
	return v
}

// JVMSample is one reading of a JVM's counters, as trial files written
// before runtimes were kept by name hold it. GC figures are cumulative.
type JVMSample struct {
	Pid                int     `json:"pid"`
	HeapUsed           uint64  `json:"heap_used"`
	HeapCommitted      uint64  `json:"heap_committed"`
	MetaspaceUsed      uint64  `json:"metaspace_used"`
	MetaspaceCommitted uint64  `json:"metaspace_committed"`
	ClassSpaceUsed     uint64  `json:"class_space_used"`
	ClassesLoaded      int64   `json:"classes_loaded"`
	ClassesUnloaded    int64   `json:"classes_unloaded"`
	GCCount            int64   `json:"gc_count"`
	GCTime             float64 `json:"gc_time"`
	Threads            int64   `json:"threads"`
	PeakThreads        int64   `json:"peak_threads"`
	// JITCompiles and JITTime are the JIT compilers' methods compiled and
	// seconds spent compiling since the JVM started (cumulative).
	JITCompiles int64   `json:"jit_compiles,omitempty"`
	JITTime     float64 `json:"jit_time,omitempty"`
	// JITCPU is the CPU seconds the JIT compiler threads have used
	// (jvm.CompilerThreads), where toll could read them: JITTime is wall
	// time, which on a shared CPU includes the compilers' waits.
	JITCPU float64 `json:"jit_cpu,omitempty"`
	// InitS is the time from the JVM's start to the end of its own
	// initialisation (sun.rt.createVmBeginTime to vmInitDoneTime).
	InitS float64 `json:"init_s"`
}

// Telemetry is one reading of the sink's cumulative counts.
type Telemetry struct {
	T        float64 `json:"t"`
	Requests uint64  `json:"requests"`
	Bytes    uint64  `json:"bytes"`
	Spans    uint64  `json:"spans"`
	Points   uint64  `json:"points"`
	Logs     uint64  `json:"logs"`
	// Profiles counts the profiles received; trial files written before
	// toll counted profiles lack it, which reads as 0.
	Profiles uint64 `json:"profiles"`
	// Rejected counts the requests the sink refused (an error status, or
	// a gRPC status other than OK), and RejectedBytes their body bytes as
	// read; Requests and Bytes include them. Trial files written before
	// toll counted rejects lack them, which reads as 0.
	Rejected      uint64 `json:"rejected"`
	RejectedBytes uint64 `json:"rejected_bytes"`
}

// MachineSample is one reading of the whole machine. CPU figures are
// cumulative seconds since boot, for all CPUs and per CPU (index = CPU).
type MachineSample struct {
	T           float64   `json:"t"`
	Busy        float64   `json:"busy"`
	Total       float64   `json:"total"`
	Steal       float64   `json:"steal"`
	PerCPUBusy  []float64 `json:"per_cpu_busy"`
	PerCPUTotal []float64 `json:"per_cpu_total"`
	// MemUsed is the share of memory in use (not available), 0 to 1.
	MemUsed float64 `json:"mem_used"`
}

// VariantWarmup is how a variant warm-up with an end condition
// (load.variant_warmup_until) ended.
type VariantWarmup struct {
	// MaxS is the most it could last (load.variant_warmup), in seconds.
	MaxS float64 `json:"max_s"`
	// Settled is set when every measured JVM of the variant (and, in a
	// duet, of the other side warmed with it) compiled less than the
	// threshold over the trailing window before MaxS; unset when the
	// warm-up reached its maximum, was cut short, or had no JVM to wait
	// for.
	Settled bool `json:"settled"`
	// NoJVM is set when no measured service of the variant was a JVM
	// (none published hsperfdata): the warm-up lasted its maximum.
	NoJVM bool `json:"no_jvm,omitempty"`
	// JITMsPerS is each measured JVM's JIT compile time, in ms per second
	// of wall time, over the trailing window (or what it had of it) when
	// the warm-up ended, by service name.
	JITMsPerS map[string]float64 `json:"jit_ms_per_s,omitempty"`
	// PhasesS is how long each phase of a warm-up in phases lasted, in
	// seconds, in order: load.variant_warmup_users, load.variant_warmup_rate
	// (those set) and the trial's own load, each until the JIT settled or
	// MaxS; those that ran, and nil for a warm-up of one phase.
	PhasesS []float64 `json:"phases_s,omitempty"`
	// CostSteady is set when a warm-up toll chose counted the variant as
	// settled because its measured services' CPU per request had stopped
	// moving, while its JIT still compiled above the threshold.
	CostSteady bool `json:"cost_steady,omitempty"`
	// SpanRequests, for a warm-up beside the rounds, are the requests each
	// span of the steady rule had to hold while a JVM of the variant
	// compiled busily, by phase as in PhasesS: as many as a span of the
	// last warm-up with the CPUs to itself held. Absent where a span is
	// its seconds alone.
	SpanRequests []uint64 `json:"span_requests,omitempty"`
}

// TrialProfile says where a trial's profile is: the on-CPU stacks of its
// profiled services in its measured window, one pprof file for them all,
// each sample labelled with its service and the second of the window it
// fell in (package probe/profile).
type TrialProfile struct {
	// File is the profile's path relative to the results directory;
	// empty when there is none, and Error says why.
	File string `json:"file,omitempty"`
	// Services are the services profiled.
	Services []string `json:"services"`
	// Profiler names what sampled them: "perf".
	Profiler string `json:"profiler"`
	// Error says why the trial has no profile, or lacks some service's.
	Error string `json:"error,omitempty"`
}
