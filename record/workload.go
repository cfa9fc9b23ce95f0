package record

// JobRun is one run of a job (a job experiment's trial): what a fixed
// amount of work cost.
type JobRun struct {
	// Argv is the command as it ran.
	Argv []string `json:"argv"`
	// Log is the job's output, relative to the results directory.
	Log string `json:"log"`
	// WallS is the time from the fork to the exit of the job's last
	// process, in seconds.
	WallS float64 `json:"wall_s"`
	// UserS and SystemS are the CPU time of the job and every process it
	// started: from its cgroup where there is one (Cgroup set), else from
	// wait4's rusage of its process tree.
	UserS   float64 `json:"user_s"`
	SystemS float64 `json:"system_s"`
	// PeakMemoryBytes is the cgroup's memory.peak (v2) or
	// memory.max_usage_in_bytes (v1); 0 without a cgroup or on kernels
	// that do not keep it.
	PeakMemoryBytes uint64 `json:"peak_memory_bytes,omitempty"`
	// MaxRSSBytes is the largest resident set of any one process of the
	// job (wait4's ru_maxrss).
	MaxRSSBytes uint64 `json:"max_rss_bytes"`
	// Cgroup is set when the costs were read from a cgroup of the job's own.
	Cgroup bool `json:"cgroup,omitempty"`
	// ExitCode is the job's exit status; -1 when a signal ended it.
	ExitCode int `json:"exit_code"`
	// Failed is set when the job exited with a status other than 0, was
	// killed or timed out; Error says how. A failed run is shown, and left
	// out of the comparison.
	Failed bool   `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
	// Work is the work one run does (the scenario's job.work), Per the
	// amount wall time is scaled to and Unit its name.
	Work float64 `json:"work,omitempty"`
	Per  float64 `json:"per,omitempty"`
	Unit string  `json:"unit,omitempty"`
	// LogMetrics are the figures read from the job's output, by name.
	LogMetrics map[string]float64 `json:"log_metrics,omitempty"`
}

// StartupRun is one cold start of a variant's services (a start-up
// experiment's trial).
type StartupRun struct {
	// CPULimit is the CPU quota every service ran under, in cores (0: none).
	CPULimit float64 `json:"cpu_limit,omitempty"`
	// Services holds each service's start, in start order.
	Services []ServiceStart `json:"services"`
	// Failed is set when a service did not become ready; Error says why.
	Failed bool   `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
}

// ServiceStart is one service's cold start.
type ServiceStart struct {
	Name     string `json:"name"`
	Measured bool   `json:"measured"`
	// PortOpenS is the seconds from the fork until the readiness address
	// first accepted a TCP connection; ReadyS until the readiness check
	// first passed (the first successful request, for an HTTP check).
	PortOpenS float64 `json:"port_open_s"`
	ReadyS    float64 `json:"ready_s"`
	// CPUS is the CPU-seconds the service's processes spent until ready.
	CPUS float64 `json:"cpu_s"`
	// RSSBytes is the process tree's resident memory when ready.
	RSSBytes uint64 `json:"rss_bytes"`
	// JVM holds the JVM's own start-up timestamps, for a service that
	// runs one with hsperfdata.
	JVM *JVMStart `json:"jvm,omitempty"`
	// LogMetrics are the figures read from the service's log by the time it
	// was ready (and up to a second later), by name.
	LogMetrics map[string]float64 `json:"log_metrics,omitempty"`
}

// JVMStart is a JVM's start-up from its hsperfdata counters, in seconds
// from the fork of the service.
type JVMStart struct {
	// CreatedS is when the JVM finished creating itself
	// (sun.rt.createVmEndTime): the JVM's own start-up, before the
	// application's main runs.
	CreatedS float64 `json:"created_s"`
	// InitDoneS is when it finished initializing (sun.rt.vmInitDoneTime).
	InitDoneS float64 `json:"init_done_s"`
	// Classes is the classes loaded when the service was ready.
	Classes int64 `json:"classes"`
}
