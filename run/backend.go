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

// checkBackend refuses, before anything is created, what the run's backend
// cannot run of s: a workload it does not implement, and what its own
// Check refuses.
func checkBackend(s *scenario.Scenario, opt Options) error {
	if w := s.Workload(); !runsWorkload(opt.Backend, w) {
		return fmt.Errorf("%s: this backend does not run %s experiments", s.Path, w)
	}
	return opt.Backend.Check(s, backend.Request{Resume: opt.Resume != ""})
}
