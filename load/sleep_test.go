package load

import (
	"slices"
	"testing"
	"time"
)

// testSleeper returns a sleeper closed when the test ends.
func testSleeper(t *testing.T) *sleeper {
	t.Helper()
	s, err := newSleeper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// The scheduler sleeps once per quantum for as long as a run lasts; a wait
// that allocated would grow the heap, and the generator's RSS, with time.
func TestSleeperDoesNotAllocate(t *testing.T) {
	s := testSleeper(t)
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := s.until(time.Now().Add(100*time.Microsecond), nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a wait allocates %.1f times", allocs)
	}
}

func TestSleeperWaitsUntil(t *testing.T) {
	s := testSleeper(t)
	for _, d := range []time.Duration{-time.Millisecond, 500 * time.Microsecond, 3 * time.Millisecond} {
		at := time.Now().Add(d)
		waited, err := s.until(at, nil)
		if err != nil {
			t.Fatalf("until(+%s): %v", d, err)
		}
		if now := time.Now(); now.Before(at.Add(-maxEarly)) {
			t.Errorf("until(+%s) returned %s early, more than maxEarly", d, at.Sub(now))
		}
		if waited != (d > maxEarly) {
			t.Errorf("until(+%s) reported waited = %v", d, waited)
		}
	}
}

// The sleeper learns the machine's wake-up latency and arms its timer that
// much early, so that wake-ups are on time on average rather than all late.
func TestSleeperWakesOnTimeOnAverage(t *testing.T) {
	s := testSleeper(t)
	lates := make([]time.Duration, 200)
	for i := range lates {
		at := time.Now().Add(time.Millisecond)
		if _, err := s.until(at, nil); err != nil {
			t.Fatal(err)
		}
		lates[i] = time.Since(at)
	}
	if s.early <= 0 || s.early > maxEarly {
		t.Errorf("early = %s, want in (0, %s]", s.early, maxEarly)
	}
	// The first wake-ups are late by the machine's latency; the last by
	// less, since the timer is armed early by about that much (medians:
	// a wake-up now and then is late by milliseconds on a busy machine).
	first, last := slices.Clone(lates[:10]), slices.Clone(lates[len(lates)-50:])
	slices.Sort(first)
	slices.Sort(last)
	if mf, ml := first[len(first)/2], last[len(last)/2]; ml >= mf {
		t.Errorf("median lateness %s over the last wake-ups, %s over the first: not reduced", ml, mf)
	}
}
