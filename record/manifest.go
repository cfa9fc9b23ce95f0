package record

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Manifest describes a run: what toll ran, where, and how.
type Manifest struct {
	SchemaVersion int      `json:"schema_version"`
	TollVersion   string   `json:"toll_version"`
	GoVersion     string   `json:"go_version"`
	Command       []string `json:"command"`
	// WorkDir is the directory toll ran in, so that a resumed run finds
	// ScenarioFile and the services' relative directories as the run did.
	WorkDir      string `json:"work_dir,omitempty"`
	Scenario     string `json:"scenario"`
	ScenarioFile string `json:"scenario_file"`
	// AA is set for an A/A run (toll run --aa): the variants are the
	// baseline and a second copy of it.
	AA bool `json:"aa,omitempty"`
	// Control names the run's A/A control variant (scenario's control:
	// true, toll run --control): a copy of the baseline, against which
	// every other variant's change is corrected. Empty without one.
	Control  string   `json:"control,omitempty"`
	Baseline string   `json:"baseline"`
	Variants []string `json:"variants"`
	// Seed fixes the random order of variants within rounds.
	Seed    int64  `json:"seed"`
	Rounds  int    `json:"rounds"`
	Restart string `json:"restart"`
	// Starts is how many times a run that starts its services once
	// started them over its rounds (the scenario's starts); absent for
	// one.
	Starts int `json:"starts,omitempty"`
	// Precision is set for a run in precision mode: what it asked and
	// how each load step ended.
	Precision *Precision `json:"precision,omitempty"`
	// Mode is "sequential", "duet", "together" or "find-max".
	Mode string `json:"mode"`
	// Chosen is set when toll chose the mode or the restart policy (a
	// run in precision mode whose scenario names neither).
	Chosen *ScheduleChoice `json:"schedule_chosen,omitempty"`
	// Workload is what each trial did: "load" (absent in runs before it
	// was recorded), "startup" or "job".
	Workload string `json:"workload,omitempty"`
	// TrimStartS and TrimEndS are the seconds dropped from the start and end
	// of every measured window by the analysis.
	TrimStartS float64      `json:"trim_start_s"`
	TrimEndS   float64      `json:"trim_end_s"`
	Load       LoadSettings `json:"load"`
	Host       Host         `json:"host"`
	Layout     Layout       `json:"layout"`
	// ReportLayout is the scenario's report.layout: the published
	// benchmark whose table shape report.md adds; empty for none.
	ReportLayout string    `json:"report_layout,omitempty"`
	Started      time.Time `json:"started"`
	Finished     time.Time `json:"finished,omitzero"`
	// Matrix is a load test's matrix: its steps are every load step under
	// each setting, the settings the outer loop.
	Matrix *Matrix `json:"matrix,omitempty"`
	// Interrupted is set when the run was cut short; its finished trials
	// are still in the directory.
	Interrupted bool `json:"interrupted,omitempty"`
	// Resumes lists each time the run was continued (toll run --resume)
	// after an interruption, oldest first.
	Resumes []Resume `json:"resumes,omitempty"`
	// Error is the error that ended the run before its plan was carried
	// out (a service that failed to start or exited), when one did.
	Error string `json:"error,omitempty"`
	// Planned lists every trial of the plan, in the order the plan runs
	// them. It is written before the first trial starts, so that a run
	// cut short (or toll killed) can be told from a complete one. It is
	// empty in a --find-max run, whose trials are decided as it goes, and
	// in manifests written before toll recorded it.
	Planned []PlannedTrial `json:"planned,omitempty"`
	// Notes are facts about the run a reader should know (a fallback taken,
	// a setting not applied).
	Notes []string `json:"notes,omitempty"`
	// Calibration is the calibration the run's intervals take their fixed
	// terms from (DefaultCalibration when it ran); absent in runs recorded
	// before it was, which are analysed with DefaultCalibration.
	Calibration *Calibration `json:"calibration,omitempty"`
}

// Resume is one continuation of an interrupted run.
type Resume struct {
	// At is when the run was continued.
	At time.Time `json:"at"`
	// Kept is how many finished trials were kept; Rerun how many were
	// planned again (those never run and those cut short).
	Kept  int `json:"kept"`
	Rerun int `json:"rerun"`
	// Command is toll's command line for the continuation.
	Command []string `json:"command"`
}

// PlannedTrial is one trial of a run's plan: the identity its trial file
// will carry.
type PlannedTrial struct {
	// Index numbers the trials from 1 in the order they run; it is the
	// trial file's index.
	Index int `json:"index"`
	// Round numbers the rounds from 1 (within a load step); Order is the
	// variant's position in its round.
	Round int `json:"round"`
	Order int `json:"order"`
	// Step indexes the load steps from 0.
	Step    int    `json:"step"`
	Variant string `json:"variant"`
	// Pair names the variant a baseline trial runs beside (mode: duet).
	Pair string `json:"pair,omitempty"`
}

// LoadSettings are the load generator's settings.
type LoadSettings struct {
	// Model is "open" (constant arrival rate) or "closed" (users).
	Model string    `json:"model"`
	Rates []float64 `json:"rates,omitempty"`
	// Users are the closed model's steps; ThinkS its think time and
	// ThinkDistribution "constant" or "exponential"; RampS its ramp-up.
	Users             []int   `json:"users,omitempty"`
	ThinkS            float64 `json:"think_s,omitempty"`
	ThinkDistribution string  `json:"think_distribution,omitempty"`
	RampS             float64 `json:"ramp_s,omitempty"`
	// Arrival is the open model's arrival process, "uniform" or "poisson".
	Arrival string `json:"arrival,omitempty"`
	// QuantumS is the open model's release grid (0: each request at its
	// own time).
	QuantumS float64 `json:"quantum_s"`
	// SliceS is a sliced duet's turn (load.slice): the two sides' loads
	// took turns of this many seconds; 0 when both were loaded at once.
	SliceS    float64 `json:"slice_s,omitempty"`
	WarmupS   float64 `json:"warmup_s"`
	DurationS float64 `json:"duration_s"`
	TimeoutS  float64 `json:"timeout_s"`
	MaxConns  int     `json:"max_conns"`
	Target    string  `json:"target"`
	// VariantWarmupS is load sent to a variant's freshly started services
	// before their first loaded trial (load.variant_warmup); 0 for none.
	VariantWarmupS float64 `json:"variant_warmup_s,omitempty"`
	// VariantWarmupRate is the open-model rate of that warm-up in
	// requests per second (load.variant_warmup_rate); 0 for each trial's.
	VariantWarmupRate float64 `json:"variant_warmup_rate,omitempty"`
	// VariantWarmupUsers is that warm-up's closed-model users
	// (load.variant_warmup_users); 0 for none.
	VariantWarmupUsers int `json:"variant_warmup_users,omitempty"`
	// VariantWarmupUntil ends a variant warm-up before VariantWarmupS once
	// the JVMs settled (load.variant_warmup_until); nil for none.
	VariantWarmupUntil *WarmupUntil `json:"variant_warmup_until,omitempty"`
	// SampleS is the probes' sampling interval.
	SampleS float64 `json:"sample_s"`
}

// Matrix is the settings a load test's steps were repeated under.
type Matrix struct {
	// CPUs are the CPU quotas in cores (matrix.cpus): step i ran under
	// CPUs[i / len(load steps)].
	CPUs []float64 `json:"cpus,omitempty"`
}

// Host describes the machine a run happened on.
type Host struct {
	Name        string `json:"name"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Kernel      string `json:"kernel"`
	CPUModel    string `json:"cpu_model"`
	Cores       int    `json:"cores"`
	MemoryBytes uint64 `json:"memory_bytes"`
}

// Layout says where costs were read from and which CPUs ran what.
type Layout struct {
	// Cgroup is "v1", "v2" or "none" (costs read from /proc).
	Cgroup string `json:"cgroup"`
	// CgroupNote says why no cgroup was used, when none was.
	CgroupNote string `json:"cgroup_note,omitempty"`
	// LoadCPUs runs toll itself: load generator, sink, probes.
	LoadCPUs string `json:"load_cpus,omitempty"`
	// ServiceCPUs is the default CPU set of the services.
	ServiceCPUs string `json:"service_cpus,omitempty"`
	// DuetCPUs are the CPU sets of the baseline's services and of the
	// other variants' services in a duet.
	DuetCPUs []string `json:"duet_cpus,omitempty"`
	// WarmupCPUs are the CPUs the services ran on during their variant
	// warm-ups (pinning.warmup: all): every CPU toll could use. Empty when
	// they kept their own.
	WarmupCPUs string `json:"warmup_cpus,omitempty"`
	// Network is "host" (the machine's network) or "isolated" (a network
	// namespace of the run's own, with only loopback). Empty in manifests
	// written before toll recorded it: those runs used the host's network.
	Network string `json:"network,omitempty"`
	// Place is where the services ran when not on this machine:
	// "kubernetes" (toll run --kubernetes). Empty for a local run.
	Place string `json:"place,omitempty"`
	// Kubernetes describes a run in a cluster; nil for a local run.
	Kubernetes *KubernetesLayout `json:"kubernetes,omitempty"`
}

// KubernetesLayout says where in a cluster a run's services ran.
type KubernetesLayout struct {
	// Namespace holds every object the run created.
	Namespace string `json:"namespace"`
	// Placement is "same-node" (the variants' pods on one node) or
	// "node-per-variant".
	Placement string `json:"placement"`
	// LoadPlacement is "prefer-other-node" (the load Jobs off the service
	// pods' nodes where the cluster had room) or "other-node" (always).
	LoadPlacement string `json:"load_placement,omitempty"`
	// Nodes are the nodes the variants' service pods ran on, by variant,
	// each node once in the order first used: more than one when the
	// variant was started more than once and the scheduler moved it (each
	// trial's Node says which). Results written before this was a set
	// name one node, the last pod's, which reads as a set of one.
	Nodes map[string]NodeSet `json:"nodes,omitempty"`
	// Pods are the run's pods and the node the scheduler put each on, in
	// the order they were scheduled: each variant's sink, each start of a
	// variant's services, each trial's load pods.
	Pods []KubernetesPod `json:"pods,omitempty"`
	// Label is the value of the toll.run label on every object of the run.
	Label string `json:"label"`
}

// NodeSet is the nodes a variant's pods ran on, each once.
type NodeSet []string

// Add adds node to the set unless it holds it or node is "", and reports
// whether it added it.
func (n *NodeSet) Add(node string) bool {
	if node == "" || slices.Contains(*n, node) {
		return false
	}
	*n = append(*n, node)
	return true
}

// UnmarshalJSON reads a list of nodes, or one node's name, as results
// written before the set was a list have it.
func (n *NodeSet) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*n = nil
		n.Add(one)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("nodes: want a node's name or a list of them: %w", err)
	}
	*n = list
	return nil
}

// KubernetesPod is one pod of a run in a cluster and where it ran.
type KubernetesPod struct {
	Name string `json:"name"`
	// Component is "services", "sink" or "load".
	Component string `json:"component"`
	Variant   string `json:"variant"`
	// Trial is the index of the trial a load pod ran; 0 for other pods.
	Trial int `json:"trial,omitempty"`
	// Node is the pod's spec.nodeName once it was scheduled.
	Node string `json:"node"`
}

// WarmupUntil is load.variant_warmup_until: a variant warm-up ends once
// every measured JVM compiled less than JITBelowMs of JIT time per second of
// wall time over the trailing OverS seconds.
type WarmupUntil struct {
	JITBelowMs float64 `json:"jit_below_ms"`
	OverS      float64 `json:"over_s"`
	// Auto is set when toll chose the warm-up (the scenario named none):
	// a JVM until it settles, other runtimes for NoJVMS.
	Auto   bool    `json:"auto,omitempty"`
	NoJVMS float64 `json:"no_jvm_s,omitempty"`
	// JVMUsers is, for a warm-up toll chose, the closed-model users that
	// warm a JVM before the trials' own load (each phase until the JIT
	// settles, both within the warm-up's maximum).
	JVMUsers int `json:"jvm_users,omitempty"`
	// JVMRateTimes is, for a warm-up toll chose under an open-model
	// load, how many times each trial's rate a JVM is sent between its
	// users and the trials' own load, at most JVMUsers requests in flight.
	JVMRateTimes float64 `json:"jvm_rate_times,omitempty"`
}

// ScheduleChoice records what toll chose of a run's schedule, and why, as
// codes (scenario.Schedule): Mode is set when toll chose the mode (ModeWhy
// "duet" or "together", or why it kept one variant at a time: "one-variant",
// "latency-primary", "pinning-off", "one-cpu", "matrix", "connections", "cluster",
// "find-max"), Restart when it chose the restart policy (RestartWhy
// "no-jvm", "jvm" or "image"), Warmup when it chose each trial's warm-up.
type ScheduleChoice struct {
	Mode       bool   `json:"mode,omitempty"`
	ModeWhy    string `json:"mode_why,omitempty"`
	Restart    bool   `json:"restart,omitempty"`
	RestartWhy string `json:"restart_why,omitempty"`
	// Warmup is set when toll chose the warm-up load before each window
	// (the manifest's load.warmup_s).
	Warmup bool `json:"warmup,omitempty"`
	// StepsShareStarts is set when each round ran every load step under
	// the same start of the services (scenario.StepsShareStarts), rather
	// than each step's rounds in turn.
	StepsShareStarts bool `json:"steps_share_starts,omitempty"`
	// Unchosen says why toll chose none of the schedule of a scenario
	// that names no mode: "rounds", the scenario fixes its rounds, and
	// toll chooses a schedule only with them (precision mode).
	Unchosen string `json:"unchosen,omitempty"`
	// BusyPct is set where toll loaded fewer sides at once than it first
	// chose (ModeWhy "together-busy" or "busy"): how busy, in percent, the
	// CPUs the sides shared were through the round, among the run's
	// first, that showed it, in the mode toll chose before. The trials
	// until then are kept in AsideDir, not compared.
	BusyPct float64 `json:"busy_pct,omitempty"`
}

// Precision is a run in precision mode: its rounds ran until every primary
// cost of every variant was within its target, or the budget was spent.
type Precision struct {
	// Targets maps each primary cost to its 95% half-width in percent.
	Targets map[string]float64 `json:"targets"`
	// BudgetS is the longest the run could take, in seconds.
	BudgetS   float64 `json:"budget_s"`
	MinRounds int     `json:"min_rounds"`
	MinStarts int     `json:"min_starts"`
	// Why says how precision mode was chosen.
	Why string `json:"why"`
	// SpentS is the time, in seconds, the run spent before its latest
	// continuation (toll run --resume): its sittings before, each from its
	// start to its interruption. The budget counts it; absent for a run
	// never resumed.
	SpentS float64 `json:"spent_s,omitempty"`
	// Steps holds how each load step ended, by step index.
	Steps []PrecisionStep `json:"steps,omitempty"`
}

// PrecisionStep is where the stopping rule left one load step.
type PrecisionStep struct {
	Step int `json:"step"`
	// Stop is "reached", "budget", "idle" (an idle step that ran its minimum
	// rounds and starts), "ceded" (out of reach in what was left
	// of the run's budget: its share went to the other load steps), or
	// "continue" for a run that ended
	// otherwise (interrupted, or out of planned rounds).
	Stop     string  `json:"stop"`
	Rounds   int     `json:"rounds"`
	Starts   int     `json:"starts,omitempty"`
	ElapsedS float64 `json:"elapsed_s"`
	// Variant and Cost name the series furthest from its target, HalfPct
	// its half-width and TargetPct its target (HalfPct 0 with no interval).
	Variant   string  `json:"variant,omitempty"`
	Cost      string  `json:"cost,omitempty"`
	HalfPct   float64 `json:"half_pct"`
	TargetPct float64 `json:"target_pct"`
	// StartHalfPct is the part of HalfPct that what differs between
	// starts of the services holds (JVMs started once): what more rounds
	// under these starts would leave.
	StartHalfPct float64 `json:"start_half_pct,omitempty"`
	// MoreRounds, MoreStarts and MoreS estimate what would have reached
	// every target (MoreRounds −1: not within the bounds estimated).
	MoreRounds int     `json:"more_rounds,omitempty"`
	MoreStarts int     `json:"more_starts,omitempty"`
	MoreS      float64 `json:"more_s,omitempty"`
	// Held lists the targets that every variant's interval met after the
	// step's latest round, each with the round from which it has met them
	// without a break: a step that spent its budget on one target says so
	// when it met the others.
	Held []TargetHeld `json:"held,omitempty"`
	// TakenUp is set for a step that spent its share of the budget short
	// of its targets and was taken up again, under a new start, once the
	// other steps had run, with what they left of the budget (a step out
	// of reach cedes its share).
	TakenUp bool `json:"taken_up,omitempty"`
}

// TargetHeld is a precision target that every variant's interval of Cost
// has met from round Round on, ElapsedS into its load step.
type TargetHeld struct {
	Cost     string  `json:"cost"`
	Round    int     `json:"round"`
	ElapsedS float64 `json:"elapsed_s"`
}
