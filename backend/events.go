package backend

import (
	"time"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/plan"
)

// Events is what a backend tells the orchestrator that runs it, which owns
// the manifest, the progress shown to the user and the trial records. It
// is the same for every backend; each tells what it learns (a backend
// whose warm-ups are not bounded asks no budget, one without a load
// generator in toll's process has no live figures). Its methods may be
// called from several goroutines at once.
type Events interface {
	// Note adds a fact about the run to the manifest's notes (a fact noted
	// twice is kept once).
	Note(note string)
	// Say prints a line of progress for the user: a variant warm-up that
	// ended, what earlier runs left that was removed, what was deleted at
	// the end.
	Say(line string)
	// Began is called as each trial's measurement begins; the first call
	// starts the clock of the run's estimate of the time left.
	Began()
	// LiveShown reports whether a live status line is shown: Live is
	// called only then, and its figures need not be gathered otherwise.
	LiveShown() bool
	// Live is called every second of a trial's load with the load
	// generator's figures for it, the measured services' CPU (cores,
	// between the last two samples) and the share of its window the
	// trial's load runs in (a sliced duet's side: 0.5; 0: throughout).
	Live(pt *plan.Trial, sec load.Second, cores, share float64)
	// WarmupCap returns the longest the next variant warm-up may take,
	// and false when there is no bound (a run in precision mode spends
	// its warm-ups from its budget).
	WarmupCap() (time.Duration, bool)
	// WarmupSpent counts a bounded variant warm-up that took d.
	WarmupSpent(d time.Duration)
	// SwapWarmupSpent counts, as WarmupSpent does, a bounded variant
	// warm-up that took d at the turn of a start warmed ahead of it, the
	// rounds stopped meanwhile: part of what swapping that start in cost.
	SwapWarmupSpent(d time.Duration)
	// StartsAhead returns how many further starts of every variant's
	// services the run expects after the one being warmed: a backend
	// may start and warm them beside it, all at once, and use one at
	// each new start. 0 when it expects none or cannot tell.
	StartsAhead() int
	// Stopped is called once a variant's services have stopped, with a
	// reading of its telemetry sink's counts: they end the telemetry
	// cycle of the variant's last trial, whose record the orchestrator
	// writes again. Its error is the stop's.
	Stopped(variant string, counts SinkCounts) error
}
