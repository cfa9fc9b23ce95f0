package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"
)

// Config describes one run of the load generator.
type Config struct {
	// Requests is the request mix; at least one is required.
	Requests []Request
	// Pacer gives the timeline of the requests, relative to Start.
	Pacer Pacer
	// Start is the timeline origin: request 0 of the warm-up is due at Start.
	// The zero Time means when Run is called. A Start in the past makes the
	// requests already due be sent at once.
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
	// 0 means 10000.
	MaxConns int
	// OnSecond, when set, is called after each second of the measured
	// window with that second's figures, from a goroutine of its own (for a
	// live display; it reads counters the workers update atomically).
	OnSecond func(Second)
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

const (
	defaultTimeout  = 10 * time.Second
	defaultMaxConns = 10000
	// abortGrace is how long Run waits for aborted requests to return once
	// it has cancelled them.
	abortGrace = 250 * time.Millisecond
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
	defer r.transport.CloseIdleConnections()
	return r.run(ctx)
}

// job is one request handed from the scheduler to a worker.
type job struct {
	due      time.Duration // intended send time, relative to Start
	target   int32         // index into runner.targets
	interval int32         // index into runner.stats; -1 during the warm-up
}

// runner is the state of one Run.
type runner struct {
	start    time.Time     // Config.Start
	origin   time.Time     // the same instant, with a monotonic clock reading
	warmup   time.Duration // start of the measured window, relative to Start
	end      time.Duration // end of the measured window, relative to Start
	timeout  time.Duration
	maxConns int

	targets   []target
	transport *http.Transport
	stats     []intervalStats // one per second of the measured window

	// Scheduler state.
	timeline timeline
	mix      mix
	workers  int // workers started

	onSecond func(Second)

	ctx  context.Context // parent of every request's context
	work chan job        // unbuffered: a send succeeds only to an idle worker
	wg   sync.WaitGroup  // workers running
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
	case cfg.Pacer == nil:
		return nil, errors.New("load: no pacer")
	case cfg.Duration <= 0:
		return nil, fmt.Errorf("load: duration %s is not positive", cfg.Duration)
	case cfg.Warmup < 0:
		return nil, fmt.Errorf("load: warm-up %s is negative", cfg.Warmup)
	case cfg.Warmup > math.MaxInt64-cfg.Duration-timeout:
		return nil, fmt.Errorf("load: warm-up %s, duration %s and timeout %s are too long", cfg.Warmup, cfg.Duration, timeout)
	}
	targets, err := prepare(cfg.Requests)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	start := cfg.Start
	if start.IsZero() {
		start = now
	}
	stats := make([]intervalStats, (cfg.Duration+time.Second-1)/time.Second)
	for i := range stats {
		stats[i].counts = make([]int64, histCountsLen)
	}
	return &runner{
		start:     start,
		origin:    now.Add(start.Sub(now)),
		warmup:    cfg.Warmup,
		end:       cfg.Warmup + cfg.Duration,
		timeout:   timeout,
		maxConns:  maxConns,
		targets:   targets,
		transport: newTransport(timeout, maxConns),
		stats:     stats,
		timeline:  timeline{pacer: cfg.Pacer},
		mix:       newMix(cfg.Requests),
		onSecond:  cfg.OnSecond,
	}, nil
}

// newTransport returns an HTTP/1.1 keep-alive transport for up to maxConns
// concurrent requests, without proxies or compression.
func newTransport(timeout time.Duration, maxConns int) *http.Transport {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		DialContext:         dialer.DialContext,
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: timeout,
		DisableCompression:  true,
	}
}

// elapsed returns the time since Start.
func (r *runner) elapsed() time.Duration { return time.Since(r.origin) }

// run carries out the run.
func (r *runner) run(ctx context.Context) (*Result, error) {
	runCtx, cancel := context.WithDeadline(ctx, r.origin.Add(r.end+r.timeout))
	defer cancel()
	r.ctx = runCtx
	r.work = make(chan job)

	// The live reporter runs until the requests in flight have drained, so
	// the last second is reported too, and is gone before Run returns.
	liveDone := make(chan struct{})
	var live sync.WaitGroup
	if r.onSecond != nil {
		live.Add(1)
		go func() {
			defer live.Done()
			r.live(liveDone)
		}()
	}
	cut, interrupted := r.schedule(ctx)
	close(r.work)
	drained := r.drain()
	close(liveDone)
	live.Wait()
	if !drained && ctx.Err() != nil {
		interrupted = true // cancelled with requests in flight
	}

	n := 0
	if cut > r.warmup {
		n = min(int((cut-r.warmup+time.Second-1)/time.Second), len(r.stats))
	}
	res := result(r.stats, n, r.start.Add(cut))
	switch {
	case interrupted:
		err := ctx.Err()
		if cause := context.Cause(ctx); cause != nil && cause != err {
			return res, fmt.Errorf("load: run interrupted at %s: %w (%w)", cut, err, cause)
		}
		return res, fmt.Errorf("load: run interrupted at %s: %w", cut, err)
	case r.timeline.err != nil:
		return res, r.timeline.err
	}
	return res, nil
}

// dispatched is what became of a request the scheduler tried to send.
type dispatched int

const (
	dispatchSent      dispatched = iota
	dispatchWindowEnd            // the window ended while waiting for a worker
	dispatchCancelled            // ctx was done while waiting for a worker
)

// schedule walks the timeline, handing each request to a worker at its due
// time, until the end of the measured window or until ctx is done. It returns
// the end of the measured window relative to Start (when ctx was done, if
// earlier) and whether ctx was done.
func (r *runner) schedule(ctx context.Context) (cut time.Duration, interrupted bool) {
	done := ctx.Done()
	windowEnd := time.NewTimer(r.end - r.elapsed())
	defer windowEnd.Stop()
	sleep := time.NewTimer(time.Hour)
	sleep.Stop()
	defer sleep.Stop()

	for {
		due, ok := r.timeline.next(r.end)
		if !ok {
			break
		}
		j := job{due: due, target: int32(r.mix.next()), interval: -1}
		if due >= r.warmup {
			j.interval = int32((due - r.warmup) / time.Second)
		}
		if wait := due - r.elapsed(); wait > 0 {
			sleep.Reset(wait)
			select {
			case <-sleep.C:
			case <-done:
				return r.interrupt(j), true
			}
		} else {
			select {
			case <-done:
				return r.interrupt(j), true
			default:
			}
		}
		switch r.dispatch(j, done, windowEnd.C) {
		case dispatchSent:
			if j.interval >= 0 {
				r.stats[j.interval].sent++
			}
		case dispatchWindowEnd:
			r.miss(j)
			r.missUntil(r.end)
			return r.end, false
		case dispatchCancelled:
			return r.interrupt(j), true
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

// dispatch hands j to an idle worker, or to a new one if fewer than MaxConns
// are running, or else waits for a worker to become idle.
func (r *runner) dispatch(j job, done <-chan struct{}, windowEnd <-chan time.Time) dispatched {
	select {
	case r.work <- j:
		return dispatchSent
	default:
	}
	if r.workers < r.maxConns {
		r.workers++
		r.wg.Add(1)
		go r.worker(j)
		return dispatchSent
	}
	select {
	case r.work <- j:
		return dispatchSent
	case <-windowEnd:
		return dispatchWindowEnd
	case <-done:
		return dispatchCancelled
	}
}

// interrupt accounts for the requests due but not sent when ctx was done,
// pending being the one the scheduler held, and returns the time it was done.
func (r *runner) interrupt(pending job) time.Duration {
	cut := min(r.elapsed(), r.end)
	if pending.due < cut {
		r.miss(pending)
		r.missUntil(cut)
	}
	return cut
}

// miss counts j as missed.
func (r *runner) miss(j job) {
	if j.interval >= 0 {
		r.stats[j.interval].missed++
	}
}

// missUntil counts the rest of the timeline due before limit as missed.
func (r *runner) missUntil(limit time.Duration) {
	for {
		due, ok := r.timeline.next(limit)
		if !ok {
			return
		}
		if due >= r.warmup {
			r.stats[(due-r.warmup)/time.Second].missed++
		}
	}
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

// worker sends requests, first and then those from r.work, until r.work is
// closed.
func (r *runner) worker(first job) {
	defer r.wg.Done()
	// Requests' contexts derive from a per-worker one, so that creating them
	// does not contend on the run context's lock.
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	r.do(ctx, first)
	for j := range r.work {
		r.do(ctx, j)
	}
}

// do sends one request and records its outcome if it is in the measured
// window.
func (r *runner) do(parent context.Context, j job) {
	ctx, cancel := context.WithTimeout(parent, r.timeout)
	status, err := r.targets[j.target].send(ctx, r.transport)
	lat := r.elapsed() - j.due
	ctxErr := ctx.Err()
	cancel()
	if j.interval < 0 {
		return
	}
	if err != nil && errors.Is(ctxErr, context.Canceled) {
		return // abandoned: the run was cancelled
	}
	r.stats[j.interval].record(lat, classify(status, err, ctxErr))
}

// live calls onSecond after each second of the measured window, until done.
func (r *runner) live(done <-chan struct{}) {
	for i := range r.stats {
		// Report second i once it is over (and its requests mostly back).
		at := r.origin.Add(r.warmup + time.Duration(i+1)*time.Second)
		t := time.NewTimer(time.Until(at))
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
		r.onSecond(r.stats[i].snapshot(i))
	}
}
