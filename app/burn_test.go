package app_test

import (
	"context"
	"math"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/app"
)

func TestBurnWork(t *testing.T) {
	tests := []struct {
		work int
		want float64
	}{
		{0, 0},
		{1, 0},
		{3, math.Log(2) + math.Log(3)},
		{10, math.Log(3628800)},
	}
	for _, tt := range tests {
		if got := (app.Burn{Work: tt.work}).Do(); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Burn{Work: %d}.Do() = %v, want %v", tt.work, got, tt.want)
		}
	}
}

func TestBurnValidate(t *testing.T) {
	tests := []struct {
		name string
		burn app.Burn
		want string // "" for valid
	}{
		{"zero", app.Burn{}, ""},
		{"all knobs", app.Burn{Work: 10, ExtraCPU: time.Millisecond, ExtraDelay: time.Millisecond, ExtraAlloc: 1024}, ""},
		{"negative work", app.Burn{Work: -5}, "work -5 is negative"},
		{"negative cpu", app.Burn{ExtraCPU: -time.Second}, "extra CPU -1s is negative"},
		{"negative alloc", app.Burn{ExtraAlloc: -1}, "extra alloc -1 is negative"},
		{"background", app.Burn{BackgroundCPU: 20 * time.Millisecond}, ""},
		{"negative background", app.Burn{BackgroundCPU: -time.Millisecond}, "background CPU -1ms per second is not between 0 and 500ms"},
		{"background beyond half a core", app.Burn{BackgroundCPU: time.Second}, "background CPU 1s per second is not between 0 and 500ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.burn.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestBurnExtraCPU checks that ExtraCPU costs the process at least the CPU
// time asked, and not wildly more.
func TestBurnExtraCPU(t *testing.T) {
	const n, d = 10, 10 * time.Millisecond
	b := app.Burn{ExtraCPU: d}
	before := processCPU(t)
	for range n {
		b.Do()
	}
	got := processCPU(t) - before
	if want := n * d; got < want*9/10 || got > want*2 {
		t.Errorf("%d × ExtraCPU %v used %v of CPU, want about %v", n, d, got, want)
	}
}

// TestBurnBackground checks that BackgroundCPU burns about its CPU per
// second with no request at all, and stops when its context ends.
func TestBurnBackground(t *testing.T) {
	const perSecond, run = 100 * time.Millisecond, 1 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	before := processCPU(t)
	go func() {
		(app.Burn{BackgroundCPU: perSecond}).Background(ctx)
		close(done)
	}()
	time.Sleep(run)
	cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Background did not return after its context ended")
	}
	// Ticks a busy machine delays are lost, not made up: at least half.
	if got := processCPU(t) - before; got < perSecond/2 || got > 3*perSecond {
		t.Errorf("BackgroundCPU %v per second for %v used %v of CPU", perSecond, run, got)
	}
}

func TestBurnExtraDelay(t *testing.T) {
	const d = 20 * time.Millisecond
	start := time.Now()
	(app.Burn{ExtraDelay: d}).Do()
	if got := time.Since(start); got < d {
		t.Errorf("ExtraDelay %v took %v", d, got)
	}
}

func TestBurnExtraAlloc(t *testing.T) {
	tests := []app.ByteSize{100, 64 << 10, 1 << 20}
	for _, size := range tests {
		t.Run(size.String(), func(t *testing.T) {
			const n = 20
			b := app.Burn{ExtraAlloc: size}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range n {
				b.Do()
			}
			runtime.ReadMemStats(&after)
			if got, want := after.TotalAlloc-before.TotalAlloc, uint64(n*size); got < want {
				t.Errorf("%d × ExtraAlloc %v allocated %d bytes on the heap, want at least %d", n, size, got, want)
			}
		})
	}
}

// processCPU returns the user and system CPU time the test process has
// used so far.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
