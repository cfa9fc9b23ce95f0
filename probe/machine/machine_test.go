package machine

import (
	"math"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestFixture(t *testing.T) {
	s, err := NewSamplerAt("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	// USER_HZ is 100: 57811 ticks are 578.11 s.
	if math.Abs(got.Total.User-578.11) > 1e-9 || math.Abs(got.Total.Steal-5.8) > 1e-9 || len(got.PerCPU) != 2 {
		t.Errorf("stat: %+v", got)
	}
	if math.Abs(got.MemUsed()-0.25) > 1e-9 {
		t.Errorf("memory used %g, want 0.25", got.MemUsed())
	}
}

func TestBetween(t *testing.T) {
	c := func(busy, idle, steal float64) CPUTimes { return CPUTimes{User: busy, Idle: idle, Steal: steal} }
	tests := []struct {
		name    string
		a, b    Sample
		cpu, st float64
		perCPU  []float64
	}{
		{"half busy", Sample{Total: c(10, 10, 0), PerCPU: []CPUTimes{c(5, 5, 0), c(5, 5, 0)}},
			Sample{Total: c(12, 12, 0), PerCPU: []CPUTimes{c(7, 5, 0), c(5, 7, 0)}}, 0.5, 0, []float64{1, 0}},
		{"steal counts as busy", Sample{Total: c(0, 0, 0)}, Sample{Total: c(1, 2, 1)}, 0.5, 0.25, nil},
		{"no time", Sample{Total: c(1, 1, 0)}, Sample{Total: c(1, 1, 0)}, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := Between(tt.a, tt.b)
			if math.Abs(u.CPU-tt.cpu) > 1e-9 || math.Abs(u.Steal-tt.st) > 1e-9 {
				t.Errorf("got %+v", u)
			}
			for i, want := range tt.perCPU {
				if math.Abs(u.PerCPU[i]-want) > 1e-9 {
					t.Errorf("CPU %d: %g, want %g", i, u.PerCPU[i], want)
				}
			}
		})
	}
}

// TestLiveBusyCPU keeps CPU 0 busy for half a second and checks the
// sampler sees it.
func TestLiveBusyCPU(t *testing.T) {
	s, err := NewSampler()
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	set.Set(0)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		t.Skip("cannot pin to CPU 0: ", err)
	}
	a, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
	}
	b, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if u := Between(a, b); u.PerCPU[0] < 0.5 {
		t.Errorf("CPU 0 busy %.2f while spinning on it", u.PerCPU[0])
	}
}
