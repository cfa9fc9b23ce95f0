package load

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// walk returns the due times of a pacer's timeline before limit.
func walk(t *testing.T, p Pacer, limit time.Duration) []time.Duration {
	t.Helper()
	tl := timeline{pacer: p}
	var due []time.Duration
	for {
		d, ok := tl.next(limit)
		if !ok {
			break
		}
		due = append(due, d)
	}
	if tl.err != nil {
		t.Fatal(tl.err)
	}
	return due
}

// TestPoissonPacerShape checks that a seeded Poisson timeline has
// exponential gaps of mean 1/rate: the right mean, a coefficient of
// variation of about 1 (uniform's is 0), the exponential's median (ln 2 of
// the mean) and tail (e⁻³ of the gaps beyond 3 means), and counts per 100 ms
// as variable as their mean (a Poisson count's variance is its mean).
func TestPoissonPacerShape(t *testing.T) {
	const rate = 2000
	due := walk(t, NewPoissonPacer(rate, 42), 20*time.Second)
	if n := float64(len(due)); math.Abs(n-20*rate) > 4*math.Sqrt(20*rate) {
		t.Fatalf("%d requests in 20s at %d/s", len(due), rate)
	}
	var gaps []float64
	for i := 1; i < len(due); i++ {
		gaps = append(gaps, (due[i] - due[i-1]).Seconds())
	}
	var sum, sq float64
	for _, g := range gaps {
		sum += g
	}
	mean := sum / float64(len(gaps))
	for _, g := range gaps {
		sq += (g - mean) * (g - mean)
	}
	cv := math.Sqrt(sq/float64(len(gaps)-1)) / mean
	if math.Abs(mean*rate-1) > 0.03 || math.Abs(cv-1) > 0.05 {
		t.Errorf("gaps: mean %.1f µs (want %.0f), coefficient of variation %.3f (want 1)", mean*1e6, 1e6/rate, cv)
	}
	below, beyond := 0, 0
	for _, g := range gaps {
		if g < math.Ln2*mean {
			below++
		}
		if g > 3*mean {
			beyond++
		}
	}
	if f := float64(below) / float64(len(gaps)); math.Abs(f-0.5) > 0.02 {
		t.Errorf("%.3f of the gaps below ln2 × mean, want 0.5 (the exponential's median)", f)
	}
	if f := float64(beyond) / float64(len(gaps)); math.Abs(f-math.Exp(-3)) > 0.01 {
		t.Errorf("%.4f of the gaps beyond 3 × mean, want %.4f", f, math.Exp(-3))
	}
	counts := make([]float64, 200)
	for _, d := range due {
		counts[d/(100*time.Millisecond)]++
	}
	var cm, cv2 float64
	for _, c := range counts {
		cm += c / float64(len(counts))
	}
	for _, c := range counts {
		cv2 += (c - cm) * (c - cm) / float64(len(counts)-1)
	}
	if d := cv2 / cm; d < 0.7 || d > 1.3 {
		t.Errorf("counts per 100 ms: variance / mean = %.2f, want about 1", d)
	}
}

// TestPoissonPacerIsSeeded checks that a seed gives one timeline, the same
// whether walked or asked out of order, and another seed another.
func TestPoissonPacerIsSeeded(t *testing.T) {
	a := walk(t, NewPoissonPacer(500, 7), 3*time.Second)
	b := walk(t, NewPoissonPacer(500, 7), 3*time.Second)
	c := walk(t, NewPoissonPacer(500, 8), 3*time.Second)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave two timelines")
	}
	if slices.Equal(a, c) {
		t.Error("two seeds gave the same timeline")
	}
	p := NewPoissonPacer(500, 7)
	for _, n := range []uint64{1000, 3, 999, 0, uint64(len(a) - 1)} {
		if d, ok := p.due(n); !ok || d != a[n] {
			t.Errorf("request %d due at %s out of order, %s walked", n, d, a[n])
		}
	}
}

// TestPoissonPacerHits checks that Hits agrees with Pace to the request, on
// a fresh pacer and on one that has walked, and that the timeline is
// bounded.
func TestPoissonPacerHits(t *testing.T) {
	due := walk(t, NewPoissonPacer(300, 3), 5*time.Second)
	walked := NewPoissonPacer(300, 3)
	walk(t, walked, 5*time.Second)
	for _, at := range []time.Duration{0, 1, due[0], due[0] + 1, time.Second, due[700], due[700] + 1, 4*time.Second + 123, 5 * time.Second} {
		want := uint64(countBefore(due, at))
		for name, p := range map[string]*PoissonPacer{"fresh": NewPoissonPacer(300, 3), "walked": walked} {
			if got := p.Hits(at); got != want {
				t.Errorf("%s: Hits(%s) = %d, want %d", name, at, got, want)
			}
		}
	}
	p := NewPoissonPacer(1, 1)
	if n := p.Hits(math.MaxInt64); float64(n) < 0.99*poissonSpan.Seconds() || float64(n) > 1.01*poissonSpan.Seconds() {
		t.Errorf("Hits at the end of time = %d, want the whole timeline's, about %.0f", n, poissonSpan.Seconds())
	}
	if _, stop := p.Pace(0, p.Hits(math.MaxInt64)); !stop {
		t.Error("the timeline does not end")
	}
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, stop := NewPoissonPacer(rate, 1).Pace(0, 0); !stop || NewPoissonPacer(rate, 1).Hits(time.Second) != 0 {
			t.Errorf("rate %v schedules requests", rate)
		}
	}
}

// countBefore returns how many of the ascending due times are before at.
func countBefore(due []time.Duration, at time.Duration) int {
	n, _ := slices.BinarySearch(due, at)
	return n
}

// arrivals runs load at rate for a second against a server that notes when
// each request arrives, and returns the gaps between arrivals.
func arrivals(t *testing.T, p Pacer, quantum time.Duration) (*Result, []time.Duration) {
	t.Helper()
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}}, Pacer: p, Quantum: quantum,
		Start: soon(), Warmup: 200 * time.Millisecond, Duration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i].Sub(at[i-1]))
	}
	slices.Sort(gaps)
	return res, gaps
}

// TestArrivalsLeaveAtTheirOwnTime checks that without a grid requests reach
// the server spread out as scheduled, not in bursts: at 400 req/s the median
// gap between arrivals is near 2.5 ms, where a 20 ms grid sends bursts of 8
// whose gaps are mostly next to nothing; and that the lateness of every
// request sent is recorded, small without a grid.
func TestArrivalsLeaveAtTheirOwnTime(t *testing.T) {
	res, gaps := arrivals(t, ConstantPacer{Rate: 400}, 0)
	if med := gaps[len(gaps)/2]; med < 1500*time.Microsecond || med > 3500*time.Microsecond {
		t.Errorf("without a grid, the median gap between arrivals is %s, want about 2.5ms", med)
	}
	if n := res.Lateness.TotalCount(); n != int64(res.Sent) {
		t.Errorf("lateness recorded for %d requests, want the %d sent", n, res.Sent)
	}
	t.Logf("lateness without a grid: p50 %d µs, p99 %d µs, max %d µs", res.Lateness.ValueAtQuantile(50), res.Lateness.ValueAtQuantile(99), res.Lateness.Max())
	// Generous: a busy machine wakes a process late now and then.
	if p50 := res.Lateness.ValueAtQuantile(50); p50 > 1000 {
		t.Errorf("lateness p50 %d µs without a grid", p50)
	}

	res, gaps = arrivals(t, ConstantPacer{Rate: 400}, 20*time.Millisecond)
	if med := gaps[len(gaps)/2]; med > 500*time.Microsecond {
		t.Errorf("on a 20 ms grid, the median gap between arrivals is %s, want a burst's (near 0)", med)
	}
	if n := res.Lateness.TotalCount(); n != int64(res.Sent) {
		t.Errorf("grid: lateness recorded for %d requests, want the %d sent", n, res.Sent)
	}
}

// TestPoissonArrivalsReachTheServer checks that Poisson arrivals are sent as
// drawn: an exponential's gaps fall below half their mean 1 − e^−½ ≈ 39% of
// the time, uniform arrivals' hardly ever (a wake-up of the generator
// delayed by a busy machine makes a few).
func TestPoissonArrivalsReachTheServer(t *testing.T) {
	short := func(gaps []time.Duration) float64 {
		var sum time.Duration
		for _, g := range gaps {
			sum += g
		}
		half := sum / time.Duration(2*len(gaps))
		n := 0
		for _, g := range gaps {
			if g < half {
				n++
			}
		}
		return float64(n) / float64(len(gaps))
	}
	// At 100/s, the gaps (10 ms on average) are long beside a busy
	// machine's wake-up delays, which at 400/s made uniform arrivals look
	// as bunched as Poisson ones at load 20. A burst of such delays can
	// still do so in one run; a pacer whose arrivals are not exponential
	// (or uniform ones that are not) fails every run, so one run of three
	// must hold.
	var msg string
	for range 3 {
		res, gaps := arrivals(t, NewPoissonPacer(100, 11), 0)
		if res.Sent < 60 || res.Sent > 140 {
			t.Errorf("Poisson at 100/s sent %d in 1s", res.Sent)
		}
		_, uniform := arrivals(t, ConstantPacer{Rate: 100}, 0)
		p, u := short(gaps), short(uniform)
		if p >= 0.25 && p <= 0.55 && u <= p/2 {
			return
		}
		msg = fmt.Sprintf("gaps at the server below half their mean: Poisson %.2f (want about 0.39), uniform %.2f (want far fewer)", p, u)
		t.Log(msg)
	}
	t.Error(msg)
}
