package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Precision defaults and bounds. A run in precision mode runs rounds until
// every primary cost of every variant is within its target, or the budget
// is spent (docs/precision.md).
const (
	// DefaultPrecisionPct is the 95% half-width asked of each primary cost.
	DefaultPrecisionPct = 3.0
	// DefaultBudget is the longest a run in precision mode takes when the
	// scenario names no budget: long enough for a quick service to reach
	// ±3% on a quiet machine, short enough to wait for.
	DefaultBudget = 10 * time.Minute
	// DefaultPrecisionCost is the primary cost when none is named.
	DefaultPrecisionCost = "cpu_per_request"
	// MinPrecisionPct and MaxPrecisionPct bound a target: below 0.1% the
	// run-level term alone keeps any interval wider; above 50% an
	// interval says little.
	MinPrecisionPct = 0.1
	MaxPrecisionPct = 50.0
	// MaxBudget bounds a budget.
	MaxBudget = 24 * time.Hour
	// DefaultJITBelow, DefaultJITOver and DefaultJVMWarmupMax are the
	// variant warm-up toll chooses for a JVM: until its compilation falls
	// below 5 ms per second over 10 s, at most 5 minutes.
	DefaultJITBelow     = 5 * time.Millisecond
	DefaultJITOver      = 10 * time.Second
	DefaultJVMWarmupMax = 5 * time.Minute
	// DefaultJVMWarmupUsers is the closed-model users that warm a JVM
	// first, before the trials' own load (each phase until the JIT
	// settles, both within DefaultJVMWarmupMax). Enough for a server that
	// answers each request late (a 40 ms delayed acknowledgement, a
	// downstream call) to see hundreds of requests a second, which is what
	// brings its code to the JIT's thresholds: two users sent 50 a second
	// to such a server, and its warm-up took twice as long. Users never
	// send faster than a JVM answers, however cold.
	DefaultJVMWarmupUsers = 16
	// DefaultJVMWarmupRateTimes is how many times each trial's rate the
	// JVM warm-up toll chooses sends, spaced as the trials space them,
	// between its users and the trials' own load. Code compiled under
	// back-to-back requests meets other paths at the first spaced ones;
	// HotSpot compiles it again some thousands of calls later, which at
	// the trials' rate falls minutes into the rounds: four times that rate
	// takes it into the warm-up.
	DefaultJVMWarmupRateTimes = 4
	// DefaultNoJVMWarmup is the variant warm-up toll chooses for services
	// that run no JVM: long enough for caches and connection pools.
	DefaultNoJVMWarmup = 10 * time.Second
	// PrecisionMaxRounds is the most rounds a run in precision mode plans
	// per load step (Rounds); the stopping rule ends it sooner.
	PrecisionMaxRounds = 300
)

// PrecisionCosts maps the names a scenario may give a primary cost to
// the names of the costs toll reports.
var precisionCosts = map[string]string{
	"cpu_per_request":       "cpu_per_request_ms",
	"cpu_per_request_nojit": "cpu_per_request_nojit_ms",
	"cpu_cores":             "cpu_cores",
	"latency_mean":          "latency_mean_ms",
	"latency_p90":           "latency_p90_ms",
	"latency_p99":           "latency_p99_ms",
	"throughput":            "throughput_rps",
}

// PrecisionCostNames returns the names a precision cost may take.
func PrecisionCostNames() []string {
	return []string{"cpu_per_request", "cpu_per_request_nojit", "cpu_cores", "latency_mean", "latency_p90", "latency_p99", "throughput"}
}

// Percent is a percentage written "3%" or 3.
type Percent float64

// UnmarshalYAML reads "3%", "3 %" or 3.
func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &nodeError{line: n.Line, msg: "want a percentage such as 3%"}
	}
	v, err := ParsePercent(n.Value)
	if err != nil {
		return &nodeError{line: n.Line, msg: err.Error()}
	}
	*p = Percent(v)
	return nil
}

// ParsePercent reads "3%", "3 %" or "3" as 3.
func ParsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentage (want e.g. 3%%)", s)
	}
	return v, nil
}

// PrecisionCost is one primary cost and its target: a name alone
// ("cpu_per_request", the block's target) or {cost: NAME, target: 2%}.
type PrecisionCost struct {
	Cost   string  `yaml:"cost"`
	Target Percent `yaml:"target"`
}

// UnmarshalYAML reads a name or a mapping.
func (c *PrecisionCost) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		c.Cost = n.Value
		return nil
	}
	type plain PrecisionCost
	return n.Decode((*plain)(c))
}

// Precision is a run in precision mode: how precise its primary costs must
// be and how long it may take.
type Precision struct {
	// Target is the 95% half-width asked of every cost that names none
	// (default 3%).
	Target Percent `yaml:"target"`
	// Costs are the primary costs (default: cpu_per_request).
	Costs []PrecisionCost `yaml:"costs"`
	// Budget is the longest the run may take (default 10m).
	Budget Duration `yaml:"budget"`
	// MinRounds is the least number of rounds before any stop (default 5).
	MinRounds int `yaml:"min_rounds"`
	// MinStarts is the least number of starts of JVMs started once before
	// any stop (default 2).
	MinStarts int `yaml:"min_starts"`
	// Steps says how the load steps of services started once take their
	// rounds: StepsShared (the default), every step in each round under
	// the same start, or StepsInTurn, each step's rounds after the last
	// step's, as a published benchmark ran them (StepsShareStarts).
	Steps string `yaml:"steps"`
	// On is set by validation when the run is in precision mode: the
	// scenario has a precision block, or fixes no rounds.
	On bool `yaml:"-"`
	// Why says how precision mode was chosen, for the manifest.
	Why string `yaml:"-"`
}

// The values of precision.steps.
const (
	StepsShared = "shared"
	StepsInTurn = "in-turn"
)

// Targets returns each primary cost (as toll reports it) and its target
// in percent.
func (p *Precision) Targets() map[string]float64 {
	out := map[string]float64{}
	for _, c := range p.Costs {
		t := float64(c.Target)
		if t == 0 {
			t = float64(p.Target)
		}
		out[precisionCosts[c.Cost]] = t
	}
	return out
}

// precision checks and completes s.Precision: precision mode is on when
// the scenario has a precision block, or when it is a load test that
// fixes no rounds.
func (v *validator) precision(s *Scenario) {
	p := &s.Precision
	has := v.present("precision")
	switch {
	case has && v.present("rounds"):
		v.fail("precision", "a run stops either when its intervals are precise enough (precision) or after a fixed number of rounds (rounds), not both: remove one")
		return
	case has && (s.Workload() != WorkloadLoad || v.asStartup):
		v.fail("precision", "applies to load tests; a %s experiment runs a fixed number of repetitions", s.Workload())
		return
	case !has && (v.present("rounds") || s.Workload() != WorkloadLoad || v.asStartup):
		return
	}
	p.On = true
	s.Rounds = min(PrecisionMaxRounds, MaxTrials/max(len(s.Steps())*len(s.Variants), 1))
	p.Why = "the scenario's precision"
	if !has {
		p.Why = "the scenario fixes no rounds"
	}
	if v.present("starts") {
		v.fail("starts", "toll chooses how many times to start the services in precision mode (at least precision.min_starts); leave starts out, or fix rounds instead")
		return
	}
	if v.warmupChosen(s) {
		s.Load.VariantWarmup = Duration(DefaultJVMWarmupMax)
		s.Load.VariantWarmupUntil = &WarmupUntil{JITBelow: Duration(DefaultJITBelow), Over: Duration(DefaultJITOver)}
		s.Load.VariantWarmupAuto = true
		if !v.present("pinning.warmup") && !s.Pinning.Off && !hasImage(s) {
			s.Pinning.Warmup, s.Pinning.WarmupAuto = WarmupAllCPUs, true
		}
	}
	if !v.present("precision.target") {
		p.Target = DefaultPrecisionPct
	}
	v.percent("precision.target", float64(p.Target))
	if !v.present("precision.budget") {
		p.Budget = Duration(DefaultBudget)
	}
	if b := p.Budget.D(); b <= 0 || b > MaxBudget {
		v.fail("precision.budget", "%s is not between 0 and toll's limit of %s", b, MaxBudget)
	} else {
		v.budgetHolds(s)
	}
	if len(p.Costs) == 0 {
		p.Costs = []PrecisionCost{{Cost: DefaultPrecisionCost}}
	}
	seen := map[string]bool{}
	for i, c := range p.Costs {
		f := fmt.Sprintf("precision.costs[%d]", i)
		if _, ok := precisionCosts[c.Cost]; !ok {
			v.fail(f, "%q is not a primary cost toll can aim at: one of %s", c.Cost, strings.Join(PrecisionCostNames(), ", "))
		}
		if strings.HasPrefix(c.Cost, "latency_") && s.Mode == ModeTogether {
			v.fail(f, "%q: with mode: together every side waits for the others' CPU, so latencies do not compare; aim at a CPU cost, or load one variant at a time", c.Cost)
		}
		if seen[c.Cost] {
			v.fail(f, "%q is named twice", c.Cost)
		}
		seen[c.Cost] = true
		if c.Target != 0 {
			v.percent(f+".target", float64(c.Target))
		}
	}
	switch {
	case !v.present("precision.min_rounds"):
		p.MinRounds = 5
	case p.MinRounds < 2 || p.MinRounds > MaxRounds:
		v.fail("precision.min_rounds", "must be between 2 and %d, not %d: an interval needs two rounds", MaxRounds, p.MinRounds)
	}
	if p.Steps != "" && p.Steps != StepsShared && p.Steps != StepsInTurn {
		v.fail("precision.steps", "%q is not %q or %q", p.Steps, StepsShared, StepsInTurn)
	}
	switch {
	case !v.present("precision.min_starts"):
		p.MinStarts = 2
	case p.MinStarts < 1 || p.MinStarts > MaxRounds:
		v.fail("precision.min_starts", "must be between 1 and %d, not %d", MaxRounds, p.MinStarts)
	}
}

// hasImage reports whether a service of s runs as a container, whose
// CPUs toll sets once at its start.
func hasImage(s *Scenario) bool {
	for _, svc := range s.Services {
		if svc.Image != "" {
			return true
		}
	}
	return false
}

// warmupChosen reports whether toll chooses the variant warm-up of s: a
// load test in precision mode that starts its services once (per start)
// and names none. A scenario that restarts them every round or trial
// measures services that fresh on purpose, and a warm-up until a JVM
// settles would take minutes each time.
func (v *validator) warmupChosen(s *Scenario) bool {
	return !v.present("rounds") && s.Workload() == WorkloadLoad && !v.asStartup && s.Restart == RestartOnce &&
		!v.present("load.variant_warmup") && !v.present("load.variant_warmup_until") &&
		!v.present("load.variant_warmup_rate") && !v.present("load.variant_warmup_users")
}

// percent checks a precision target against its bounds.
func (v *validator) percent(field string, pct float64) {
	if pct < MinPrecisionPct || pct > MaxPrecisionPct {
		v.fail(field, "%g%% is not between %g%% and %g%%: below, the run-level term alone keeps every interval wider; above, an interval says little", pct, MinPrecisionPct, MaxPrecisionPct)
	}
}
