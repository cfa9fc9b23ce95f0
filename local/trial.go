package local

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/probe"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/torecord"
)

// newOrigin returns the origin of a trial's load timeline: shortly ahead,
// so the sampler and the load generator both start on time.
func newOrigin() time.Time {
	return time.Now().Add(100 * time.Millisecond).Truncate(time.Millisecond)
}

// duet runs trials at the same time, on one timeline, and keeps each side's
// as it ends: the baseline's and a variant's (mode: duet), or the
// baseline's and every variant's (mode: together). On shared CPUs, each
// side's open-model schedule runs a fraction of an interval behind the
// one before it, so that the sides' requests take turns on the CPUs rather
// than always arriving at the same moment and queueing behind each other.
// In a duet the variant lags in odd rounds and the baseline in even ones;
// together, each side's place in that order moves round by round
// (plan.Trial.Order), so that no side is always last. In a sliced duet
// (load.slice) the two take turns by slices instead, the second side's one
// slice after the first's.
func (b *Backend) duet(ctx context.Context, sides []*plan.Trial, keep backend.Keep) error {
	var sts []*started
	for _, pt := range sides {
		sts = append(sts, b.runningOf(pt.Variant))
	}
	owedWarmup(sts...)
	if err := b.warmUp(ctx, sides...); err != nil {
		return err
	}
	b.warmAheadOf(sides)
	// Every side's profiler samples before the sides' origin is fixed.
	for _, st := range sts {
		st.profiling = b.startProfiling(ctx, st)
	}
	origin := newOrigin()
	origins := make([]time.Time, len(sides))
	turns := make([]turn, len(sides))
	for i, pt := range sides {
		origins[i] = origin
		if lag := duetLag(b.s, pt); lag > 0 && b.s.Mode == scenario.ModeTogether {
			origins[i] = origin.Add(time.Duration(pt.Order) * lag)
		}
	}
	if b.s.Mode == scenario.ModeDuet {
		second := sides[1].Round % 2
		if lag := duetLag(b.s, sides[1]); lag > 0 {
			origins[second] = origin.Add(lag)
		}
		if sl := b.s.Load.Slice.D(); sl > 0 && sides[1].Rate > 0 {
			turns[0], turns[1] = turn{slice: sl}, turn{slice: sl}
			turns[second].phase = sl
		}
	}
	held := b.holders(len(sides))
	errs := make([]error, len(sides))
	var wg sync.WaitGroup
	for i, pt := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, res, err := b.measure(ctx, pt, origins[i], turns[i], held)
			if tr != nil {
				err = keep(tr, res)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// turn is one side's share of a sliced duet's load (load.slice): its
// requests leave in slices of slice, one every 2·slice, the first phase
// after the timeline's origin. The zero turn is a load that runs
// throughout its window.
type turn struct {
	slice, phase time.Duration
}

// window returns the wall time that warmup and duration of the turn's own
// load take: twice as long, the second side's warm-up one slice longer,
// so that its window opens with its own turn.
func (tn turn) window(warmup, duration time.Duration) (time.Duration, time.Duration) {
	if tn.slice <= 0 {
		return warmup, duration
	}
	return 2*warmup + tn.phase, 2 * duration
}

// share is the share of the window the turn's load runs in.
func (tn turn) share() float64 {
	if tn.slice <= 0 {
		return 0 // throughout: record.Trial.LoadShare left out
	}
	return 0.5
}

// pacer lays p onto the turn's slices.
func (tn turn) pacer(p load.Pacer) load.Pacer {
	if tn.slice <= 0 {
		return p
	}
	return load.SlicedPacer{Pacer: p, Slice: tn.slice, Period: 2 * tn.slice, Phase: tn.phase}
}

// loadConfig is the load of trial pt against st from origin: its step's
// rate or users, after warmup, for duration, and the seed of its Poisson
// arrivals (0 for none).
func (b *Backend) loadConfig(st *started, pt *plan.Trial, origin time.Time, warmup, duration time.Duration) (load.Config, uint64) {
	s := b.s
	var reqs []load.Request
	for _, q := range st.v.Requests {
		reqs = append(reqs, load.Request{Name: q.Name, Method: q.Method, URL: q.URL, Header: q.Header, Body: q.Body, Weight: q.Weight})
	}
	cfg := load.Config{
		Requests: reqs, Start: origin,
		Warmup: warmup, Duration: duration, Timeout: s.Load.Timeout.D(),
		MaxConns: s.Load.MaxConns,
	}
	var seed uint64
	if pt.Users > 0 {
		cfg.Users = &load.Users{N: pt.Users, Think: s.Load.Think.D(),
			ExponentialThink: s.Load.ThinkDistribution == "exponential", Ramp: s.Load.Ramp.D()}
	} else {
		cfg.Pacer, cfg.Quantum = load.ConstantPacer{Rate: pt.Rate}, s.Load.QuantumOrDefault()
		if s.Load.ArrivalOrDefault() == scenario.ArrivalPoisson {
			seed = arrivalSeed(b.seed, pt)
			cfg.Pacer = load.NewPoissonPacer(pt.Rate, seed)
		}
		cfg.Lull = lull(s, pt)
	}
	return cfg, seed
}

// sampleStart returns the first of a trial's sample ticks, every interval
// on the grid through anchor (the window's start, less the lull): the last
// at or before origin, when the trial's load begins, so that a sample
// precedes the load (one already past is taken at once). Ticks on the
// window's own grid read its edges where they fall: a grid from the load's
// origin would be out of step with a window that begins a fraction of a
// second later (a warm-up of 500ms, a sliced duet's second side), and the
// CPU interpolated at the window's start would then lean on load the
// window does not hold (in a sliced duet, where a side's CPU comes in
// bursts, its second side read 1-2% cheaper than its first).
func sampleStart(origin, anchor time.Time, interval time.Duration) time.Time {
	if interval <= 0 || !anchor.After(origin) {
		return anchor
	}
	return anchor.Add(-(anchor.Sub(origin) + interval - 1) / interval * interval)
}

// owedWarmup makes every side of trials run at once owed the variant
// warm-up (load.variant_warmup) when any is, so that their windows stay on
// one timeline: a variant started beside a baseline that has run before
// gets its warm-up, and the baseline then warms again with it, at the
// trial's rate (rewarm).
func owedWarmup(sides ...*started) {
	owed := false
	for _, st := range sides {
		if st == nil {
			return
		}
		owed = owed || !st.warmed
	}
	if !owed {
		return
	}
	for _, st := range sides {
		st.rewarm, st.warmed = st.warmed, false
	}
}

// lull is where, between the requests of trial t's open-model timeline,
// its per-second work is done (load.Config.Lull after each second, the
// samples as long before): midway between two requests, and on shared CPUs
// loaded at once midway between one side's and the next's, whose requests
// are due duetLag later. In a sliced duet each side's
// seconds begin with its own turn, whose first request the other side's
// last one precedes by a whole spacing.
func lull(s *scenario.Scenario, t *plan.Trial) time.Duration {
	spacing := load.Spacing(t.Rate, s.Load.QuantumOrDefault())
	if duetLag(s, t) > 0 {
		spacing /= time.Duration(s.Sides())
	}
	return load.Midway(spacing)
}

// duetLag is how far each side of trials t run at once runs behind the one
// before it: an interval of t's open-model rate divided among the sides
// (half of it in a duet) on shared CPUs loaded at once, else none (a sliced
// duet's sides take turns by slices instead).
func duetLag(s *scenario.Scenario, t *plan.Trial) time.Duration {
	if s.Pinning.Duet != scenario.DuetShared || t.Rate <= 0 || s.Load.Slice > 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / (float64(s.Sides()) * t.Rate))
}

// measure runs one trial against a variant started on this machine, its
// load in turns tn (a sliced duet's side) or throughout, and returns its
// record and the load's result, unwritten. held reads what else ran on
// the load CPUs, shared by the trials run at once; nil, measure reads for
// itself. An error with a record is the trial's own (it was cut short:
// Interrupted and Error say why); one without a record means no trial ran.
func (b *Backend) measure(ctx context.Context, pt *plan.Trial, origin time.Time, tn turn, held *holderMeter) (*record.Trial, *load.Result, error) {
	alone := held == nil
	if alone {
		held = b.holders(1)
	}
	// The other sides' end waits for this one to leave, whichever way it
	// returns.
	leave := sync.OnceFunc(held.leave)
	defer leave()
	st := b.runningOf(pt.Variant)
	if st == nil {
		return nil, nil, fmt.Errorf("trial %d: variant %s is not running", pt.Index, pt.Variant)
	}
	s := b.s
	// The first loaded trial of freshly started services begins with the
	// variant's warm-up (JIT compilation, an agent instrumenting classes
	// as they load), which an idle trial leaves to the next loaded one. A
	// duet has warmed both its sides already.
	// One variant at a time, a warm-up beside the rounds spans whole
	// rounds (ahead.go).
	fresh := alone && !pt.Idle && b.enterRound(roundKey{pt.Step, pt.Round})
	if err := b.warmUp(ctx, pt); err != nil {
		return nil, nil, err
	}
	if fresh {
		b.warmAheadOf([]*plan.Trial{pt})
	}
	// The profiler starts before the load's timeline is fixed, since perf
	// takes a while to start sampling on a busy machine (duet started the
	// sides' before their shared origin). It stops, at the latest, when
	// measure returns.
	prof := st.profiling
	st.profiling = nil
	if prof == nil {
		prof = b.startProfiling(ctx, st)
	}
	defer prof.close()
	if origin.Before(time.Now()) {
		origin = newOrigin()
	}
	warmup, duration := tn.window(s.Load.Warmup.D(), s.Load.Duration.D())
	measureStart := origin.Add(warmup)
	tr, w := b.newTrialRecord(pt, st, tn, origin, measureStart, duration)

	// A service that exits during the trial ends it.
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchExits(tctx, cancel, st)

	cfg, seed := b.loadConfig(st, pt, origin, warmup, duration)
	if cfg.Pacer != nil {
		cfg.Pacer = tn.pacer(cfg.Pacer)
	}
	smp := newSampler(b, st, measureStart)
	defer smp.close()
	nb := b.neighbours(pt)
	var wg sync.WaitGroup
	sctx, stopSampling := context.WithCancel(context.Background())
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The samples fall between the requests, as long before each
		// second of the window as the load's own per-second work falls
		// after it (cfg.Lull): on the second they would hold up the
		// request due there on the load generator's CPU.
		smp.loop(sctx, sampleStart(origin, measureStart.Add(-cfg.Lull), s.Sample.D()), s.Sample.D())
	}()
	// The services' own metrics are read at the window's start, and again
	// at its end, below.
	ectx, stopEdge := context.WithCancel(tctx)
	defer stopEdge()
	edge := smp.pullAt(ectx, measureStart)

	b.beginProgress()
	if ev := b.events; ev != nil && ev.LiveShown() {
		cfg.OnSecond = func(sec load.Second) { ev.Live(pt, sec, smp.cpuNow(), tn.share()) }
	}
	var res *load.Result
	var loadErr error
	// The neighbours are read around the whole load, warm-up included, so
	// that reading them never competes with the load generator.
	nb.begin()
	held.begin(origin)
	waitFrom, fromErr := probe.RunDelay(os.Getpid())
	if pt.Idle {
		tr.MeasureEnd = idle(tctx, measureStart, duration)
	} else {
		res, loadErr = load.Run(tctx, cfg)
	}
	waitTo, toErr := probe.RunDelay(os.Getpid())
	leave()
	tr.Neighbours = nb.end()
	stopSampling()
	wg.Wait()
	smp.take(time.Now()) // the window's closing sample
	stopEdge()           // a load that ended before its window began
	edge.Wait()
	// After the closing sample: in trials run at once, the reading waits
	// for the last side's load to end.
	heldBy, heldRead := held.end()
	if smp.pulls() && ctx.Err() == nil {
		smp.pull(ctx, time.Now(), true)
	}

	if res != nil {
		fillLoad(tr, res, measureStart, seed)
		if fromErr == nil && toErr == nil {
			tr.Load.CPUWaitMS = float64(waitTo-waitFrom) / float64(time.Millisecond)
		}
		tr.Load.LoadCPUsHeldBy = heldBy
		tr.Load.LoadCPUsUnread = !heldRead
	}
	prof.stop(b.dir, tr, measureStart, tr.MeasureEnd)
	tr.Samples = smp.series()
	tr.Telemetry = smp.telemetry
	w.addTo(tr, measureStart)
	tr.Machine = smp.host
	interrupted(tr, st, context.Cause(tctx), loadErr)
	return tr, res, nil
}

// newTrialRecord begins the record of trial pt of st's services, whose
// load timeline began at origin and whose window at measureStart, and
// returns it with the variant warm-up it takes over (nil for none).
func (b *Backend) newTrialRecord(pt *plan.Trial, st *started, tn turn, origin, measureStart time.Time, duration time.Duration) (*record.Trial, *variantWarmup) {
	tr := &record.Trial{Index: pt.Index, Round: pt.Round, Launch: pt.Launch, Step: pt.Step, Variant: pt.Variant, Order: pt.Order, Pair: pt.Pair,
		TargetRate: pt.Rate, TargetUsers: pt.Users, Idle: pt.Idle, CPULimit: pt.CPULimit,
		PlannedS: duration.Seconds(), LoadShare: tn.share(), Start: origin, MeasureStart: measureStart,
		Exports: st.v.Exports, LoadCPUs: b.loadCPUs, Target: st.v.Target}
	w := st.warmup
	if w != nil {
		// The warm-up is this trial's: its load timeline began there.
		tr.Start, tr.VariantWarmupS, tr.VariantWarmup = w.start, w.lasted.Seconds(), w.rec
		st.warmup = nil
	}
	for _, run := range st.runs {
		run.Started = st.fresh
		tr.Services = append(tr.Services, run)
	}
	st.fresh = false
	b.mu.Lock()
	tr.BesideWarmupStart = b.warmBegan == roundKey{pt.Step, pt.Round}
	b.mu.Unlock()
	return tr, w
}

// watchExits cancels ctx, with the service's exit as the cause, when one
// of st's services exits before ctx ends.
func watchExits(ctx context.Context, cancel context.CancelCauseFunc, st *started) {
	for i, svc := range st.group.Services() {
		name := st.runs[i].Name
		go func() {
			select {
			case <-svc.Done():
				// The error carries the end of the service's log: what it
				// said before it exited.
				if err := svc.ExitErr(); err != nil {
					cancel(fmt.Errorf("during the trial, %w", err))
				} else {
					cancel(fmt.Errorf("service %s exited during the trial", name))
				}
			case <-ctx.Done():
			}
		}()
	}
}

// fillLoad records the load's result res in tr, whose window began at
// measureStart, and the seed of its arrivals.
func fillLoad(tr *record.Trial, res *load.Result, measureStart time.Time, seed uint64) {
	tr.MeasureEnd = res.MeasureEnd
	if tr.MeasureEnd.IsZero() || tr.MeasureEnd.Before(measureStart) {
		tr.MeasureEnd = measureStart
	}
	torecord.FillLoad(tr, res)
	tr.Load.ArrivalSeed = seed
}

// addTo counts the warm-up w's requests, and the telemetry they caused, in
// tr's telemetry cycle, which begins with them, and says whether some were
// sent at another load; a nil w adds nothing.
func (w *variantWarmup) addTo(tr *record.Trial, measureStart time.Time) {
	if w == nil {
		return
	}
	tr.Load.WarmupCompleted += w.completed
	tr.Load.WarmupAtOtherLoad = tr.Load.WarmupAtOtherLoad || w.otherLoad
	if w.telemetry != nil && len(tr.Telemetry) > 0 {
		tr.Telemetry = append([]record.Telemetry{torecord.Telemetry(w.start.Sub(measureStart).Seconds(), *w.telemetry)}, tr.Telemetry...)
	}
}

// interrupted marks tr as cut short, by cause (the trial's context's) or
// the load's error loadErr, if either ended it.
func interrupted(tr *record.Trial, st *started, cause, loadErr error) {
	if cause == nil && loadErr == nil {
		return
	}
	tr.Interrupted = true
	switch {
	case cause != nil && !errors.Is(cause, context.Canceled):
		tr.Error = cause.Error() // a service exited, and this trial says so
		st.exitReported = true
	case loadErr != nil:
		tr.Error = loadErr.Error()
	default:
		tr.Error = "interrupted"
	}
}

// idle waits out an idle trial's warm-up and window, in which no load is
// sent and the sampler reads the services as they are, and returns when
// the window ended: at its planned end, or when ctx ended it (a service
// that exited, an interrupt), but not before it began.
func idle(ctx context.Context, measureStart time.Time, window time.Duration) time.Time {
	end := measureStart.Add(window)
	t := time.NewTimer(time.Until(end))
	defer t.Stop()
	select {
	case <-t.C:
		return end
	case <-ctx.Done():
		if now := time.Now(); now.After(measureStart) {
			return now
		}
		return measureStart
	}
}

// arrivalSeed returns the seed of trial t's Poisson arrivals: drawn from the
// run's seed, t's round and its load step, so that a run is reproducible and
// every variant of a round meets the same arrivals at a step (common random
// numbers: the variants' difference is not the arrivals'), while rounds
// differ.
func arrivalSeed(runSeed int64, t *plan.Trial) uint64 {
	return rand.New(rand.NewPCG(uint64(runSeed), uint64(t.Step)<<32|uint64(uint32(t.Round)))).Uint64()
}
