package load

import (
	"context"
	"math/rand/v2"
	"time"
)

// closed runs the closed model: r.users.N users, each a goroutine with
// connections of its own, until the end of the measured window or until ctx
// is done. It returns the end of the measured window relative to Start (when
// ctx was done, if earlier) and whether ctx was done.
func (r *runner) closed(ctx context.Context) (cut time.Duration, interrupted bool) {
	// stop is closed when users must send no more requests.
	stop := make(chan struct{})
	u := r.users
	for n := range u.N {
		if ctx.Err() != nil {
			break // cancelled while the users were being started
		}
		at := u.Ramp * time.Duration(n) / time.Duration(u.N)
		r.wg.Add(1)
		go r.user(n, at, stop)
	}
	windowEnd := time.NewTimer(time.Until(r.origin.Add(r.end)))
	defer windowEnd.Stop()
	select {
	case <-windowEnd.C:
		cut = r.end
	case <-ctx.Done():
		cut, interrupted = min(r.elapsed(), r.end), true
	}
	close(stop)
	return cut, interrupted
}

// user is one user of the closed model: from at (relative to Start) until
// stop, it sends a request, waits for its response and thinks.
func (r *runner) user(n int, at time.Duration, stop <-chan struct{}) {
	defer r.wg.Done()
	// A user waits on a timerfd of its own, but only if it ever waits: a
	// user that neither ramps nor thinks needs no more file descriptors than
	// its connection, so users beyond the process's limit fail their
	// requests as connect errors (EMFILE) rather than disappear.
	var sl *sleeper
	if at > 0 || r.users.Think > 0 {
		var err error
		if sl, err = newSleeper(); err != nil {
			r.userErr.CompareAndSwap(nil, &err)
			return
		}
		defer sl.close()
		if _, err := sl.until(r.origin.Add(at), stop); err != nil {
			return
		}
	}
	c := r.newClient()
	defer c.close()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(r.start.UnixNano())))
	for {
		select {
		case <-stop:
			return
		default:
		}
		sent := r.elapsed()
		if sent >= r.end {
			return
		}
		id := r.ids.Add(1)
		t := r.pick(id)
		i := -1
		if sent >= r.warmup {
			if i = r.rec.begin(int((sent-r.warmup)/time.Second), t); i < 0 {
				return
			}
		}
		status, err := c.send(&r.targets[t], id)
		r.account(i, t, r.elapsed()-sent, status, err)

		think := r.users.Think
		if r.users.ExponentialThink {
			think = time.Duration(rng.ExpFloat64() * float64(think))
		}
		if think > 0 {
			if _, err := sl.until(time.Now().Add(think), stop); err != nil {
				return
			}
		}
	}
}
