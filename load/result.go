package load

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Interval is what happened to the requests scheduled in one second of the
// measured window.
type Interval struct {
	// Offset is the start of the interval relative to Start+Warmup: 0, 1s, 2s, ...
	Offset time.Duration
	// Scheduled counts requests whose intended send time falls in the
	// interval; Sent those of them handed to the HTTP client.
	Scheduled, Sent uint64
	// Completed counts those of them that finished (with a response of any
	// status, or an error); OK those that got a 2xx or 3xx response.
	Completed, OK uint64
	// Errors counts the completed requests that failed, by cause.
	Errors ErrorCounts
	// Latency is the distribution, in microseconds, of the latencies of the
	// completed requests whose intended send time falls in the interval,
	// measured from that intended time to the end of the response body (or to
	// the error). It is never nil.
	Latency *hdrhistogram.Histogram
}

// Result is what a Run measured. Every count covers the measured window only.
type Result struct {
	// Scheduled counts the requests due in the measured window (up to its end,
	// or until the run was cancelled). Scheduled = Sent + Missed.
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
	// cancelled.
	Missed uint64
	// Errors counts the completed requests that failed, by cause;
	// Completed = OK + Errors.Total().
	Errors ErrorCounts
	// Latency is the distribution, in microseconds, of the latencies of all
	// completed requests, measured from their intended send time; its total
	// count is Completed. It is never nil.
	Latency *hdrhistogram.Histogram
	// Intervals has one entry per second of the measured window (the last
	// may be shorter), up to MeasureEnd.
	Intervals []Interval
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

// intervalStats accumulates one interval of the measured window.
type intervalStats struct {
	// sent and missed are written by the scheduler only.
	sent, missed uint64
	// outcomes and counts are written by the workers, atomically.
	outcomes [numOutcomes]atomic.Uint64
	counts   []int64
}

// record counts a completed request of latency lat and outcome o.
func (s *intervalStats) record(lat time.Duration, o outcome) {
	atomic.AddInt64(&s.counts[histIndex(micros(lat))], 1)
	s.outcomes[o].Add(1)
}

// result assembles a Result from the first n intervals' stats.
func result(stats []intervalStats, n int, measureEnd time.Time) *Result {
	res := &Result{MeasureEnd: measureEnd, Intervals: make([]Interval, n)}
	total := make([]int64, histCountsLen)
	counts := make([]int64, histCountsLen)
	for i := range n {
		s := &stats[i]
		iv := Interval{Offset: time.Duration(i) * time.Second, Scheduled: s.sent + s.missed, Sent: s.sent}
		for o := range numOutcomes {
			c := s.outcomes[o].Load()
			iv.Completed += c
			if o == outcomeOK {
				iv.OK += c
			} else {
				iv.Errors.add(o, c)
			}
		}
		for k := range counts {
			c := atomic.LoadInt64(&s.counts[k])
			counts[k] = c
			total[k] += c
		}
		iv.Latency = histogramOf(counts)
		res.Intervals[i] = iv

		res.Scheduled += iv.Scheduled
		res.Sent += iv.Sent
		res.Missed += s.missed
		res.Completed += iv.Completed
		res.OK += iv.OK
		res.Errors.Connect += iv.Errors.Connect
		res.Errors.Timeout += iv.Errors.Timeout
		res.Errors.HTTP4xx += iv.Errors.HTTP4xx
		res.Errors.HTTP5xx += iv.Errors.HTTP5xx
		res.Errors.Other += iv.Errors.Other
	}
	res.Latency = histogramOf(total)
	return res
}

// snapshot reads interval i's figures so far, without stopping the workers.
func (s *intervalStats) snapshot(i int) Second {
	sec := Second{Index: i}
	for o := range s.outcomes {
		n := s.outcomes[o].Load()
		sec.Completed += n
		if outcome(o) != outcomeOK {
			sec.Errors += n
		}
	}
	if sec.Completed == 0 {
		return sec
	}
	counts := make([]int64, len(s.counts))
	for j := range counts {
		counts[j] = atomic.LoadInt64(&s.counts[j])
	}
	if h := histogramOf(counts); h != nil {
		sec.P99 = time.Duration(h.ValueAtQuantile(99)) * time.Microsecond
	}
	return sec
}
