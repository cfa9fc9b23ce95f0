package scenario

import (
	"fmt"
	"time"
)

// IntervalRounds is the least number of rounds that gives a change an
// interval.
const IntervalRounds = 2

// leastPrecisionRun estimates the least time a run in precision mode
// takes to give every variant's primary costs an interval: the variants'
// warm-up at its shortest (every variant's run at once), then
// IntervalRounds rounds of every load step, each trial its warm-up and its
// window. Trials run at once (a duet, or every variant together) count
// once per pair or round; the services' starts and the analysis between
// rounds are left out, so the estimate errs short. how says how it was
// reached, for an error.
//
//	least = variant warm-up + 2 × steps × trials per round × (warmup + duration)
func leastPrecisionRun(s *Scenario) (least time.Duration, how string) {
	variants := len(s.Variants)
	trials, warmups := variants, 1
	switch s.Mode {
	case ModeDuet:
		trials = max(variants-1, 1)
	case ModeTogether:
		trials = 1
	}
	warm := s.Load.VariantWarmup.D()
	if u := s.Load.VariantWarmupUntil; u != nil {
		// A warm-up until a JVM settles ends, at the soonest, once its
		// compilation has stayed low for Over; a service that runs no
		// JVM gets DefaultNoJVMWarmup.
		warm = min(warm, max(u.Over.D(), DefaultNoJVMWarmup))
	}
	trial := s.Load.Warmup.D() + s.Load.Duration.D()
	steps := len(s.Steps())
	least = time.Duration(warmups)*warm + time.Duration(IntervalRounds*steps*trials)*trial
	stepsText := fmt.Sprintf("%d load steps", steps)
	if steps == 1 {
		stepsText = "1 load step"
	}
	how = fmt.Sprintf("%d rounds × %s × %d trials × (%s warm-up + %s window)", IntervalRounds, stepsText, trials, s.Load.Warmup.D(), s.Load.Duration.D())
	if warm > 0 {
		how = fmt.Sprintf("a variant warm-up of %s + %s", warm, how)
	}
	return least, how
}

// budgetHolds checks that a precision run's budget can hold the least run
// that gives an interval (leastPrecisionRun): a budget shorter than that
// ends the run with no interval at all.
func (v *validator) budgetHolds(s *Scenario) {
	b := s.Precision.Budget.D()
	least, how := leastPrecisionRun(s)
	if b <= 0 || b >= least {
		return
	}
	v.fail("precision.budget", "%s cannot hold the least run that gives an interval, about %s (%s): give at least %s, or fix rounds",
		b, least.Round(time.Second), how, least.Round(time.Second))
}
