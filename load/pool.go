package load

import (
	"slices"
	"sync"
	"time"
)

// idleRetire is how long an open-model worker may stay idle before it is
// retired, closing its connection. Workers are reused last-idle-first, so
// those beyond what the load needs stay idle and are retired: the pool
// follows the concurrency of the last few seconds rather than the peak of
// the run (a target that stalled once, or a burst of lateness).
const idleRetire = 10 * time.Second

// pool is the open model's idle workers, on a stack: the scheduler hands
// each request to the worker that became idle last, and retires the one at
// the bottom once it has been idle for idleRetire.
type pool struct {
	mu      sync.Mutex
	idle    []*worker // the top is the last to become idle
	closed  bool
	waiting bool          // the scheduler waits on ready
	ready   chan struct{} // a worker became idle while the scheduler waited
	retired uint64
}

// worker is one open-model worker, as the pool sees it.
type worker struct {
	jobs  chan job      // its next request; closed to retire it
	since time.Duration // when it last became idle, since Start
}

func newPool() *pool { return &pool{ready: make(chan struct{}, 1)} }

// get pops the worker that became idle last, or returns nil if none is idle;
// then, now being the time since Start, it retires the worker idle longest
// if that has been idle for idleRetire. It reports how many it retired.
func (p *pool) get(now time.Duration) (w *worker, retired int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil, 0
	}
	w = p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	if len(p.idle) > 0 && now-p.idle[0].since > idleRetire {
		close(p.idle[0].jobs)
		p.idle = slices.Delete(p.idle, 0, 1)
		p.retired++
		retired = 1
	}
	return w, retired
}

// put makes w idle as of now, and reports false if the pool is closed (w
// should exit).
func (p *pool) put(w *worker, now time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	w.since = now
	p.idle = append(p.idle, w)
	if p.waiting {
		p.waiting = false
		select {
		case p.ready <- struct{}{}:
		default:
		}
	}
	return true
}

// wait returns a channel that receives once a worker becomes idle, or nil
// if one already is (the caller should call get again).
func (p *pool) wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) > 0 {
		return nil
	}
	p.waiting = true
	return p.ready
}

// retiredCount returns how many workers have been retired.
func (p *pool) retiredCount() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.retired
}

// close makes the idle workers exit, and those busy exit when they are done.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, w := range p.idle {
		close(w.jobs)
	}
	p.idle = nil
}
