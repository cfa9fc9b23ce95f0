package load

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// PoissonPacer is a Poisson arrival process of Rate requests per second:
// the times between requests are independent and exponentially distributed
// with mean 1/Rate, as when many independent users each send now and then,
// and as queueing models assume. The same Seed gives the same timeline.
//
// The timeline is built a block of poissonBlock at a time: the number of
// requests in block k is drawn from a Poisson distribution of mean
// Rate·poissonBlock, and their times from uniform draws over the block,
// sorted, which is exactly a Poisson process. Each block's draws come from a
// generator seeded with (Seed, k) alone, so Hits counts the requests before
// any time with one draw per block before it, never request by request, and
// agrees with Pace to the request. The timeline ends after poissonSpan.
//
// A PoissonPacer caches the blocks it has drawn: it is not safe for
// concurrent use (Run calls it from one goroutine).
type PoissonPacer struct {
	rate float64
	seed uint64
	// cum[k] counts the requests due before block k; cum[0] is 0.
	cum []uint64
	// times are the due times of the requests of block loaded, relative to
	// the block's start, in order.
	loaded int
	times  []time.Duration
}

// poissonBlock is the span of one block of a PoissonPacer's timeline, and
// poissonSpan the whole timeline's: a trial is at most a day (package
// scenario), and a block's count takes 8 bytes.
const (
	poissonBlock = time.Second
	poissonSpan  = 32 * 24 * time.Hour
)

// NewPoissonPacer returns a Poisson arrival process of rate requests per
// second, drawn from seed. A rate that is not a positive finite number
// schedules nothing.
func NewPoissonPacer(rate float64, seed uint64) *PoissonPacer {
	return &PoissonPacer{rate: rate, seed: seed, cum: []uint64{0}, loaded: -1}
}

var _ Pacer = (*PoissonPacer)(nil)

// Rate returns the pacer's rate, in requests per second.
func (p *PoissonPacer) Rate() float64 { return p.rate }

// Seed returns the seed the pacer's timeline is drawn from.
func (p *PoissonPacer) Seed() uint64 { return p.seed }

// valid reports whether the pacer schedules anything.
func (p *PoissonPacer) valid() bool { return p.rate > 0 && !math.IsInf(p.rate, 1) }

// rng returns block k's random source: the same for the same seed and block.
func (p *PoissonPacer) rng(k int) *rand.Rand {
	return rand.New(rand.NewPCG(p.seed, uint64(k)))
}

// count draws how many requests block k holds; the first draw of its
// source, so that load can draw the times after it.
func (p *PoissonPacer) count(r *rand.Rand) uint64 {
	return uint64(distuv.Poisson{Lambda: p.rate * poissonBlock.Seconds(), Src: r}.Rand())
}

// grow extends cum to block k (cum[k] known), or to the timeline's end if
// that comes first; it reports whether block k starts within the timeline.
func (p *PoissonPacer) grow(k int) bool {
	const blocks = int(poissonSpan / poissonBlock)
	ok := k <= blocks
	for len(p.cum) <= min(k, blocks) {
		last := len(p.cum) - 1
		p.cum = append(p.cum, p.cum[last]+p.count(p.rng(last)))
	}
	return ok
}

// load makes block k's due times the loaded ones; cum must reach k+1.
func (p *PoissonPacer) load(k int) {
	if p.loaded == k {
		return
	}
	r := p.rng(k)
	n := p.count(r)
	p.times = p.times[:0]
	for range n {
		p.times = append(p.times, time.Duration(r.Int64N(int64(poissonBlock))))
	}
	slices.Sort(p.times)
	p.loaded = k
}

// due returns when request n (from 0) is due, and false if it is beyond the
// timeline's end.
func (p *PoissonPacer) due(n uint64) (time.Duration, bool) {
	k := p.loaded
	if k < 0 || k+1 >= len(p.cum) || n < p.cum[k] || n >= p.cum[k+1] {
		// Grow until some block ends after n, then find the block holding it.
		for p.cum[len(p.cum)-1] <= n {
			if !p.grow(len(p.cum)) {
				return 0, false
			}
		}
		k = sort.Search(len(p.cum), func(i int) bool { return p.cum[i] > n }) - 1
	}
	p.load(k)
	return time.Duration(k)*poissonBlock + p.times[n-p.cum[k]], true
}

// Pace implements Pacer.
func (p *PoissonPacer) Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool) {
	if !p.valid() {
		return 0, true
	}
	due, ok := p.due(hits)
	if !ok {
		return 0, true
	}
	return max(due-elapsed, 0), false
}

// Hits implements Pacer: the requests of the blocks before t's, and those of
// t's block due before t.
func (p *PoissonPacer) Hits(t time.Duration) uint64 {
	if !p.valid() || t <= 0 {
		return 0
	}
	k := int(min(t, poissonSpan) / poissonBlock)
	if !p.grow(k + 1) {
		return p.cum[len(p.cum)-1] // the whole timeline is before t
	}
	p.load(k)
	off := t - time.Duration(k)*poissonBlock
	return p.cum[k] + uint64(sort.Search(len(p.times), func(i int) bool { return p.times[i] >= off }))
}
