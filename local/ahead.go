package local

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/sink"
)

// A run's first start warms alone: nothing has measured what its warm-up
// asks of the CPUs, and spares warmed beside it double a demand that keeps
// two CPUs busy for minutes (spareRoom). Its rounds then leave most of the
// machine idle: a duet at 200 requests a second keeps less than half of a
// CPU busy. So once the rounds begin, the next starts of every variant
// start and warm beside them, at idle priority on the CPUs toll may use
// (pinning.warmup: all), in idle cgroups where the kernel has them and
// toll runs in the run's tree (joinTree): an idle group runs only where
// its siblings, the rounds' services and toll, leave a CPU idle, and is
// preempted as soon as one of them wakes, so the spares use every CPU's
// idle time (the Java agents' ten spare JVMs warmed in 5–6 minutes on
// both CPUs, 8–10 on the load generator's alone, and came to their turn
// with their compilers near quiet). Elsewhere a thread at idle priority
// in a group of its own takes its group's share of a CPU from the
// services of other groups, and the spares keep to the CPUs that no
// service of the rounds runs on, where there is one (besideCPUs), and
// to every one otherwise, where every side meets them alike. Their CPU is counted
// among each trial's neighbours, the same for both sides of a duet; they
// stay at idle priority until their turn. When the run asks for a new start, the
// spares take the place of the current one, warm already; one still
// warming is waited for, which costs less than a warm-up from cold.
//
// In a duet or together, what the warm-up takes from the CPUs falls on
// every side of a trial alike. One variant at a time, it must fall on
// every trial of a round alike: a CPU kept busy by a neighbour, even at
// idle priority, never halts, and on a virtual machine a halted CPU wakes
// slowly (a Spring Boot service's mean latency read 6.4 ms alone and 3.8
// ms beside a warming start, its CPU per request 3% less). So one variant
// at a time, the spares start with a round's first trial, their warm-up's
// load begins with the next round's (awaitNextRound: a round's first
// trial beside a JVM starting on the load generator's CPU and its second
// beside the load of a warm-up's first seconds read EaseAgent's mean
// latency at a quarter of the other's, and four times it), and once its
// rules end it, its load goes on until that round has ended (holdRound):
// every round runs beside a warm-up throughout, or beside none.

// aheadWarm is a warm-up of starts ahead of their turn that runs beside
// the rounds.
type aheadWarm struct {
	cancel context.CancelFunc
	done   chan struct{}
	starts int // the starts of every variant it warms
	// beside is how its spares warm.
	beside besideRounds
	// holding is set once its rules have ended it and it holds its load
	// until the end of round, the round then under way, which closing
	// release ends (endRound). Guarded by the backend's mu.
	round   roundKey
	holding bool
	release chan struct{}
	once    sync.Once
	// began is the round under way when its spares began to start, and
	// next is closed when a later round begins (enterRound) or a new start
	// is due (endRound).
	began    roundKey
	next     chan struct{}
	nextOnce sync.Once
	// begun is set once a later round has begun (enterRound): the round
	// its load began with is the backend's warmBegan. Guarded by the
	// backend's mu.
	begun bool
	// spares are the variant keys of the spares it warms once started,
	// and waited is set once a new start waits for them (awaitAhead).
	// Guarded by the backend's mu.
	spares []string
	waited bool
}

// roundKey names a round: its load step and its number within the step
// (plan.Trial's Step and Round).
type roundKey struct{ step, round int }

// endRound ends the load aw holds until its round's end, and the wait for
// a later round (a new start is due: no round will come).
func (aw *aheadWarm) endRound() {
	aw.once.Do(func() { close(aw.release) })
	aw.nextRound()
}

// nextRound tells aw that a round after the one it began in has begun.
func (aw *aheadWarm) nextRound() {
	if aw.next != nil {
		aw.nextOnce.Do(func() { close(aw.next) })
	}
}

// awaitNextRound waits, one variant at a time, for the first trial of a
// round after the one in which aw's spares began to start: their warm-up's
// load then begins with a round. It reports false if ctx ended first.
func (aw *aheadWarm) awaitNextRound(ctx context.Context) bool {
	if aw.next == nil {
		return true
	}
	select {
	case <-aw.next:
		return true
	case <-ctx.Done():
		return false
	}
}

// warmAheadOf starts and warms, beside the rounds, the further starts of
// every variant that the run expects (Events.StartsAhead) and that no
// spare waits for yet, when the services are JVMs, warm-ups may use every
// CPU at idle priority, and none is warming already. sides are the trials
// about to run (a duet's, or one variant's at the start of a round); their
// load shapes the spares' warm-up.
func (b *Backend) warmAheadOf(sides []*plan.Trial) {
	if !b.aheadBesideRounds() || len(sides) == 0 {
		return
	}
	b.mu.Lock()
	busy := b.ahead != nil
	b.mu.Unlock()
	if busy {
		return
	}
	var owed []*plan.Trial
	for _, v := range b.s.Variants {
		if b.runningOf(v.Name) == nil {
			return // a variant between its stop and its start
		}
		pt := *sides[0]
		pt.Variant, pt.Pair, pt.Index = v.Name, "", 0
		owed = append(owed, &pt)
	}
	want := b.startsToWarm(owed)
	n := aheadAtOnce(want, b.warmShared, b.warmShare)
	if n == 0 || !b.anyJVM(owed) {
		return
	}
	if n < want && !b.oneNoted {
		b.oneNoted = true
		b.note(fmt.Sprintf("starts ahead of their turn warm beside the rounds one at a time, each ready as soon as it can be: the last variant warm-up's services used %.0f%% of the machine's CPUs, and starts warmed together would share what the rounds leave", 100*b.warmShare))
	}
	ctx, cancel := context.WithCancel(context.Background())
	aw := &aheadWarm{cancel: cancel, done: make(chan struct{}), starts: n, release: make(chan struct{}),
		beside: besideRounds{skipRate: skipsRateBeside(b.s, true, b.warmShared, b.warmShare)}}
	b.mu.Lock()
	b.ahead = aw
	if !b.s.Concurrent() {
		aw.began, aw.next = b.round, make(chan struct{})
	}
	b.mu.Unlock()
	go func() {
		defer close(aw.done)
		defer cancel()
		b.warmAhead(ctx, aw, owed, n)
		b.mu.Lock()
		b.ahead = nil
		b.mu.Unlock()
	}()
}

// aheadAtOnce returns how many of n starts to warm beside the rounds at
// once, when the run's last warm-up that had the CPUs to itself used
// share of the machine's CPUs (known: one has run). Beside the rounds,
// spares share what the rounds leave of the CPUs: where a warm-up keeps
// them busy (spareRoom or more: a JVM that compiles more than it waits),
// starts warmed together are each ready only when all are, and one at a
// time the first is ready as soon as it can be, each later one no later
// (Sermant's two Spring Boot JVMs warmed one start in 5 minutes, two at
// once in 11 minutes 39 seconds, too late for a 20-minute budget). A
// warm-up that leaves most of the CPUs idle waits more than it computes,
// and several starts warm together in little more time than one.
func aheadAtOnce(n int, known bool, share float64) int {
	if n > 1 && !roomForSpares(known, share) {
		return 1
	}
	return n
}

// aheadBesideRounds reports whether the run's further starts are warmed
// beside its rounds: warm-ups may use every CPU at idle priority and end
// when the JVMs settle, the run plans its starts, and nothing is profiled.
func (b *Backend) aheadBesideRounds() bool {
	return b.warmupCPUs != "" && b.s.Load.VariantWarmupUntil != nil && b.events != nil && b.profilers == nil
}

// WarmsBesideRounds implements backend.StartsAhead: the starts the run
// plans are started and warmed beside its rounds (aheadBesideRounds), and
// every variant's services may run twice at once, so that a new start
// costs the run the stop of the one before, not a warm-up.
func (b *Backend) WarmsBesideRounds() bool {
	if !b.aheadBesideRounds() {
		return false
	}
	for _, v := range b.s.Variants {
		if !b.twice(v.Name) {
			return false
		}
	}
	return true
}

// startsToWarm returns how many further starts of each of owed's variants
// to warm beside the rounds: what the run expects, less those waiting
// already, within maxSpares and what memory holds, and none for services
// that must not run twice at once (sparesWanted).
func (b *Backend) startsToWarm(owed []*plan.Trial) int {
	n := b.events.StartsAhead() - b.WarmStartsReady()
	if n <= 0 {
		return 0
	}
	return b.sparesRoom(owed, n)
}

// warmAhead starts n spares of each of owed's variants and warms them at
// idle priority on the warm-up CPUs, all at once, until their JVMs settle
// or their cost stops moving (the warm-up's own rules) or the budget ends,
// and then shelves them, still at idle priority, for their turn. It says
// and notes what it did; a spare that cannot start or warm is noted, and
// stopped.
func (b *Backend) warmAhead(ctx context.Context, aw *aheadWarm, owed []*plan.Trial, n int) {
	began := time.Now()
	// They start at idle priority on as many of the CPUs beside the
	// rounds as their own (bootCPUs): a JVM's start keeps a CPU busy for
	// seconds, and outside an idle group, on the services' CPUs, it would
	// take them from the rounds. Where no CPU is apart from the rounds'
	// services and there are no idle groups, a duet's or every variant's
	// sides meet a start alike, and there spares start at their own
	// priority on their own CPUs: started at idle priority beside them,
	// with no CPU of their own to take, they came to their turn compiling
	// harder (the Java agents' ten JVMs at 16–62 ms/s through their
	// rounds, where the first start's compiled at 4–16).
	beside, apart := b.warmupCPUs, false
	if !b.idleGroups {
		beside, apart = b.besideCPUs()
	}
	idleOn := ""
	if apart || !b.s.Concurrent() || b.idleGroups {
		idleOn = beside
	}
	spares, variant, err := b.launchSpares(ctx, owed, n, idleOn)
	if err != nil {
		if ctx.Err() == nil {
			b.note(fmt.Sprintf("a start of %s ahead of its turn, beside the rounds: %v; its next start begins and warms then", variant, err))
		}
		b.dropSpares(spares)
		return
	}
	if !aw.awaitNextRound(ctx) {
		b.dropSpares(spares)
		return
	}
	for _, sp := range spares {
		// A spare that cannot run at idle priority would take its CPU
		// from the rounds' services: none warms beside them then.
		unwiden, all := b.widenForWarmup([]string{sp.Variant}, beside)
		b.mu.Lock()
		st := b.running[sp.Variant]
		st.unwiden, st.idleOn, st.skippedRate = unwiden, beside, aw.beside.skipRate
		b.mu.Unlock()
		if !all {
			b.note("starts ahead of their turn were not warmed beside the rounds: a service could not be moved to idle priority; the next starts begin and warm then")
			b.dropSpares(spares)
			return
		}
	}
	b.mu.Lock()
	for _, sp := range spares {
		aw.spares = append(aw.spares, sp.Variant)
	}
	waited := aw.waited
	b.mu.Unlock()
	if waited {
		b.spreadSpares(aw)
	}
	// load.variant_warmup bounds a warm-up that has the CPUs to itself
	// and is spent from the budget. Beside the rounds a warm-up costs the
	// run no time and gets only what the rounds leave of the CPUs: it runs
	// until its own rules end it, for at most what is left of the budget.
	// Ten JVMs with agents, stopped after 5 minutes so, were swapped in
	// still compiling, their CPU per request 15–40% above their earlier
	// starts'. While a JVM's compilers are busy, its steady rule's spans
	// hold as many requests as those of the last warm-up with the CPUs to
	// itself (steadyRule): on what the rounds leave, a span of seconds
	// holds too little of a warm-up. Its last phase, at the trials' own
	// load, ends only once they are not (warmPhases): the queue they
	// work off here would stop the rounds at its turn. Where it skipped
	// its rate phase, that last phase also sends as many requests as the
	// rate phase sent (inPlaceOfRate), for the same reason.
	longest := b.s.Load.VariantWarmup.D()
	if most, ok := b.events.WarmupCap(); ok {
		longest = most
	}
	b.mu.Lock()
	spans := b.warmSpans
	b.mu.Unlock()
	phases, err := b.warmPhases(ctx, spares, make([]bool, len(spares)), longest, true, spans, turnNone, &aw.beside)
	if err != nil {
		if ctx.Err() == nil {
			b.note(fmt.Sprintf("starts ahead of their turn, beside the rounds: %v; the next starts begin and warm then", err))
		}
		b.dropSpares(spares)
		return
	}
	b.keepWarmups(spares, phases, make([]*sink.Counts, len(spares)), longest)
	if !b.s.Concurrent() {
		b.holdRound(ctx, spares)
	}
	b.shelveSpares(spares)
	starts := "1 more start"
	if n > 1 {
		starts = fmt.Sprintf("%d more starts", n)
	}
	took := time.Since(began)
	b.mu.Lock()
	b.warmedBeside = took
	b.mu.Unlock()
	b.say(fmt.Sprintf("%s of each variant warmed beside the rounds, ahead of their turn, in %s", starts, took.Round(time.Second)))
	on := "every CPU it may use"
	if apart {
		on = "CPUs " + beside + ", which no service of the rounds runs on"
	}
	b.note(fmt.Sprintf("toll warmed %s of each variant beside the rounds, at idle priority on %s, each with ports and a telemetry sink of its own, their load sent by a load generator of their own at idle priority too (toll _load); their CPU is counted among the neighbours of the trials meanwhile", starts, on))
}

// dropSpares stops the spares of trials that were started or warmed ahead
// of their turn and will not take it.
func (b *Backend) dropSpares(spares []*plan.Trial) {
	for _, sp := range spares {
		b.mu.Lock()
		st := b.running[sp.Variant]
		delete(b.running, sp.Variant)
		b.mu.Unlock()
		if st != nil {
			if err := b.stopSpare(st); err != nil {
				b.note(err.Error())
			}
		}
	}
}

// awaitAhead waits, before a new start, for the starts warming beside the
// rounds to be warmed: the new start is one of them. The progress says
// when it waits, and how long.
func (b *Backend) awaitAhead(ctx context.Context) error {
	b.mu.Lock()
	aw := b.ahead
	b.mu.Unlock()
	if aw == nil {
		return nil
	}
	aw.endRound()
	b.mu.Lock()
	aw.waited = true
	b.mu.Unlock()
	b.spreadSpares(aw)
	select {
	case <-aw.done:
		return nil
	default:
	}
	b.say(fmt.Sprintf("a new start is due before the one warming beside the rounds is ready: the rounds wait for it, its warm-up on CPUs %s", b.warmupCPUs))
	began := time.Now()
	select {
	case <-aw.done:
		b.say(fmt.Sprintf("the start warmed beside the rounds was ready %s later", time.Since(began).Round(time.Second)))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// spreadSpares moves the spares that aw warms, once a new start waits for
// them, from the CPUs beside the rounds to every warm-up CPU: no round
// runs while a start is awaited, and a warm-up confined to what the rounds
// left (the Java agents' ten spare JVMs on the load generator's CPU took
// three times as long as with both CPUs) would keep the run waiting with
// a CPU idle. They stay at idle priority, and go back to their own CPUs
// at their turn (started.unwiden).
func (b *Backend) spreadSpares(aw *aheadWarm) {
	b.mu.Lock()
	names := slices.Clone(aw.spares)
	b.mu.Unlock()
	for _, name := range names {
		st := b.runningOf(name)
		if st == nil || st.group == nil || st.idleOn == "" || st.idleOn == b.warmupCPUs {
			continue
		}
		if err := b.moveServices(st, b.warmupCPUs); err != nil {
			b.note(fmt.Sprintf("a start of %s awaited: its warm-up stayed on CPUs %s, not %s: %v", st.v.Name, st.idleOn, b.warmupCPUs, err))
		}
	}
}

// stopAhead ends a warm-up beside the rounds, if one runs, and waits for
// it to have shelved or stopped its spares.
func (b *Backend) stopAhead() {
	b.mu.Lock()
	aw := b.ahead
	b.mu.Unlock()
	if aw != nil {
		aw.cancel()
		<-aw.done
	}
}

// WarmedBeside implements backend.StartsAhead: what the latest spares
// warmed beside the rounds took, from their launch until shelved.
func (b *Backend) WarmedBeside() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.warmedBeside
}

// TurnWarmup implements backend.StartsAhead: what the run's last warm-up
// with the CPUs to itself spent from its rate phase on, which a start
// warmed beside the rounds skips there and takes at its turn; 0 without
// a rate phase.
func (b *Backend) TurnWarmup() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.turnPrior
}

// WarmingAhead implements backend.StartsAhead: the starts of every
// variant warming beside the rounds now.
func (b *Backend) WarmingAhead() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ahead == nil {
		return 0
	}
	return b.ahead.starts
}

// holdRound goes on loading spares, warmed beside one-at-a-time rounds, at
// the load of the trials they warmed beside, until the round under way
// has ended (enterRound), a new start is due (awaitAhead) or ctx
// ends: every trial of that round then ran beside the same busy CPUs.
func (b *Backend) holdRound(ctx context.Context, spares []*plan.Trial) {
	b.mu.Lock()
	aw := b.ahead
	if aw != nil {
		aw.holding, aw.round = true, b.round
	}
	b.mu.Unlock()
	if aw == nil {
		return
	}
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, sp := range spares {
		st := b.runningOf(sp.Variant)
		if st == nil {
			continue
		}
		cfg, _ := b.loadConfig(st, sp, newOrigin(), 0, b.s.Precision.Budget.D())
		wg.Go(func() { _, _ = b.warmLoad(hctx, cfg, true) })
	}
	select {
	case <-aw.release:
	case <-ctx.Done():
	}
	stop()
	wg.Wait()
}

// enterRound tells a warm-up beside one-at-a-time rounds that a trial of
// round begins: one that holds its load until an earlier round's end
// (holdRound) ends it now, and enterRound waits for its spares to be
// shelved; one whose spares began to start in an earlier round begins its
// load now, with round (awaitNextRound), whose trials say so
// (record.Trial.BesideWarmupStart). It reports whether round is new: a
// warm-up begins only with a round's first trial.
func (b *Backend) enterRound(round roundKey) bool {
	b.mu.Lock()
	aw := b.ahead
	fresh := !b.roundSeen || round != b.round
	b.round, b.roundSeen = round, true
	holding := aw != nil && aw.holding && aw.round != round
	if aw != nil && round != aw.began && !aw.begun {
		aw.begun = true
		aw.nextRound()
		b.warmBegan = round
	}
	b.mu.Unlock()
	if holding {
		aw.endRound()
		<-aw.done
	}
	return fresh
}
