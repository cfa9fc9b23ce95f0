package load

import (
	"testing"
	"time"
)

// The scheduler sleeps once per quantum for as long as a run lasts; a wait
// that allocated would grow the heap, and the generator's RSS, with time.
func TestSleeperDoesNotAllocate(t *testing.T) {
	s, err := newSleeper()
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	done := make(chan struct{})
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := s.until(time.Now().Add(100*time.Microsecond), done); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a wait allocates %.1f times", allocs)
	}
}

func TestSleeperWaitsUntil(t *testing.T) {
	s, err := newSleeper()
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	done := make(chan struct{})
	for _, d := range []time.Duration{-time.Millisecond, 200 * time.Microsecond, 3 * time.Millisecond} {
		at := time.Now().Add(d)
		waited, err := s.until(at, done)
		if err != nil {
			t.Fatalf("until(+%s): %v", d, err)
		}
		if now := time.Now(); now.Before(at) {
			t.Errorf("until(+%s) returned %s early", d, at.Sub(now))
		}
		if waited != (d > 0) {
			t.Errorf("until(+%s) reported waited = %v", d, waited)
		}
	}
}
