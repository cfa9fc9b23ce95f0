package loadproc

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/load"
)

// workerEnv makes the test binary the process Run starts: it serves the
// spec on its standard input, as toll's `_load` does.
const workerEnv = "LOADPROC_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err := Serve(ctx, os.Stdin, os.Stdout)
		stop()
		if err != nil && ctx.Err() == nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// worker returns the argv and environment of a process that serves specs.
func worker(t *testing.T) ([]string, []string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{self}, append(os.Environ(), workerEnv+"=1")
}

// TestSpecCrosses: a constant, a Poisson and a closed-model load cross to
// another process as they are; a pacer that cannot is refused.
func TestSpecCrosses(t *testing.T) {
	reqs := []load.Request{{Name: "a", Method: "POST", URL: "http://127.0.0.1:1/x", Header: http.Header{"X-A": {"1"}}, Body: []byte("b"), Weight: 2}}
	start := time.Unix(1700000000, 5)
	for _, tt := range []struct {
		name string
		cfg  load.Config
	}{
		{"constant", load.Config{Requests: reqs, Pacer: load.ConstantPacer{Rate: 250}, Start: start, Warmup: time.Second, Duration: 2 * time.Second, MaxConns: 16, Quantum: time.Millisecond, Lull: 2 * time.Millisecond}},
		{"poisson", load.Config{Requests: reqs, Pacer: load.NewPoissonPacer(120, 42), Start: start, Duration: time.Second}},
		{"users", load.Config{Requests: reqs, Users: &load.Users{N: 4, Think: time.Millisecond, Ramp: time.Second}, Start: start, Duration: time.Second}},
	} {
		spec, err := SpecOf(tt.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := spec.Config()
		// Both pacers must schedule the same timeline.
		for _, hits := range []uint64{0, 1, 57, 1000} {
			if tt.cfg.Pacer == nil {
				break
			}
			w1, s1 := tt.cfg.Pacer.Pace(0, hits)
			w2, s2 := got.Pacer.Pace(0, hits)
			if w1 != w2 || s1 != s2 {
				t.Errorf("%s: request %d due at %v (stop %v), want %v (%v)", tt.name, hits, w2, s2, w1, s1)
			}
		}
		got.Pacer, tt.cfg.Pacer = nil, nil
		if got.Start != tt.cfg.Start || got.Warmup != tt.cfg.Warmup || got.Duration != tt.cfg.Duration || got.MaxConns != tt.cfg.MaxConns ||
			got.Quantum != tt.cfg.Quantum || got.Lull != tt.cfg.Lull || (got.Users == nil) != (tt.cfg.Users == nil) || len(got.Requests) != 1 {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.cfg)
		}
	}
	if _, err := SpecOf(load.Config{Pacer: load.SlicedPacer{}}); err == nil {
		t.Errorf("a sliced pacer crossed to another process")
	}
}

// TestRunInAProcessOfItsOwn: the load runs in the process Run starts,
// reaches the target, and its progress is followed while it runs.
func TestRunInAProcessOfItsOwn(t *testing.T) {
	var served atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	argv, env := worker(t)
	cfg := load.Config{Requests: []load.Request{{URL: srv.URL}}, Pacer: load.ConstantPacer{Rate: 200}, Start: time.Now(), Duration: time.Second}
	spec, err := SpecOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var progress atomic.Uint64
	seen := make(chan uint64, 1)
	go func() {
		// A count read while the load runs, not only at its end.
		for range 200 {
			if n := progress.Load(); n > 0 {
				seen <- n
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		seen <- 0
	}()
	out, err := Run(context.Background(), argv, env, spec, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if n := <-seen; n == 0 {
		t.Errorf("no progress seen while the load ran")
	}
	if out.Sent < 100 || out.Sent > 201 || served.Load() < out.Sent || progress.Load() < out.Sent {
		t.Errorf("sent %d, served %d, progress %d; want about 200 of each", out.Sent, served.Load(), progress.Load())
	}
	if out.MeasureEnd.Before(cfg.Start.Add(cfg.Duration)) {
		t.Errorf("measure end %v before the window's end %v", out.MeasureEnd, cfg.Start.Add(cfg.Duration))
	}
}

// TestRunStopsWithItsContext: a load cut short by its context ends its
// process at once and returns what it sent, with the context's error.
func TestRunStopsWithItsContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	argv, env := worker(t)
	spec, err := SpecOf(load.Config{Requests: []load.Request{{URL: srv.URL}}, Pacer: load.ConstantPacer{Rate: 100}, Start: time.Now(), Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var progress atomic.Uint64
	cancelled := make(chan time.Time, 1)
	go func() {
		// Cut it short once it sends, however long a busy machine
		// takes to start it.
		for i := 0; i < 1000 && progress.Load() == 0; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		cancelled <- time.Now()
		cancel()
	}()
	out, err := Run(ctx, argv, env, spec, &progress)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the context's", err)
	}
	if took := time.Since(<-cancelled); took > stopGrace {
		t.Errorf("took %v to stop", took)
	}
	if out == nil || out.Sent == 0 {
		t.Errorf("outcome %+v, want the requests sent before the stop", out)
	}
}

// TestRunSaysWhyItFailed: a process that cannot run the load says why.
func TestRunSaysWhyItFailed(t *testing.T) {
	_, err := Run(context.Background(), []string{"/bin/sh", "-c", "echo no such load >&2; exit 3"}, nil, Spec{}, nil)
	if err == nil || !strings.Contains(err.Error(), "no such load") {
		t.Errorf("error %v, want the process's own words", err)
	}
}
