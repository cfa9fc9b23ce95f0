package load

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestConstantPacer(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		elapsed  time.Duration
		hits     uint64
		wantWait time.Duration
		wantStop bool
	}{
		{"first request is due at once", 100, 0, 0, 0, false},
		{"second request waits one period", 100, 0, 1, 10 * time.Millisecond, false},
		{"wait is counted from elapsed", 100, 4 * time.Millisecond, 1, 6 * time.Millisecond, false},
		{"n/Rate for large n", 200, 0, 600, 3 * time.Second, false},
		{"late request is due now", 100, 25 * time.Millisecond, 2, 0, false},
		{"exactly on time is due now", 100, 20 * time.Millisecond, 2, 0, false},
		{"fractional rate", 0.5, time.Second, 1, time.Second, false},
		{"non-integer period truncates to ns", 3, 0, 1, 333333333, false},
		{"zero rate stops", 0, 0, 0, 0, true},
		{"negative rate stops", -5, 0, 0, 0, true},
		{"NaN rate stops", math.NaN(), 0, 0, 0, true},
		{"infinite rate stops", math.Inf(1), 0, 0, 0, true},
		{"due time beyond a Duration stops", 1, 0, math.MaxInt64 / 1_000_000_000 * 2, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, stop := ConstantPacer{Rate: tt.rate}.Pace(tt.elapsed, tt.hits)
			if wait != tt.wantWait || stop != tt.wantStop {
				t.Errorf("Pace(%s, %d) at %g/s = (%s, %t), want (%s, %t)",
					tt.elapsed, tt.hits, tt.rate, wait, stop, tt.wantWait, tt.wantStop)
			}
		})
	}
}

func TestTimelineIsExactAndBounded(t *testing.T) {
	tl := timeline{pacer: ConstantPacer{Rate: 200}}
	var n int
	for {
		due, ok := tl.next(3 * time.Second)
		if !ok {
			break
		}
		if want := time.Duration(n) * 5 * time.Millisecond; due != want {
			t.Fatalf("request %d due at %s, want %s", n, due, want)
		}
		n++
	}
	if n != 600 || tl.err != nil {
		t.Errorf("got %d requests before 3s (err %v), want 600", n, tl.err)
	}
}

// burstPacer schedules every request at the same instant.
type burstPacer struct{}

func (burstPacer) Pace(time.Duration, uint64) (time.Duration, bool) { return 0, false }

func (burstPacer) Hits(t time.Duration) uint64 {
	if t > 0 {
		return math.MaxUint64
	}
	return 0
}

func TestTimelineRejectsAPacerThatDoesNotAdvance(t *testing.T) {
	tl := timeline{pacer: burstPacer{}}
	var n int
	for {
		if _, ok := tl.next(time.Second); !ok {
			break
		}
		n++
	}
	if n != maxBurst || tl.err == nil || !strings.Contains(tl.err.Error(), "time must advance") {
		t.Errorf("got %d requests, err %v; want %d and an error", n, tl.err, maxBurst)
	}
}
