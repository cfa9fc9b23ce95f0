package run

import (
	"fmt"
	"time"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/plan"
)

// events is what every backend tells the run (backend.Events): its notes,
// its lines of progress, when each trial's measurement begins, each second
// of a trial for the live status line, the budget its variant warm-ups
// are spent from, and the end of a variant's telemetry cycle.
type events struct{ r *runner }

var _ backend.Events = events{}

// Note adds n to the run's notes, once.
func (e events) Note(n string) { e.r.note(n) }

// Say prints a line of progress between the trials' lines.
func (e events) Say(line string) {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	fmt.Fprintln(e.r.opt.Progress, line)
}

// Began notes when the first trial began, for the ETA.
func (e events) Began() { e.r.beginProgress() }

// LiveShown reports whether the run redraws a live status line
// (Options.Live).
func (e events) LiveShown() bool { return e.r.opt.Live }

// Live redraws the live status line.
func (e events) Live(pt *plan.Trial, sec load.Second, cores, share float64) {
	if e.r.opt.Live {
		e.r.status(pt, sec, cores, share)
	}
}

// WarmupCap returns the longest a variant warm-up may take now: in
// precision mode, what is left of the budget; in other runs no bound.
func (e events) WarmupCap() (time.Duration, bool) {
	if e.r.prec == nil {
		return 0, false
	}
	return e.r.prec.warmupCap(), true
}

// WarmupSpent counts a bounded variant warm-up that took d apart from the
// rounds' time.
func (e events) WarmupSpent(d time.Duration) {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	if e.r.prec != nil {
		e.r.prec.warmed(d)
	}
}

// SwapWarmupSpent counts a bounded variant warm-up that took d at the
// turn of a start warmed ahead of it, as WarmupSpent does, and as part of
// what swapping that start in cost.
func (e events) SwapWarmupSpent(d time.Duration) {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	if e.r.prec != nil {
		e.r.prec.warmed(d)
		e.r.prec.swapWarm += d
	}
}

// StartsAhead returns the further starts a run in precision mode plans
// after the current one: 0 in other runs, and while what is left of the
// budget would not hold one's warm-up (roomAhead).
func (e events) StartsAhead() int {
	var beside time.Duration
	if e.r.can.ahead != nil {
		beside = e.r.can.ahead.WarmedBeside()
	}
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	if e.r.prec == nil || !e.r.prec.roomAhead(beside) {
		return 0
	}
	return e.r.prec.ahead
}

// Stopped ends the telemetry cycle of the variant's last trial.
func (e events) Stopped(variant string, counts backend.SinkCounts) error {
	return e.r.endTelemetryCycle(variant, counts)
}
