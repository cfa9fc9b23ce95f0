package kube

import (
	"fmt"
	"syscall"
	"time"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/scenario"
)

// remoteWarmup is the variant warm-up a cluster gives each start of a
// scenario whose warm-up toll chooses (load.variant_warmup_until, on one
// machine: until the JVMs' JIT settles, read from their hsperfdata there):
// about what a JVM's compilation takes to settle at a trial's load.
const remoteWarmup = time.Minute

// Adapt returns s as a cluster runs it, with a note for the manifest when
// that changed it (backend.Backend): the variant warm-up toll chose
// (until the JVMs settle, which it reads on one machine only) becomes a
// fixed one, remoteWarmup at each trial's load, so that a scenario that
// sets no warm-up runs in a cluster too, and sides at once that toll chose
// (a duet, or every variant together) run one variant at a time. A warm-up the scenario sets is left to Check.
func (r *Runner) Adapt(s *scenario.Scenario) (*scenario.Scenario, string) {
	if s.ChoseConcurrent() {
		// Sides at once that toll chose pin to CPUs of one machine: a
		// cluster runs one variant at a time.
		c := *s
		c.KeepOneAtATime(scenario.ScheduleCluster)
		s = &c
	}
	if !s.Load.VariantWarmupAuto {
		return s, ""
	}
	c := *s
	c.Load.VariantWarmupUntil, c.Load.VariantWarmupAuto = nil, false
	c.Load.VariantWarmup = scenario.Duration(remoteWarmup)
	if c.Pinning.WarmupAuto {
		c.Pinning.Warmup, c.Pinning.WarmupAuto = scenario.WarmupOwnCPUs, false
	}
	return &c, fmt.Sprintf("variant warm-up: %s of each trial's load after every start, a fixed warm-up in place of the one toll chooses on one machine "+
		"(until the JVMs' JIT compilation settles, read from their hsperfdata there); set load.variant_warmup to choose another", remoteWarmup)
}

// Check refuses what a cluster cannot run yet, before anything is created
// (backend.Backend). A duet, or every variant together, is refused: it
// pins every side to CPUs of one machine.
func (r *Runner) Check(s *scenario.Scenario, req backend.Request) error {
	switch {
	case req.Resume:
		return fmt.Errorf("%s: --resume runs on this machine only", s.Path)
	case s.Concurrent():
		return fmt.Errorf("%s: mode: %s runs on this machine only (it pins every side to CPUs of one machine); --sequential runs the scenario one variant at a time", s.Path, s.Mode)
	case s.Load.Arrival == scenario.ArrivalPoisson:
		return fmt.Errorf("%s: load.arrival: poisson runs on this machine only; in a cluster the load pods send uniform arrivals", s.Path)
	case s.Load.VariantWarmupUntil != nil:
		return fmt.Errorf("%s: load.variant_warmup_until runs on this machine only (it reads the JVMs' hsperfdata here)", s.Path)
	case s.Pinning.Warmup != scenario.WarmupOwnCPUs && !s.Pinning.WarmupAuto:
		return fmt.Errorf("%s: pinning.warmup runs on this machine only; in a cluster the variant warm-up (load.variant_warmup) runs where the trial's load does", s.Path)
	case s.Load.VariantWarmupRate > 0 || s.Load.VariantWarmupUsers > 0:
		return fmt.Errorf("%s: load.variant_warmup_rate and _users run on this machine only; in a cluster the variant warm-up (load.variant_warmup) is sent at each trial's load", s.Path)
	case len(s.Matrix.CPUs) > 0:
		return fmt.Errorf("%s: matrix runs on this machine only; in a cluster, give each variant its cpu_limit", s.Path)
	}
	for i, svc := range s.Services {
		if svc.StopSignal != "" && svc.Signal() != syscall.SIGTERM {
			return fmt.Errorf("%s: services[%d].stop_signal: in a cluster the kubelet stops a container with its image's stop signal; build service %s's image with STOPSIGNAL %s, or leave stop_signal out", s.Path, i, svc.Name, svc.StopSignal)
		}
	}
	for _, v := range s.Variants {
		if len(v.Prepare) > 0 || len(v.BeforeEach) > 0 {
			return fmt.Errorf("%s: variant %s: prepare and before_each run on this machine only", s.Path, v.Name)
		}
	}
	return nil
}

// RecordsFailedSetup is true: a run that fails before its first start
// still writes its manifest, whose layout names the namespace and label
// of what it created in the cluster (backend.Backend).
func (r *Runner) RecordsFailedSetup() bool { return true }
