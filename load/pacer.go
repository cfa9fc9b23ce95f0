package load

import (
	"fmt"
	"math"
	"time"
)

// Pacer decides when requests are due, with the shape of vegeta's Pacer.
//
// Pace is given a time elapsed since the start of the timeline and the number
// of requests scheduled before the next one (so hits is the 0-based number of
// the next request). It returns how long after elapsed that request is due, or
// 0 if it is already due; stop reports that the timeline has no more requests.
//
// Run calls Pace with elapsed set to the due time of the previous request (0
// for the first), not with the wall clock, so a Pacer that is a pure function
// of its arguments yields an exact timeline however late the scheduler runs.
// A Pacer must let time advance: Run gives up on one that schedules more than
// a million consecutive requests at the same instant.
//
// Hits counts the requests due before a time without walking them: when the
// window ends or the run is cancelled with requests still to send, Run counts
// them as missed with a subtraction per second of the window, however many
// there are (a generator hopelessly behind a rate it cannot meet may have
// billions). It must agree with Pace.
type Pacer interface {
	// Pace returns the wait from elapsed until request number hits is due,
	// or stop when there are no more requests.
	Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool)
	// Hits returns how many requests are due before t: the number of the
	// first request due at or after t.
	Hits(t time.Duration) uint64
}

// ConstantPacer is a constant arrival rate of Rate requests per second:
// request n (counting from 0) is due at n/Rate seconds after the start, so
//
//	Pace(elapsed, hits) = max(0, hits/Rate·1s − elapsed).
//
// A Rate that is not a positive finite number schedules nothing, as does a
// due time beyond what a time.Duration can hold (Pace reports stop).
type ConstantPacer struct {
	// Rate is the arrival rate, in requests per second.
	Rate float64
}

var _ Pacer = ConstantPacer{}

// Pace implements Pacer: request hits is due at hits/Rate seconds.
func (p ConstantPacer) Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool) {
	if !(p.Rate > 0) || math.IsInf(p.Rate, 1) {
		return 0, true
	}
	due, ok := p.due(hits)
	if !ok {
		return 0, true
	}
	if wait = due - elapsed; wait > 0 {
		return wait, false
	}
	return 0, false
}

// due returns when request hits is due, and false if it never is.
func (p ConstantPacer) due(hits uint64) (time.Duration, bool) {
	d := float64(hits) * float64(time.Second) / p.Rate
	if d >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(d), true
}

// Hits implements Pacer: the requests n with n/Rate seconds before t,
// found by bisection with the same arithmetic as Pace, so that the two
// agree to the request (about 60 steps).
func (p ConstantPacer) Hits(t time.Duration) uint64 {
	if !(p.Rate > 0) || math.IsInf(p.Rate, 1) || t <= 0 {
		return 0
	}
	before := func(n uint64) bool { d, ok := p.due(n); return ok && d < t }
	// Every request below lo is due before t, and hi is not.
	lo, hi := uint64(0), uint64(min(math.Ceil(t.Seconds()*p.Rate)+1, 1<<63))
	for before(hi) { // the estimate was short by rounding: widen it
		if hi >= 1<<63 {
			return hi // a rate beyond any timeline: the count is moot
		}
		lo, hi = hi+1, hi+max(hi/1024, 1)
	}
	for lo < hi {
		if m := lo + (hi-lo)/2; before(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// maxBurst is how many consecutive requests a Pacer may schedule at the same
// instant before the timeline is deemed not to advance.
const maxBurst = 1 << 20

// timeline walks a Pacer's schedule: the due times of requests 0, 1, 2, ...
// relative to the start.
type timeline struct {
	pacer Pacer
	hits  uint64        // requests produced so far
	last  time.Duration // due time of the last one
	burst int           // consecutive requests due at last
	err   error         // why the walk stopped early, if the Pacer misbehaved
}

// skip moves the walk past the requests before hits, which the caller has
// accounted for, up to at (which is not after the next request's due time).
func (t *timeline) skip(hits uint64, at time.Duration) {
	t.hits, t.last, t.burst = hits, max(t.last, at), 0
}

// next returns the due time of the next request, or false when the Pacer
// stops or the request would be due at or after limit.
func (t *timeline) next(limit time.Duration) (time.Duration, bool) {
	if t.err != nil {
		return 0, false
	}
	wait, stop := t.pacer.Pace(t.last, t.hits)
	if stop {
		return 0, false
	}
	if wait < 0 {
		wait = 0
	}
	due := t.last + wait
	if due < t.last { // overflow: the timeline ends beyond any limit
		return 0, false
	}
	if wait == 0 && t.hits > 0 {
		if t.burst++; t.burst > maxBurst {
			t.err = fmt.Errorf("load: pacer scheduled more than %d requests at %s: time must advance", maxBurst, due)
			return 0, false
		}
	} else {
		t.burst = 1
	}
	if due >= limit {
		return 0, false
	}
	t.last = due
	t.hits++
	return due, true
}
