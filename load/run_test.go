package load

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// soon is a timeline origin a little in the future, so that a run starts on
// schedule.
func soon() time.Time { return time.Now().Add(50 * time.Millisecond) }

// runLoad runs cfg under a safety deadline.
func runLoad(t *testing.T, ctx context.Context, cfg Config) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return Run(ctx, cfg)
}

// checkInvariants checks what must hold of every Result.
func checkInvariants(t *testing.T, res *Result) {
	t.Helper()
	if res == nil {
		t.Fatal("nil Result")
	}
	if res.Scheduled != res.Sent+res.Missed {
		t.Errorf("Scheduled %d != Sent %d + Missed %d", res.Scheduled, res.Sent, res.Missed)
	}
	if res.Completed > res.Sent || res.OK+res.Errors.Total() != res.Completed {
		t.Errorf("Sent %d, Completed %d, OK %d, errors %+v are inconsistent", res.Sent, res.Completed, res.OK, res.Errors)
	}
	if res.Latency == nil || res.Latency.TotalCount() != int64(res.Completed) {
		t.Errorf("latency histogram holds %d values, want Completed = %d", res.Latency.TotalCount(), res.Completed)
	}
	var sum Interval
	for i, iv := range res.Intervals {
		if iv.Offset != time.Duration(i)*time.Second {
			t.Errorf("interval %d at offset %s", i, iv.Offset)
		}
		if iv.Latency().TotalCount() != int64(iv.Completed) {
			t.Errorf("interval %d: histogram does not hold its %d completed requests", i, iv.Completed)
		}
		sum.Scheduled += iv.Scheduled
		sum.Sent += iv.Sent
		sum.Completed += iv.Completed
		sum.OK += iv.OK
	}
	if sum.Scheduled != res.Scheduled || sum.Sent != res.Sent || sum.Completed != res.Completed || sum.OK != res.OK {
		t.Errorf("intervals add up to %+v, totals are %d/%d/%d/%d", sum, res.Scheduled, res.Sent, res.Completed, res.OK)
	}
}

func TestRunSteadyLoad(t *testing.T) {
	var gets, posts, bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/get":
			gets.Add(1)
		case "/post":
			posts.Add(1)
			b, _ := io.ReadAll(r.Body)
			if r.Method != http.MethodPost || string(b) != "payload" || r.Header.Get("X-Toll") != "yes" {
				bad.Add(1)
			}
		}
		_, _ = io.WriteString(w, "some response body")
	}))
	defer srv.Close()

	start := soon()
	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{
			{Name: "get", URL: srv.URL + "/get", Weight: 3},
			{Name: "post", Method: http.MethodPost, URL: srv.URL + "/post", Body: []byte("payload"),
				Header: http.Header{"X-Toll": {"yes"}}},
		},
		Pacer:    ConstantPacer{Rate: 200},
		Start:    start,
		Warmup:   time.Second,
		Duration: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if res.Scheduled != 400 || res.Sent != 400 || res.Missed != 0 {
		t.Errorf("Scheduled %d, Sent %d, Missed %d; want 400, 400, 0", res.Scheduled, res.Sent, res.Missed)
	}
	if res.Completed != res.Sent || res.OK != res.Completed {
		t.Errorf("Completed %d, OK %d, errors %+v; want all %d OK", res.Completed, res.OK, res.Errors, res.Sent)
	}
	if len(res.Intervals) != 2 {
		t.Fatalf("%d intervals, want 2", len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		if iv.Scheduled != 200 || iv.Sent != 200 || iv.OK != 200 {
			t.Errorf("interval %d: %+v, want 200 scheduled, sent and OK", i, iv)
		}
	}
	if want := start.Add(3 * time.Second); !res.MeasureEnd.Equal(want) {
		t.Errorf("MeasureEnd = %s, want %s", res.MeasureEnd, want)
	}
	// The warm-up was sent but not recorded, and the mix is exact.
	if gets.Load() != 450 || posts.Load() != 150 || bad.Load() != 0 {
		t.Errorf("server saw %d GETs and %d POSTs (%d malformed), want 450 and 150 (warm-up included)",
			gets.Load(), posts.Load(), bad.Load())
	}
}

func TestRunErrorClasses(t *testing.T) {
	status := func(code int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
	}
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	tests := []struct {
		name    string
		handler http.Handler // nil: a closed port
		want    func(ErrorCounts) uint64
	}{
		{"500", status(500), func(e ErrorCounts) uint64 { return e.HTTP5xx }},
		{"404", status(404), func(e ErrorCounts) uint64 { return e.HTTP4xx }},
		{"closed port", nil, func(e ErrorCounts) uint64 { return e.Connect }},
		{"timeout", slow, func(e ErrorCounts) uint64 { return e.Timeout }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var url string
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				defer srv.Close()
				url = srv.URL
			} else {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				url = "http://" + ln.Addr().String()
				ln.Close()
			}
			res, err := runLoad(t, context.Background(), Config{
				Requests: []Request{{URL: url + "/x"}},
				Pacer:    ConstantPacer{Rate: 40},
				Start:    soon(),
				Duration: 500 * time.Millisecond,
				Timeout:  200 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, res)
			if res.Scheduled != 20 || res.Completed != res.Scheduled || res.OK != 0 || tt.want(res.Errors) != res.Completed {
				t.Errorf("Scheduled %d, Completed %d, OK %d, errors %+v (%+v); want 20 completed, all %s",
					res.Scheduled, res.Completed, res.OK, res.Errors, res.ErrorExamples, tt.name)
			}
		})
	}
}

func TestRunStallShowsInLatency(t *testing.T) {
	start := soon()
	measure := start.Add(500 * time.Millisecond)
	stallFrom, stallTo := measure.Add(750*time.Millisecond), measure.Add(1250*time.Millisecond)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if now := time.Now(); !now.Before(stallFrom) && now.Before(stallTo) {
			time.Sleep(stallTo.Sub(now))
		}
	}))
	defer srv.Close()

	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}},
		Pacer:    ConstantPacer{Rate: 200},
		Start:    start,
		Warmup:   500 * time.Millisecond,
		Duration: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if res.Scheduled != 400 {
		t.Errorf("Scheduled = %d, want 400", res.Scheduled)
	}
	// About 100 requests were due during the stall, with latencies from
	// 500 ms down to 0: the top 1% is near 500 ms.
	if p99 := res.Latency.ValueAtQuantile(99); p99 < 300_000 {
		t.Errorf("p99 = %d µs, want >= 300 ms: the stall is hidden", p99)
	}
	if p50 := res.Latency.ValueAtQuantile(50); p50 > 250_000 {
		t.Errorf("p50 = %d µs: more than the stall's requests were slow", p50)
	}
	// The stall (0.75 s to 1.25 s) shows in both intervals it touches.
	for i, iv := range res.Intervals {
		if m := iv.Latency().Max(); m < 200_000 {
			t.Errorf("interval %d: max latency %d µs, want >= 200 ms", i, m)
		}
	}
}

// TestRunIdlesWhileARequestIsInFlight holds the window's first request for
// 4 s, past the moment its interval is due to be finalized (2 s): the run
// waits for it without spinning (a spin took a whole CPU for the 2 s the
// request was late).
func TestRunIdlesWhileARequestIsInFlight(t *testing.T) {
	var first atomic.Bool
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			select {
			case <-time.After(4 * time.Second):
			case <-release:
			}
		}
	}))
	defer srv.Close()
	defer close(release)

	before := cpuTime(t)
	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}},
		Pacer:    ConstantPacer{Rate: 20},
		Start:    soon(),
		Duration: 4 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if m := res.Intervals[0].Latency().Max(); m < 3_500_000 {
		t.Errorf("interval 0's max latency %d µs, want the held request's 4 s", m)
	}
	if used := cpuTime(t) - before; used > 500*time.Millisecond {
		t.Errorf("the run used %s of CPU over its 4 s while one request was held: it spins", used)
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestRunCancel(t *testing.T) {
	// The handler holds every request until the client gives up, so requests
	// are in flight when the run is cancelled.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()

	start := soon()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Until(start.Add(700*time.Millisecond)), cancel)
	res, err := runLoad(t, ctx, Config{
		Requests: []Request{{URL: srv.URL}},
		Pacer:    ConstantPacer{Rate: 100},
		Start:    start,
		Warmup:   200 * time.Millisecond,
		Duration: 10 * time.Second,
	})
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want one wrapping context.Canceled", err)
	}
	if took := returned.Sub(start.Add(700 * time.Millisecond)); took > 2*time.Second {
		t.Errorf("Run returned %s after the cancellation", took)
	}
	checkInvariants(t, res)
	if !res.MeasureEnd.After(start.Add(200*time.Millisecond)) || !res.MeasureEnd.Before(start.Add(5*time.Second)) {
		t.Errorf("MeasureEnd = %s after start, want the cancellation time", res.MeasureEnd.Sub(start))
	}
	if len(res.Intervals) < 1 || len(res.Intervals) > 5 {
		t.Errorf("%d intervals for a run cancelled after ~0.5 s of measurement", len(res.Intervals))
	}
	if res.Scheduled == 0 || res.Sent == 0 {
		t.Errorf("Scheduled %d, Sent %d: nothing measured before the cancellation", res.Scheduled, res.Sent)
	}
	if res.Completed != 0 {
		t.Errorf("Completed = %d: requests abandoned in flight were recorded (errors %+v: %+v)", res.Completed, res.Errors, res.ErrorExamples)
	}
}

// slowServer answers every request after hold (or when the client goes),
// and counts the most requests it has had in flight at once.
func slowServer(t *testing.T, hold time.Duration) (srv *httptest.Server, peak *atomic.Int64) {
	t.Helper()
	var inFlight atomic.Int64
	var mu sync.Mutex
	peak = new(atomic.Int64)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		mu.Lock()
		peak.Store(max(peak.Load(), n))
		mu.Unlock()
		select {
		case <-time.After(hold):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv, peak
}

func TestRunMaxConns(t *testing.T) {
	srv, peak := slowServer(t, 50*time.Millisecond)

	// 100 req/s of 50 ms requests need 5 connections; 2 serve at most 40 req/s.
	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}},
		Pacer:    ConstantPacer{Rate: 100},
		Start:    soon(),
		Duration: time.Second,
		MaxConns: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if p := peak.Load(); p > 2 || p < 1 {
		t.Errorf("%d requests in flight at once, want at most MaxConns = 2", p)
	}
	if res.Scheduled != 100 || res.Missed == 0 || res.Sent >= 70 {
		t.Errorf("Scheduled %d, Sent %d, Missed %d: want 100 scheduled, many missed", res.Scheduled, res.Sent, res.Missed)
	}
	if res.Completed != res.Sent || res.OK != res.Completed {
		t.Errorf("Sent %d, Completed %d, OK %d: every sent request should complete", res.Sent, res.Completed, res.OK)
	}
	// Requests sent late, waiting for a connection, are timed from their
	// intended time: the backlog shows, though the server takes 50 ms.
	if m := res.Latency.Max(); m < 200_000 {
		t.Errorf("max latency %d µs, want >= 200 ms (queueing for a connection is latency)", m)
	}
}

func TestRunConfigErrors(t *testing.T) {
	ok := Config{Requests: []Request{{URL: "http://127.0.0.1:1/"}}, Pacer: ConstantPacer{Rate: 1}, Duration: time.Second}
	for _, tt := range []struct {
		name string
		edit func(*Config)
	}{
		{"no requests", func(c *Config) { c.Requests = nil }},
		{"no pacer", func(c *Config) { c.Pacer = nil }},
		{"no duration", func(c *Config) { c.Duration = 0 }},
		{"negative warm-up", func(c *Config) { c.Warmup = -time.Second }},
		{"negative lull", func(c *Config) { c.Lull = -time.Millisecond }},
		{"a lull of a second", func(c *Config) { c.Lull = time.Second }},
		{"bad URL", func(c *Config) { c.Requests = []Request{{URL: "nowhere"}} }},
		{"more users than ports", func(c *Config) { c.Pacer, c.Users = nil, &Users{N: 100_000_000} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			res, err := Run(context.Background(), cfg)
			if err == nil || res != nil {
				t.Errorf("Run = (%v, %v), want a nil Result and an error", res, err)
			}
		})
	}
}

func TestRunAlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, Config{Requests: []Request{{URL: "http://127.0.0.1:1/"}}, Pacer: ConstantPacer{Rate: 100},
		Warmup: time.Second, Duration: time.Second})
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("Run = (%v, %v), want a Result and context.Canceled", res, err)
	}
	checkInvariants(t, res)
	if res.Scheduled != 0 || len(res.Intervals) != 0 {
		t.Errorf("Scheduled %d, %d intervals, want none", res.Scheduled, len(res.Intervals))
	}
}

// TestOnSecond checks the live hook reports each second of the window with
// the requests completed in it.
func TestOnSecond(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var mu sync.Mutex
	var got []Second
	_, err := Run(context.Background(), Config{
		Requests: []Request{{Method: "GET", URL: srv.URL}}, Pacer: ConstantPacer{Rate: 100},
		Warmup: 200 * time.Millisecond, Duration: 2 * time.Second,
		OnSecond: func(s Second) { mu.Lock(); got = append(got, s); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Index != 0 || got[1].Index != 1 {
		t.Fatalf("seconds %+v", got)
	}
	for _, s := range got {
		if s.Completed < 50 || s.P99 <= 0 || s.Errors != 0 {
			t.Errorf("second %+v: want about 100 completed with a p99", s)
		}
	}
}

// TestProgress checks the live count: it has counted a second's requests
// by the time that second is reported, and in the end every request that
// completed, in the warm-up and the window, in either model.
func TestProgress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	tests := []struct {
		name  string
		pacer Pacer
		users *Users
	}{
		{name: "open", pacer: ConstantPacer{Rate: 200}},
		{name: "closed", users: &Users{N: 2, Think: 5 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var progress atomic.Uint64
			var mu sync.Mutex
			var seconds []Second
			var counted []uint64 // progress as each second was reported
			res, err := runLoad(t, context.Background(), Config{
				Requests: []Request{{URL: srv.URL}}, Pacer: tt.pacer, Users: tt.users,
				Start: soon(), Warmup: 300 * time.Millisecond, Duration: 2 * time.Second,
				Progress: &progress,
				OnSecond: func(s Second) {
					n := progress.Load()
					mu.Lock()
					seconds, counted = append(seconds, s), append(counted, n)
					mu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, res)
			if got, want := progress.Load(), res.Completed+res.WarmupCompleted; got != want || want == 0 {
				t.Errorf("progress %d, want completed %d + warm-up %d", got, res.Completed, res.WarmupCompleted)
			}
			mu.Lock()
			defer mu.Unlock()
			var sum uint64
			for i, s := range seconds {
				sum += s.Completed
				if counted[i] < sum {
					t.Errorf("second %d reported with %d completed so far, progress read %d", s.Index, sum, counted[i])
				}
			}
		})
	}
}

// The generator's own work of each second (here OnSecond) is done Lull
// after the second, between the request due on the second and the next,
// instead of holding up the first; the last second's, once the load is
// over, at once.
func TestLullPutsTheSecondsWorkBetweenRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	start := soon()
	const rate = 100
	lull := Midway(Spacing(rate, 0))
	if lull != 5*time.Millisecond {
		t.Fatalf("Midway(Spacing(%d req/s)) = %v, want 5ms", rate, lull)
	}
	var mu sync.Mutex
	var at []time.Duration // when each second was reported, after its end
	_, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}}, Pacer: ConstantPacer{Rate: rate},
		Start: start, Warmup: 100 * time.Millisecond, Duration: 3 * time.Second, Lull: lull,
		OnSecond: func(s Second) {
			mu.Lock()
			defer mu.Unlock()
			at = append(at, time.Since(start)-100*time.Millisecond-time.Duration(s.Index+1)*time.Second)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 3 {
		t.Fatalf("%d seconds reported, want 3", len(at))
	}
	for i, d := range at[:2] {
		if d < lull {
			t.Errorf("second %d reported %v after its end, before the lull of %v", i, d, lull)
		}
	}
}

func TestSpacing(t *testing.T) {
	for _, tt := range []struct {
		rate    float64
		quantum time.Duration
		spacing time.Duration
		midway  time.Duration
	}{
		{100, 0, 10 * time.Millisecond, 5 * time.Millisecond},
		{5000, 0, 200 * time.Microsecond, 100 * time.Microsecond},
		{5000, 2 * time.Millisecond, 2 * time.Millisecond, time.Millisecond},
		{1, 0, time.Second, 100 * time.Millisecond},
		{0, 0, 0, 0},
	} {
		if got := Spacing(tt.rate, tt.quantum); got != tt.spacing {
			t.Errorf("Spacing(%v, %v) = %v, want %v", tt.rate, tt.quantum, got, tt.spacing)
		}
		if got := Midway(tt.spacing); got != tt.midway {
			t.Errorf("Midway(%v) = %v, want %v", tt.spacing, got, tt.midway)
		}
	}
}

// A scheduler that starts (or wakes) late sends the requests that fell due
// meanwhile through the connections it has, instead of opening one per
// request; their latency still counts from their intended times.
func TestRunLateSchedulerCatchesUp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	// 200 requests are already due when Run starts, at a rate a busy 2-core
	// machine sustains (5000/s, with 1,000 due, did not at load 20).
	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}},
		Pacer:    ConstantPacer{Rate: 1000},
		Start:    time.Now().Add(-200 * time.Millisecond),
		Duration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	// On a loaded machine the generator may still be behind when the
	// window ends, and what it has not sent by then is missed; the
	// backlog itself must be sent.
	if res.Scheduled != 1000 || res.OK < 900 || res.OK+res.Missed > 1000 {
		t.Errorf("Scheduled %d, Missed %d, OK %d: want 1000 scheduled, at least 900 sent and OK", res.Scheduled, res.Missed, res.OK)
	}
	if res.Connections > 100 {
		t.Errorf("%d connections opened to catch up a 200 ms backlog; want the backlog sent through a few", res.Connections)
	}
	if m := res.Latency.Max(); m < 100_000 {
		t.Errorf("max latency %d µs, want >= 100 ms: the backlog's lateness is hidden", m)
	}
}

// A target that is slow rather than late gets the connections it needs:
// 400 req/s of 50 ms requests need about 20 at once.
func TestRunSlowTargetGetsConnections(t *testing.T) {
	srv, peak := slowServer(t, 50*time.Millisecond)

	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}},
		Pacer:    ConstantPacer{Rate: 400},
		Start:    soon(),
		Warmup:   500 * time.Millisecond,
		Duration: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if res.Scheduled != 800 || res.Missed != 0 || res.OK != 800 {
		t.Errorf("Scheduled %d, Missed %d, OK %d: want 800 scheduled, all sent and OK", res.Scheduled, res.Missed, res.OK)
	}
	if p := peak.Load(); p < 15 {
		t.Errorf("at most %d requests in flight; 400 req/s of 50 ms requests need about 20", p)
	}
	// Requests do not queue in the generator: the median is the server's 50 ms.
	if p50 := res.Latency.ValueAtQuantile(50); p50 > 80_000 {
		t.Errorf("p50 = %d µs, want about 50 ms: requests waited for connections", p50)
	}
}

// TestAbortedAtOnce checks that a request failed by the run's cancellation
// is abandoned, not counted as an error, even when it fails before anything
// else has run since the cancellation; and that a request failed by the run
// being over is still counted, even if the caller cancels it afterwards.
func TestAbortedAtOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for _, tc := range []struct {
		name      string
		start     time.Time // the run's; an hour ago, it is over
		cancel    bool      // whether the caller cancels it
		abandoned bool
	}{
		{name: "cancelled", start: time.Now(), cancel: true, abandoned: true},
		{name: "over", start: time.Now().Add(-time.Hour), abandoned: false},
		{name: "over then cancelled", start: time.Now().Add(-time.Hour), cancel: true, abandoned: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := newRunner(Config{
				Requests: []Request{{URL: srv.URL}},
				Pacer:    ConstantPacer{Rate: 1},
				Start:    tc.start,
				Duration: time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			parent, cancel := context.WithCancel(context.Background())
			defer cancel()
			defer r.bind(parent)()
			if tc.cancel {
				cancel()
			}
			c := r.newClient()
			defer c.close()
			i := r.rec.begin(0, 0)
			status, err := c.send(&r.targets[0], 1)
			if err == nil {
				t.Fatalf("a request sent once the run's context was done succeeded (status %d)", status)
			}
			r.account(i, 0, time.Millisecond, status, err)
			completed, _, errs := r.rec.intervals[0].outcomes.totals()
			if pending := r.rec.intervals[0].pending.Load(); pending != 0 {
				t.Errorf("%d requests still pending after the failed one was accounted", pending)
			}
			if abandoned := completed == 0; abandoned != tc.abandoned {
				t.Errorf("request failed by %v: abandoned %t (errors %+v), want %t", err, abandoned, errs, tc.abandoned)
			}
		})
	}
}

// TestRequestCutByRunEndTimesOut checks that a request a busy machine sent
// after the measured window's end, still in flight at the last moment a
// request may end, counts as a timeout: it was due before the end, so it
// has waited past the timeout since it was due, though its own deadline,
// counted from its late send, has not come when the run closes its
// connection.
func TestRequestCutByRunEndTimesOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	r, err := newRunner(Config{
		Requests: []Request{{URL: srv.URL + "/x"}},
		Pacer:    ConstantPacer{Rate: 40},
		Start:    time.Now(),
		Duration: time.Second,
		Timeout:  time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The run's last moment is 200 ms away, and the request, due just
	// before the window's end, is sent only now: its own deadline is a
	// second away.
	r.origin = time.Now().Add(-(r.end + r.timeout) + 200*time.Millisecond)
	defer r.bind(context.Background())()
	stop := context.AfterFunc(r.ctx, func() {
		for _, d := range r.dialers {
			d.closeAll()
		}
	})
	defer stop()
	c := r.newClient()
	defer c.close()
	due := r.end - time.Millisecond
	i := r.rec.begin(int((due-r.warmup)/time.Second), 0)
	r.do(c, job{due: due, id: 1, target: 0, interval: int32(i)})
	res := r.rec.result(1, r.names, r.start.Add(r.end))
	if res.Errors.Timeout != 1 || res.Errors.Total() != 1 {
		t.Errorf("errors %+v (%+v), want the request cut by the run's end counted as a timeout", res.Errors, res.ErrorExamples)
	}
}
