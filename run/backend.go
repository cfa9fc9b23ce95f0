package run

import (
	"fmt"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/scenario"
)

// runsWorkload reports whether b runs trials of workload w: steady load
// every backend runs, start-up and job experiments those that implement
// backend.Startups and backend.Jobs.
func runsWorkload(b backend.Backend, w string) bool {
	switch w {
	case scenario.WorkloadStartup:
		_, ok := b.(backend.Startups)
		return ok
	case scenario.WorkloadJob:
		_, ok := b.(backend.Jobs)
		return ok
	}
	return true
}

// checkRemote refuses what a remote backend cannot run yet, before
// anything starts. A duet, or every variant together, is refused whatever
// the backend: it pins every side to CPUs of one machine.
func checkRemote(s *scenario.Scenario, opt Options) error {
	switch {
	case opt.Resume != "":
		return fmt.Errorf("%s: --resume runs on this machine only", s.Path)
	case !runsWorkload(opt.Remote, s.Workload()):
		return fmt.Errorf("%s: a %s experiment runs on this machine only; in a cluster toll runs load tests", s.Path, s.Workload())
	case s.Concurrent():
		return fmt.Errorf("%s: mode: %s runs on this machine only (it pins every side to CPUs of one machine); --sequential runs the scenario one variant at a time", s.Path, s.Mode)
	case s.Load.Arrival == scenario.ArrivalPoisson:
		return fmt.Errorf("%s: load.arrival: poisson runs on this machine only; in a cluster the load pods send uniform arrivals", s.Path)
	case s.Load.VariantWarmupUntil != nil:
		return fmt.Errorf("%s: load.variant_warmup_until runs on this machine only (it reads the JVMs' hsperfdata here)", s.Path)
	case s.Pinning.Warmup != scenario.WarmupOwnCPUs && !s.Pinning.WarmupAuto:
		return fmt.Errorf("%s: pinning.warmup runs on this machine only; in a cluster there is no variant warm-up", s.Path)
	case s.Load.VariantWarmupRate > 0 || s.Load.VariantWarmupUsers > 0:
		return fmt.Errorf("%s: load.variant_warmup_rate and _users run on this machine only; in a cluster there is no variant warm-up", s.Path)
	case len(s.Matrix.CPUs) > 0:
		return fmt.Errorf("%s: matrix runs on this machine only; in a cluster, give each variant its cpu_limit", s.Path)
	}
	for _, v := range s.Variants {
		if len(v.Prepare) > 0 || len(v.BeforeEach) > 0 {
			return fmt.Errorf("%s: variant %s: prepare and before_each run on this machine only", s.Path, v.Name)
		}
	}
	return nil
}
