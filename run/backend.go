package run

import (
	"fmt"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/scenario"
)

// abilities are what a backend does beyond backend.Backend: each of
// package backend's interfaces for a workload or a step of the run, which
// the backend implements or not (nil). They are found once, as the run
// begins, and asked by name from then on.
type abilities struct {
	atOnce   backend.AtOnce      // trials of several variants at once
	startups backend.Startups    // start-up experiments
	jobs     backend.Jobs        // job experiments
	preparer backend.Preparer    // commands before the first start
	watcher  backend.SinkWatcher // sinks that can end mid-run
	ahead    backend.StartsAhead // starts warmed ahead of their turn
}

// abilitiesOf finds what b does beyond backend.Backend.
func abilitiesOf(b backend.Backend) abilities {
	var a abilities
	a.atOnce, _ = b.(backend.AtOnce)
	a.startups, _ = b.(backend.Startups)
	a.jobs, _ = b.(backend.Jobs)
	a.preparer, _ = b.(backend.Preparer)
	a.watcher, _ = b.(backend.SinkWatcher)
	a.ahead, _ = b.(backend.StartsAhead)
	return a
}

// runs reports whether the backend runs trials of workload w: steady load
// every backend runs, start-up and job experiments those that implement
// backend.Startups and backend.Jobs.
func (a abilities) runs(w string) bool {
	switch w {
	case scenario.WorkloadStartup:
		return a.startups != nil
	case scenario.WorkloadJob:
		return a.jobs != nil
	}
	return true
}

// checkBackend refuses, before anything is created, what the run's backend
// cannot run of s: a workload it does not implement, what its own Check
// refuses, and trials at once (a duet, or every variant together) where it
// does not run them.
func checkBackend(s *scenario.Scenario, opt Options) error {
	can := abilitiesOf(opt.Backend)
	if w := s.Workload(); !can.runs(w) {
		return fmt.Errorf("%s: this backend does not run %s experiments", s.Path, w)
	}
	if err := opt.Backend.Check(s, backend.Request{Resume: opt.Resume != ""}); err != nil {
		return err
	}
	if s.Concurrent() && can.atOnce == nil {
		return fmt.Errorf("%s: this backend does not run trials at once (mode: %s)", s.Path, s.Mode)
	}
	return nil
}
