package local

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tollperf/toll/plan"
)

// jitRule is load.variant_warmup_until: a JVM has settled once it compiled
// less than below of JIT time per second of wall time over the trailing
// over.
type jitRule struct {
	below time.Duration // JIT time per second of wall time
	over  time.Duration
	// noJVM, when set, ends the warm-up of services among which none is
	// a JVM after that long (a warm-up toll chose: a short one for other
	// runtimes).
	noJVM time.Duration
}

// jitPoint is one reading of a JVM's cumulative JIT compile time
// (java.ci.totalTime), at a time since the warm-up began.
type jitPoint struct {
	at, jit time.Duration
}

// jitHistory holds the readings of each measured JVM found so far, by
// service name. A service that is not (yet) a JVM has none.
type jitHistory map[string][]jitPoint

// add appends a reading of service svc's JVM. A reading below the last one
// is a new JVM (the service restarted its java): its history starts again.
func (h jitHistory) add(svc string, p jitPoint) {
	ps := h[svc]
	if n := len(ps); n > 0 && p.jit < ps[n-1].jit {
		ps = nil
	}
	h[svc] = append(ps, p)
}

// rate returns a JVM's JIT compile time in ms per second of wall time over
// the trailing window that ends at its last reading, and whether its
// readings span the whole window; short of it, the rate is over what they
// span (0 with fewer than two readings).
func (r jitRule) rate(ps []jitPoint) (msPerS float64, full bool) {
	if len(ps) < 2 {
		return 0, false
	}
	last := ps[len(ps)-1]
	from := ps[0]
	for _, p := range ps {
		if last.at-p.at < r.over {
			break
		}
		from, full = p, true
	}
	if last.at <= from.at {
		return 0, false
	}
	return float64(last.jit-from.jit) / float64(time.Millisecond) / (last.at - from.at).Seconds(), full
}

// of returns the part of h that is variant's (keys "VARIANT/SERVICE").
func (h jitHistory) of(variant string) jitHistory {
	out := jitHistory{}
	for key, ps := range h {
		if strings.HasPrefix(key, variant+"/") {
			out[key] = ps
		}
	}
	return out
}

// settled says whether every JVM of h has settled: each has readings over a
// whole window, and compiled less than the rule's threshold in it. With no
// JVM there is nothing to settle, and settled is false: the warm-up lasts
// its maximum. rates are each JVM's latest rate.
func (r jitRule) settled(h jitHistory) (ok bool, rates map[string]float64) {
	rates = make(map[string]float64, len(h))
	ok = len(h) > 0
	below := float64(r.below) / float64(time.Millisecond)
	for svc, ps := range maps.All(h) {
		ms, full := r.rate(ps)
		rates[svc] = ms
		if !full || ms >= below {
			ok = false
		}
	}
	return ok, rates
}

// sidesSettled marks in sides each of owed's variants whose JVMs in h have
// settled together by r (markSides), and reports whether every variant
// with a JVM in h is marked (allMarked).
func (r jitRule) sidesSettled(h jitHistory, owed []*plan.Trial, sides map[string]bool) bool {
	r.markSides(h, owed, sides)
	return allMarked(h, owed, sides)
}

// markSides marks in sides each of owed's variants whose JVMs in h have
// settled together by r. A mark stays while the variant's JVMs compile
// less than twice the rule's threshold: a variant that settled and then
// compiles a little counts as settled, one that compiles hard again does
// not, until it settles again.
func (r jitRule) markSides(h jitHistory, owed []*plan.Trial, sides map[string]bool) {
	hot := 2 * float64(r.below) / float64(time.Millisecond)
	for _, pt := range owed {
		hv := h.of(pt.Variant)
		if len(hv) == 0 {
			continue
		}
		ok, rates := r.settled(hv)
		switch {
		case ok:
			sides[pt.Variant] = true
		case sides[pt.Variant]:
			for _, ms := range rates {
				if ms >= hot {
					sides[pt.Variant] = false
				}
			}
		}
	}
}

// allMarked reports whether every variant of owed with a JVM in h is
// marked in one of marks (its JIT settled, or its cost steady); false
// while h holds none.
func allMarked(h jitHistory, owed []*plan.Trial, marks ...map[string]bool) bool {
	found := false
	for _, pt := range owed {
		if len(h.of(pt.Variant)) == 0 {
			continue
		}
		found = true
		if !slices.ContainsFunc(marks, func(m map[string]bool) bool { return m[pt.Variant] }) {
			return false
		}
	}
	return found
}

// costPoint is one reading of a variant's measured services during a
// warm-up: their cumulative CPU time and the warm-up's completed requests,
// at a time since the warm-up began.
type costPoint struct {
	at   time.Duration
	cpu  time.Duration
	done uint64
}

// steadyRule ends a warm-up toll chose once what the trials measure has
// stopped moving: a variant's CPU per request without its JIT compiler
// threads' CPU, over each of the last windows spans of length over, lies
// within band of their mean. A JVM's compiler may trickle on for minutes
// at a few ms per second after its hot code is compiled; that no longer
// moves what a request costs.
//
// A JVM warms by what it serves and compiles, not by the seconds that
// pass: one warmed at idle priority beside the rounds, on the CPU the load
// generator leaves, serves a fifth of the requests a second it served with
// the CPUs to itself, and its cost falls as slowly, so that three spans of
// seconds read steady while it is still largely interpreted (Sermant's
// JVMs were swapped in so, their compiler threads busy compiling all the
// time, their agent's first rounds reading +45–75% where its settled
// rounds read +15%). So while its compilers are busy (compiling
// busyJIT or more of each second), a span also holds at least as many
// requests as the spans of that variant's warm-up with the CPUs to itself
// held, and stretches back in time until it does; once they are quiet, a
// span of seconds is enough, however slowly it serves.
type steadyRule struct {
	over    time.Duration
	windows int
	band    float64 // a share of the mean, e.g. 0.05
	// least is the fewest completed requests a span must hold to count.
	least uint64
	// quiet, when set, lets a variant's cost count as steady only while
	// its compilers are not busy (jitRule.busy): a start swapped in with
	// a queue of compilation works it off at the trials' load, and its
	// cost, falling as the queue empties, can hold still for the few
	// seconds of three spans meanwhile; beside the rounds, at idle
	// priority, it holds still while the compilers wait for a CPU.
	quiet bool
}

// defaultSteady is the rule a warm-up toll chose uses beside the JIT's:
// three spans of half the JIT rule's window (5 s at least) within ±2.5% of
// their mean. A JVM whose JIT still trickles after its hot code is
// compiled settled by this rule in 15 s where the JIT's took 30 s or more
// (docs/benchmarks.md, "The schedule toll chooses").
func defaultSteady(over time.Duration) steadyRule {
	return steadyRule{over: max(over/2, 5*time.Second), windows: 3, band: 0.05, least: 20}
}

// steady reports whether ps, a variant's readings in order, end in r.windows
// spans whose CPU per request lies within r.band of their mean. Each span
// lasts r.over at least and holds span requests at least (and r.least):
// it begins at the last reading that leaves both behind it.
func (r steadyRule) steady(ps []costPoint, span uint64) bool {
	if len(ps) < 2 || r.windows < 2 || r.over <= 0 {
		return false
	}
	need := max(span, r.least)
	// before returns the last reading at or before t that had completed
	// at most done requests (ok false: none).
	before := func(t time.Duration, done uint64) (costPoint, bool) {
		var p costPoint
		ok := false
		for _, q := range ps {
			if q.at > t || q.done > done {
				break
			}
			p, ok = q, true
		}
		return p, ok
	}
	var cprs []float64
	end := ps[len(ps)-1]
	for range r.windows {
		if end.done < need {
			return false
		}
		begin, ok := before(end.at-r.over, end.done-need)
		if !ok || end.at <= begin.at {
			return false
		}
		cprs = append(cprs, float64(end.cpu-begin.cpu)/float64(end.done-begin.done))
		end = begin
	}
	var sum, lo, hi float64
	lo = cprs[0]
	for _, c := range cprs {
		sum += c
		lo, hi = min(lo, c), max(hi, c)
	}
	m := sum / float64(len(cprs))
	return m > 0 && (hi-lo)/m <= r.band
}

// ends reports whether ps, a variant's readings in order, end its warm-up
// by r: steady over spans of seconds while its compilers are not busy;
// while they are, over spans that also hold busySpan requests each, or
// never if r.quiet.
func (r steadyRule) ends(ps []costPoint, busy bool, busySpan uint64) bool {
	switch {
	case !busy:
		return r.steady(ps, 0)
	case r.quiet:
		return false
	}
	return r.steady(ps, busySpan)
}

// busyJIT is the JIT compile time per second of wall time
// (java.ci.totalTime) from which a JVM's compilers count as busy: they
// have a queue of methods to work through. JVMs warmed beside the rounds
// that ended at 2–153 ms/s settled within a round of their turn; those
// that ended at 720–1,440 ms/s, their compilers waiting for a CPU, read
// their agent's cost at three to five times its settled value in their
// first rounds.
const busyJIT = 200.0

// compilersBusy reports whether a warm-up ended with one of its JVMs
// compiling busyJIT ms/s or more (its record's rates, by service).
func compilersBusy(rates map[string]float64) bool {
	for _, ms := range rates {
		if ms >= busyJIT {
			return true
		}
	}
	return false
}

// busy reports whether any JVM of h compiled busyJIT ms/s or more over
// r's window (or what its readings have of it).
func (r jitRule) busy(h jitHistory) bool {
	_, rates := r.settled(h)
	return compilersBusy(rates)
}

// span returns the requests that one of r's spans held at the end of ps, a
// variant's readings in order: their rate over the last r.windows spans of
// r.over, times r.over; 0 before the readings cover them.
func (r steadyRule) span(ps []costPoint) uint64 {
	if len(ps) < 2 {
		return 0
	}
	last := ps[len(ps)-1]
	from := last.at - time.Duration(r.windows)*r.over
	var begin *costPoint
	for i := range ps {
		if ps[i].at > from {
			break
		}
		begin = &ps[i]
	}
	if begin == nil || last.at <= begin.at {
		return 0
	}
	return uint64(float64(last.done-begin.done) * float64(r.over) / float64(last.at-begin.at))
}
