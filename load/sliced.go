package load

import "time"

// SlicedPacer runs another Pacer's timeline in turns: its requests leave
// only in slices of Slice, one slice every Period, the first beginning at
// Phase; the wall time between slices is skipped. The inner timeline's time
// is the slices' time laid end to end (active time), so a request due at
// active time a is due at
//
//	wall(a) = Phase + ⌊a/Slice⌋·Period + (a mod Slice)
//
// and, in the other direction, a wall time w has seen
//
//	active(w) = ⌊(w−Phase)/Period⌋·Slice + min((w−Phase) mod Period, Slice)
//
// of active time (0 before Phase). A request due on a slice boundary is due
// when the next slice opens. The rate within a slice is the inner Pacer's;
// over the wall clock it is Slice/Period of it.
//
// Two sides of a duet with Period = 2·Slice and Phases 0 and Slice take
// turns on shared CPUs: each is loaded alone, so its latency is its own,
// while both sample the machine at moments a slice apart.
type SlicedPacer struct {
	// Pacer is the timeline in active time.
	Pacer Pacer
	// Slice is how long each turn lasts, and Period how often one begins;
	// 0 < Slice ≤ Period.
	Slice, Period time.Duration
	// Phase is when the first slice begins, from the start.
	Phase time.Duration
}

var _ Pacer = SlicedPacer{}

// Wall returns when active time a falls on the wall clock.
func (p SlicedPacer) Wall(a time.Duration) time.Duration {
	return p.Phase + a/p.Slice*p.Period + a%p.Slice
}

// Active returns the active time that has passed by wall time w.
func (p SlicedPacer) Active(w time.Duration) time.Duration {
	if w <= p.Phase {
		return 0
	}
	w -= p.Phase
	return w/p.Period*p.Slice + min(w%p.Period, p.Slice)
}

// Pace implements Pacer: the inner Pacer's wait, from the active time at
// elapsed, laid onto the slices.
func (p SlicedPacer) Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool) {
	if !p.valid() {
		return 0, true
	}
	a := p.Active(elapsed)
	w, stop := p.Pacer.Pace(a, hits)
	if stop {
		return 0, true
	}
	due := p.Wall(a + max(w, 0))
	if due < elapsed { // overflow far beyond any window
		return 0, true
	}
	return due - elapsed, false
}

// Hits implements Pacer: the inner Pacer's requests due before the active
// time at t.
func (p SlicedPacer) Hits(t time.Duration) uint64 {
	if !p.valid() {
		return 0
	}
	return p.Pacer.Hits(p.Active(t))
}

// valid reports whether the slices let time advance.
func (p SlicedPacer) valid() bool {
	return p.Pacer != nil && p.Slice > 0 && p.Period >= p.Slice && p.Phase >= 0
}
