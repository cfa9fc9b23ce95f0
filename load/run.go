package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes one run of the load generator.
type Config struct {
	// Requests is the request mix; at least one is required.
	Requests []Request
	// Pacer gives the timeline of the requests, relative to Start (the open
	// model). Exactly one of Pacer and Users is set.
	Pacer Pacer
	// Start is the timeline origin: request 0 of the warm-up is due at Start.
	// The zero Time means when Run is called. A Start in the past makes the
	// requests already due be sent as fast as the connections allow.
	Start time.Time
	// Warmup is how long load is sent from Start without being recorded.
	Warmup time.Duration
	// Duration is the length of the measured window, which begins at
	// Start+Warmup; it must be positive.
	Duration time.Duration
	// Timeout bounds each request, from when it is sent to the end of its
	// response body; 0 means 10s.
	Timeout time.Duration
	// MaxConns caps the requests in flight (and so the connections in use);
	// 0 means 500. Below the cap a connection is opened when the workers'
	// connections are all busy and the scheduler falls behind for want of
	// one (a slow or stalled target), at most one a millisecond; a scheduler
	// that was itself late sends the requests it finds due through the
	// connections it has. A request that waits for a connection has its
	// latency counted from its intended time all the same. A higher cap only
	// opens connections to a stalled target beyond its listen backlog, whose
	// SYNs the kernel drops and retries a second later.
	MaxConns int
	// Quantum, in the open model, releases requests on a grid: a request
	// is due at the first multiple of Quantum (from Start) at or after its
	// time on the Pacer's timeline, and its latency counts from there (or
	// from when it was sent, if that was earlier: the scheduler wakes early
	// by the machine's usual wake-up latency, up to 200 µs).
	// Requests that fall in the same quantum are sent together, with one
	// wake-up of the scheduler, and a target queues each such burst, which
	// is then in the latency. 0 (toll's default) sends each at its own
	// time, which costs a wake-up per request (tens of microseconds of CPU
	// on a virtual machine) instead of one per quantum.
	Quantum time.Duration
	// Users, when set, makes the load a closed model instead: a fixed
	// number of users that each send a request, wait for its response,
	// think, and send the next. Pacer and MaxConns are then unused.
	Users *Users
	// OnSecond, when set, is called after each second of the measured
	// window with that second's figures, from a goroutine of its own (for a
	// live display; it reads counters the workers update atomically).
	OnSecond func(Second)
	// Progress, when set, counts each request as it completes (with a
	// response of any status or with an error, in the warm-up and the
	// measured window alike), the moment it does: a live count for a caller
	// that reads it beside readings of its own, at times of its own.
	// OnSecond's figures come once a second on the load's own clock, and a
	// reading taken on the same second finds the last one delivered or not,
	// by a race: a cost per request over a few seconds read so is off by a
	// second's requests either way.
	Progress *atomic.Uint64
	// Lull is how long after each whole second of the timeline Run does
	// its own per-second work (encoding the second's histogram, OnSecond),
	// which holds up a request due meanwhile on the generator's CPU. Half
	// the Spacing of the requests puts that work between two of them
	// instead of at the due time of the one that opens each second, which
	// it would make late by its own length once a second. It must be below
	// a second; 0 does the work on the second.
	Lull time.Duration
}

// Midway returns a Lull that falls midway between requests spacing apart:
// half of it, at most 100 ms.
func Midway(spacing time.Duration) time.Duration {
	return min(spacing/2, 100*time.Millisecond)
}

// Spacing is the time between consecutive due times of an open model at
// rate requests per second on a grid of quantum (0 for none): 1/rate, or
// the quantum if that is longer. Poisson arrivals have it as their mean.
// It is 0 for a rate that is not positive.
func Spacing(rate float64, quantum time.Duration) time.Duration {
	if !(rate > 0) {
		return 0
	}
	return max(time.Duration(float64(time.Second)/rate), quantum)
}

// Second is one second of the measured window as it ends: the requests
// intended in it that have completed so far, and their p99.
type Second struct {
	// Index counts the seconds of the measured window from 0.
	Index     int
	Completed uint64
	Errors    uint64
	P99       time.Duration
}

// Users is a closed-model load.
type Users struct {
	// N is the number of users; each has a connection of its own.
	N int
	// Think is the time a user waits between a response and its next
	// request: exactly Think, or with ExponentialThink a random time with
	// mean Think.
	Think            time.Duration
	ExponentialThink bool
	// Ramp spreads the users' first requests evenly over this long from
	// Start; 0 starts them all at once.
	Ramp time.Duration
}

const (
	// maxUsers bounds the closed model's users: each holds a connection to
	// the target, and connections to one address are told apart by their
	// local port. More would only start goroutines that cannot connect.
	maxUsers        = 1<<16 - 1
	defaultTimeout  = 10 * time.Second
	defaultMaxConns = 500
	// growPatience is how far the scheduler may fall behind its own
	// lateness, for want of an idle worker, before it starts another.
	growPatience = 100 * time.Microsecond
	// spawnGap is the least time between two new workers while the
	// scheduler is behind: opening a connection costs the generator's CPU,
	// and if it opened one per request it would fall further behind.
	spawnGap = time.Millisecond
	// stallSlack is how late past its timer dispatch may wake before the
	// excess is taken for the generator's own lateness (Go timers can be a
	// millisecond late in an idle process).
	stallSlack = 2 * time.Millisecond
	// freeAfterRetired is how many retired workers make it worth returning
	// their memory to the operating system.
	freeAfterRetired = 16
	// abortGrace is how long Run waits for aborted requests to return once
	// it has cancelled them.
	abortGrace = 250 * time.Millisecond
	// finalizeLag is how long after an interval ends its histogram is
	// encoded, if no request of it is still in flight.
	finalizeLag = time.Second
	// finalizeRetry is how soon an interval whose requests are still in
	// flight after finalizeLag is looked at again.
	finalizeRetry = 50 * time.Millisecond
)

// Run sends the load cfg describes and returns what it measured.
//
// It returns once every request sent has completed or failed, which takes at
// most Timeout after the last one was sent; it never runs past
// Start+Warmup+Duration+Timeout (requests still in flight then count as
// timeouts). If ctx is cancelled first, Run abandons the requests in flight and
// returns at once, with the partial Result up to the cancellation and an error
// wrapping ctx's. Configuration errors return a nil Result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

// job is one request handed from the scheduler to a worker.
type job struct {
	due      time.Duration // intended send time, relative to Start
	id       uint64        // the request's number, from 1
	target   int32         // index into runner.targets
	interval int32         // index into the recorder's intervals; -1 during the warm-up
}

// runner is the state of one Run.
type runner struct {
	start    time.Time     // Config.Start
	origin   time.Time     // the same instant, with a monotonic clock reading
	warmup   time.Duration // start of the measured window, relative to Start
	end      time.Duration // end of the measured window, relative to Start
	timeout  time.Duration
	maxConns int
	users    *Users

	targets []target
	names   []string
	dialers []*dialer
	rec     *recorder
	seq     []int32       // the mix's order, one period of it
	ids     atomic.Uint64 // requests numbered so far (closed model)

	// Scheduler state (open model).
	timeline timeline
	quantum  time.Duration
	workers  int // workers running (started and not retired)
	// backlog is set once the scheduler, since it last slept, has found no
	// worker idle; floor is then the least lag (time past its due time) of
	// the requests it has dispatched since.
	backlog   bool
	floor     time.Duration
	lastSpawn time.Duration // when the last worker was started, since Start
	patience  *time.Timer   // dispatch's, to look again for a worker

	onSecond func(Second)
	lull     time.Duration  // Config.Lull
	progress *atomic.Uint64 // Config.Progress, or nil

	parent  context.Context       // the caller's: its cancellation aborts the run
	ctx     context.Context       // the run's; done when it is cancelled or over
	pool    *pool                 // the open model's idle workers
	wg      sync.WaitGroup        // workers or users running
	userErr atomic.Pointer[error] // why a user could not run, if one could not
}

func newRunner(cfg Config) (*runner, error) {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	maxConns := cfg.MaxConns
	if maxConns <= 0 {
		maxConns = defaultMaxConns
	}
	switch {
	case len(cfg.Requests) == 0:
		return nil, errors.New("load: no requests to send")
	case cfg.Pacer == nil && cfg.Users == nil:
		return nil, errors.New("load: no pacer (open model) and no users (closed model)")
	case cfg.Pacer != nil && cfg.Users != nil:
		return nil, errors.New("load: both a pacer (open model) and users (closed model)")
	case cfg.Users != nil && cfg.Users.N <= 0:
		return nil, fmt.Errorf("load: %d users", cfg.Users.N)
	case cfg.Users != nil && cfg.Users.N > maxUsers:
		return nil, fmt.Errorf("load: %d users: each needs a connection of its own, and one address takes at most %d (local ports)", cfg.Users.N, maxUsers)
	case cfg.Users != nil && (cfg.Users.Think < 0 || cfg.Users.Ramp < 0):
		return nil, errors.New("load: negative think time or ramp-up")
	case cfg.Quantum < 0:
		return nil, fmt.Errorf("load: quantum %s is negative", cfg.Quantum)
	case cfg.Duration <= 0:
		return nil, fmt.Errorf("load: duration %s is not positive", cfg.Duration)
	case cfg.Lull < 0 || cfg.Lull >= time.Second:
		return nil, fmt.Errorf("load: lull %s is not in [0, 1s)", cfg.Lull)
	case cfg.Warmup < 0:
		return nil, fmt.Errorf("load: warm-up %s is negative", cfg.Warmup)
	case cfg.Warmup > math.MaxInt64-cfg.Duration-timeout:
		return nil, fmt.Errorf("load: warm-up %s, duration %s and timeout %s are too long", cfg.Warmup, cfg.Duration, timeout)
	}
	targets, endpoints, err := prepare(cfg.Requests)
	if err != nil {
		return nil, err
	}
	r := &runner{
		warmup:   cfg.Warmup,
		end:      cfg.Warmup + cfg.Duration,
		timeout:  timeout,
		maxConns: maxConns,
		users:    cfg.Users,
		quantum:  cfg.Quantum,
		targets:  targets,
		rec:      newRecorder(int((cfg.Duration+time.Second-1)/time.Second), len(targets)),
		onSecond: cfg.OnSecond,
		lull:     cfg.Lull,
		progress: cfg.Progress,
	}
	for _, t := range targets {
		r.names = append(r.names, t.name)
	}
	for _, ep := range endpoints {
		var tc *tls.Config
		if ep.tls {
			tc = &tls.Config{ServerName: ep.serverName, NextProtos: []string{"http/1.1"}}
		}
		r.dialers = append(r.dialers, newDialer(ep.addr, tc, timeout))
	}
	m := newMix(cfg.Requests)
	r.seq = make([]int32, m.total)
	for i := range r.seq {
		r.seq[i] = int32(m.next())
	}
	if cfg.Pacer != nil {
		r.timeline = timeline{pacer: cfg.Pacer}
	}
	now := time.Now()
	r.start = cfg.Start
	if r.start.IsZero() {
		r.start = now
	}
	r.origin = now.Add(r.start.Sub(now))
	return r, nil
}

// errRunOver is the cause of a run's context once the last moment a
// request may end has passed.
var errRunOver = errors.New("load: the run is over")

// aborted reports whether the run was cancelled by its caller before its
// last moment: a request that fails from then on was abandoned, not failed.
// It reads the run's context, which is done before any dial or read that
// its cancellation interrupts can return, and not a flag set by a callback
// of that cancellation, which runs when the scheduler gets to it: under load,
// a cancelled dial returned first and was counted as an error.
func (r *runner) aborted() bool {
	return r.parent != nil && r.parent.Err() != nil && r.ctx.Err() != nil && context.Cause(r.ctx) != errRunOver
}

// over reports whether the run's last moment a request may end has
// passed. A request still in flight then, cut by the run closing its
// connection, was due before the run's end and so has waited longer than
// the timeout since it was due: it timed out, though its own deadline,
// counted from when a busy machine got to send it, had not yet come.
func (r *runner) over() bool {
	return r.ctx.Err() != nil && context.Cause(r.ctx) == errRunOver
}

// bind makes ctx the run's caller's context and derives the run's own from
// it, done at the last moment a request may end. It returns the function
// that releases the run's context.
func (r *runner) bind(ctx context.Context) context.CancelFunc {
	runCtx, cancel := context.WithDeadlineCause(ctx, r.origin.Add(r.end+r.timeout), errRunOver)
	r.parent, r.ctx = ctx, runCtx
	return cancel
}

// elapsed returns the time since Start.
func (r *runner) elapsed() time.Duration { return time.Since(r.origin) }

// run carries out the run.
func (r *runner) run(ctx context.Context) (*Result, error) {
	defer r.bind(ctx)()
	runCtx := r.ctx
	// Closing the connections is how requests in flight are aborted.
	stop := context.AfterFunc(runCtx, func() {
		for _, d := range r.dialers {
			d.closeAll()
		}
	})
	defer stop()
	defer func() {
		for _, d := range r.dialers {
			d.closeAll()
		}
	}()

	// The background loop finalizes each second's histogram as it ends and
	// reports it live; it runs until the requests in flight have drained,
	// so the last second is reported too, and is gone before Run returns.
	bgDone := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		r.background(bgDone)
	}()

	var cut time.Duration
	var interrupted bool
	if r.users != nil {
		cut, interrupted = r.closed(ctx)
	} else {
		r.pool = newPool()
		r.patience = time.NewTimer(time.Hour)
		r.patience.Stop()
		cut, interrupted = r.schedule(ctx)
		r.pool.close()
	}
	drained := r.drain()
	close(bgDone)
	bg.Wait()
	if !drained && ctx.Err() != nil {
		interrupted = true // cancelled with requests in flight
	}

	// Where the run was cut, for its error: cancelled before Start (a
	// start shared by a duet's sides, say), it is cut at Start, having
	// sent nothing; its elapsed time is then negative.
	at := interruptedAt(cut)
	cut = max(cut, 0)
	n := 0
	if cut > r.warmup {
		n = min(int((cut-r.warmup+time.Second-1)/time.Second), len(r.rec.intervals))
	}
	r.rec.finalize(len(r.rec.intervals), true)
	res := r.rec.result(n, r.names, r.start.Add(cut))
	for _, d := range r.dialers {
		res.Connections += d.connections()
	}
	switch {
	case interrupted:
		err := ctx.Err()
		if cause := context.Cause(ctx); cause != nil && cause != err {
			return res, fmt.Errorf("load: run interrupted %s: %w (%w)", at, err, cause)
		}
		return res, fmt.Errorf("load: run interrupted %s: %w", at, err)
	case r.timeline.err != nil:
		return res, r.timeline.err
	case r.userErr.Load() != nil:
		return res, *r.userErr.Load()
	}
	return res, nil
}

// background, until done, finalizes each interval finalizeLag after it
// ends and calls onSecond with each interval's figures as it ends. Once
// freeAfterRetired workers have been retired, it returns the memory they
// held to the operating system (at most once per idleRetire: it costs a
// garbage collection, a millisecond or two of the generator's CPU).
func (r *runner) background(done <-chan struct{}) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	reported := 0
	// report calls onSecond with each second that has ended by now.
	report := func(now time.Duration) {
		for r.onSecond != nil && reported < len(r.rec.intervals) && now >= r.warmup+time.Duration(reported+1)*time.Second {
			r.onSecond(r.rec.snapshot(reported))
			reported++
		}
	}
	var freedAt uint64      // workers retired when memory was last given back
	var freed time.Duration // when it was
	for {
		// The next event: the end of the next interval to report, or the
		// finalization of the next one to finalize.
		next := r.warmup + time.Duration(r.rec.done+1)*time.Second + finalizeLag + r.lull
		if r.onSecond != nil && reported < len(r.rec.intervals) {
			next = min(next, r.warmup+time.Duration(reported+1)*time.Second+r.lull)
		}
		wait := time.Until(r.origin.Add(next))
		if wait <= 0 {
			// Nothing left to report now, and the interval to finalize
			// still has a request in flight: look again shortly, not at
			// once, or this loop spins on the load generator's CPU for
			// as long as the request takes (up to load.timeout).
			wait = finalizeRetry
		}
		t.Reset(wait)
		select {
		case <-done:
			// The load is over: the seconds that have ended are
			// reported now, their lull having nothing left to spare.
			report(r.elapsed())
			return
		case <-t.C:
		}
		now := r.elapsed()
		report(now)
		if now > r.warmup+finalizeLag {
			r.rec.finalize(int((now-r.warmup-finalizeLag)/time.Second), false)
		}
		if r.pool != nil {
			if n := r.pool.retiredCount(); n-freedAt >= freeAfterRetired && now-freed >= idleRetire {
				// Give back what the retired workers held, instead of
				// keeping the pool's peak for the rest of the run.
				debug.FreeOSMemory()
				freedAt, freed = n, r.elapsed()
			}
		}
	}
}

// pick returns the mix entry of the request numbered id (from 1).
func (r *runner) pick(id uint64) int { return int(r.seq[(id-1)%uint64(len(r.seq))]) }

// dispatched is what became of a request the scheduler tried to send.
type dispatched int

const (
	dispatchSent      dispatched = iota
	dispatchWindowEnd            // the window ended while waiting for a worker
	dispatchCancelled            // ctx was done while waiting for a worker
)

// interruptedAt says when a run was interrupted, cut being the time from
// its start: rounded to the millisecond, and before the start said as
// such, never as a negative time, nor as "0s before" a start it missed by
// less than half a millisecond.
func interruptedAt(cut time.Duration) string {
	switch r := cut.Round(time.Millisecond); {
	case r < 0:
		return (-r).String() + " before its start"
	case cut < 0:
		return "just before its start"
	case r == 0:
		return "at its start"
	default:
		return "at " + r.String()
	}
}

// schedule walks the timeline, handing each request to a worker at its due
// time, until the end of the measured window or until ctx is done. It returns
// the end of the measured window relative to Start (when ctx was done, if
// earlier) and whether ctx was done.
func (r *runner) schedule(ctx context.Context) (cut time.Duration, interrupted bool) {
	done := ctx.Done()
	windowEnd := time.NewTimer(r.end - r.elapsed())
	defer windowEnd.Stop()
	sl, err := newSleeper()
	if err != nil {
		r.timeline.err = err
		return r.end, false
	}
	defer sl.close()

	for {
		due, ok := r.timeline.next(r.end)
		if !ok {
			break
		}
		if q := r.quantum; q > 0 {
			if due = (due + q - 1) / q * q; due >= r.end {
				break
			}
		}
		id := r.timeline.hits
		j := job{due: due, id: id, target: int32(r.pick(id)), interval: -1}
		if due >= r.warmup {
			j.interval = int32((due - r.warmup) / time.Second)
		}
		// A scheduler still behind when the window ends stops there, and
		// the window's requests it has not sent are missed: counted, not
		// walked, however far behind a rate it cannot meet it is.
		if r.elapsed() >= r.end {
			if j.interval >= 0 {
				r.rec.miss(int(j.interval))
			}
			r.missUntil(r.end)
			return r.end, false
		}
		waited, err := sl.until(r.origin.Add(due), done)
		if err != nil {
			return r.interrupt(j), true
		}
		if waited {
			r.backlog = false
		}
		select {
		case <-done:
			return r.interrupt(j), true
		default:
		}
		if j.interval >= 0 {
			i := r.rec.begin(int(j.interval), int(j.target))
			if i < 0 { // so late that the window's intervals are all final
				r.rec.miss(int(j.interval))
				continue
			}
			j.interval = int32(i)
		}
		switch r.dispatch(j, done, windowEnd.C) {
		case dispatchSent:
		case dispatchWindowEnd:
			r.unbegin(j)
			r.missUntil(r.end)
			return r.end, false
		case dispatchCancelled:
			r.unbegin(j)
			return r.interrupt(job{due: r.end}), true
		}
	}
	// Everything is sent; the window lasts until its end all the same.
	select {
	case <-windowEnd.C:
		return r.end, false
	case <-done:
		return min(r.elapsed(), r.end), true
	}
}

// unbegin turns a request that begin counted as sent into a missed one.
func (r *runner) unbegin(j job) {
	if j.interval < 0 {
		return
	}
	iv := &r.rec.intervals[j.interval]
	iv.sent.Add(^uint64(0))
	r.rec.names[j.target].sent.Add(^uint64(0))
	iv.missed.Add(1)
	iv.pending.Add(-1)
}

// dispatch hands j to the worker that became idle last (see pool). If none
// is idle it starts a new one, up to MaxConns, but only when the scheduler
// is falling behind because the workers are busy: when j is later than
// growPatience beyond the least late request since the scheduler last slept
// (its own lateness), and no worker was started in the last spawnGap.
// Otherwise it waits for a worker to become idle, looking again when that
// could have changed.
//
// So a scheduler that wakes late (the generator's process was descheduled,
// as happens for tens of milliseconds on a virtual machine) sends the
// requests that fell due meanwhile through the connections it has, catching
// up, instead of opening a connection for each; and a target that slows
// down or stalls gets more connections, one a millisecond. Either way
// latency counts from each request's intended time.
func (r *runner) dispatch(j job, done <-chan struct{}, windowEnd <-chan time.Time) dispatched {
	for {
		w, retired := r.pool.get(j.due)
		r.workers -= retired
		if w != nil {
			w.jobs <- j
			return dispatchSent
		}
		ready := r.pool.wait()
		if ready == nil {
			continue // one became idle meanwhile
		}
		var tick <-chan time.Time
		var wakeBy time.Duration
		if r.workers < r.maxConns {
			now := r.elapsed()
			lag := now - j.due
			if !r.backlog || lag < r.floor {
				r.backlog, r.floor = true, lag
			}
			behind := lag - r.floor - growPatience
			rested := now - r.lastSpawn - spawnGap
			if r.workers == 0 || behind > 0 && rested >= 0 {
				r.workers++
				r.lastSpawn = now
				r.wg.Add(1)
				go r.work(&worker{jobs: make(chan job, 1)}, j)
				return dispatchSent
			}
			wait := max(-behind, -rested, 10*time.Microsecond)
			r.patience.Reset(wait)
			tick, wakeBy = r.patience.C, now+wait+stallSlack
		}
		select {
		case <-ready:
		case <-tick:
		case <-windowEnd:
			return dispatchWindowEnd
		case <-done:
			return dispatchCancelled
		}
		// Woken well after the timer was due: the generator itself was
		// held up (descheduled) meanwhile, and that lateness is its own.
		if tick != nil {
			if over := r.elapsed() - wakeBy; over > 0 {
				r.floor += over
			}
		}
	}
}

// interrupt accounts for the requests due but not sent when ctx was done,
// pending being the one the scheduler held, and returns the time it was done.
func (r *runner) interrupt(pending job) time.Duration {
	cut := min(r.elapsed(), r.end)
	if pending.due < cut && pending.due >= r.warmup {
		r.rec.miss(int((pending.due - r.warmup) / time.Second))
	}
	r.missUntil(cut)
	return cut
}

// missUntil counts the rest of the timeline released before limit as
// missed, those of the warm-up excepted. It counts with arithmetic, a
// difference of two Pacer.Hits per second of the window, never request by
// request: a generator far behind an impossible rate may leave billions.
func (r *runner) missUntil(limit time.Duration) {
	from := r.timeline.hits
	upTo := r.released(limit)
	if upTo <= from {
		return
	}
	first := 0
	if r.timeline.last > r.warmup {
		first = int((r.timeline.last - r.warmup) / time.Second)
	}
	for i := first; i < len(r.rec.intervals); i++ {
		start := r.warmup + time.Duration(i)*time.Second
		if start >= limit {
			break
		}
		lo := max(from, r.released(start))
		hi := min(upTo, r.released(start+time.Second))
		if hi > lo {
			r.rec.missN(i, hi-lo)
		}
	}
	r.timeline.skip(upTo, limit)
}

// released returns how many requests of the timeline are released before
// limit: due before it once rounded up to the quantum grid.
func (r *runner) released(limit time.Duration) uint64 {
	if q := r.quantum; q > 0 && limit > 0 {
		// A request due at d is released at ⌈d/q⌉·q, which is before
		// limit exactly when d ≤ (⌈limit/q⌉−1)·q.
		steps := limit / q
		if limit%q != 0 {
			steps++
		}
		limit = (steps-1)*q + 1
	}
	return r.timeline.pacer.Hits(limit)
}

// drain waits for the workers to finish, and reports whether they all did
// before the run's context was done (cancelled, or past the last moment a
// request may end). If it was, the requests in flight are being aborted and
// drain waits a little for them.
func (r *runner) drain() bool {
	finished := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return true
	case <-r.ctx.Done():
	}
	grace := time.NewTimer(abortGrace)
	defer grace.Stop()
	select {
	case <-finished:
	case <-grace.C:
	}
	return false
}

// client is the connections of one worker or user, one per endpoint, and
// its request buffer.
type client struct {
	r     *runner
	conns []*conn
	buf   []byte
	sent  time.Time // when send began its last request
}

func (r *runner) newClient() *client {
	return &client{r: r, conns: make([]*conn, len(r.dialers)), buf: make([]byte, 0, 512)}
}

// close closes the client's connections.
func (c *client) close() {
	for i, cn := range c.conns {
		if cn != nil {
			cn.close()
			c.conns[i] = nil
		}
	}
}

// send sends the request numbered id of target t and reads its response.
// It returns the response status, or the error that ended the request.
func (c *client) send(t *target, id uint64) (int, error) {
	c.sent = time.Now()
	deadline := c.sent.Add(c.r.timeout)
	c.buf = t.render(c.buf, id)
	for attempt := 0; ; attempt++ {
		cn := c.conns[t.dialer]
		reused := cn != nil
		if cn == nil {
			var err error
			if cn, err = c.r.dialers[t.dialer].dial(c.r.ctx); err != nil {
				return 0, err
			}
			c.conns[t.dialer] = cn
		}
		cn.wbuf = c.buf
		resp, err := cn.roundTrip(deadline, t.isHead)
		if err != nil || !resp.keep {
			cn.close()
			c.conns[t.dialer] = nil
		}
		if err != nil && reused && attempt == 0 && !resp.started && retryable(err) && !c.r.aborted() {
			continue // the server closed the idle connection: try a fresh one
		}
		return resp.status, err
	}
}

// work is an open-model worker: it sends first, then each request the
// scheduler hands it while idle, until it is retired or the pool closed.
func (r *runner) work(w *worker, first job) {
	defer r.wg.Done()
	c := r.newClient()
	defer c.close()
	for j, ok := first, true; ok; j, ok = <-w.jobs {
		if !r.pool.put(w, r.do(c, j)) {
			return
		}
	}
}

// do sends one request and records its outcome if it is in the measured
// window. Its latency counts from its due time, or from when it was sent if
// that was earlier (the scheduler wakes early by its usual lateness, so a
// request may go out a little before its grid time). It returns the time
// since Start when it was done.
func (r *runner) do(c *client, j job) time.Duration {
	status, err := c.send(&r.targets[j.target], j.id)
	now := r.elapsed()
	sent := c.sent.Sub(r.origin)
	if j.interval >= 0 {
		r.rec.late.add(sent - j.due)
	}
	from := min(j.due, sent)
	r.account(int(j.interval), int(j.target), now-from, status, err)
	return now
}

// progressed counts a completed request in Config.Progress, if set.
func (r *runner) progressed() {
	if r.progress != nil {
		r.progress.Add(1)
	}
}

// account records a request's outcome: in interval i, or as a warm-up
// request if i < 0.
func (r *runner) account(i, target int, lat time.Duration, status int, err error) {
	switch {
	case err != nil && r.aborted():
		if i >= 0 {
			r.rec.abandon(i) // abandoned: the run was cancelled
		}
	case i < 0:
		r.rec.warmup.Add(1)
		r.progressed()
	default:
		r.progressed()
		o := classify(status, err)
		if err != nil && r.over() {
			o = outcomeTimeout
		}
		r.rec.record(i, target, lat, o)
		if o != outcomeOK {
			r.rec.example(o, status, err)
		}
	}
}
