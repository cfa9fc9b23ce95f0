package load

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Interval is what happened to the requests of one second of the measured
// window: those scheduled in it (open model) or sent in it (closed model).
type Interval struct {
	// Offset is the start of the interval relative to Start+Warmup: 0, 1s, 2s, ...
	Offset time.Duration
	// Scheduled counts requests whose intended send time falls in the
	// interval; Sent those of them handed to the HTTP client. In the closed
	// model both count the requests sent in the interval.
	Scheduled, Sent uint64
	// Completed counts those of them that finished (with a response of any
	// status, or an error); OK those that got a 2xx or 3xx response.
	Completed, OK uint64
	// Errors counts the completed requests that failed, by cause.
	Errors ErrorCounts
	// EncodedLatency is the interval's latency histogram (microseconds) in
	// HdrHistogram's V2 compressed encoding: compact, so that a long window
	// does not hold a full histogram per second in memory. Latency decodes
	// it.
	EncodedLatency []byte
}

// Latency returns the distribution, in microseconds, of the latencies of
// the interval's completed requests. It is never nil.
func (iv Interval) Latency() *hdrhistogram.Histogram {
	if h, err := hdrhistogram.Decode(iv.EncodedLatency); err == nil {
		return h
	}
	return newHistogram()
}

// RequestResult is what happened to one entry of the request mix over the
// measured window.
type RequestResult struct {
	// Name is the Request's Name ("#i" if it had none).
	Name string
	// Sent, Completed and OK count the entry's requests as Result does.
	Sent, Completed, OK uint64
	// Errors counts the entry's failed requests by cause.
	Errors ErrorCounts
	// Latency is the distribution of the entry's latencies, in
	// microseconds. It is never nil.
	Latency *hdrhistogram.Histogram
}

// Result is what a Run measured. Every count covers the measured window only.
type Result struct {
	// Scheduled counts the requests due in the measured window (up to its end,
	// or until the run was cancelled). Scheduled = Sent + Missed. In the
	// closed model it equals Sent.
	Scheduled uint64
	// Sent counts the scheduled requests handed to the HTTP client.
	Sent uint64
	// Completed counts the sent requests that finished, with a response of
	// any status or with an error. Sent − Completed requests were abandoned in
	// flight because the run was cancelled.
	Completed uint64
	// OK counts the completed requests that got a 2xx or 3xx response.
	OK uint64
	// Missed counts the scheduled requests never sent: MaxConns requests were
	// in flight from their due time until the window ended or the run was
	// cancelled, or the generator itself was still behind them then (a rate
	// beyond what it can send).
	Missed uint64
	// Errors counts the completed requests that failed, by cause;
	// Completed = OK + Errors.Total().
	Errors ErrorCounts
	// ErrorExamples says how one request of each cause in Errors failed.
	ErrorExamples ErrorExamples
	// Latency is the distribution, in microseconds, of the latencies of all
	// completed requests, measured from their intended send time (open
	// model) or from when they were sent (closed model); its total count is
	// Completed. It is never nil.
	Latency *hdrhistogram.Histogram
	// Lateness is the distribution, in microseconds, of how late the
	// measured window's requests were sent after their due time (open
	// model): the time from when each was due (on Quantum's grid, if one is
	// set) to when the generator began sending it, the generator's own
	// error, which is in the latency of every request. A request sent on
	// time or early counts as 1 µs. Its total count is Sent; it is empty in
	// the closed model, and never nil.
	Lateness *hdrhistogram.Histogram
	// Intervals has one entry per second of the measured window (the last
	// may be shorter), up to MeasureEnd.
	Intervals []Interval
	// Requests has one entry per entry of the request mix, in order.
	Requests []RequestResult
	// WarmupCompleted counts the requests that completed during the
	// warm-up (not recorded otherwise).
	WarmupCompleted uint64
	// Connections counts the connections opened, warm-up included.
	Connections uint64
	// MeasureEnd is the end of the measured window, Start+Warmup+Duration, or
	// the time the run was cancelled if that was earlier.
	MeasureEnd time.Time
}

// Latency histograms track 1 µs to 60 s with 3 significant digits.
const (
	histLowest  = 1
	histHighest = 60_000_000
	histDigits  = 3
)

// newHistogram returns an empty latency histogram.
func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// Workers record latencies lock-free, with an atomic add into a counts array
// laid out as hdrhistogram's for (histLowest, histHighest, histDigits); the
// arrays become histograms with hdrhistogram.Import. histIndex is
// hdrhistogram's countsIndexFor for that geometry: a unit magnitude of 0
// (lowest value 1) and 2^11 sub-buckets, the smallest power of two of at least
// 2·10^histDigits.
const (
	subBucketHalfCountMagnitude = 10
	subBucketMask               = 1<<(subBucketHalfCountMagnitude+1) - 1
)

// histIndex returns the index of v's bucket in a counts array; v must be in
// [0, histHighest].
func histIndex(v int64) int {
	bucket := 64 - bits.LeadingZeros64(uint64(v)|subBucketMask) - (subBucketHalfCountMagnitude + 1)
	sub := int(v >> uint(bucket))
	return (bucket+1)<<subBucketHalfCountMagnitude + sub - 1<<subBucketHalfCountMagnitude
}

// histCountsLen is the length of a counts array that holds every value up to
// histHighest, histIndex(histHighest)+1 (Import zero-fills a shorter array to
// the full geometry).
const histCountsLen = 17192

// micros converts a latency to whole microseconds within the histogram's range.
func micros(d time.Duration) int64 {
	us := d.Microseconds()
	return min(max(us, histLowest), histHighest)
}

// histogramOf builds a histogram from counts (which it does not keep).
func histogramOf(counts []int64) *hdrhistogram.Histogram {
	return hdrhistogram.Import(&hdrhistogram.Snapshot{
		LowestTrackableValue:  histLowest,
		HighestTrackableValue: histHighest,
		SignificantFigures:    histDigits,
		Counts:                counts,
	})
}

// counts is a latency histogram's counts, laid out as hdrhistogram's and
// updated atomically.
type counts [histCountsLen]int64

// add counts one latency.
func (c *counts) add(lat time.Duration) { atomic.AddInt64(&c[histIndex(micros(lat))], 1) }

// histogram returns a histogram of c's counts (read atomically).
func (c *counts) histogram() *hdrhistogram.Histogram {
	snap := make([]int64, histCountsLen)
	for i := range snap {
		snap[i] = atomic.LoadInt64(&c[i])
	}
	return histogramOf(snap)
}

// outcomes counts requests by outcome, atomically.
type outcomes [numOutcomes]atomic.Uint64

// totals returns the completed, OK and error counts.
func (o *outcomes) totals() (completed, ok uint64, errs ErrorCounts) {
	for i := range o {
		n := o[i].Load()
		completed += n
		if outcome(i) == outcomeOK {
			ok += n
		} else {
			errs.add(outcome(i), n)
		}
	}
	return completed, ok, errs
}

// finalMark is added to an interval's pending count when it is final, so
// that it stays negative whatever requests still arrive.
const finalMark = -1 << 40

// intervalStats accumulates one second of the measured window.
type intervalStats struct {
	sent, missed atomic.Uint64
	// pending counts the requests of the interval sent and not yet
	// recorded or abandoned; it is negative once the interval is final.
	pending  atomic.Int64
	outcomes outcomes
	counts   atomic.Pointer[counts] // nil until the first request, and once final
	// final is the final histogram's non-empty buckets, as varint pairs
	// (index − previous index, count): a few bytes per bucket, so that a
	// long window's seconds take little memory until the run ends.
	final []byte
}

// nameStats accumulates one entry of the request mix.
type nameStats struct {
	sent     atomic.Uint64
	outcomes outcomes
	counts   counts
}

// recorder accumulates the measured window. Its methods are safe for
// concurrent use, except finalize, which one goroutine calls.
type recorder struct {
	intervals []intervalStats
	names     []nameStats
	total     counts
	late      counts        // lateness of the window's requests (open model)
	warmup    atomic.Uint64 // requests completed in the warm-up
	// examples holds the first failure's description for each outcome
	// (outcomeOK's stays nil).
	examples [numOutcomes]atomic.Pointer[string]

	mu   sync.Mutex
	free []*counts // released interval counts, for reuse
	done int       // intervals [0, done) are final
}

func newRecorder(intervals, names int) *recorder {
	return &recorder{intervals: make([]intervalStats, intervals), names: make([]nameStats, names)}
}

// begin notes that a request of interval i is being sent, and returns the
// interval it is accounted to: i, or a later one if i is already final
// (a closed-model user descheduled for long between reading the clock and
// sending), or -1 if there is none.
func (r *recorder) begin(i int, name int) int {
	for ; i < len(r.intervals); i++ {
		iv := &r.intervals[i]
		if iv.pending.Add(1) > 0 {
			if iv.counts.Load() == nil {
				c := r.alloc()
				if !iv.counts.CompareAndSwap(nil, c) {
					r.release(c)
				}
			}
			iv.sent.Add(1)
			r.names[name].sent.Add(1)
			return i
		}
		iv.pending.Add(-1)
	}
	return -1
}

// record counts a completed request of interval i (from begin).
func (r *recorder) record(i, name int, lat time.Duration, o outcome) {
	iv := &r.intervals[i]
	if c := iv.counts.Load(); c != nil {
		c.add(lat)
	}
	iv.outcomes[o].Add(1)
	r.names[name].outcomes[o].Add(1)
	r.names[name].counts.add(lat)
	r.total.add(lat)
	iv.pending.Add(-1)
}

// example keeps how a request with failed outcome o ended, if it is the
// first of its outcome: only the first failures of each cause allocate.
func (r *recorder) example(o outcome, status int, err error) {
	if r.examples[o].Load() == nil {
		s := describe(status, err)
		r.examples[o].CompareAndSwap(nil, &s)
	}
}

// abandon notes that a request of interval i (from begin) will not be
// recorded: the run was cancelled while it was in flight.
func (r *recorder) abandon(i int) { r.intervals[i].pending.Add(-1) }

// miss counts a request of interval i that was never sent.
func (r *recorder) miss(i int) { r.intervals[i].missed.Add(1) }

// missN counts n requests of interval i that were never sent.
func (r *recorder) missN(i int, n uint64) { r.intervals[i].missed.Add(n) }

func (r *recorder) alloc() *counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		c := r.free[n-1]
		r.free = r.free[:n-1]
		return c
	}
	return new(counts)
}

func (r *recorder) release(c *counts) {
	clear(c[:])
	r.mu.Lock()
	r.free = append(r.free, c)
	r.mu.Unlock()
}

// finalize keeps the non-empty buckets of the histograms of the intervals
// before upTo that have no request pending, and releases their counts; with
// force, of all intervals before upTo, pending or not (the run is over).
// Intervals are finalized in order. It runs during the window, on the
// processor the scheduler needs, so it does little: a scan of the counts
// (tens of microseconds); encoding waits for the end of the run.
func (r *recorder) finalize(upTo int, force bool) {
	for ; r.done < min(upTo, len(r.intervals)); r.done++ {
		iv := &r.intervals[r.done]
		if !iv.pending.CompareAndSwap(0, finalMark) {
			if !force {
				return
			}
			iv.pending.Add(finalMark)
		}
		if c := iv.counts.Swap(nil); c != nil {
			prev := 0
			for i := range c {
				if n := atomic.LoadInt64(&c[i]); n != 0 {
					iv.final = binary.AppendUvarint(iv.final, uint64(i-prev))
					iv.final = binary.AppendUvarint(iv.final, uint64(n))
					prev = i
				}
			}
			iv.final = slices.Clip(iv.final)
			r.release(c)
		}
	}
}

// exampleOf returns the example kept for outcome o, or "".
func (r *recorder) exampleOf(o outcome) string {
	if s := r.examples[o].Load(); s != nil {
		return *s
	}
	return ""
}

// result assembles a Result from the first n intervals, which must be final.
func (r *recorder) result(n int, names []string, measureEnd time.Time) *Result {
	res := &Result{MeasureEnd: measureEnd, Intervals: make([]Interval, n), WarmupCompleted: r.warmup.Load()}
	scratch := make([]int64, histCountsLen)
	for i := range n {
		s := &r.intervals[i]
		iv := Interval{Offset: time.Duration(i) * time.Second, Sent: s.sent.Load()}
		eachBucket(s.final, func(i int, n int64) { scratch[i] = n })
		iv.EncodedLatency, _ = histogramOf(scratch).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		eachBucket(s.final, func(i int, _ int64) { scratch[i] = 0 })
		iv.Scheduled = iv.Sent + s.missed.Load()
		iv.Completed, iv.OK, iv.Errors = s.outcomes.totals()
		res.Intervals[i] = iv

		res.Scheduled += iv.Scheduled
		res.Sent += iv.Sent
		res.Missed += iv.Scheduled - iv.Sent
		res.Completed += iv.Completed
		res.OK += iv.OK
		res.Errors.Connect += iv.Errors.Connect
		res.Errors.Timeout += iv.Errors.Timeout
		res.Errors.HTTP4xx += iv.Errors.HTTP4xx
		res.Errors.HTTP5xx += iv.Errors.HTTP5xx
		res.Errors.Other += iv.Errors.Other
	}
	res.ErrorExamples = ErrorExamples{Connect: r.exampleOf(outcomeConnect), Timeout: r.exampleOf(outcomeTimeout),
		HTTP4xx: r.exampleOf(outcome4xx), HTTP5xx: r.exampleOf(outcome5xx), Other: r.exampleOf(outcomeOther)}
	res.Latency = r.total.histogram()
	res.Lateness = r.late.histogram()
	for k := range r.names {
		s := &r.names[k]
		rr := RequestResult{Name: names[k], Sent: s.sent.Load(), Latency: s.counts.histogram()}
		rr.Completed, rr.OK, rr.Errors = s.outcomes.totals()
		res.Requests = append(res.Requests, rr)
	}
	return res
}

// eachBucket calls f with each bucket of a finalized interval's varint pairs.
func eachBucket(b []byte, f func(index int, count int64)) {
	i := 0
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		c, m := binary.Uvarint(b[n:])
		if n <= 0 || m <= 0 {
			return // cannot happen: finalize wrote them
		}
		b = b[n+m:]
		i += int(d)
		f(i, int64(c))
	}
}

// snapshot reads interval i's figures so far, without stopping the workers.
func (r *recorder) snapshot(i int) Second {
	s := &r.intervals[i]
	sec := Second{Index: i}
	var errs ErrorCounts
	sec.Completed, _, errs = s.outcomes.totals()
	sec.Errors = errs.Total()
	if c := s.counts.Load(); c != nil && sec.Completed > 0 {
		sec.P99 = time.Duration(c.quantile(99)) * time.Microsecond
	}
	return sec
}

// quantile returns the value at quantile q (in percent) of c's counts (read
// atomically), as hdrhistogram's ValueAtQuantile would, without copying the
// counts into a histogram: the live display asks once a second, and a copy
// was 270 KB of garbage each time.
func (c *counts) quantile(q float64) int64 {
	var total int64
	for i := range c {
		total += atomic.LoadInt64(&c[i])
	}
	want := max(int64(q/100*float64(total)+0.5), 1)
	var seen int64
	last := 0
	for i := range c {
		n := atomic.LoadInt64(&c[i])
		if n == 0 {
			continue
		}
		last = i
		if seen += n; seen >= want {
			break
		}
	}
	if seen == 0 {
		return 0
	}
	return histHighestEquivalent(last)
}

// histHighestEquivalent returns the highest value that counts index i
// holds (hdrhistogram's highestEquivalentValue of the index's value).
func histHighestEquivalent(i int) int64 {
	const half = 1 << subBucketHalfCountMagnitude
	bucket := i>>subBucketHalfCountMagnitude - 1
	sub := i&(half-1) + half
	if bucket < 0 {
		sub -= half
		bucket = 0
	}
	return int64(sub)<<bucket + 1<<bucket - 1
}
