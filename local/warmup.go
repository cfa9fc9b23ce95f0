package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/loadproc"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/sink"
)

// warmupRead is how often a warm-up reads its JVMs' JIT counters.
const warmupRead = time.Second

// variantWarmup is a finished variant warm-up, which the variant's next
// trial records.
type variantWarmup struct {
	start  time.Time     // its load's origin
	lasted time.Duration // from start to the end of its load
	rec    *record.VariantWarmup
	// completed counts the warm-up's requests sent, and telemetry
	// is the variant's sink's count at its start (nil without a sink):
	// the telemetry they caused belongs to the trial's cycle, as their
	// requests do.
	completed uint64
	telemetry *sink.Counts
	// otherLoad is set when some of those requests were sent at a load
	// other than the trial's (a phase of users or of a rate).
	otherLoad bool
	// ownLoad counts the requests sent in its last phase when that phase
	// sent the trial's own load (0 otherwise).
	ownLoad uint64
}

// warmUp runs the variant warm-up (load.variant_warmup) of every trial of
// pts whose freshly started services are owed one (not an idle trial's):
// load at each trial's step, all at once (a duet's two sides together), for
// load.variant_warmup, or, with load.variant_warmup_until, until every
// measured JVM among them has settled. With load.variant_warmup_until and
// load.variant_warmup_users or _rate it runs in phases, each until the JIT
// settles: the users, the rate, then each trial's own load (warmupPhases).
// Each variant's started keeps the outcome for its trial. With
// pinning.warmup: all the services run on every CPU meanwhile, and on
// their own again when it returns. It is the one place variant warm-ups
// run, in every schedule.
func (b *Backend) warmUp(ctx context.Context, pts ...*plan.Trial) (err error) {
	longest := b.s.Load.VariantWarmup.D()
	since, bounded := time.Now(), false
	if ev := b.events; ev != nil && longest > 0 {
		if most, ok := ev.WarmupCap(); ok {
			// A warm-up does not outlast the budget it is spent from.
			longest, bounded = min(longest, most), true
		}
	}
	var owed []*plan.Trial
	var rewarm []bool
	turn := turnNone // a start warmed ahead, warmed again at its turn: see settle
	for _, pt := range pts {
		st := b.runningOf(pt.Variant)
		if st == nil || pt.Idle || st.warmed {
			continue
		}
		st.warmed = true
		if longest > 0 {
			owed = append(owed, pt)
			rewarm = append(rewarm, st.rewarm || st.settle != turnNone)
			turn |= st.settle
		}
		st.rewarm, st.settle = false, turnNone
	}
	if len(owed) == 0 {
		return nil
	}
	settling := turn != turnNone
	if bounded {
		// Only a warm-up that runs is spent from the budget, and
		// counted among the run's warm-ups.
		spent := b.events.WarmupSpent
		if settling {
			spent = b.events.SwapWarmupSpent
		}
		defer func() { spent(time.Since(since)) }()
	}
	owed, rewarm = b.warmAlongside(owed, rewarm)
	jvm := b.anyJVM(owed)
	// A start settling its compilers is no start's first warm-up: it
	// warms no start ahead, and what it uses of the CPUs says nothing of
	// what a start's warm-up needs.
	var spares []*plan.Trial
	if !settling {
		spares = b.startSpares(ctx, owed, jvm && b.s.Load.VariantWarmupUntil != nil)
	}
	defer b.shelveSpares(spares)
	owed, rewarm = append(owed, spares...), append(rewarm, make([]bool, len(spares))...)
	names := make([]string, len(owed))
	for i, pt := range owed {
		names[i] = pt.Variant
	}
	restore, _ := b.widenForWarmup(names, b.warmupCPUs)
	defer func() {
		if rerr := restore(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("variant warm-up: %w", rerr))
		}
	}()
	tels := make([]*sink.Counts, len(owed))
	for i, pt := range owed {
		if c := b.sinkOf(pt.Variant); c != nil {
			n := c.Counts()
			tels[i] = &n
		}
	}
	cpu0, _ := b.servicesUse(owed)
	began := time.Now()
	phases, err := b.warmPhases(ctx, owed, rewarm, longest, jvm, nil, turn, nil)
	if err != nil {
		return err
	}
	if !settling {
		b.measureWarmShare(owed, cpu0, began)
		b.keepSpans(phases)
		b.keepRateCalls(owed, phases)
		// A start warmed beside the rounds that skips the rate
		// phase there owes it at its turn.
		b.mu.Lock()
		b.turnPrior = 0
		if skipsRateBeside(b.s, jvm, b.warmShared, b.warmShare) {
			b.turnPrior = fromRatePhase(phases)
		}
		b.mu.Unlock()
	}
	b.keepWarmups(owed, phases, tels, longest)
	if len(spares) > 0 {
		n := len(spares) / (len(owed) - len(spares))
		starts := "1 more start"
		if n > 1 {
			starts = fmt.Sprintf("%d more starts", n)
		}
		b.say(fmt.Sprintf("and %s of each variant ahead of its turn, warmed at once: a new start needs no warm-up of its own", starts))
		b.note(fmt.Sprintf("toll warmed %s of each variant ahead of its turn beside the start it warmed, all at once, each with ports and a telemetry sink of its own; each waited idle until its start, its CPU counted among the neighbours of the trials meanwhile", starts))
	}
	return nil
}

// warmPhases runs the phases of a variant warm-up of owed's services
// (warmupPhases), each trial's load shaped by its phase, warmed again beside
// a fresh duet partner where rewarm says so, and returns how each went. A
// warm-up toll chose lasts at most longest in all, its phases included; a
// scenario's phases each last at most longest. spans, when set, are the
// requests that each phase's spans of the steady rule held in a warm-up
// with the CPUs to itself, by phase and variant (keepSpans): each span of
// this one holds as many. turn says owed is a start warmed ahead, warmed
// again at its turn, and why (turnWarmup): its phases are warmupPhases',
// and a variant's cost counts as steady only while its compilers are not
// busy (steadyRule.quiet). beside, when set, says owed are starts warmed
// beside the rounds, and how: their last phase, at the trials' own load,
// too counts a cost as steady only while its compilers are not busy.
// There they wait at idle priority for what the rounds leave of the CPUs,
// and a cost holds still while they wait; the queue they leave would be
// worked off at their turn, the rounds stopped (the Java agents' ten
// spares came with 790–1,430 ms/s and spent 44–50 s there each turn),
// where beside the rounds it costs the run no time.
func (b *Backend) warmPhases(ctx context.Context, owed []*plan.Trial, rewarm []bool, longest time.Duration, jvm bool, spans []map[string]uint64, turn turnWarm, beside *besideRounds) ([]warmupPhase, error) {
	auto := b.s.Load.VariantWarmupAuto
	var phases []warmupPhase
	deadline := time.Now().Add(longest)
	loads := phaseLoads(warmupPhases(b.s, auto && jvm, turn), owed, rewarm)
	for n, load := range loads {
		if beside != nil && beside.skipRate && load.rate {
			continue
		}
		phaseLongest := longest
		if auto && len(phases) > 0 {
			if phaseLongest = time.Until(deadline).Round(time.Second); phaseLongest < time.Second {
				break
			}
		}
		var phaseSpans map[string]uint64
		if n < len(spans) {
			phaseSpans = map[string]uint64{}
			for _, pt := range owed {
				phaseSpans[pt.Variant] = spans[n][b.variantOf(pt.Variant)]
			}
		}
		end := phaseEnd{spans: phaseSpans, quiet: quietPhase(turn, beside != nil, n, len(loads))}
		if beside != nil && beside.skipRate && n == len(loads)-1 {
			end.least = b.inPlaceOfRate(owed)
		}
		ph := b.warmPhase(ctx, owed, load.trials, load.maxConns, phaseLongest, end, beside != nil)
		ph.rate = load.rate
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("variant warm-up: %w", err)
		}
		for i, pt := range owed {
			if e := ph.errs[i]; e != nil && !errors.Is(e, context.Canceled) && !errors.Is(e, errWarmupEnded) {
				return nil, fmt.Errorf("variant warm-up of %s: %w", pt.Variant, e)
			}
		}
		phases = append(phases, ph)
		if ph.exited || !ph.verdict.anyJVM() {
			break // a service exited (its trial says so), or no JIT to settle
		}
	}
	return phases, nil
}

// inPlaceOfRate returns, by variant key, the requests that the last phase
// of a warm-up of owed beside the rounds sends before it may end when
// that warm-up skipped its rate phase (skipsRateBeside): as many as the
// rate phase of the variant's last warm-up with the CPUs to itself sent
// (keepRateCalls). Sent at the trials' own load, spaced as the trials
// space them, they bring the calls at which HotSpot compiles again that
// the rate phase brings four times sooner, and the start then owes no
// warm-up at its turn, where the rounds stop for it (turnWarmup): a
// Spring Boot start beside the rounds was sent 3,000 there, where its
// first warm-up's rate phase sent 14,400, and was warmed 31 s at its turn.
func (b *Backend) inPlaceOfRate(owed []*plan.Trial) map[string]uint64 {
	keys := make([]string, len(owed))
	variants := make([]string, len(owed))
	for i, pt := range owed {
		keys[i], variants[i] = pt.Variant, b.variantOf(pt.Variant)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	least := map[string]uint64{}
	for i, k := range keys {
		if n := b.rateCalls[variants[i]]; n > 0 {
			least[k] = n
		}
	}
	return least
}

// phaseEnd is what, beside the rules of load.variant_warmup_until, ends
// one phase of a variant warm-up.
type phaseEnd struct {
	// spans are the requests each span of the steady rule holds, by
	// variant key (warmPhases).
	spans map[string]uint64
	// quiet counts a cost as steady only while the variant's compilers
	// are not busy (steadyRule.quiet).
	quiet bool
	// least are the requests each variant key is sent before the phase
	// may end (inPlaceOfRate).
	least map[string]uint64
}

// quietPhase reports whether phase n of a warm-up's phases counts a
// variant's cost as steady only while its compilers are not busy
// (steadyRule.quiet): every phase of a start warmed again at its turn
// (turn), and the last of one warmed beside the rounds (warmPhases).
func quietPhase(turn turnWarm, beside bool, n, phases int) bool {
	return turn != turnNone || beside && n == phases-1
}

// keepWarmups gives each of owed's started services the outcome of the
// warm-up that phases made of it (its trial records it, telemetry at its
// start in tels), says each variant's line (not a spare's), and notes a
// warm-up with nothing to settle that the scenario made last its full
// longest.
func (b *Backend) keepWarmups(owed []*plan.Trial, phases []warmupPhase, tels []*sink.Counts, longest time.Duration) {
	first, last := phases[0], phases[len(phases)-1]
	for i, pt := range owed {
		st := b.runningOf(pt.Variant)
		w := &variantWarmup{start: first.origin, lasted: max(last.ends[i].Sub(first.origin), 0), telemetry: tels[i]}
		if !last.other[i] {
			w.ownLoad = last.done[i]
		}
		for _, ph := range phases {
			w.completed += ph.done[i]
			w.otherLoad = w.otherLoad || ph.other[i] && ph.done[i] > 0
		}
		if u := b.s.Load.VariantWarmupUntil; u != nil {
			settled, steady := true, false
			for _, ph := range phases {
				settled = settled && (ph.verdict.settled || ph.verdict.bySide[pt.Variant] || ph.verdict.steadyBy[pt.Variant])
				steady = steady || ph.verdict.steadyBy[pt.Variant]
			}
			w.rec = &record.VariantWarmup{MaxS: longest.Seconds(), Settled: settled, CostSteady: steady,
				NoJVM: last.verdict.jvms[pt.Variant] == 0, JITMsPerS: last.verdict.rates[pt.Variant]}
			if len(phases) > 1 {
				for _, ph := range phases {
					w.rec.PhasesS = append(w.rec.PhasesS, max(ph.ends[i].Sub(ph.origin), 0).Seconds())
				}
			}
			if slices.ContainsFunc(phases, func(ph warmupPhase) bool { return ph.spans[pt.Variant] > 0 }) {
				for _, ph := range phases {
					w.rec.SpanRequests = append(w.rec.SpanRequests, ph.spans[pt.Variant])
				}
			}
			if w.rec.NoJVM && !b.s.Load.VariantWarmupAuto {
				b.note(fmt.Sprintf("%s: no measured service is a JVM (none publishes hsperfdata), so its variant warm-up has no compilation to wait for and lasts load.variant_warmup (%s)",
					pt.Variant, b.s.Load.VariantWarmup))
			}
		}
		st.warmup = w
		if st.spareOf == "" {
			b.say(warmupLine(pt.Variant, w))
		}
	}
}

// fromRatePhase returns how long a warm-up's phases took from the start of
// its rate phase to the end of its last: what a start that skipped that
// phase beside the rounds takes at its turn, the rounds stopped, where the
// CPUs are the warm-up's (the Java agents' first warm-ups spent 76–144 s
// there, their starts 117–294 s at their turn). 0 when no rate phase ran.
func fromRatePhase(phases []warmupPhase) time.Duration {
	i := slices.IndexFunc(phases, func(ph warmupPhase) bool { return ph.rate })
	if i < 0 {
		return 0
	}
	var end time.Time
	for _, e := range phases[len(phases)-1].ends {
		if e.After(end) {
			end = e
		}
	}
	return max(end.Sub(phases[i].origin), 0)
}

// keepSpans keeps, by phase and variant, the requests that the spans of
// the steady rule held as each phase of a warm-up with the CPUs to itself
// ended: the spans of a warm-up beside the rounds hold as many. A spare's
// are its variant's. A warm-up with a phase that read none (its steady
// rule did not run) leaves those kept before.
func (b *Backend) keepSpans(phases []warmupPhase) {
	spans := make([]map[string]uint64, len(phases))
	for i, ph := range phases {
		if len(ph.verdict.spans) == 0 {
			return
		}
		spans[i] = map[string]uint64{}
		for name, n := range ph.verdict.spans {
			v := b.variantOf(name)
			spans[i][v] = max(spans[i][v], n)
		}
	}
	b.mu.Lock()
	b.warmSpans = spans
	b.mu.Unlock()
}

// keepRateCalls keeps, by variant, the requests that owed's services were
// sent in the rate phase of a warm-up with the CPUs to itself (none
// without one): a start warmed beside the rounds that has since been sent
// as many at the trials' own load owes no rate phase at its turn
// (turnWarmup). A spare's are its variant's.
func (b *Backend) keepRateCalls(owed []*plan.Trial, phases []warmupPhase) {
	calls := map[string]uint64{}
	for _, ph := range phases {
		if !ph.rate {
			continue
		}
		for i, pt := range owed {
			v := b.variantOf(pt.Variant)
			calls[v] = max(calls[v], ph.done[i])
		}
	}
	b.mu.Lock()
	b.rateCalls = calls
	b.mu.Unlock()
}

// warmAlongside adds to owed every other variant whose services are
// running and owed their warm-up, each at the load of owed's first trial,
// so that one warm-up warms them all at once: nothing is measured during a
// warm-up, and a JVM's waits for its compilation to settle, which takes
// the same minutes however many JVMs settle beside it. Each variant's
// first trial then records its own warm-up, as if it had run there.
func (b *Backend) warmAlongside(owed []*plan.Trial, rewarm []bool) ([]*plan.Trial, []bool) {
	for _, v := range b.s.Variants {
		st := b.runningOf(v.Name)
		if st == nil || st.warmed || slices.ContainsFunc(owed, func(pt *plan.Trial) bool { return pt.Variant == v.Name }) {
			continue
		}
		pt := *owed[0]
		pt.Variant, pt.Pair, pt.Index = v.Name, "", 0
		st.warmed = true
		owed, rewarm = append(owed, &pt), append(rewarm, st.rewarm)
		st.rewarm = false
	}
	return owed, rewarm
}

// warmupPhase is how one phase of a variant warm-up went, for each of the
// trials it warmed.
type warmupPhase struct {
	origin  time.Time   // its load's origin
	ends    []time.Time // when each trial's load ended
	done    []uint64    // each trial's requests sent
	other   []bool      // each trial's load was not the trial's own
	errs    []error     // each trial's load's error
	verdict jitVerdict  // how its JVMs ended it (load.variant_warmup_until)
	exited  bool        // a service of one of the trials exited
	rate    bool        // it is the rate phase (phaseLoad's rate)
	// spans are the requests each span of its steady rule had to hold,
	// by variant (warmPhase's spans).
	spans map[string]uint64
}

// warmPhase loads each of owed's services at the matching trial of loads,
// all at once, with at most maxConns requests in flight (0: load.max_conns),
// for at most longest, or with load.variant_warmup_until until their
// measured JVMs settle and end says it may end; a service that exits ends
// it. apart sends the load from a process of its own (warmLoad).
func (b *Backend) warmPhase(ctx context.Context, owed, loads []*plan.Trial, maxConns int, longest time.Duration, end phaseEnd, apart bool) warmupPhase {
	wctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	ph := warmupPhase{origin: newOrigin(), ends: make([]time.Time, len(owed)), done: make([]uint64, len(owed)), other: make([]bool, len(owed)), errs: make([]error, len(owed)), spans: end.spans}
	var exited atomic.Bool
	var wg sync.WaitGroup
	// completed counts each variant's requests as the warm-up goes, for
	// the rule that ends it once their cost stops moving.
	completed := map[string]*atomic.Uint64{}
	for i, pt := range owed {
		ph.other[i] = loads[i] != pt
		st := b.runningOf(pt.Variant)
		cfg, _ := b.loadConfig(st, loads[i], ph.origin, 0, longest)
		if maxConns > 0 {
			cfg.MaxConns = min(cfg.MaxConns, maxConns)
		}
		n := &atomic.Uint64{}
		completed[pt.Variant] = n
		cfg.Progress = n
		wg.Go(func() {
			res, err := b.warmLoad(wctx, cfg, apart)
			ph.ends[i] = time.Now()
			if res != nil {
				// Requests abandoned in flight as the phase ended were
				// still served, and their telemetry sent: every request
				// sent counts.
				ph.done[i] = res.Sent + res.WarmupCompleted
				if !res.MeasureEnd.IsZero() && res.MeasureEnd.Before(ph.ends[i]) {
					ph.ends[i] = res.MeasureEnd
				}
			}
			ph.errs[i] = err
			stop(errWarmupEnded) // the others end with it
		})
		for _, svc := range st.group.Services() {
			wg.Go(func() {
				select {
				case <-svc.Done():
					exited.Store(true)
					stop(errWarmupEnded)
				case <-wctx.Done():
				}
			})
		}
	}
	if u := b.s.Load.VariantWarmupUntil; u != nil {
		rule := jitRule{below: u.JITBelow.D(), over: u.Over.D()}
		if b.s.Load.VariantWarmupAuto {
			rule.noJVM = scenario.DefaultNoJVMWarmup
		}
		var steady *steadyRule
		if b.s.Load.VariantWarmupAuto {
			// A warm-up toll chose also ends once the cost the trials
			// measure has stopped moving, whatever the JIT still does.
			r := defaultSteady(u.Over.D())
			r.quiet = end.quiet
			steady = &r
		}
		ph.verdict = b.watchJIT(wctx, rule, steady, end.spans, end.least, completed, owed, ph.origin)
		stop(errWarmupEnded)
	}
	wg.Wait()
	ph.exited = exited.Load()
	return ph
}

// besideRounds is how starts warmed beside the rounds warm: their load
// comes from a process of its own at idle priority (warmLoad), and
// skipRate leaves their warm-up's rate phase out, for their turn
// (skipsRateBeside).
type besideRounds struct {
	skipRate bool
}

// warmLoad runs cfg's load and returns what a warm-up reads of it: from
// toll's own process, or apart, from a process of its own at idle
// priority on the warm-up CPUs (package loadproc), where its responses do
// not hold up the trials' load. toll's binary runs that process; a
// pacer that cannot cross to it keeps the load in toll's process.
func (b *Backend) warmLoad(ctx context.Context, cfg load.Config, apart bool) (*loadproc.Outcome, error) {
	if apart {
		if spec, err := loadproc.SpecOf(cfg); err == nil {
			argv := []string{b.cfg.Self, "_load"}
			if b.warmupCPUs != "" {
				argv = append(argv, "--cpus", b.warmupCPUs)
			}
			return loadproc.Run(ctx, argv, runid.Label(os.Environ(), b.id), spec, cfg.Progress)
		}
	}
	res, err := load.Run(ctx, cfg)
	if res == nil {
		return nil, err
	}
	return &loadproc.Outcome{Sent: res.Sent, WarmupCompleted: res.WarmupCompleted, MeasureEnd: res.MeasureEnd}, err
}

// warmupShape is the load of one phase of a variant warm-up.
type warmupShape struct {
	// trial is the load the phase sends to the services of trial pt,
	// warmed again beside a fresh duet partner when rewarm is set.
	trial func(pt *plan.Trial, rewarm bool) *plan.Trial
	// maxConns caps the phase's requests in flight; 0 leaves
	// load.max_conns.
	maxConns int
	// rate marks the rate phase.
	rate bool
}

// phaseLoad is what one phase of a variant warm-up sends: a trial of each
// of the warmed services, its cap on requests in flight, and whether it is
// the rate phase.
type phaseLoad struct {
	trials   []*plan.Trial
	maxConns int
	rate     bool
}

// phaseLoads returns the load of each phase of shapes for owed's services,
// warmed again where rewarm says so, leaving out a phase that would send
// what the one before it sent: services warmed again take each phase at
// their trial's own load, and a second phase of that load beside no fresh
// service would only ask again what the first phase's rules have answered
// (a start swapped in still compiling spent 21–28 s more so). A phase
// that sends every service its trial's own load sends it as the trials
// do, under no cap of the phase's own.
func phaseLoads(shapes []warmupShape, owed []*plan.Trial, rewarm []bool) []phaseLoad {
	var out []phaseLoad
	for _, shape := range shapes {
		load := phaseLoad{trials: make([]*plan.Trial, len(owed)), maxConns: shape.maxConns, rate: shape.rate}
		for i, pt := range owed {
			load.trials[i] = shape.trial(pt, rewarm[i])
		}
		if slices.Equal(load.trials, owed) {
			load.maxConns = 0
		}
		if n := len(out); n > 0 && out[n-1].maxConns == load.maxConns && slices.Equal(out[n-1].trials, load.trials) {
			continue
		}
		out = append(out, load)
	}
	return out
}

// measuredTree is the process tree of one measured service of a variant.
type measuredTree struct {
	variant, service string
	tree             processes
}

// measuredTrees returns the process trees of the measured services of
// owed's variants, the processes a warm-up looks at for a JVM.
func (b *Backend) measuredTrees(owed []*plan.Trial) []measuredTree {
	var out []measuredTree
	for _, pt := range owed {
		st := b.runningOf(pt.Variant)
		for i, svc := range st.group.Services() {
			if !st.runs[i].Measured {
				continue
			}
			if tree := serviceProcesses(st, i, svc.Pid()); tree != nil {
				out = append(out, measuredTree{variant: pt.Variant, service: st.runs[i].Name, tree: tree})
			}
		}
	}
	return out
}

// anyJVM reports whether a measured service of one of owed's variants runs
// a JVM now (one that publishes hsperfdata).
func (b *Backend) anyJVM(owed []*plan.Trial) bool {
	for _, m := range b.measuredTrees(owed) {
		if _, err := m.tree.Sample(); err != nil {
			continue
		}
		if jr, _ := findJVM(m.tree); jr != nil {
			jr.Close()
			return true
		}
	}
	return false
}

// warmupPhases returns the load of each phase of a variant warm-up. With
// load.variant_warmup_until and a warm-up load of its own (users, a rate or
// both), the warm-up runs in phases, each until the JIT settles: the users,
// the rate, and then each trial's own load. A JVM compiles for the load it
// has seen: code compiled under back-to-back requests meets other paths at
// the first spaced ones, where a connection goes back to its poller
// between requests (Tomcat's Http11Processor.service), and code can take
// other paths again at the trials' lower rate (an agent's JVM warmed at
// 600 req/s compiled hard in its first trial at 100). HotSpot deoptimises
// such code and compiles it again, at once or some 5,000 calls later, which
// at the trials' rate falls in the middle of the rounds: the rate phase
// (spaced requests, a few times the trials' rate) takes the second into
// the warm-up, and the trials' own load the first. After users, the rate
// phase keeps their concurrency (at most that many requests in flight): it
// changes the requests' spacing, not how many run at once, where a queue
// on CPUs shared at idle priority grew Tomcat's request pool to 45 threads
// that the baseline, loaded in every duet after, kept through the run.
// Otherwise there is one phase: the users, the rate, or the trial's load.
// A warm-up toll chose (jvm: it found a JVM among the services) runs in
// three phases: scenario.DefaultJVMWarmupUsers users, then
// scenario.DefaultJVMWarmupRateTimes each trial's rate (an open-model
// load's), then the trials' load. Ten cold JVMs warmed at once at an
// open-model rate fall behind it, their requests pile up and time out, and
// their compilers never settle; users send as fast as each JVM answers,
// never faster, and the rate phase after them sends no more at once.
//
// A start warmed ahead and warmed again at its turn takes no users phase:
// that is long past, and ten JVMs compiling at once would only queue
// behind users. One that skipped the rate phase beside the rounds
// (turnRate) takes it, then the trials' own load: the rate brings the
// calls at which its JIT compiles again four times sooner than the
// trials' own load. One that came still compiling (turnBusy) first works
// its queue off at the trials' own load: at four times the rate the
// requests took most of the CPUs its compilers waited for, and the Java
// agents' ten JVMs spent 1.5 to 4.7 minutes in that phase where their
// first warm-up had spent half a minute to one.
func warmupPhases(s *scenario.Scenario, jvm bool, turn turnWarm) []warmupShape {
	l := s.Load
	settling := turn != turnNone
	users, rate := l.VariantWarmupUsers, func(*plan.Trial) float64 { return l.VariantWarmupRate }
	if l.VariantWarmupAuto && jvm {
		users = scenario.DefaultJVMWarmupUsers
		if times := l.JVMWarmupRateTimes(); times > 0 {
			rate = func(pt *plan.Trial) float64 { return times * pt.Rate }
		}
	}
	var shapes []warmupShape
	if users > 0 && !settling {
		shapes = append(shapes, warmupShape{trial: func(pt *plan.Trial, rewarm bool) *plan.Trial {
			if rewarm {
				return pt
			}
			w := *pt
			w.Rate, w.Users = 0, users
			return &w
		}})
	}
	if (l.VariantWarmupRate > 0 || jvm && l.JVMWarmupRateTimes() > 0) && (!settling || turn&turnRate != 0) {
		shapes = append(shapes, warmupShape{maxConns: users, rate: true, trial: func(pt *plan.Trial, rewarm bool) *plan.Trial {
			if rewarm && !settling || pt.Users > 0 || rate(pt) <= 0 {
				return pt
			}
			w := *pt
			w.Rate = rate(pt)
			return &w
		}})
	}
	own := warmupShape{trial: func(pt *plan.Trial, _ bool) *plan.Trial { return pt }}
	switch {
	case len(shapes) == 0:
		return []warmupShape{own}
	case l.VariantWarmupUntil == nil:
		return shapes[:1] // validation allows users and a rate only with until
	case turn&turnBusy != 0:
		shapes = append([]warmupShape{own}, shapes...)
	}
	return append(shapes, own)
}

// hasRatePhase reports whether a variant warm-up of s's services (jvm: a
// JVM among them) has a rate phase before the trials' own load
// (warmupPhases).
func hasRatePhase(s *scenario.Scenario, jvm bool) bool {
	l := s.Load
	return l.VariantWarmupUntil != nil && (l.VariantWarmupRate > 0 || jvm && l.JVMWarmupRateTimes() > 0)
}

// skipsRateBeside reports whether starts of s's services (jvm: a JVM among
// them) warmed beside the rounds skip their warm-up's rate phase there and
// take it at their turn: the warm-up has one (hasRatePhase), and the last
// warm-up with the CPUs to itself used share of the machine's CPUs (known:
// one has run), spareRoom or more. Beside the rounds a warm-up costs the
// run no time; at a start's turn the rounds stop for it (a JDK
// HttpServer's three JVMs, which used little of the CPUs, spent 24–37 s
// there five times in a 9.5-minute run). But where a warm-up keeps the
// CPUs busy, its rate phase asks more than the rounds leave: at idle
// priority a JVM serves a fraction of the rate, and the phase's spans,
// each holding what a span of the warm-up with the CPUs to itself held,
// stretched it over minutes (ten JVMs of the Java agents' example warmed
// in 8 minutes with it, in 5.5 to 6.5 without).
func skipsRateBeside(s *scenario.Scenario, jvm, known bool, share float64) bool {
	return hasRatePhase(s, jvm) && !roomForSpares(known, share)
}

// warmupLine is the progress line of a variant's finished warm-up.
func warmupLine(variant string, w *variantWarmup) string {
	line := fmt.Sprintf("variant warm-up of %s: %s", variant, w.lasted.Round(100*time.Millisecond))
	switch rec := w.rec; {
	case rec == nil:
	case rec.NoJVM:
		line += ", no JVM to wait for"
	case rec.Settled && rec.CostSteady:
		line += ", CPU per request steady before its JIT settled (" + describeRates(rec.JITMsPerS) + ")"
	case rec.Settled:
		line += ", JIT settled (" + describeRates(rec.JITMsPerS) + ")"
	default:
		line += ", at its maximum without settling (" + describeRates(rec.JITMsPerS) + ")"
	}
	return line
}

// errWarmupEnded ends a warm-up's load: its JVMs settled, its maximum
// passed, or a service exited.
var errWarmupEnded = errors.New("variant warm-up ended")

// jitVerdict is how a warm-up's JVMs ended it.
type jitVerdict struct {
	settled bool
	// bySide says which variants' JVMs had settled when the warm-up
	// ended: in a duet one side may have settled while its partner, whose
	// warm-up both wait for, had not.
	bySide map[string]bool
	jvms   map[string]int                // JVMs found, by variant
	rates  map[string]map[string]float64 // latest ms/s by variant, then service
	// steadyBy says which variants counted as settled because their CPU
	// per request had stopped moving while their JIT still compiled.
	steadyBy map[string]bool
	// spans are the requests each variant's spans of the steady rule
	// held as the warm-up ended (steadyRule.span), by variant.
	spans map[string]uint64
}

// anyJVM reports whether a warm-up found a measured JVM on either side.
func (v jitVerdict) anyJVM() bool {
	for _, n := range v.jvms {
		if n > 0 {
			return true
		}
	}
	return false
}

// watchJIT reads the JIT counters of the measured JVMs of owed's variants
// once a second from origin, and returns as soon as every variant's JVMs
// have settled by rule (settled), or when ctx ends (the warm-up's maximum,
// a service that exited, an interrupt). A variant counts as settled once
// its own JVMs have settled together, even if one of them compiles again
// later in the phase: ten JVMs warmed at once (five variants of two
// services) seldom all stay quiet in the same ten seconds, and a
// compilation that follows a settled window is spent in the warm-up, not
// in a trial. A service that is not yet a JVM is looked at again every
// time, so that a JVM started late is waited for.
//
// With steady set, a variant also counts as settled once its measured
// services' CPU per request has stopped moving by that rule (completed
// counts each variant's warm-up requests), each of its spans holding at
// least spans[variant] requests while its compilers are busy
// (jitRule.busy), which the verdict records (steadyBy). Either way it
// returns only once each variant has been sent least[variant] requests
// (completed counts them).
func (b *Backend) watchJIT(ctx context.Context, rule jitRule, steady *steadyRule, spans, least map[string]uint64, completed map[string]*atomic.Uint64, owed []*plan.Trial, origin time.Time) jitVerdict {
	type watched struct {
		variant, key string // key: variant/service, in the history
		svc          string
		tree         processes
		jvm          *jvm.Reader
		compilers    *jvm.CompilerThreads // its JIT compiler threads
	}
	var ws []*watched
	for _, m := range b.measuredTrees(owed) {
		ws = append(ws, &watched{variant: m.variant, key: m.variant + "/" + m.service, svc: m.service, tree: m.tree})
	}
	defer func() {
		for _, w := range ws {
			if w.jvm != nil {
				w.jvm.Close()
			}
		}
	}()
	h := jitHistory{}
	sides := map[string]bool{} // the variants whose JVMs have settled
	costs := map[string][]costPoint{}
	steadyBy := map[string]bool{} // the variants whose cost stopped moving
	verdict := func(settled bool) jitVerdict {
		v := jitVerdict{settled: settled, bySide: map[string]bool{}, jvms: map[string]int{}, rates: map[string]map[string]float64{}, steadyBy: steadyBy, spans: map[string]uint64{}}
		if steady != nil {
			for name, ps := range costs {
				v.spans[name] = steady.span(ps)
			}
		}
		_, rates := rule.settled(h)
		for _, pt := range owed {
			v.bySide[pt.Variant] = sides[pt.Variant]
		}
		for _, w := range ws {
			if ms, ok := rates[w.key]; ok {
				v.jvms[w.variant]++
				if v.rates[w.variant] == nil {
					v.rates[w.variant] = map[string]float64{}
				}
				v.rates[w.variant][w.svc] = ms
			}
		}
		return v
	}
	timer := time.NewTimer(time.Until(origin))
	defer timer.Stop()
	for k := 1; ; k++ {
		select {
		case <-ctx.Done():
			return verdict(false)
		case <-timer.C:
		}
		now := time.Now()
		cpu := map[string]time.Duration{}
		for _, w := range ws {
			if w.jvm == nil || steady != nil {
				smp, err := w.tree.Sample()
				if err != nil {
					continue
				}
				// The cost the steady rule judges leaves the JIT's own
				// CPU out: its bursts are what the JIT's rule waits
				// for, and what a request costs is the compiled code's.
				cpu[w.variant] += smp.CPU
				if w.compilers != nil {
					if c, err := w.compilers.CPU(); err == nil {
						cpu[w.variant] -= c
					}
				}
			}
			if w.jvm == nil {
				var pid int
				if w.jvm, pid = findJVM(w.tree); w.jvm == nil {
					continue
				}
				if steady != nil {
					w.compilers, _ = jvm.NewCompilerThreads("/proc", pid)
				}
			}
			c, err := w.jvm.Counters()
			if err != nil {
				continue // the JVM exited; the trial will say so
			}
			h.add(w.key, jitPoint{at: now.Sub(origin), jit: c.JITTime})
		}
		rule.markSides(h, owed, sides)
		if steady != nil {
			for v, n := range completed {
				costs[v] = append(costs[v], costPoint{at: now.Sub(origin), cpu: cpu[v], done: n.Load()})
				if !sides[v] && steady.ends(costs[v], rule.busy(h.of(v)), spans[v]) {
					steadyBy[v] = true
				}
			}
		}
		if phaseDone(h, owed, sides, steadyBy, completed, least) {
			return verdict(true)
		}
		if rule.noJVM > 0 && len(h) == 0 && now.Sub(origin) >= rule.noJVM {
			return verdict(true) // no JVM: nothing to settle
		}
		timer.Reset(time.Until(origin.Add(time.Duration(k) * warmupRead)))
	}
}

// phaseDone reports whether a warm-up phase of owed ends: each variant
// with a JVM among its readings h has settled (sides) or its cost stopped
// moving (steadyBy), and each variant of least has been sent that many
// requests (sentLeast).
func phaseDone(h jitHistory, owed []*plan.Trial, sides, steadyBy map[string]bool, completed map[string]*atomic.Uint64, least map[string]uint64) bool {
	return allMarked(h, owed, sides, steadyBy) && sentLeast(completed, least)
}

// sentLeast reports whether each variant of least has been sent at least
// that many requests, as completed counts them.
func sentLeast(completed map[string]*atomic.Uint64, least map[string]uint64) bool {
	for v, n := range least {
		if c := completed[v]; c != nil && c.Load() < n {
			return false
		}
	}
	return true
}

// describeRates writes a warm-up's JIT rates by service: "consumer
// 3.2 ms/s, provider 0.4 ms/s".
func describeRates(rates map[string]float64) string {
	var parts []string
	for _, svc := range slices.Sorted(maps.Keys(rates)) {
		parts = append(parts, fmt.Sprintf("%s %.1f ms/s", svc, rates[svc]))
	}
	return strings.Join(parts, ", ")
}
