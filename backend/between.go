package backend

import (
	"context"
	"time"
)

// Preparer is a Backend with commands to run once before a run's first
// start, after its manifest is written: each variant's prepare command
// (hyperfine's --prepare), which the local backend runs on this machine.
type Preparer interface {
	// Prepare runs them in turn; an error stops the run.
	Prepare(ctx context.Context) error
}

// SinkWatcher is a Backend whose telemetry sinks can end while the run
// goes on. The orchestrator asks after every trial whether the sinks of
// its variants still run: an agent's exports would go nowhere and read as
// none, so the run stops, keeping the trials it finished.
type SinkWatcher interface {
	// SinksAlive returns an error naming each of the variants' sinks that
	// has exited, and nil while they all run.
	SinksAlive(variants ...string) error
}

// StartsAhead is a Backend that starts and warms a variant's services
// ahead of their turn (as Events.StartsAhead asks). The stopping rule
// prices a new start by what it takes: with a warm start waiting for every
// variant, only stopping the current one; and it lets the rounds go on
// under the current start while the next one warms beside them.
type StartsAhead interface {
	// WarmStartsReady returns how many further starts of every variant
	// wait warmed now.
	WarmStartsReady() int
	// WarmingAhead returns how many further starts of every variant are
	// warming beside the rounds now; a new start waits for them.
	WarmingAhead() int
	// WarmsBesideRounds reports whether the further starts the run plans
	// are started and warmed beside its rounds, so that each costs the
	// run the stop of the one before, not a warm-up.
	WarmsBesideRounds() bool
	// WarmedBeside returns what the latest starts warmed beside the
	// rounds took, from their launch until warmed; 0 before any.
	WarmedBeside() time.Duration
	// TurnWarmup returns what a start warmed beside the rounds is
	// expected to take at its turn, the rounds stopped, before any has
	// taken its turn: the part of the run's first warm-up that such a
	// start owes (a JVM's rate phase and the trials' load after it). 0
	// when it owes none.
	TurnWarmup() time.Duration
}
