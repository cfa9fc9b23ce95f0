package load

import (
	"context"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestConstantPacerHits checks that Hits agrees with Pace to the request:
// Hits(t) is the number of the first request Pace puts at or after t.
func TestConstantPacerHits(t *testing.T) {
	tests := []struct {
		rate float64
		at   []time.Duration
	}{
		{200, []time.Duration{0, 1, 5 * time.Millisecond, 5*time.Millisecond + 1, time.Second, 90 * time.Minute}},
		{3, []time.Duration{time.Second / 3, time.Second/3 + 1, 10 * time.Second}},
		{1e12, []time.Duration{1, 999, 1000, 200 * time.Millisecond, time.Hour}},
		{0.001, []time.Duration{999 * time.Second, 1000 * time.Second, 1000*time.Second + 1}},
	}
	for _, tt := range tests {
		p := ConstantPacer{Rate: tt.rate}
		for _, at := range tt.at {
			n := p.Hits(at)
			if n > 0 {
				if d, ok := p.due(n - 1); !ok || d >= at {
					t.Errorf("rate %g: Hits(%s) = %d, but request %d is due at %s", tt.rate, at, n, n-1, d)
				}
			}
			if d, ok := p.due(n); ok && d < at {
				t.Errorf("rate %g: Hits(%s) = %d, but request %d is due at %s, before it", tt.rate, at, n, n, d)
			}
		}
	}
	if n := (ConstantPacer{Rate: math.NaN()}).Hits(time.Second); n != 0 {
		t.Errorf("NaN rate: Hits = %d", n)
	}
}

// fastServer is a loopback server that answers at once.
func fastServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	return srv
}

// TestImpossibleRateCancels checks that a generator hopelessly behind its
// rate stops soon after it is cancelled, and counts the requests it never
// sent with arithmetic: at 10¹² req/s, 200 ms leave 2·10¹¹ of them, which
// counting one by one would take many minutes.
func TestImpossibleRateCancels(t *testing.T) {
	srv := fastServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	res, err := Run(ctx, Config{
		Requests: []Request{{URL: srv.URL}},
		Pacer:    ConstantPacer{Rate: 1e12},
		Duration: 10 * time.Second,
		Timeout:  time.Second,
	})
	took := time.Since(begin)
	if err == nil {
		t.Fatal("no error from a cancelled run")
	}
	checkInvariants(t, res)
	// Cancelled, the run ends with its requests in flight, not with its
	// 30 s window: within a few seconds even beside a CPU hog (1.4 s was
	// seen there).
	if took > 5*time.Second {
		t.Errorf("Run returned %s after it started, %s after it was cancelled; want within a few seconds, long before its 30 s window ends", took, took-200*time.Millisecond)
	}
	// The run was cut between 200 ms and when it returned.
	if lo, hi := uint64(0.2*1e12*0.99), uint64(took.Seconds()*1e12); res.Scheduled < lo || res.Scheduled > hi {
		t.Errorf("Scheduled %d, want between %d and %d", res.Scheduled, lo, hi)
	}
	if res.Sent == 0 || res.Missed < res.Scheduled/2 {
		t.Errorf("Sent %d, Missed %d of %d: want some sent and most missed", res.Sent, res.Missed, res.Scheduled)
	}
}

// TestImpossibleRateEndsWithTheWindow checks that a generator still behind
// when the window ends stops there rather than sending the backlog after
// it, and that every request of the window is accounted for, to the one.
func TestImpossibleRateEndsWithTheWindow(t *testing.T) {
	srv := fastServer(t)
	begin := time.Now()
	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}},
		Pacer:    ConstantPacer{Rate: 1e9},
		Warmup:   100 * time.Millisecond,
		Duration: 300 * time.Millisecond,
		Timeout:  time.Second,
		Quantum:  2 * time.Millisecond,
	})
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	// Requests one nanosecond apart, released at 2 ms steps: those
	// released at 100 ms (the first of the window) to 398 ms.
	const want = 300_000_000
	if res.Scheduled != want {
		t.Errorf("Scheduled %d, want the window's %d", res.Scheduled, want)
	}
	if took > 1400*time.Millisecond {
		t.Errorf("Run took %s for a 400 ms run; want it to stop with the window and drain within a second", took)
	}
}

// TestClosedModelBeyondFileLimit checks that a closed model with more users
// than the process has file descriptors for neither hangs nor ignores
// cancellation: the users that get none fail (connect errors, or the run's
// error), and the run stops when cancelled.
func TestClosedModelBeyondFileLimit(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // accept fails with EMFILE too
	srv.Start()
	defer srv.Close()
	var orig syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig); err != nil {
		t.Skip(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	low := orig
	low.Cur = uint64(len(fds)) + 64
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	res, err := Run(ctx, Config{
		Requests: []Request{{URL: srv.URL}},
		Users:    &Users{N: 2000},
		Duration: 30 * time.Second,
		// Requests in flight when the run is cancelled end by their
		// timeout (connections the server never accepted, for want of
		// descriptors): a short one, so that a second after cancelling
		// leaves room for a busy machine.
		Timeout: 300 * time.Millisecond,
	})
	took := time.Since(begin)
	if err == nil {
		t.Fatal("no error from a cancelled run")
	}
	checkInvariants(t, res)
	// Cancelled, the run ends with its requests in flight, not with its
	// 30 s window: within a few seconds even beside a CPU hog (1.4 s was
	// seen there).
	if took > 5*time.Second {
		t.Errorf("Run returned %s after it started, %s after it was cancelled; want within a few seconds, long before its 30 s window ends", took, took-200*time.Millisecond)
	}
	// 2000 users cannot all have a connection with 64 descriptors to
	// spare: the rest fail to connect, and say so.
	if res.Errors.Connect == 0 {
		t.Errorf("no connect errors with 2000 users and %d file descriptors: %+v", low.Cur, res.Errors)
	}
}

// TestInterruptedAtSaysWhen cancels runs 200 ms after Run is called,
// before their start and during them, in either model: the error says
// when, rounded to the millisecond, and never as a negative time
// ("interrupted at -6.255226ms" said a run cancelled before its start).
func TestInterruptedAtSaysWhen(t *testing.T) {
	srv := fastServer(t)
	before := regexp.MustCompile(`^load: run interrupted (\d+ms|\d+(\.\d+)?s) before its start: `)
	during := regexp.MustCompile(`^load: run interrupted at (\d+ms|\d+(\.\d+)?s): `)
	tests := []struct {
		name    string
		startIn time.Duration // from Run's call to Start
		pacer   Pacer
		users   *Users
		want    *regexp.Regexp
	}{
		{"open model, before its start", 2 * time.Second, ConstantPacer{Rate: 100}, nil, before},
		{"closed model, before its start", 2 * time.Second, nil, &Users{N: 2}, before},
		{"open model, under way", 0, ConstantPacer{Rate: 100}, nil, during},
		{"closed model, under way", 0, nil, &Users{N: 2}, during},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			res, err := Run(ctx, Config{
				Requests: []Request{{URL: srv.URL}},
				Pacer:    tt.pacer,
				Users:    tt.users,
				Start:    time.Now().Add(tt.startIn),
				Duration: 10 * time.Second,
				Timeout:  time.Second,
			})
			if err == nil || !tt.want.MatchString(err.Error()) {
				t.Errorf("error %v, want it to match %s", err, tt.want)
			}
			if res != nil {
				checkInvariants(t, res)
			}
		})
	}
}

// TestInterruptedAt checks the words of when a run was cut: rounded to the
// millisecond, never negative, and a start missed by less than half a
// millisecond neither "0s before its start" nor "at -0s".
func TestInterruptedAt(t *testing.T) {
	tests := []struct {
		cut  time.Duration
		want string
	}{
		{-6255226 * time.Nanosecond, "6ms before its start"},
		{-1500 * time.Millisecond, "1.5s before its start"},
		{-300 * time.Microsecond, "just before its start"},
		{0, "at its start"},
		{300 * time.Microsecond, "at its start"},
		{6255226 * time.Nanosecond, "at 6ms"},
		{90*time.Second + 1234567*time.Nanosecond, "at 1m30.001s"},
	}
	for _, tt := range tests {
		if got := interruptedAt(tt.cut); got != tt.want {
			t.Errorf("interruptedAt(%v) = %q, want %q", tt.cut, got, tt.want)
		}
	}
}
