package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestSlicedPacerMapping checks the two clocks against each other: wall
// time inside a slice maps to active time and back, time between slices
// maps to the end of the last slice, and a boundary belongs to the slice
// that opens there.
func TestSlicedPacerMapping(t *testing.T) {
	const ms = time.Millisecond
	p := SlicedPacer{Pacer: ConstantPacer{Rate: 100}, Slice: 250 * ms, Period: 500 * ms, Phase: 250 * ms}
	for _, c := range []struct{ wall, active time.Duration }{
		{0, 0}, {100 * ms, 0}, {250 * ms, 0}, {300 * ms, 50 * ms}, {499 * ms, 249 * ms},
		{500 * ms, 250 * ms}, {600 * ms, 250 * ms}, {750 * ms, 250 * ms}, {800 * ms, 300 * ms},
		{2250 * ms, time.Second},
	} {
		if got := p.Active(c.wall); got != c.active {
			t.Errorf("Active(%s) = %s, want %s", c.wall, got, c.active)
		}
	}
	for _, c := range []struct{ active, wall time.Duration }{
		{0, 250 * ms}, {50 * ms, 300 * ms}, {249 * ms, 499 * ms}, {250 * ms, 750 * ms}, {time.Second, 2250 * ms},
	} {
		if got := p.Wall(c.active); got != c.wall {
			t.Errorf("Wall(%s) = %s, want %s", c.active, got, c.wall)
		}
		if back := p.Active(p.Wall(c.active)); back != c.active {
			t.Errorf("Active(Wall(%s)) = %s", c.active, back)
		}
	}
}

// TestSlicedPacerTimeline walks sliced timelines, constant and Poisson: no
// request falls between slices, each slice holds the inner rate's share,
// the requests keep the inner timeline's order and spacing within a slice,
// and Hits agrees with the walk at every kind of instant.
func TestSlicedPacerTimeline(t *testing.T) {
	const ms = time.Millisecond
	for name, inner := range map[string]func() Pacer{
		"constant": func() Pacer { return ConstantPacer{Rate: 200} },
		"poisson":  func() Pacer { return NewPoissonPacer(200, 7) },
	} {
		t.Run(name, func(t *testing.T) {
			for _, phase := range []time.Duration{0, 100 * ms} {
				p := SlicedPacer{Pacer: inner(), Slice: 100 * ms, Period: 200 * ms, Phase: phase}
				due := walk(t, p, 4*time.Second+phase)
				plain := walk(t, inner(), 2*time.Second)
				if len(due) != len(plain) {
					t.Fatalf("phase %s: %d requests in 4 s of slices, want the %d of 2 s unsliced", phase, len(due), len(plain))
				}
				for i, d := range due {
					if off := (d - phase) % p.Period; d < phase || off >= p.Slice {
						t.Fatalf("phase %s: request %d due at %s, between slices", phase, i, d)
					}
					if got := p.Active(d); got != plain[i] {
						t.Fatalf("phase %s: request %d at active %s, want the unsliced %s", phase, i, got, plain[i])
					}
				}
				if name == "constant" {
					// 200 req/s for 100 ms: 20 per slice, 5 ms apart.
					if due[0] != phase || due[19] != phase+95*ms || due[20] != phase+200*ms {
						t.Errorf("phase %s: slice edges at %s, %s, %s", phase, due[0], due[19], due[20])
					}
				}
				probe := SlicedPacer{Pacer: inner(), Slice: p.Slice, Period: p.Period, Phase: phase}
				for _, at := range []time.Duration{0, phase, phase + 1, phase + 99*ms, phase + 100*ms, phase + 150*ms,
					phase + 200*ms, phase + time.Second + 37*ms, 4*time.Second + phase} {
					if got, want := probe.Hits(at), uint64(countBefore(due, at)); got != want {
						t.Errorf("phase %s: Hits(%s) = %d, want %d", phase, at, got, want)
					}
				}
			}
		})
	}
	if _, stop := (SlicedPacer{Pacer: ConstantPacer{Rate: 10}}).Pace(0, 0); !stop {
		t.Error("a zero slice schedules requests")
	}
}

// TestSlicedLoadTakesTurns runs two sliced loads at once, as the two sides
// of a sliced duet do, each against a server of its own that notes when
// requests arrive: each server is sent requests only in its own slices, at
// the whole rate there, and the two never overlap beyond a request's time.
func TestSlicedLoadTakesTurns(t *testing.T) {
	const slice = 100 * time.Millisecond
	var mu sync.Mutex
	at := [2][]time.Duration{}
	start := soon()
	var servers [2]*httptest.Server
	for i := range servers {
		servers[i] = httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			mu.Lock()
			at[i] = append(at[i], time.Since(start))
			mu.Unlock()
		}))
		defer servers[i].Close()
	}
	var wg sync.WaitGroup
	res := [2]*Result{}
	for i := range servers {
		wg.Go(func() {
			var err error
			res[i], err = runLoad(t, context.Background(), Config{
				Requests: []Request{{URL: servers[i].URL}}, Start: start, Warmup: 2 * slice, Duration: time.Second,
				Pacer: SlicedPacer{Pacer: ConstantPacer{Rate: 200}, Slice: slice, Period: 2 * slice, Phase: time.Duration(i) * slice},
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i, r := range res {
		if r == nil {
			t.Fatal("no result")
		}
		checkInvariants(t, r)
		// Half of a second at 200 req/s.
		if r.Scheduled < 99 || r.Scheduled > 101 {
			t.Errorf("side %d: %d requests scheduled in a 1 s window of 100 ms turns, want 100", i, r.Scheduled)
		}
		var outside int
		for _, a := range at[i] {
			// Allow a request's own time on a loaded machine.
			if off := (a - time.Duration(i)*slice) % (2 * slice); off > slice+20*time.Millisecond && off < 2*slice-5*time.Millisecond {
				outside++
			}
		}
		if outside > len(at[i])/20 {
			t.Errorf("side %d: %d of %d requests arrived in the other side's turn", i, outside, len(at[i]))
		}
	}
}
